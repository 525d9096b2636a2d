CREATE TABLE `activity_log_exports` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`created_by_id` integer,
	`format` text NOT NULL,
	`from_time` text NOT NULL,
	`to_time` text NOT NULL,
	`scopes` text,
	`first_seq` integer NOT NULL,
	`last_seq` integer NOT NULL,
	`status` text NOT NULL,
	`cursor_seq` integer NOT NULL,
	`parts` integer DEFAULT 0 NOT NULL,
	`entries` integer DEFAULT 0 NOT NULL,
	`bytes` integer DEFAULT 0 NOT NULL,
	`error` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `activity_log_exports_organization` ON `activity_log_exports` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `activity_log_exports_unfinished` ON `activity_log_exports` (`updated_at`) WHERE "activity_log_exports"."status" in ('pending', 'running');--> statement-breakpoint
ALTER TABLE `organizations` ADD `activity_log_retention_days` integer;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `previous_sealed_secret` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `previous_secret_expires_at` text;--> statement-breakpoint
CREATE INDEX `webhooks_previous_secret_expiry` ON `webhooks` (`previous_secret_expires_at`) WHERE "webhooks"."previous_secret_expires_at" is not null;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_status` ON `webhook_deliveries` (`webhook_id`,`status`,`created_at`,`id`);