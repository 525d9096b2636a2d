CREATE TABLE `share_passwords` (
	`id` text PRIMARY KEY NOT NULL,
	`dashboard_id` integer NOT NULL,
	`password_hash` text NOT NULL,
	`note` text DEFAULT '' NOT NULL,
	`created_by_id` integer,
	`created_at` text NOT NULL,
	FOREIGN KEY (`dashboard_id`) REFERENCES `sharing_configurations`(`dashboard_id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `share_passwords_dashboard` ON `share_passwords` (`dashboard_id`);--> statement-breakpoint
ALTER TABLE `organizations` ADD `share_link_max_lifetime_days` integer;--> statement-breakpoint
ALTER TABLE `sharing_configurations` ADD `expires_at` text;--> statement-breakpoint
ALTER TABLE `sharing_configurations` ADD `password_required` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `sharing_configurations` ADD `view_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sharing_configurations` ADD `last_viewed_at` text;