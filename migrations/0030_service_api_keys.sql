CREATE TABLE `service_api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`created_by_id` integer,
	`label` text NOT NULL,
	`secure_value` text NOT NULL,
	`mask_value` text NOT NULL,
	`scopes` text NOT NULL,
	`scoped_teams` text NOT NULL,
	`created_at` text NOT NULL,
	`last_used_at` text,
	`expires_at` text,
	`last_rolled_at` text,
	`previous_secure_value` text,
	`previous_value_expires_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `service_api_keys_secure_value_unique` ON `service_api_keys` (`secure_value`);--> statement-breakpoint
CREATE UNIQUE INDEX `service_api_keys_previous_secure_value_unique` ON `service_api_keys` (`previous_secure_value`);--> statement-breakpoint
CREATE INDEX `service_api_keys_organization` ON `service_api_keys` (`organization_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `service_api_keys_created_by` ON `service_api_keys` (`created_by_id`);