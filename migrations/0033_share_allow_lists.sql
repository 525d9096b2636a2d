CREATE TABLE `share_viewer_links` (
	`id` text PRIMARY KEY NOT NULL,
	`dashboard_id` integer NOT NULL,
	`email` text NOT NULL,
	`token_hash` text NOT NULL,
	`issued_minute` integer NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	`email_outbox` text,
	FOREIGN KEY (`dashboard_id`) REFERENCES `sharing_configurations`(`dashboard_id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `share_viewer_links_token_hash_unique` ON `share_viewer_links` (`token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `share_viewer_links_address_minute` ON `share_viewer_links` (`dashboard_id`,`email`,`issued_minute`);--> statement-breakpoint
CREATE INDEX `share_viewer_links_expires_at` ON `share_viewer_links` (`expires_at`);--> statement-breakpoint
CREATE TABLE `share_viewer_views` (
	`dashboard_id` integer NOT NULL,
	`email` text NOT NULL,
	`view_count` integer DEFAULT 0 NOT NULL,
	`last_viewed_at` text NOT NULL,
	PRIMARY KEY(`dashboard_id`, `email`),
	FOREIGN KEY (`dashboard_id`) REFERENCES `sharing_configurations`(`dashboard_id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `sharing_configurations` ADD `allowed_emails` text;--> statement-breakpoint
ALTER TABLE `sharing_configurations` ADD `viewer_session_secret` text;