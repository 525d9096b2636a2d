CREATE INDEX `access_controls_environment` ON `access_controls` (`environment_id`);--> statement-breakpoint
CREATE INDEX `access_controls_membership` ON `access_controls` (`organization_membership_id`);--> statement-breakpoint
CREATE INDEX `access_controls_created_by` ON `access_controls` (`created_by_id`);--> statement-breakpoint
CREATE INDEX `dashboard_collaborators_user` ON `dashboard_collaborators` (`user_id`);--> statement-breakpoint
CREATE INDEX `dashboard_tiles_text` ON `dashboard_tiles` (`text_id`);--> statement-breakpoint
CREATE INDEX `dashboards_created_by` ON `dashboards` (`created_by_id`);--> statement-breakpoint
CREATE INDEX `environments_organization` ON `environments` (`organization_id`);--> statement-breakpoint
CREATE INDEX `insights_created_by` ON `insights` (`created_by_id`);--> statement-breakpoint
CREATE INDEX `invites_created_by` ON `invites` (`created_by_id`);--> statement-breakpoint
CREATE INDEX `organization_memberships_organization_level` ON `organization_memberships` (`organization_id`,`level`);--> statement-breakpoint
CREATE INDEX `texts_environment` ON `texts` (`environment_id`);--> statement-breakpoint
CREATE INDEX `texts_created_by` ON `texts` (`created_by_id`);--> statement-breakpoint
CREATE INDEX `texts_last_modified_by` ON `texts` (`last_modified_by_id`);