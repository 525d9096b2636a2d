DROP INDEX `dashboards_created_by`;--> statement-breakpoint
CREATE INDEX `dashboards_created_by_environment` ON `dashboards` (`created_by_id`,`environment_id`,`deleted`);