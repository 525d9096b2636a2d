DROP INDEX `projects_organization_created`;--> statement-breakpoint
CREATE INDEX `projects_organization_created` ON `projects` (`organization_id`,`created_at`,`id`,`deletion_scheduled_at`);