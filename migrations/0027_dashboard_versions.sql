CREATE TABLE `dashboard_versions` (
	`dashboard_id` integer NOT NULL,
	`version` integer NOT NULL,
	`created_at` text NOT NULL,
	`created_by_id` integer,
	`key_id` text,
	`summary` text NOT NULL,
	`snapshot` text NOT NULL,
	PRIMARY KEY(`dashboard_id`, `version`),
	FOREIGN KEY (`dashboard_id`) REFERENCES `dashboards`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
ALTER TABLE `dashboards` ADD `version` integer DEFAULT 1 NOT NULL;