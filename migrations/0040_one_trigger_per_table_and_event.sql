-- One trigger per table and event: what a write of a membership or a dashboard sets off is read
-- in one place. The sharing flag copied onto dashboards is written by the one write of sharing
-- configurations, in its batch; the count of a user's personal API keys (ten at most) is counted
-- where it is needed; a project is only ever deleted after it is marked for deletion, which is
-- when its organization's count drops, so its DELETE needs no trigger.
DROP TRIGGER `dashboard_sharing_enabled_on_insert`;--> statement-breakpoint
DROP TRIGGER `dashboard_sharing_enabled_on_update`;--> statement-breakpoint
DROP TRIGGER `dashboard_sharing_enabled_on_delete`;--> statement-breakpoint
DROP TRIGGER `user_personal_api_key_count_on_insert`;--> statement-breakpoint
DROP TRIGGER `user_personal_api_key_count_on_delete`;--> statement-breakpoint
DROP TRIGGER `organization_project_count_on_delete`;--> statement-breakpoint
DROP TRIGGER `organization_member_count_on_join`;--> statement-breakpoint
DROP TRIGGER `organization_member_count_on_leave`;--> statement-breakpoint
DROP TRIGGER `user_organization_count_on_join`;--> statement-breakpoint
DROP TRIGGER `user_organization_count_on_leave`;--> statement-breakpoint
DROP TRIGGER `environment_dashboard_count_on_insert`;--> statement-breakpoint
DROP TRIGGER `environment_dashboard_count_on_delete`;--> statement-breakpoint
DROP TRIGGER `environment_dashboard_count_on_soft_delete`;--> statement-breakpoint
DROP TRIGGER `dashboard_tags_on_insert`;--> statement-breakpoint
DROP TRIGGER `dashboard_tags_on_update`;--> statement-breakpoint
DROP TRIGGER `dashboards_search_on_insert`;--> statement-breakpoint
DROP TRIGGER `dashboards_search_on_update`;--> statement-breakpoint
DROP TRIGGER `dashboards_search_on_delete`;--> statement-breakpoint
ALTER TABLE `users` DROP COLUMN `personal_api_key_count`;--> statement-breakpoint
CREATE TRIGGER `organization_memberships_on_insert` AFTER INSERT ON `organization_memberships`
BEGIN
  UPDATE organizations SET member_count = member_count + 1 WHERE id = NEW.organization_id;
  UPDATE users SET organization_count = organization_count + 1 WHERE id = NEW.user_id;
END;--> statement-breakpoint
CREATE TRIGGER `organization_memberships_on_delete` AFTER DELETE ON `organization_memberships`
BEGIN
  UPDATE organizations SET member_count = member_count - 1 WHERE id = OLD.organization_id;
  UPDATE users SET organization_count = organization_count - 1 WHERE id = OLD.user_id;
END;--> statement-breakpoint
-- A live dashboard: its environment's count, its tags (dashboard_tags) and its words (the FTS5
-- index dashboards_search, scoped by environment).
CREATE TRIGGER `dashboards_on_insert` AFTER INSERT ON `dashboards` WHEN NEW.deleted = 0
BEGIN
  UPDATE environments SET dashboard_count = dashboard_count + 1 WHERE id = NEW.environment_id;
  INSERT OR IGNORE INTO dashboard_tags (dashboard_id, environment_id, tag)
  SELECT NEW.id, NEW.environment_id, value FROM json_each(NEW.tags);
  INSERT INTO dashboards_search (rowid, scope, name, description)
  VALUES (NEW.id, '<' || NEW.environment_id || '>', NEW.name, NEW.description);
END;--> statement-breakpoint
-- Each statement runs only when what it follows changed: a condition on OLD and NEW alone is
-- decided before SQLite reads a row.
CREATE TRIGGER `dashboards_on_update` AFTER UPDATE OF name, description, tags, deleted, environment_id ON `dashboards`
WHEN OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description OR OLD.tags IS NOT NEW.tags
  OR OLD.deleted IS NOT NEW.deleted OR OLD.environment_id IS NOT NEW.environment_id
BEGIN
  UPDATE environments SET dashboard_count = dashboard_count + OLD.deleted - NEW.deleted
  WHERE id = NEW.environment_id AND OLD.deleted IS NOT NEW.deleted;
  DELETE FROM dashboard_tags WHERE dashboard_id = OLD.id
    AND (OLD.tags IS NOT NEW.tags OR OLD.deleted IS NOT NEW.deleted OR OLD.environment_id IS NOT NEW.environment_id);
  INSERT OR IGNORE INTO dashboard_tags (dashboard_id, environment_id, tag)
  SELECT NEW.id, NEW.environment_id, value FROM json_each(NEW.tags)
  WHERE NEW.deleted = 0
    AND (OLD.tags IS NOT NEW.tags OR OLD.deleted IS NOT NEW.deleted OR OLD.environment_id IS NOT NEW.environment_id);
  INSERT INTO dashboards_search (dashboards_search, rowid, scope, name, description)
  SELECT 'delete', OLD.id, '<' || OLD.environment_id || '>', OLD.name, OLD.description
  WHERE OLD.deleted = 0 AND (OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description
    OR OLD.deleted IS NOT NEW.deleted OR OLD.environment_id IS NOT NEW.environment_id);
  INSERT INTO dashboards_search (rowid, scope, name, description)
  SELECT NEW.id, '<' || NEW.environment_id || '>', NEW.name, NEW.description
  WHERE NEW.deleted = 0 AND (OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description
    OR OLD.deleted IS NOT NEW.deleted OR OLD.environment_id IS NOT NEW.environment_id);
END;--> statement-breakpoint
-- Tags go by cascade; the count and the words are this trigger's.
CREATE TRIGGER `dashboards_on_delete` AFTER DELETE ON `dashboards` WHEN OLD.deleted = 0
BEGIN
  UPDATE environments SET dashboard_count = dashboard_count - 1 WHERE id = OLD.environment_id;
  INSERT INTO dashboards_search (dashboards_search, rowid, scope, name, description)
  VALUES ('delete', OLD.id, '<' || OLD.environment_id || '>', OLD.name, OLD.description);
END;
