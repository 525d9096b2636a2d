-- `?search=` on dashboards reads the first 1,000 characters of a description, and the name: a
-- phrase's cost in FTS5 grows with the positions of its trigrams in a row, and a description may
-- hold 65,536 characters, so a long search over long descriptions held the database for seconds.
-- The triggers of 0040 again, with the description cut; the index rebuilt from the live rows.
DROP TRIGGER `dashboards_on_insert`;--> statement-breakpoint
DROP TRIGGER `dashboards_on_update`;--> statement-breakpoint
DROP TRIGGER `dashboards_on_delete`;--> statement-breakpoint
INSERT INTO dashboards_search (dashboards_search) VALUES ('delete-all');--> statement-breakpoint
INSERT INTO dashboards_search (rowid, scope, name, description)
SELECT id, '<' || environment_id || '>', name, substr(description, 1, 1000) FROM dashboards WHERE deleted = 0;--> statement-breakpoint
CREATE TRIGGER `dashboards_on_insert` AFTER INSERT ON `dashboards` WHEN NEW.deleted = 0
BEGIN
  UPDATE environments SET dashboard_count = dashboard_count + 1 WHERE id = NEW.environment_id;
  INSERT OR IGNORE INTO dashboard_tags (dashboard_id, environment_id, tag)
  SELECT NEW.id, NEW.environment_id, value FROM json_each(NEW.tags);
  INSERT INTO dashboards_search (rowid, scope, name, description)
  VALUES (NEW.id, '<' || NEW.environment_id || '>', NEW.name, substr(NEW.description, 1, 1000));
END;--> statement-breakpoint
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
  SELECT 'delete', OLD.id, '<' || OLD.environment_id || '>', OLD.name, substr(OLD.description, 1, 1000)
  WHERE OLD.deleted = 0 AND (OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description
    OR OLD.deleted IS NOT NEW.deleted OR OLD.environment_id IS NOT NEW.environment_id);
  INSERT INTO dashboards_search (rowid, scope, name, description)
  SELECT NEW.id, '<' || NEW.environment_id || '>', NEW.name, substr(NEW.description, 1, 1000)
  WHERE NEW.deleted = 0 AND (OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description
    OR OLD.deleted IS NOT NEW.deleted OR OLD.environment_id IS NOT NEW.environment_id);
END;--> statement-breakpoint
CREATE TRIGGER `dashboards_on_delete` AFTER DELETE ON `dashboards` WHEN OLD.deleted = 0
BEGIN
  UPDATE environments SET dashboard_count = dashboard_count - 1 WHERE id = OLD.environment_id;
  INSERT INTO dashboards_search (dashboards_search, rowid, scope, name, description)
  VALUES ('delete', OLD.id, '<' || OLD.environment_id || '>', OLD.name, substr(OLD.description, 1, 1000));
END;
