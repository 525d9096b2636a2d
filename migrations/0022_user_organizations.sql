DROP INDEX `organization_memberships_user`;--> statement-breakpoint
CREATE INDEX `organization_memberships_user_organization` ON `organization_memberships` (`user_id`,`organization_id`,`level`,`id`);--> statement-breakpoint
ALTER TABLE `users` ADD `organization_count` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
-- A user's count of organizations: what their memberships hold now, then triggers keep it, so
-- that counting their organizations reads one row.
UPDATE users SET organization_count = (
  SELECT count(*) FROM organization_memberships WHERE organization_memberships.user_id = users.id
);
--> statement-breakpoint
CREATE TRIGGER user_organization_count_on_join AFTER INSERT ON organization_memberships
BEGIN
  UPDATE users SET organization_count = organization_count + 1 WHERE id = NEW.user_id;
END;
--> statement-breakpoint
CREATE TRIGGER user_organization_count_on_leave AFTER DELETE ON organization_memberships
BEGIN
  UPDATE users SET organization_count = organization_count - 1 WHERE id = OLD.user_id;
END;
