DROP TABLE `project_access_grants`;--> statement-breakpoint
ALTER TABLE `access_controls` ADD `created_by_id` integer REFERENCES users(id);--> statement-breakpoint
ALTER TABLE `organizations` ADD `allow_publicly_shared_resources` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `sharing_configurations` ADD `settings` text DEFAULT '{}' NOT NULL;