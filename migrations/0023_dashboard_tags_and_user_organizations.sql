CREATE TABLE `dashboard_tags` (
	`dashboard_id` integer NOT NULL,
	`environment_id` integer NOT NULL,
	`tag` text NOT NULL,
	PRIMARY KEY(`dashboard_id`, `tag`),
	FOREIGN KEY (`dashboard_id`) REFERENCES `dashboards`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `dashboard_tags_environment_tag` ON `dashboard_tags` (`environment_id`,`tag`,`dashboard_id`);--> statement-breakpoint
DROP INDEX `organization_memberships_user`;--> statement-breakpoint
CREATE INDEX `organization_memberships_user_organization` ON `organization_memberships` (`user_id`,`organization_id`,`level`,`id`);--> statement-breakpoint
ALTER TABLE `users` ADD `organization_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- A live dashboard's tags (already trimmed, lower-cased and without duplicates) as rows: those
-- that exist now, then triggers keep them. A deleted dashboard has none: soft-deleting one
-- removes them, restoring it brings them back, and a row deleted takes them along (ON DELETE CASCADE).
INSERT OR IGNORE INTO dashboard_tags (dashboard_id, environment_id, tag)
SELECT dashboards.id, dashboards.environment_id, tags.value FROM dashboards, json_each(dashboards.tags) AS tags
WHERE dashboards.deleted = 0;
--> statement-breakpoint
CREATE TRIGGER dashboard_tags_on_insert AFTER INSERT ON dashboards WHEN NEW.deleted = 0
BEGIN
  INSERT OR IGNORE INTO dashboard_tags (dashboard_id, environment_id, tag)
  SELECT NEW.id, NEW.environment_id, value FROM json_each(NEW.tags);
END;
--> statement-breakpoint
CREATE TRIGGER dashboard_tags_on_update AFTER UPDATE OF tags, deleted, environment_id ON dashboards
WHEN OLD.tags IS NOT NEW.tags OR OLD.deleted IS NOT NEW.deleted OR OLD.environment_id IS NOT NEW.environment_id
BEGIN
  DELETE FROM dashboard_tags WHERE dashboard_id = OLD.id;
  INSERT OR IGNORE INTO dashboard_tags (dashboard_id, environment_id, tag)
  SELECT NEW.id, NEW.environment_id, value FROM json_each(NEW.tags) WHERE NEW.deleted = 0;
END;
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
