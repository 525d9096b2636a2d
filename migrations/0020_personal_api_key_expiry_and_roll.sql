ALTER TABLE `personal_api_keys` ADD `expires_at` text;--> statement-breakpoint
ALTER TABLE `personal_api_keys` ADD `last_rolled_at` text;--> statement-breakpoint
ALTER TABLE `personal_api_keys` ADD `previous_secure_value` text;--> statement-breakpoint
ALTER TABLE `personal_api_keys` ADD `previous_value_expires_at` text;--> statement-breakpoint
CREATE UNIQUE INDEX `personal_api_keys_previous_secure_value_unique` ON `personal_api_keys` (`previous_secure_value`);