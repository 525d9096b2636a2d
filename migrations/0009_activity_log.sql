CREATE TABLE `activity_log` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`seq` integer NOT NULL,
	`project_id` integer,
	`dashboard_id` integer,
	`user_id` integer,
	`api_key_id` text,
	`is_system` integer NOT NULL,
	`activity` text NOT NULL,
	`scope` text NOT NULL,
	`item_id` text,
	`detail` text NOT NULL,
	`request_id` text,
	`created_at` text NOT NULL,
	`hash` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `activity_log_organization_seq` ON `activity_log` (`organization_id`,`seq`);--> statement-breakpoint
CREATE INDEX `activity_log_organization_scope` ON `activity_log` (`organization_id`,`scope`,`seq`);--> statement-breakpoint
CREATE INDEX `activity_log_organization_item` ON `activity_log` (`organization_id`,`item_id`,`seq`);--> statement-breakpoint
CREATE INDEX `activity_log_organization_user` ON `activity_log` (`organization_id`,`user_id`,`seq`);--> statement-breakpoint
CREATE INDEX `activity_log_organization_activity` ON `activity_log` (`organization_id`,`activity`,`seq`);--> statement-breakpoint
CREATE INDEX `activity_log_organization_created` ON `activity_log` (`organization_id`,`created_at`,`seq`);--> statement-breakpoint
CREATE INDEX `activity_log_project` ON `activity_log` (`project_id`,`seq`);--> statement-breakpoint
CREATE INDEX `activity_log_created` ON `activity_log` (`created_at`);--> statement-breakpoint
CREATE INDEX `activity_log_unsealed` ON `activity_log` (`organization_id`,`seq`) WHERE "activity_log"."hash" is null;--> statement-breakpoint
CREATE TABLE `activity_log_anchors` (
	`organization_id` text PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL,
	`hash` text NOT NULL,
	`pruned_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
