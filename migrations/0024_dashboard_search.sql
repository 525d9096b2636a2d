-- `?search=` on dashboards: an FTS5 index of the live dashboards' names and descriptions. The
-- trigram tokenizer makes a phrase of 3 characters or more match any substring, ignoring case
-- (PostHog's icontains). Each row also indexes its environment as `<id>` (`scope`), so that a
-- query matches within one environment inside the index: the rows it returns are that
-- environment's matches alone. Contentless (the text stays in `dashboards`) and without column
-- sizes: nothing reads them. Removing a row from a contentless index takes the values it was
-- indexed with, which the triggers have in OLD.
CREATE VIRTUAL TABLE dashboards_search USING fts5(
  scope, name, description, content='', columnsize=0, tokenize='trigram'
);
--> statement-breakpoint
INSERT INTO dashboards_search (rowid, scope, name, description)
SELECT id, '<' || environment_id || '>', name, description FROM dashboards WHERE deleted = 0;
--> statement-breakpoint
CREATE TRIGGER dashboards_search_on_insert AFTER INSERT ON dashboards WHEN NEW.deleted = 0
BEGIN
  INSERT INTO dashboards_search (rowid, scope, name, description)
  VALUES (NEW.id, '<' || NEW.environment_id || '>', NEW.name, NEW.description);
END;
--> statement-breakpoint
CREATE TRIGGER dashboards_search_on_update AFTER UPDATE OF name, description, deleted, environment_id ON dashboards
WHEN OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description OR OLD.deleted IS NOT NEW.deleted
  OR OLD.environment_id IS NOT NEW.environment_id
BEGIN
  INSERT INTO dashboards_search (dashboards_search, rowid, scope, name, description)
  SELECT 'delete', OLD.id, '<' || OLD.environment_id || '>', OLD.name, OLD.description WHERE OLD.deleted = 0;
  INSERT INTO dashboards_search (rowid, scope, name, description)
  SELECT NEW.id, '<' || NEW.environment_id || '>', NEW.name, NEW.description WHERE NEW.deleted = 0;
END;
--> statement-breakpoint
CREATE TRIGGER dashboards_search_on_delete AFTER DELETE ON dashboards WHEN OLD.deleted = 0
BEGIN
  INSERT INTO dashboards_search (dashboards_search, rowid, scope, name, description)
  VALUES ('delete', OLD.id, '<' || OLD.environment_id || '>', OLD.name, OLD.description);
END;
