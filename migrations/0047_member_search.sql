-- `?search=` on an organization's members, read from an index as the dashboards' is: an FTS5
-- trigram index of each membership's user's first name, last name and e-mail, scoped by the
-- organization (`<id>`), so that a search reads its matches in that organization and never walks
-- its members. Contentless: removing a row takes the values it was indexed with, which are the
-- user's current ones, since a change of them re-indexes each of the user's memberships. Users
-- are never deleted. Keyed by the membership's rowid, which SQLite keeps as long as no VACUUM
-- rebuilds the table (nothing here runs one); after one, `INSERT INTO members_search
-- (members_search) VALUES ('delete-all')` and the INSERT below rebuild the index. A search still
-- keeps only rows of the organization it names, whatever the index says.
CREATE VIRTUAL TABLE members_search USING fts5(
  scope, first_name, last_name, email, content='', columnsize=0, tokenize='trigram'
);
--> statement-breakpoint
INSERT INTO members_search (rowid, scope, first_name, last_name, email)
SELECT m.rowid, '<' || m.organization_id || '>', u.first_name, u.last_name, u.email
FROM organization_memberships m JOIN users u ON u.id = m.user_id;
--> statement-breakpoint
DROP TRIGGER `organization_memberships_on_insert`;--> statement-breakpoint
DROP TRIGGER `organization_memberships_on_delete`;--> statement-breakpoint
CREATE TRIGGER `organization_memberships_on_insert` AFTER INSERT ON `organization_memberships`
BEGIN
  UPDATE organizations SET member_count = member_count + 1 WHERE id = NEW.organization_id;
  UPDATE users SET organization_count = organization_count + 1 WHERE id = NEW.user_id;
  INSERT INTO members_search (rowid, scope, first_name, last_name, email)
  SELECT NEW.rowid, '<' || NEW.organization_id || '>', first_name, last_name, email FROM users WHERE id = NEW.user_id;
END;--> statement-breakpoint
CREATE TRIGGER `organization_memberships_on_delete` AFTER DELETE ON `organization_memberships`
BEGIN
  UPDATE organizations SET member_count = member_count - 1 WHERE id = OLD.organization_id;
  UPDATE users SET organization_count = organization_count - 1 WHERE id = OLD.user_id;
  INSERT INTO members_search (members_search, rowid, scope, first_name, last_name, email)
  SELECT 'delete', OLD.rowid, '<' || OLD.organization_id || '>', first_name, last_name, email
  FROM users WHERE id = OLD.user_id;
END;--> statement-breakpoint
CREATE TRIGGER `users_on_update` AFTER UPDATE OF first_name, last_name, email ON `users`
WHEN OLD.first_name IS NOT NEW.first_name OR OLD.last_name IS NOT NEW.last_name OR OLD.email IS NOT NEW.email
BEGIN
  INSERT INTO members_search (members_search, rowid, scope, first_name, last_name, email)
  SELECT 'delete', rowid, '<' || organization_id || '>', OLD.first_name, OLD.last_name, OLD.email
  FROM organization_memberships WHERE user_id = NEW.id;
  INSERT INTO members_search (rowid, scope, first_name, last_name, email)
  SELECT rowid, '<' || organization_id || '>', NEW.first_name, NEW.last_name, NEW.email
  FROM organization_memberships WHERE user_id = NEW.id;
END;
