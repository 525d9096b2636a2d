CREATE TABLE `resource_access_controls` (
	`id` text PRIMARY KEY NOT NULL,
	`environment_id` integer NOT NULL,
	`resource` text NOT NULL,
	`organization_membership_id` text,
	`role_id` text,
	`access_level` text NOT NULL,
	`created_by_id` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`environment_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`organization_membership_id`) REFERENCES `organization_memberships`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`role_id`) REFERENCES `roles`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `resource_access_controls_member` ON `resource_access_controls` (`environment_id`,`resource`,`organization_membership_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `resource_access_controls_role` ON `resource_access_controls` (`environment_id`,`resource`,`role_id`) WHERE "resource_access_controls"."role_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX `resource_access_controls_default` ON `resource_access_controls` (`environment_id`,`resource`) WHERE "resource_access_controls"."organization_membership_id" is null and "resource_access_controls"."role_id" is null;--> statement-breakpoint
CREATE INDEX `resource_access_controls_membership` ON `resource_access_controls` (`organization_membership_id`) WHERE "resource_access_controls"."organization_membership_id" is not null;--> statement-breakpoint
CREATE INDEX `resource_access_controls_role_id` ON `resource_access_controls` (`role_id`) WHERE "resource_access_controls"."role_id" is not null;--> statement-breakpoint
CREATE INDEX `resource_access_controls_created_by` ON `resource_access_controls` (`created_by_id`);--> statement-breakpoint
CREATE TABLE `role_memberships` (
	`id` text PRIMARY KEY NOT NULL,
	`role_id` text NOT NULL,
	`organization_membership_id` text NOT NULL,
	`joined_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`role_id`) REFERENCES `roles`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`organization_membership_id`) REFERENCES `organization_memberships`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `role_memberships_role_member` ON `role_memberships` (`role_id`,`organization_membership_id`);--> statement-breakpoint
CREATE INDEX `role_memberships_role_joined` ON `role_memberships` (`role_id`,`joined_at`,`id`);--> statement-breakpoint
CREATE INDEX `role_memberships_member_role` ON `role_memberships` (`organization_membership_id`,`role_id`);--> statement-breakpoint
CREATE TABLE `roles` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`created_by_id` integer,
	`member_count` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `roles_organization_name` ON `roles` (`organization_id`,`name_key`);--> statement-breakpoint
CREATE INDEX `roles_organization_created` ON `roles` (`organization_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `roles_created_by` ON `roles` (`created_by_id`);--> statement-breakpoint
DROP INDEX `access_controls_resource_default`;--> statement-breakpoint
ALTER TABLE `access_controls` ADD `role_id` text REFERENCES roles(id) ON DELETE cascade;--> statement-breakpoint
CREATE UNIQUE INDEX `access_controls_resource_role` ON `access_controls` (`resource`,`resource_id`,`role_id`) WHERE "access_controls"."role_id" is not null;--> statement-breakpoint
CREATE INDEX `access_controls_role_resource` ON `access_controls` (`role_id`,`resource`,`resource_id`,`access_level`) WHERE "access_controls"."role_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX `access_controls_resource_default` ON `access_controls` (`resource`,`resource_id`) WHERE "access_controls"."organization_membership_id" is null and "access_controls"."role_id" is null;--> statement-breakpoint
ALTER TABLE `organizations` ADD `role_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- drizzle-kit leaves ON DELETE out of an added column's reference: written by hand above, so that a
-- role's rules go with it. The counts of the roles list and of each role's members, kept by
-- triggers as every other list's (0010): a role or a membership removed by a cascade (the
-- organization, the member leaving) keeps them exact.
CREATE TRIGGER organization_role_count_on_insert AFTER INSERT ON roles
BEGIN
  UPDATE organizations SET role_count = role_count + 1 WHERE id = NEW.organization_id;
END;
--> statement-breakpoint
CREATE TRIGGER organization_role_count_on_delete AFTER DELETE ON roles
BEGIN
  UPDATE organizations SET role_count = role_count - 1 WHERE id = OLD.organization_id;
END;
--> statement-breakpoint
CREATE TRIGGER role_member_count_on_insert AFTER INSERT ON role_memberships
BEGIN
  UPDATE roles SET member_count = member_count + 1 WHERE id = NEW.role_id;
END;
--> statement-breakpoint
CREATE TRIGGER role_member_count_on_delete AFTER DELETE ON role_memberships
BEGIN
  UPDATE roles SET member_count = member_count - 1 WHERE id = OLD.role_id;
END;
