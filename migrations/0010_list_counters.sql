DROP INDEX `batch_exports_environment_created`;--> statement-breakpoint
DROP INDEX `batch_exports_organization_created`;--> statement-breakpoint
CREATE INDEX `batch_exports_environment_created` ON `batch_exports` (`environment_id`,`deleted`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `batch_exports_organization_created` ON `batch_exports` (`organization_id`,`deleted`,`created_at`,`id`);--> statement-breakpoint
DROP INDEX `domains_organization_domain`;--> statement-breakpoint
CREATE INDEX `domains_organization_domain` ON `domains` (`organization_id`,`domain`,`id`);--> statement-breakpoint
DROP INDEX `invites_organization_created`;--> statement-breakpoint
CREATE INDEX `invites_organization_created` ON `invites` (`organization_id`,`created_at`,`id`);--> statement-breakpoint
DROP INDEX `organization_memberships_organization_joined`;--> statement-breakpoint
CREATE INDEX `organization_memberships_organization_joined` ON `organization_memberships` (`organization_id`,`joined_at`,`id`);--> statement-breakpoint
DROP INDEX `personal_api_keys_user`;--> statement-breakpoint
CREATE INDEX `personal_api_keys_user` ON `personal_api_keys` (`user_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `environments` ADD `batch_export_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `environments` ADD `dashboard_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `organizations` ADD `invite_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `organizations` ADD `domain_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `organizations` ADD `project_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `organizations` ADD `batch_export_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `personal_api_key_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Every list's exact count is kept here by triggers, as organizations.member_count is (0006): every
-- way a row is written (each route, joins by invite, cascades from a deleted project or
-- organization) keeps it exact, and a list reads its count in one row, not one per item. Soft
-- deletes (batch_exports.deleted, dashboards.deleted) move the count when the flag flips.
-- First the counts of the rows that exist already.
UPDATE organizations SET
  invite_count = (SELECT count(*) FROM invites WHERE invites.organization_id = organizations.id),
  domain_count = (SELECT count(*) FROM domains WHERE domains.organization_id = organizations.id),
  project_count = (SELECT count(*) FROM projects WHERE projects.organization_id = organizations.id),
  batch_export_count = (
    SELECT count(*) FROM batch_exports WHERE batch_exports.organization_id = organizations.id AND batch_exports.deleted = 0
  );
--> statement-breakpoint
UPDATE environments SET
  batch_export_count = (
    SELECT count(*) FROM batch_exports WHERE batch_exports.environment_id = environments.id AND batch_exports.deleted = 0
  ),
  dashboard_count = (
    SELECT count(*) FROM dashboards WHERE dashboards.environment_id = environments.id AND dashboards.deleted = 0
  );
--> statement-breakpoint
UPDATE users SET personal_api_key_count = (SELECT count(*) FROM personal_api_keys WHERE personal_api_keys.user_id = users.id);
--> statement-breakpoint
CREATE TRIGGER organization_invite_count_on_insert AFTER INSERT ON invites
BEGIN
  UPDATE organizations SET invite_count = invite_count + 1 WHERE id = NEW.organization_id;
END;
--> statement-breakpoint
CREATE TRIGGER organization_invite_count_on_delete AFTER DELETE ON invites
BEGIN
  UPDATE organizations SET invite_count = invite_count - 1 WHERE id = OLD.organization_id;
END;
--> statement-breakpoint
CREATE TRIGGER organization_domain_count_on_insert AFTER INSERT ON domains
BEGIN
  UPDATE organizations SET domain_count = domain_count + 1 WHERE id = NEW.organization_id;
END;
--> statement-breakpoint
CREATE TRIGGER organization_domain_count_on_delete AFTER DELETE ON domains
BEGIN
  UPDATE organizations SET domain_count = domain_count - 1 WHERE id = OLD.organization_id;
END;
--> statement-breakpoint
CREATE TRIGGER organization_project_count_on_insert AFTER INSERT ON projects
BEGIN
  UPDATE organizations SET project_count = project_count + 1 WHERE id = NEW.organization_id;
END;
--> statement-breakpoint
CREATE TRIGGER organization_project_count_on_delete AFTER DELETE ON projects
BEGIN
  UPDATE organizations SET project_count = project_count - 1 WHERE id = OLD.organization_id;
END;
--> statement-breakpoint
CREATE TRIGGER user_personal_api_key_count_on_insert AFTER INSERT ON personal_api_keys
BEGIN
  UPDATE users SET personal_api_key_count = personal_api_key_count + 1 WHERE id = NEW.user_id;
END;
--> statement-breakpoint
CREATE TRIGGER user_personal_api_key_count_on_delete AFTER DELETE ON personal_api_keys
BEGIN
  UPDATE users SET personal_api_key_count = personal_api_key_count - 1 WHERE id = OLD.user_id;
END;
--> statement-breakpoint
CREATE TRIGGER batch_export_counts_on_insert AFTER INSERT ON batch_exports WHEN NEW.deleted = 0
BEGIN
  UPDATE organizations SET batch_export_count = batch_export_count + 1 WHERE id = NEW.organization_id;
  UPDATE environments SET batch_export_count = batch_export_count + 1 WHERE id = NEW.environment_id;
END;
--> statement-breakpoint
CREATE TRIGGER batch_export_counts_on_delete AFTER DELETE ON batch_exports WHEN OLD.deleted = 0
BEGIN
  UPDATE organizations SET batch_export_count = batch_export_count - 1 WHERE id = OLD.organization_id;
  UPDATE environments SET batch_export_count = batch_export_count - 1 WHERE id = OLD.environment_id;
END;
--> statement-breakpoint
-- A soft delete (or its undoing) leaves or rejoins the list. An export never changes environment.
CREATE TRIGGER batch_export_counts_on_soft_delete AFTER UPDATE OF deleted ON batch_exports WHEN OLD.deleted <> NEW.deleted
BEGIN
  UPDATE organizations SET batch_export_count = batch_export_count + OLD.deleted - NEW.deleted WHERE id = NEW.organization_id;
  UPDATE environments SET batch_export_count = batch_export_count + OLD.deleted - NEW.deleted WHERE id = NEW.environment_id;
END;
--> statement-breakpoint
CREATE TRIGGER environment_dashboard_count_on_insert AFTER INSERT ON dashboards WHEN NEW.deleted = 0
BEGIN
  UPDATE environments SET dashboard_count = dashboard_count + 1 WHERE id = NEW.environment_id;
END;
--> statement-breakpoint
CREATE TRIGGER environment_dashboard_count_on_delete AFTER DELETE ON dashboards WHEN OLD.deleted = 0
BEGIN
  UPDATE environments SET dashboard_count = dashboard_count - 1 WHERE id = OLD.environment_id;
END;
--> statement-breakpoint
-- A dashboard never changes environment; a soft delete or restore moves the count.
CREATE TRIGGER environment_dashboard_count_on_soft_delete AFTER UPDATE OF deleted ON dashboards WHEN OLD.deleted <> NEW.deleted
BEGIN
  UPDATE environments SET dashboard_count = dashboard_count + OLD.deleted - NEW.deleted WHERE id = NEW.environment_id;
END;
