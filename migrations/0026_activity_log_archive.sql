CREATE TABLE `activity_log_segments` (
	`organization_id` text NOT NULL,
	`first_seq` integer NOT NULL,
	`last_seq` integer NOT NULL,
	`first_created_at` text NOT NULL,
	`last_created_at` text NOT NULL,
	`key` text NOT NULL,
	`hash` text NOT NULL,
	`previous_hash` text,
	`last_hash` text NOT NULL,
	`entries` integer NOT NULL,
	`bytes` integer NOT NULL,
	`archived_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `activity_log_segments_organization_seq` ON `activity_log_segments` (`organization_id`,`first_seq`);--> statement-breakpoint
CREATE INDEX `activity_log_segments_organization_last` ON `activity_log_segments` (`organization_id`,`last_seq`);