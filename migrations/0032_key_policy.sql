CREATE TABLE `personal_api_key_blocks` (
	`key_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`blocked_at` text NOT NULL,
	PRIMARY KEY(`key_id`, `organization_id`),
	FOREIGN KEY (`key_id`) REFERENCES `personal_api_keys`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `personal_api_key_blocks_organization` ON `personal_api_key_blocks` (`organization_id`);--> statement-breakpoint
ALTER TABLE `organizations` ADD `personal_api_key_max_scopes` text;--> statement-breakpoint
ALTER TABLE `organizations` ADD `api_key_max_lifetime_days` integer;