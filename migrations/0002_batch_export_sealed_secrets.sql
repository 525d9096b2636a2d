ALTER TABLE `batch_exports` ADD `sealed_secrets_key_id` text;--> statement-breakpoint
CREATE INDEX `batch_exports_sealed_secrets_key` ON `batch_exports` (`sealed_secrets_key_id`);