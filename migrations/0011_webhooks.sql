CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`webhook_id` text NOT NULL,
	`entry_id` text NOT NULL,
	`event` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_status_code` integer,
	`last_error` text,
	`next_attempt_at` text,
	`retry_until` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_pending` ON `webhook_deliveries` (`next_attempt_at`) WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_webhook_entry` ON `webhook_deliveries` (`webhook_id`,`entry_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_created` ON `webhook_deliveries` (`webhook_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`enabled` integer NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`sealed_secret` text NOT NULL,
	`created_by_id` integer,
	`last_enqueued_seq` integer NOT NULL,
	`failing_since` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhooks_organization_created` ON `webhooks` (`organization_id`,`created_at`,`id`);