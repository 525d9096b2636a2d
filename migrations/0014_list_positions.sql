CREATE TABLE `list_position_gaps` (
	`list` text NOT NULL,
	`owner` text NOT NULL,
	`node` integer NOT NULL,
	`gaps` integer NOT NULL,
	PRIMARY KEY(`list`, `owner`, `node`)
);
--> statement-breakpoint
DROP INDEX `batch_exports_environment_created`;--> statement-breakpoint
DROP INDEX `batch_exports_organization_created`;--> statement-breakpoint
ALTER TABLE `batch_exports` ADD `organization_position` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `batch_exports` ADD `environment_position` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `batch_exports_environment_position` ON `batch_exports` (`environment_id`,`deleted`,`environment_position`);--> statement-breakpoint
CREATE INDEX `batch_exports_organization_position` ON `batch_exports` (`organization_id`,`deleted`,`organization_position`);--> statement-breakpoint
DROP INDEX `invites_organization_created`;--> statement-breakpoint
ALTER TABLE `invites` ADD `position` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `invites_organization_position` ON `invites` (`organization_id`,`position`);--> statement-breakpoint
DROP INDEX `organization_memberships_organization_joined`;--> statement-breakpoint
ALTER TABLE `organization_memberships` ADD `position` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `organization_memberships_organization_position` ON `organization_memberships` (`organization_id`,`position`);--> statement-breakpoint
DROP INDEX `personal_api_keys_user`;--> statement-breakpoint
ALTER TABLE `personal_api_keys` ADD `position` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `personal_api_keys_user_position` ON `personal_api_keys` (`user_id`,`position`);--> statement-breakpoint
DROP INDEX `webhook_deliveries_webhook_created`;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `position` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_position` ON `webhook_deliveries` (`webhook_id`,`position`);--> statement-breakpoint
DROP INDEX `webhooks_organization_created`;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `delivery_positions` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `position` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `webhooks_organization_position` ON `webhooks` (`organization_id`,`position`);--> statement-breakpoint
ALTER TABLE `environments` ADD `batch_export_positions` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `organizations` ADD `member_positions` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `organizations` ADD `invite_positions` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `organizations` ADD `project_positions` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `organizations` ADD `batch_export_positions` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `organizations` ADD `webhook_positions` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `projects` ADD `position` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `projects_organization_position` ON `projects` (`organization_id`,`position`);--> statement-breakpoint
ALTER TABLE `users` ADD `personal_api_key_positions` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Lists in insertion order answer any offset by reading a page (see list_position_gaps in
-- src/db/schema.ts): each row holds its position in its list, issued from its parent's
-- *_positions when the row is inserted, and each deletion (a soft one too) adds one gap to the
-- Fenwick tree of its list, in the nodes covering its position (those below twice the positions
-- issued; a larger node is first made, from the one half its size, when the positions pass it).
-- Owners are stored as text. Each insert trigger also keeps the list's count (replacing the
-- counters' own insert triggers: one UPDATE of the parent per row, not two). First the rows that
-- exist, numbered in the order their lists had.
--> statement-breakpoint
UPDATE organization_memberships SET position = numbered.position
FROM (SELECT id, row_number() OVER (PARTITION BY organization_id ORDER BY joined_at, id) AS position FROM organization_memberships) AS numbered
WHERE organization_memberships.id = numbered.id;
--> statement-breakpoint
UPDATE organizations SET member_positions = (SELECT count(*) FROM organization_memberships WHERE organization_memberships.organization_id = organizations.id);
--> statement-breakpoint
UPDATE invites SET position = numbered.position
FROM (SELECT id, row_number() OVER (PARTITION BY organization_id ORDER BY created_at, id) AS position FROM invites) AS numbered
WHERE invites.id = numbered.id;
--> statement-breakpoint
UPDATE organizations SET invite_positions = (SELECT count(*) FROM invites WHERE invites.organization_id = organizations.id);
--> statement-breakpoint
UPDATE projects SET position = numbered.position
FROM (SELECT id, row_number() OVER (PARTITION BY organization_id ORDER BY created_at, id) AS position FROM projects) AS numbered
WHERE projects.id = numbered.id;
--> statement-breakpoint
UPDATE organizations SET project_positions = (SELECT count(*) FROM projects WHERE projects.organization_id = organizations.id);
--> statement-breakpoint
UPDATE batch_exports SET organization_position = numbered.position
FROM (SELECT id, row_number() OVER (PARTITION BY organization_id ORDER BY created_at, id) AS position FROM batch_exports) AS numbered
WHERE batch_exports.id = numbered.id;
--> statement-breakpoint
UPDATE organizations SET batch_export_positions = (SELECT count(*) FROM batch_exports WHERE batch_exports.organization_id = organizations.id);
--> statement-breakpoint
UPDATE batch_exports SET environment_position = numbered.position
FROM (SELECT id, row_number() OVER (PARTITION BY environment_id ORDER BY created_at, id) AS position FROM batch_exports) AS numbered
WHERE batch_exports.id = numbered.id;
--> statement-breakpoint
UPDATE environments SET batch_export_positions = (SELECT count(*) FROM batch_exports WHERE batch_exports.environment_id = environments.id);
--> statement-breakpoint
UPDATE personal_api_keys SET position = numbered.position
FROM (SELECT id, row_number() OVER (PARTITION BY user_id ORDER BY created_at, id) AS position FROM personal_api_keys) AS numbered
WHERE personal_api_keys.id = numbered.id;
--> statement-breakpoint
UPDATE users SET personal_api_key_positions = (SELECT count(*) FROM personal_api_keys WHERE personal_api_keys.user_id = users.id);
--> statement-breakpoint
UPDATE webhooks SET position = numbered.position
FROM (SELECT id, row_number() OVER (PARTITION BY organization_id ORDER BY created_at, id) AS position FROM webhooks) AS numbered
WHERE webhooks.id = numbered.id;
--> statement-breakpoint
UPDATE organizations SET webhook_positions = (SELECT count(*) FROM webhooks WHERE webhooks.organization_id = organizations.id);
--> statement-breakpoint
UPDATE webhook_deliveries SET position = numbered.position
FROM (SELECT id, row_number() OVER (PARTITION BY webhook_id ORDER BY created_at, id) AS position FROM webhook_deliveries) AS numbered
WHERE webhook_deliveries.id = numbered.id;
--> statement-breakpoint
UPDATE webhooks SET delivery_positions = (SELECT count(*) FROM webhook_deliveries WHERE webhook_deliveries.webhook_id = webhooks.id);
--> statement-breakpoint
INSERT INTO list_position_gaps (list, owner, node, gaps)
SELECT 'organization_batch_exports', CAST(row.organization_id AS TEXT), ((((row.organization_position - 1) >> bit.column1) + 1) << bit.column1) AS node, count(*)
FROM batch_exports AS row, organizations, (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (17), (18), (19), (20), (21), (22), (23), (24), (25), (26), (27), (28), (29), (30), (31), (32), (33), (34), (35), (36), (37), (38), (39), (40)) AS bit
WHERE row.deleted = 1 AND organizations.id = row.organization_id AND ((row.organization_position - 1) >> bit.column1) & 1 = 0 AND ((((row.organization_position - 1) >> bit.column1) + 1) << bit.column1) < 2 * organizations.batch_export_positions
GROUP BY row.organization_id, node;
--> statement-breakpoint
INSERT INTO list_position_gaps (list, owner, node, gaps)
SELECT 'environment_batch_exports', CAST(row.environment_id AS TEXT), ((((row.environment_position - 1) >> bit.column1) + 1) << bit.column1) AS node, count(*)
FROM batch_exports AS row, environments, (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (17), (18), (19), (20), (21), (22), (23), (24), (25), (26), (27), (28), (29), (30), (31), (32), (33), (34), (35), (36), (37), (38), (39), (40)) AS bit
WHERE row.deleted = 1 AND environments.id = row.environment_id AND ((row.environment_position - 1) >> bit.column1) & 1 = 0 AND ((((row.environment_position - 1) >> bit.column1) + 1) << bit.column1) < 2 * environments.batch_export_positions
GROUP BY row.environment_id, node;
--> statement-breakpoint
DROP TRIGGER organization_member_count_on_join;
--> statement-breakpoint
CREATE TRIGGER organization_memberships_position_on_insert AFTER INSERT ON organization_memberships
BEGIN
  UPDATE organizations SET member_count = member_count + 1, member_positions = member_positions + 1 WHERE id = NEW.organization_id;
  UPDATE organization_memberships SET position = (SELECT member_positions FROM organizations WHERE id = NEW.organization_id) WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER members_tree_on_growth AFTER UPDATE OF position ON organization_memberships WHEN (NEW.position >= 2 AND ((NEW.position - 1) & (NEW.position - 2)) = 0)
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'members', top.owner, 2 * top.node, top.gaps FROM list_position_gaps AS top
    WHERE top.list = 'members' AND top.owner = CAST(NEW.organization_id AS TEXT) AND top.node = NEW.position - 1
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = excluded.gaps;
END;
--> statement-breakpoint
CREATE TRIGGER organization_memberships_position_on_delete AFTER DELETE ON organization_memberships
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'members', CAST(OLD.organization_id AS TEXT), ((((OLD.position - 1) >> bit.column1) + 1) << bit.column1), 1 FROM organizations, (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (17), (18), (19), (20), (21), (22), (23), (24), (25), (26), (27), (28), (29), (30), (31), (32), (33), (34), (35), (36), (37), (38), (39), (40)) AS bit
    WHERE organizations.id = OLD.organization_id AND ((OLD.position - 1) >> bit.column1) & 1 = 0 AND ((((OLD.position - 1) >> bit.column1) + 1) << bit.column1) < 2 * organizations.member_positions
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = gaps + excluded.gaps;
END;
--> statement-breakpoint
DROP TRIGGER organization_invite_count_on_insert;
--> statement-breakpoint
CREATE TRIGGER invites_position_on_insert AFTER INSERT ON invites
BEGIN
  UPDATE organizations SET invite_count = invite_count + 1, invite_positions = invite_positions + 1 WHERE id = NEW.organization_id;
  UPDATE invites SET position = (SELECT invite_positions FROM organizations WHERE id = NEW.organization_id) WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER invites_tree_on_growth AFTER UPDATE OF position ON invites WHEN (NEW.position >= 2 AND ((NEW.position - 1) & (NEW.position - 2)) = 0)
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'invites', top.owner, 2 * top.node, top.gaps FROM list_position_gaps AS top
    WHERE top.list = 'invites' AND top.owner = CAST(NEW.organization_id AS TEXT) AND top.node = NEW.position - 1
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = excluded.gaps;
END;
--> statement-breakpoint
CREATE TRIGGER invites_position_on_delete AFTER DELETE ON invites
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'invites', CAST(OLD.organization_id AS TEXT), ((((OLD.position - 1) >> bit.column1) + 1) << bit.column1), 1 FROM organizations, (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (17), (18), (19), (20), (21), (22), (23), (24), (25), (26), (27), (28), (29), (30), (31), (32), (33), (34), (35), (36), (37), (38), (39), (40)) AS bit
    WHERE organizations.id = OLD.organization_id AND ((OLD.position - 1) >> bit.column1) & 1 = 0 AND ((((OLD.position - 1) >> bit.column1) + 1) << bit.column1) < 2 * organizations.invite_positions
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = gaps + excluded.gaps;
END;
--> statement-breakpoint
DROP TRIGGER organization_project_count_on_insert;
--> statement-breakpoint
CREATE TRIGGER projects_position_on_insert AFTER INSERT ON projects
BEGIN
  UPDATE organizations SET project_count = project_count + 1, project_positions = project_positions + 1 WHERE id = NEW.organization_id;
  UPDATE projects SET position = (SELECT project_positions FROM organizations WHERE id = NEW.organization_id) WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER projects_tree_on_growth AFTER UPDATE OF position ON projects WHEN (NEW.position >= 2 AND ((NEW.position - 1) & (NEW.position - 2)) = 0)
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'projects', top.owner, 2 * top.node, top.gaps FROM list_position_gaps AS top
    WHERE top.list = 'projects' AND top.owner = CAST(NEW.organization_id AS TEXT) AND top.node = NEW.position - 1
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = excluded.gaps;
END;
--> statement-breakpoint
CREATE TRIGGER projects_position_on_delete AFTER DELETE ON projects
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'projects', CAST(OLD.organization_id AS TEXT), ((((OLD.position - 1) >> bit.column1) + 1) << bit.column1), 1 FROM organizations, (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (17), (18), (19), (20), (21), (22), (23), (24), (25), (26), (27), (28), (29), (30), (31), (32), (33), (34), (35), (36), (37), (38), (39), (40)) AS bit
    WHERE organizations.id = OLD.organization_id AND ((OLD.position - 1) >> bit.column1) & 1 = 0 AND ((((OLD.position - 1) >> bit.column1) + 1) << bit.column1) < 2 * organizations.project_positions
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = gaps + excluded.gaps;
END;
--> statement-breakpoint
DROP TRIGGER batch_export_counts_on_insert;
--> statement-breakpoint
CREATE TRIGGER batch_exports_position_on_insert AFTER INSERT ON batch_exports
BEGIN
  UPDATE organizations SET batch_export_count = batch_export_count + (NEW.deleted = 0), batch_export_positions = batch_export_positions + 1 WHERE id = NEW.organization_id;
  UPDATE environments SET batch_export_count = batch_export_count + (NEW.deleted = 0), batch_export_positions = batch_export_positions + 1 WHERE id = NEW.environment_id;
  UPDATE batch_exports SET organization_position = (SELECT batch_export_positions FROM organizations WHERE id = NEW.organization_id), environment_position = (SELECT batch_export_positions FROM environments WHERE id = NEW.environment_id) WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER organization_batch_exports_tree_on_growth AFTER UPDATE OF organization_position ON batch_exports WHEN (NEW.organization_position >= 2 AND ((NEW.organization_position - 1) & (NEW.organization_position - 2)) = 0)
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'organization_batch_exports', top.owner, 2 * top.node, top.gaps FROM list_position_gaps AS top
    WHERE top.list = 'organization_batch_exports' AND top.owner = CAST(NEW.organization_id AS TEXT) AND top.node = NEW.organization_position - 1
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = excluded.gaps;
END;
--> statement-breakpoint
CREATE TRIGGER environment_batch_exports_tree_on_growth AFTER UPDATE OF environment_position ON batch_exports WHEN (NEW.environment_position >= 2 AND ((NEW.environment_position - 1) & (NEW.environment_position - 2)) = 0)
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'environment_batch_exports', top.owner, 2 * top.node, top.gaps FROM list_position_gaps AS top
    WHERE top.list = 'environment_batch_exports' AND top.owner = CAST(NEW.environment_id AS TEXT) AND top.node = NEW.environment_position - 1
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = excluded.gaps;
END;
--> statement-breakpoint
CREATE TRIGGER batch_exports_position_on_delete AFTER DELETE ON batch_exports WHEN OLD.deleted = 0
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'organization_batch_exports', CAST(OLD.organization_id AS TEXT), ((((OLD.organization_position - 1) >> bit.column1) + 1) << bit.column1), 1 FROM organizations, (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (17), (18), (19), (20), (21), (22), (23), (24), (25), (26), (27), (28), (29), (30), (31), (32), (33), (34), (35), (36), (37), (38), (39), (40)) AS bit
    WHERE organizations.id = OLD.organization_id AND ((OLD.organization_position - 1) >> bit.column1) & 1 = 0 AND ((((OLD.organization_position - 1) >> bit.column1) + 1) << bit.column1) < 2 * organizations.batch_export_positions
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = gaps + excluded.gaps;
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'environment_batch_exports', CAST(OLD.environment_id AS TEXT), ((((OLD.environment_position - 1) >> bit.column1) + 1) << bit.column1), 1 FROM environments, (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (17), (18), (19), (20), (21), (22), (23), (24), (25), (26), (27), (28), (29), (30), (31), (32), (33), (34), (35), (36), (37), (38), (39), (40)) AS bit
    WHERE environments.id = OLD.environment_id AND ((OLD.environment_position - 1) >> bit.column1) & 1 = 0 AND ((((OLD.environment_position - 1) >> bit.column1) + 1) << bit.column1) < 2 * environments.batch_export_positions
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = gaps + excluded.gaps;
END;
--> statement-breakpoint
CREATE TRIGGER batch_exports_position_on_soft_delete AFTER UPDATE OF deleted ON batch_exports WHEN OLD.deleted <> NEW.deleted
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'organization_batch_exports', CAST(NEW.organization_id AS TEXT), ((((NEW.organization_position - 1) >> bit.column1) + 1) << bit.column1), NEW.deleted - OLD.deleted FROM organizations, (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (17), (18), (19), (20), (21), (22), (23), (24), (25), (26), (27), (28), (29), (30), (31), (32), (33), (34), (35), (36), (37), (38), (39), (40)) AS bit
    WHERE organizations.id = NEW.organization_id AND ((NEW.organization_position - 1) >> bit.column1) & 1 = 0 AND ((((NEW.organization_position - 1) >> bit.column1) + 1) << bit.column1) < 2 * organizations.batch_export_positions
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = gaps + excluded.gaps;
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'environment_batch_exports', CAST(NEW.environment_id AS TEXT), ((((NEW.environment_position - 1) >> bit.column1) + 1) << bit.column1), NEW.deleted - OLD.deleted FROM environments, (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (17), (18), (19), (20), (21), (22), (23), (24), (25), (26), (27), (28), (29), (30), (31), (32), (33), (34), (35), (36), (37), (38), (39), (40)) AS bit
    WHERE environments.id = NEW.environment_id AND ((NEW.environment_position - 1) >> bit.column1) & 1 = 0 AND ((((NEW.environment_position - 1) >> bit.column1) + 1) << bit.column1) < 2 * environments.batch_export_positions
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = gaps + excluded.gaps;
END;
--> statement-breakpoint
DROP TRIGGER user_personal_api_key_count_on_insert;
--> statement-breakpoint
CREATE TRIGGER personal_api_keys_position_on_insert AFTER INSERT ON personal_api_keys
BEGIN
  UPDATE users SET personal_api_key_count = personal_api_key_count + 1, personal_api_key_positions = personal_api_key_positions + 1 WHERE id = NEW.user_id;
  UPDATE personal_api_keys SET position = (SELECT personal_api_key_positions FROM users WHERE id = NEW.user_id) WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER personal_api_keys_tree_on_growth AFTER UPDATE OF position ON personal_api_keys WHEN (NEW.position >= 2 AND ((NEW.position - 1) & (NEW.position - 2)) = 0)
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'personal_api_keys', top.owner, 2 * top.node, top.gaps FROM list_position_gaps AS top
    WHERE top.list = 'personal_api_keys' AND top.owner = CAST(NEW.user_id AS TEXT) AND top.node = NEW.position - 1
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = excluded.gaps;
END;
--> statement-breakpoint
CREATE TRIGGER personal_api_keys_position_on_delete AFTER DELETE ON personal_api_keys
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'personal_api_keys', CAST(OLD.user_id AS TEXT), ((((OLD.position - 1) >> bit.column1) + 1) << bit.column1), 1 FROM users, (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (17), (18), (19), (20), (21), (22), (23), (24), (25), (26), (27), (28), (29), (30), (31), (32), (33), (34), (35), (36), (37), (38), (39), (40)) AS bit
    WHERE users.id = OLD.user_id AND ((OLD.position - 1) >> bit.column1) & 1 = 0 AND ((((OLD.position - 1) >> bit.column1) + 1) << bit.column1) < 2 * users.personal_api_key_positions
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = gaps + excluded.gaps;
END;
--> statement-breakpoint
DROP TRIGGER organization_webhook_count_on_insert;
--> statement-breakpoint
CREATE TRIGGER webhooks_position_on_insert AFTER INSERT ON webhooks
BEGIN
  UPDATE organizations SET webhook_count = webhook_count + 1, webhook_positions = webhook_positions + 1 WHERE id = NEW.organization_id;
  UPDATE webhooks SET position = (SELECT webhook_positions FROM organizations WHERE id = NEW.organization_id) WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER webhooks_tree_on_growth AFTER UPDATE OF position ON webhooks WHEN (NEW.position >= 2 AND ((NEW.position - 1) & (NEW.position - 2)) = 0)
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'webhooks', top.owner, 2 * top.node, top.gaps FROM list_position_gaps AS top
    WHERE top.list = 'webhooks' AND top.owner = CAST(NEW.organization_id AS TEXT) AND top.node = NEW.position - 1
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = excluded.gaps;
END;
--> statement-breakpoint
CREATE TRIGGER webhooks_position_on_delete AFTER DELETE ON webhooks
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'webhooks', CAST(OLD.organization_id AS TEXT), ((((OLD.position - 1) >> bit.column1) + 1) << bit.column1), 1 FROM organizations, (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (17), (18), (19), (20), (21), (22), (23), (24), (25), (26), (27), (28), (29), (30), (31), (32), (33), (34), (35), (36), (37), (38), (39), (40)) AS bit
    WHERE organizations.id = OLD.organization_id AND ((OLD.position - 1) >> bit.column1) & 1 = 0 AND ((((OLD.position - 1) >> bit.column1) + 1) << bit.column1) < 2 * organizations.webhook_positions
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = gaps + excluded.gaps;
END;
--> statement-breakpoint
DROP TRIGGER webhook_delivery_count_on_insert;
--> statement-breakpoint
CREATE TRIGGER webhook_deliveries_position_on_insert AFTER INSERT ON webhook_deliveries
BEGIN
  UPDATE webhooks SET delivery_count = delivery_count + 1, delivery_positions = delivery_positions + 1 WHERE id = NEW.webhook_id;
  UPDATE webhook_deliveries SET position = (SELECT delivery_positions FROM webhooks WHERE id = NEW.webhook_id) WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER webhook_deliveries_tree_on_growth AFTER UPDATE OF position ON webhook_deliveries WHEN (NEW.position >= 2 AND ((NEW.position - 1) & (NEW.position - 2)) = 0)
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'webhook_deliveries', top.owner, 2 * top.node, top.gaps FROM list_position_gaps AS top
    WHERE top.list = 'webhook_deliveries' AND top.owner = CAST(NEW.webhook_id AS TEXT) AND top.node = NEW.position - 1
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = excluded.gaps;
END;
--> statement-breakpoint
CREATE TRIGGER webhook_deliveries_position_on_delete AFTER DELETE ON webhook_deliveries
BEGIN
  INSERT INTO list_position_gaps (list, owner, node, gaps)
    SELECT 'webhook_deliveries', CAST(OLD.webhook_id AS TEXT), ((((OLD.position - 1) >> bit.column1) + 1) << bit.column1), 1 FROM webhooks, (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (17), (18), (19), (20), (21), (22), (23), (24), (25), (26), (27), (28), (29), (30), (31), (32), (33), (34), (35), (36), (37), (38), (39), (40)) AS bit
    WHERE webhooks.id = OLD.webhook_id AND ((OLD.position - 1) >> bit.column1) & 1 = 0 AND ((((OLD.position - 1) >> bit.column1) + 1) << bit.column1) < 2 * webhooks.delivery_positions
  ON CONFLICT (list, owner, node) DO UPDATE SET gaps = gaps + excluded.gaps;
END;
--> statement-breakpoint
CREATE TRIGGER organizations_list_positions_on_delete AFTER DELETE ON organizations
BEGIN
  DELETE FROM list_position_gaps WHERE list IN ('members', 'invites', 'projects', 'organization_batch_exports', 'webhooks') AND owner = CAST(OLD.id AS TEXT);
END;
--> statement-breakpoint
CREATE TRIGGER environments_list_positions_on_delete AFTER DELETE ON environments
BEGIN
  DELETE FROM list_position_gaps WHERE list IN ('environment_batch_exports') AND owner = CAST(OLD.id AS TEXT);
END;
--> statement-breakpoint
CREATE TRIGGER users_list_positions_on_delete AFTER DELETE ON users
BEGIN
  DELETE FROM list_position_gaps WHERE list IN ('personal_api_keys') AND owner = CAST(OLD.id AS TEXT);
END;
--> statement-breakpoint
CREATE TRIGGER webhooks_list_positions_on_delete AFTER DELETE ON webhooks
BEGIN
  DELETE FROM list_position_gaps WHERE list IN ('webhook_deliveries') AND owner = CAST(OLD.id AS TEXT);
END;
