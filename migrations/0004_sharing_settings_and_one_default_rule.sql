DROP TABLE `project_access_grants`;--> statement-breakpoint
ALTER TABLE `access_controls` ADD `created_by_id` integer REFERENCES users(id);--> statement-breakpoint
CREATE UNIQUE INDEX `access_controls_resource_default` ON `access_controls` (`resource`,`resource_id`) WHERE "access_controls"."organization_membership_id" is null;--> statement-breakpoint
ALTER TABLE `organizations` ADD `allow_publicly_shared_resources` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `sharing_configurations` ADD `settings` text DEFAULT '{}' NOT NULL;