ALTER TABLE `invites` ADD `token_hash` text;--> statement-breakpoint
CREATE UNIQUE INDEX `invites_token_hash_unique` ON `invites` (`token_hash`);