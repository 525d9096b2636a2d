ALTER TABLE `invites` ADD `mailed_token_hash` text;--> statement-breakpoint
CREATE UNIQUE INDEX `invites_mailed_token_hash_unique` ON `invites` (`mailed_token_hash`);