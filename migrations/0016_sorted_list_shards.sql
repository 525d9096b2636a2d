CREATE TABLE `sorted_list_shards` (
	`list` text NOT NULL,
	`owner` text NOT NULL,
	`first_key` text NOT NULL,
	`size` integer NOT NULL,
	`ids` text NOT NULL,
	PRIMARY KEY(`list`, `owner`, `first_key`)
);
--> statement-breakpoint
ALTER TABLE `dashboards` ADD `list_key` text GENERATED ALWAYS AS ((case when pinned then '0' else '1' end) || hex(name) || '-' || printf('%012d', id)) VIRTUAL;--> statement-breakpoint
ALTER TABLE `domains` ADD `list_key` text GENERATED ALWAYS AS (hex(domain)) VIRTUAL;--> statement-breakpoint
-- The lists sorted by a column answer any offset by reading a few rows (see sorted_list_shards
-- in src/db/schema.ts). First the rows that exist, in shards of 2,048 in list order (the first
-- shard's first key is ""; fewer than 1,024 left at the end join the shard before them); then
-- triggers keep the shards: a row joins its shard after the row before it in the list (found
-- along the list's index), splitting the shard first when it holds 4,096; a row leaves its shard,
-- and a shard other than the first that falls under 1,024 is merged into the one before it. A
-- row's shard is the last whose first key is not after its own. When a shard is split, its upper
-- half is inserted first; the shard it came from is then the last at or before the row's key
-- still holding 4,096 (the new one holds fewer), and it is cut only if a shard starts at its
-- 2,049th entry, so that a shard left larger by a merge is not cut without its upper half saved.
--> statement-breakpoint
INSERT INTO sorted_list_shards (list, owner, first_key, size, ids)
SELECT 'dashboards', owner, CASE WHEN shard = 0 THEN '' ELSE min(list_key) END, count(*), group_concat(entry, '' ORDER BY list_key)
FROM (SELECT owner, list_key, entry, min(row / 2048, CASE WHEN rows % 2048 < 1024 THEN max(0, rows / 2048 - 1) ELSE rows / 2048 END) AS shard
  FROM (SELECT CAST(environment_id AS TEXT) AS owner, list_key, ',' || printf('%12d', id) AS entry, row_number() OVER (PARTITION BY environment_id ORDER BY list_key) - 1 AS row, count(*) OVER (PARTITION BY environment_id) AS rows FROM dashboards WHERE deleted = 0))
GROUP BY owner, shard;
--> statement-breakpoint
CREATE TRIGGER dashboards_sorted_on_insert AFTER INSERT ON dashboards WHEN NEW.deleted = 0
BEGIN
  INSERT OR IGNORE INTO sorted_list_shards (list, owner, first_key, size, ids) SELECT 'dashboards', CAST(NEW.environment_id AS TEXT), '', 0, '' WHERE NEW.deleted = 0;
  INSERT INTO sorted_list_shards (list, owner, first_key, size, ids)
    SELECT list, owner, (SELECT list_key FROM dashboards WHERE id = CAST(substr(ids, 2048 * 13 + 2, 12) AS INTEGER)), size - 2048, substr(ids, 2048 * 13 + 1)
    FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(NEW.environment_id AS TEXT) AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(NEW.environment_id AS TEXT) AND first_key <= NEW.list_key) AND size >= 4096 AND NEW.deleted = 0;
  UPDATE sorted_list_shards SET size = 2048, ids = substr(ids, 1, 2048 * 13)
  WHERE list = 'dashboards' AND owner = CAST(NEW.environment_id AS TEXT) AND size >= 4096 AND NEW.deleted = 0
    AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(NEW.environment_id AS TEXT) AND first_key <= NEW.list_key AND size >= 4096)
    AND EXISTS (SELECT 1 FROM sorted_list_shards AS upper WHERE upper.list = 'dashboards' AND upper.owner = CAST(NEW.environment_id AS TEXT) AND upper.first_key = (SELECT list_key FROM dashboards WHERE id = CAST(substr(sorted_list_shards.ids, 2048 * 13 + 2, 12) AS INTEGER)));
  UPDATE sorted_list_shards SET size = size + 1, ids = CASE WHEN instr(ids, previous.entry) > 0
    THEN substr(ids, 1, instr(ids, previous.entry) + 12) || ',' || printf('%12d', NEW.id) || substr(ids, instr(ids, previous.entry) + 13)
    ELSE ',' || printf('%12d', NEW.id) || ids END
  FROM (SELECT coalesce((SELECT ',' || printf('%12d', id) FROM dashboards WHERE environment_id = NEW.environment_id AND deleted = 0 AND pinned = NEW.pinned AND name = NEW.name AND id < NEW.id ORDER BY id DESC LIMIT 1), (SELECT ',' || printf('%12d', id) FROM dashboards WHERE environment_id = NEW.environment_id AND deleted = 0 AND pinned = NEW.pinned AND name < NEW.name ORDER BY name DESC, id DESC LIMIT 1), (SELECT ',' || printf('%12d', id) FROM dashboards WHERE environment_id = NEW.environment_id AND deleted = 0 AND pinned = 1 AND NEW.pinned = 0 ORDER BY name DESC, id DESC LIMIT 1), '#') AS entry) AS previous
  WHERE list = 'dashboards' AND owner = CAST(NEW.environment_id AS TEXT) AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(NEW.environment_id AS TEXT) AND first_key <= NEW.list_key) AND NEW.deleted = 0;
END;
--> statement-breakpoint
CREATE TRIGGER dashboards_sorted_on_delete AFTER DELETE ON dashboards WHEN OLD.deleted = 0
BEGIN
  UPDATE sorted_list_shards SET size = size - 1, ids = replace(ids, ',' || printf('%12d', OLD.id), '')
  WHERE list = 'dashboards' AND owner = CAST(OLD.environment_id AS TEXT) AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(OLD.environment_id AS TEXT) AND first_key <= OLD.list_key) AND instr(ids, ',' || printf('%12d', OLD.id)) > 0 AND OLD.deleted = 0;
  UPDATE sorted_list_shards SET size = sorted_list_shards.size + small.size, ids = sorted_list_shards.ids || small.ids
  FROM (SELECT first_key, size, ids FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(OLD.environment_id AS TEXT) AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(OLD.environment_id AS TEXT) AND first_key <= OLD.list_key) AND first_key <> '' AND size < 1024 AND OLD.deleted = 0) AS small
  WHERE sorted_list_shards.list = 'dashboards' AND sorted_list_shards.owner = CAST(OLD.environment_id AS TEXT) AND sorted_list_shards.first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(OLD.environment_id AS TEXT) AND first_key < small.first_key);
  DELETE FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(OLD.environment_id AS TEXT) AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(OLD.environment_id AS TEXT) AND first_key <= OLD.list_key) AND first_key <> '' AND size < 1024 AND OLD.deleted = 0;
END;
--> statement-breakpoint
CREATE TRIGGER dashboards_sorted_on_update AFTER UPDATE OF name, pinned, deleted, environment_id ON dashboards WHEN OLD.list_key IS NOT NEW.list_key OR OLD.deleted IS NOT NEW.deleted OR OLD.environment_id IS NOT NEW.environment_id
BEGIN
  UPDATE sorted_list_shards SET size = size - 1, ids = replace(ids, ',' || printf('%12d', OLD.id), '')
  WHERE list = 'dashboards' AND owner = CAST(OLD.environment_id AS TEXT) AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(OLD.environment_id AS TEXT) AND first_key <= OLD.list_key) AND instr(ids, ',' || printf('%12d', OLD.id)) > 0 AND OLD.deleted = 0;
  UPDATE sorted_list_shards SET size = sorted_list_shards.size + small.size, ids = sorted_list_shards.ids || small.ids
  FROM (SELECT first_key, size, ids FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(OLD.environment_id AS TEXT) AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(OLD.environment_id AS TEXT) AND first_key <= OLD.list_key) AND first_key <> '' AND size < 1024 AND OLD.deleted = 0) AS small
  WHERE sorted_list_shards.list = 'dashboards' AND sorted_list_shards.owner = CAST(OLD.environment_id AS TEXT) AND sorted_list_shards.first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(OLD.environment_id AS TEXT) AND first_key < small.first_key);
  DELETE FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(OLD.environment_id AS TEXT) AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(OLD.environment_id AS TEXT) AND first_key <= OLD.list_key) AND first_key <> '' AND size < 1024 AND OLD.deleted = 0;
  INSERT OR IGNORE INTO sorted_list_shards (list, owner, first_key, size, ids) SELECT 'dashboards', CAST(NEW.environment_id AS TEXT), '', 0, '' WHERE NEW.deleted = 0;
  INSERT INTO sorted_list_shards (list, owner, first_key, size, ids)
    SELECT list, owner, (SELECT list_key FROM dashboards WHERE id = CAST(substr(ids, 2048 * 13 + 2, 12) AS INTEGER)), size - 2048, substr(ids, 2048 * 13 + 1)
    FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(NEW.environment_id AS TEXT) AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(NEW.environment_id AS TEXT) AND first_key <= NEW.list_key) AND size >= 4096 AND NEW.deleted = 0;
  UPDATE sorted_list_shards SET size = 2048, ids = substr(ids, 1, 2048 * 13)
  WHERE list = 'dashboards' AND owner = CAST(NEW.environment_id AS TEXT) AND size >= 4096 AND NEW.deleted = 0
    AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(NEW.environment_id AS TEXT) AND first_key <= NEW.list_key AND size >= 4096)
    AND EXISTS (SELECT 1 FROM sorted_list_shards AS upper WHERE upper.list = 'dashboards' AND upper.owner = CAST(NEW.environment_id AS TEXT) AND upper.first_key = (SELECT list_key FROM dashboards WHERE id = CAST(substr(sorted_list_shards.ids, 2048 * 13 + 2, 12) AS INTEGER)));
  UPDATE sorted_list_shards SET size = size + 1, ids = CASE WHEN instr(ids, previous.entry) > 0
    THEN substr(ids, 1, instr(ids, previous.entry) + 12) || ',' || printf('%12d', NEW.id) || substr(ids, instr(ids, previous.entry) + 13)
    ELSE ',' || printf('%12d', NEW.id) || ids END
  FROM (SELECT coalesce((SELECT ',' || printf('%12d', id) FROM dashboards WHERE environment_id = NEW.environment_id AND deleted = 0 AND pinned = NEW.pinned AND name = NEW.name AND id < NEW.id ORDER BY id DESC LIMIT 1), (SELECT ',' || printf('%12d', id) FROM dashboards WHERE environment_id = NEW.environment_id AND deleted = 0 AND pinned = NEW.pinned AND name < NEW.name ORDER BY name DESC, id DESC LIMIT 1), (SELECT ',' || printf('%12d', id) FROM dashboards WHERE environment_id = NEW.environment_id AND deleted = 0 AND pinned = 1 AND NEW.pinned = 0 ORDER BY name DESC, id DESC LIMIT 1), '#') AS entry) AS previous
  WHERE list = 'dashboards' AND owner = CAST(NEW.environment_id AS TEXT) AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(NEW.environment_id AS TEXT) AND first_key <= NEW.list_key) AND NEW.deleted = 0;
END;
--> statement-breakpoint
CREATE TRIGGER environments_sorted_dashboards_on_delete AFTER DELETE ON environments
BEGIN
  DELETE FROM sorted_list_shards WHERE list = 'dashboards' AND owner = CAST(OLD.id AS TEXT);
END;
--> statement-breakpoint
INSERT INTO sorted_list_shards (list, owner, first_key, size, ids)
SELECT 'domains', owner, CASE WHEN shard = 0 THEN '' ELSE min(list_key) END, count(*), group_concat(entry, '' ORDER BY list_key)
FROM (SELECT owner, list_key, entry, min(row / 2048, CASE WHEN rows % 2048 < 1024 THEN max(0, rows / 2048 - 1) ELSE rows / 2048 END) AS shard
  FROM (SELECT CAST(organization_id AS TEXT) AS owner, list_key, ',"' || id || '"' AS entry, row_number() OVER (PARTITION BY organization_id ORDER BY list_key) - 1 AS row, count(*) OVER (PARTITION BY organization_id) AS rows FROM domains ))
GROUP BY owner, shard;
--> statement-breakpoint
CREATE TRIGGER domains_sorted_on_insert AFTER INSERT ON domains
BEGIN
  INSERT OR IGNORE INTO sorted_list_shards (list, owner, first_key, size, ids) SELECT 'domains', NEW.organization_id, '', 0, '' WHERE 1;
  INSERT INTO sorted_list_shards (list, owner, first_key, size, ids)
    SELECT list, owner, (SELECT list_key FROM domains WHERE id = substr(ids, 2048 * 39 + 3, 36)), size - 2048, substr(ids, 2048 * 39 + 1)
    FROM sorted_list_shards WHERE list = 'domains' AND owner = NEW.organization_id AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'domains' AND owner = NEW.organization_id AND first_key <= NEW.list_key) AND size >= 4096 AND 1;
  UPDATE sorted_list_shards SET size = 2048, ids = substr(ids, 1, 2048 * 39)
  WHERE list = 'domains' AND owner = NEW.organization_id AND size >= 4096 AND 1
    AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'domains' AND owner = NEW.organization_id AND first_key <= NEW.list_key AND size >= 4096)
    AND EXISTS (SELECT 1 FROM sorted_list_shards AS upper WHERE upper.list = 'domains' AND upper.owner = NEW.organization_id AND upper.first_key = (SELECT list_key FROM domains WHERE id = substr(sorted_list_shards.ids, 2048 * 39 + 3, 36)));
  UPDATE sorted_list_shards SET size = size + 1, ids = CASE WHEN instr(ids, previous.entry) > 0
    THEN substr(ids, 1, instr(ids, previous.entry) + 38) || ',"' || NEW.id || '"' || substr(ids, instr(ids, previous.entry) + 39)
    ELSE ',"' || NEW.id || '"' || ids END
  FROM (SELECT coalesce((SELECT ',"' || id || '"' FROM domains WHERE organization_id = NEW.organization_id AND domain < NEW.domain ORDER BY domain DESC, id DESC LIMIT 1), '#') AS entry) AS previous
  WHERE list = 'domains' AND owner = NEW.organization_id AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'domains' AND owner = NEW.organization_id AND first_key <= NEW.list_key) AND 1;
END;
--> statement-breakpoint
CREATE TRIGGER domains_sorted_on_delete AFTER DELETE ON domains
BEGIN
  UPDATE sorted_list_shards SET size = size - 1, ids = replace(ids, ',"' || OLD.id || '"', '')
  WHERE list = 'domains' AND owner = OLD.organization_id AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'domains' AND owner = OLD.organization_id AND first_key <= OLD.list_key) AND instr(ids, ',"' || OLD.id || '"') > 0 AND 1;
  UPDATE sorted_list_shards SET size = sorted_list_shards.size + small.size, ids = sorted_list_shards.ids || small.ids
  FROM (SELECT first_key, size, ids FROM sorted_list_shards WHERE list = 'domains' AND owner = OLD.organization_id AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'domains' AND owner = OLD.organization_id AND first_key <= OLD.list_key) AND first_key <> '' AND size < 1024 AND 1) AS small
  WHERE sorted_list_shards.list = 'domains' AND sorted_list_shards.owner = OLD.organization_id AND sorted_list_shards.first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'domains' AND owner = OLD.organization_id AND first_key < small.first_key);
  DELETE FROM sorted_list_shards WHERE list = 'domains' AND owner = OLD.organization_id AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'domains' AND owner = OLD.organization_id AND first_key <= OLD.list_key) AND first_key <> '' AND size < 1024 AND 1;
END;
--> statement-breakpoint
CREATE TRIGGER domains_sorted_on_update AFTER UPDATE OF domain, organization_id ON domains WHEN OLD.list_key IS NOT NEW.list_key OR OLD.organization_id IS NOT NEW.organization_id
BEGIN
  UPDATE sorted_list_shards SET size = size - 1, ids = replace(ids, ',"' || OLD.id || '"', '')
  WHERE list = 'domains' AND owner = OLD.organization_id AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'domains' AND owner = OLD.organization_id AND first_key <= OLD.list_key) AND instr(ids, ',"' || OLD.id || '"') > 0 AND 1;
  UPDATE sorted_list_shards SET size = sorted_list_shards.size + small.size, ids = sorted_list_shards.ids || small.ids
  FROM (SELECT first_key, size, ids FROM sorted_list_shards WHERE list = 'domains' AND owner = OLD.organization_id AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'domains' AND owner = OLD.organization_id AND first_key <= OLD.list_key) AND first_key <> '' AND size < 1024 AND 1) AS small
  WHERE sorted_list_shards.list = 'domains' AND sorted_list_shards.owner = OLD.organization_id AND sorted_list_shards.first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'domains' AND owner = OLD.organization_id AND first_key < small.first_key);
  DELETE FROM sorted_list_shards WHERE list = 'domains' AND owner = OLD.organization_id AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'domains' AND owner = OLD.organization_id AND first_key <= OLD.list_key) AND first_key <> '' AND size < 1024 AND 1;
  INSERT OR IGNORE INTO sorted_list_shards (list, owner, first_key, size, ids) SELECT 'domains', NEW.organization_id, '', 0, '' WHERE 1;
  INSERT INTO sorted_list_shards (list, owner, first_key, size, ids)
    SELECT list, owner, (SELECT list_key FROM domains WHERE id = substr(ids, 2048 * 39 + 3, 36)), size - 2048, substr(ids, 2048 * 39 + 1)
    FROM sorted_list_shards WHERE list = 'domains' AND owner = NEW.organization_id AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'domains' AND owner = NEW.organization_id AND first_key <= NEW.list_key) AND size >= 4096 AND 1;
  UPDATE sorted_list_shards SET size = 2048, ids = substr(ids, 1, 2048 * 39)
  WHERE list = 'domains' AND owner = NEW.organization_id AND size >= 4096 AND 1
    AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'domains' AND owner = NEW.organization_id AND first_key <= NEW.list_key AND size >= 4096)
    AND EXISTS (SELECT 1 FROM sorted_list_shards AS upper WHERE upper.list = 'domains' AND upper.owner = NEW.organization_id AND upper.first_key = (SELECT list_key FROM domains WHERE id = substr(sorted_list_shards.ids, 2048 * 39 + 3, 36)));
  UPDATE sorted_list_shards SET size = size + 1, ids = CASE WHEN instr(ids, previous.entry) > 0
    THEN substr(ids, 1, instr(ids, previous.entry) + 38) || ',"' || NEW.id || '"' || substr(ids, instr(ids, previous.entry) + 39)
    ELSE ',"' || NEW.id || '"' || ids END
  FROM (SELECT coalesce((SELECT ',"' || id || '"' FROM domains WHERE organization_id = NEW.organization_id AND domain < NEW.domain ORDER BY domain DESC, id DESC LIMIT 1), '#') AS entry) AS previous
  WHERE list = 'domains' AND owner = NEW.organization_id AND first_key = (SELECT max(first_key) FROM sorted_list_shards WHERE list = 'domains' AND owner = NEW.organization_id AND first_key <= NEW.list_key) AND 1;
END;
--> statement-breakpoint
CREATE TRIGGER organizations_sorted_domains_on_delete AFTER DELETE ON organizations
BEGIN
  DELETE FROM sorted_list_shards WHERE list = 'domains' AND owner = CAST(OLD.id AS TEXT);
END;
