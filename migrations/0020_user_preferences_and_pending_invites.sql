ALTER TABLE `users` ADD `preferences` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
CREATE INDEX `invites_target_email` ON `invites` (`target_email`,`created_at`);