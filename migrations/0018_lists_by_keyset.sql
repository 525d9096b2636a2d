-- Lists page by a keyset cursor along their index (src/platform/pagination.ts): the positions and
-- trees of gaps of list_positions, the summaries of project_summaries and the shards of
-- sorted_list_shards go, with every trigger that kept them. Their insert triggers also kept the
-- counts; the counters' own insert triggers (migrations 0006, list_counters, webhook_counters)
-- come back. Triggers first: a column or table they name cannot be dropped under them.
DROP TRIGGER organization_memberships_position_on_insert; DROP TRIGGER members_tree_on_growth;
DROP TRIGGER organization_memberships_position_on_delete; DROP TRIGGER invites_position_on_insert;
DROP TRIGGER invites_tree_on_growth; DROP TRIGGER invites_position_on_delete;
DROP TRIGGER projects_position_on_insert; DROP TRIGGER projects_tree_on_growth;
DROP TRIGGER projects_position_on_delete; DROP TRIGGER batch_exports_position_on_insert;
DROP TRIGGER organization_batch_exports_tree_on_growth; DROP TRIGGER environment_batch_exports_tree_on_growth;
DROP TRIGGER batch_exports_position_on_delete; DROP TRIGGER batch_exports_position_on_soft_delete;
DROP TRIGGER personal_api_keys_position_on_insert; DROP TRIGGER personal_api_keys_tree_on_growth;
DROP TRIGGER personal_api_keys_position_on_delete; DROP TRIGGER webhooks_position_on_insert;
DROP TRIGGER webhooks_tree_on_growth; DROP TRIGGER webhooks_position_on_delete;
DROP TRIGGER webhook_deliveries_position_on_insert; DROP TRIGGER webhook_deliveries_tree_on_growth;
DROP TRIGGER webhook_deliveries_position_on_delete; DROP TRIGGER organizations_list_positions_on_delete;
DROP TRIGGER environments_list_positions_on_delete; DROP TRIGGER users_list_positions_on_delete;
DROP TRIGGER webhooks_list_positions_on_delete;
--> statement-breakpoint
DROP TRIGGER projects_summary_on_position; DROP TRIGGER projects_summary_on_update;
DROP TRIGGER projects_summary_on_delete; DROP TRIGGER access_controls_project_default_on_insert;
DROP TRIGGER access_controls_project_default_on_update; DROP TRIGGER access_controls_project_default_on_delete;
--> statement-breakpoint
DROP TRIGGER dashboards_sorted_on_insert; DROP TRIGGER dashboards_sorted_on_delete;
DROP TRIGGER dashboards_sorted_on_update; DROP TRIGGER environments_sorted_dashboards_on_delete;
DROP TRIGGER domains_sorted_on_insert; DROP TRIGGER domains_sorted_on_delete; DROP TRIGGER domains_sorted_on_update;
DROP TRIGGER organizations_sorted_domains_on_delete;
--> statement-breakpoint
DROP TABLE `list_position_gaps`;--> statement-breakpoint
DROP TABLE `project_summaries`;--> statement-breakpoint
DROP TABLE `sorted_list_shards`;--> statement-breakpoint
DROP INDEX `access_controls_environment`;--> statement-breakpoint
CREATE INDEX `access_controls_environment_resource` ON `access_controls` (`environment_id`,`resource`,`organization_membership_id`);--> statement-breakpoint
DROP INDEX `batch_exports_environment_position`;--> statement-breakpoint
DROP INDEX `batch_exports_organization_position`;--> statement-breakpoint
CREATE INDEX `batch_exports_environment_created` ON `batch_exports` (`environment_id`,`deleted`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `batch_exports_organization_created` ON `batch_exports` (`organization_id`,`deleted`,`created_at`,`id`,`environment_id`);--> statement-breakpoint
ALTER TABLE `batch_exports` DROP COLUMN `organization_position`;--> statement-breakpoint
ALTER TABLE `batch_exports` DROP COLUMN `environment_position`;--> statement-breakpoint
DROP INDEX `invites_organization_position`;--> statement-breakpoint
CREATE INDEX `invites_organization_created` ON `invites` (`organization_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `invites` DROP COLUMN `position`;--> statement-breakpoint
DROP INDEX `organization_memberships_organization_position`;--> statement-breakpoint
CREATE INDEX `organization_memberships_organization_joined` ON `organization_memberships` (`organization_id`,`joined_at`,`id`);--> statement-breakpoint
ALTER TABLE `organization_memberships` DROP COLUMN `position`;--> statement-breakpoint
DROP INDEX `personal_api_keys_user_position`;--> statement-breakpoint
CREATE INDEX `personal_api_keys_user` ON `personal_api_keys` (`user_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `personal_api_keys` DROP COLUMN `position`;--> statement-breakpoint
DROP INDEX `projects_organization_position`;--> statement-breakpoint
CREATE INDEX `projects_organization_private` ON `projects` (`organization_id`) WHERE "projects"."access_control" = 1;--> statement-breakpoint
ALTER TABLE `projects` DROP COLUMN `position`;--> statement-breakpoint
DROP INDEX `webhook_deliveries_webhook_position`;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_created` ON `webhook_deliveries` (`webhook_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `webhook_deliveries` DROP COLUMN `position`;--> statement-breakpoint
DROP INDEX `webhooks_organization_position`;--> statement-breakpoint
CREATE INDEX `webhooks_organization_created` ON `webhooks` (`organization_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `webhooks` DROP COLUMN `delivery_positions`;--> statement-breakpoint
ALTER TABLE `webhooks` DROP COLUMN `position`;--> statement-breakpoint
ALTER TABLE `dashboards` DROP COLUMN `list_key`;--> statement-breakpoint
ALTER TABLE `domains` DROP COLUMN `list_key`;--> statement-breakpoint
ALTER TABLE `environments` DROP COLUMN `batch_export_positions`;--> statement-breakpoint
ALTER TABLE `organizations` DROP COLUMN `member_positions`;--> statement-breakpoint
ALTER TABLE `organizations` DROP COLUMN `invite_positions`;--> statement-breakpoint
ALTER TABLE `organizations` DROP COLUMN `project_positions`;--> statement-breakpoint
ALTER TABLE `organizations` DROP COLUMN `batch_export_positions`;--> statement-breakpoint
ALTER TABLE `organizations` DROP COLUMN `webhook_positions`;--> statement-breakpoint
ALTER TABLE `users` DROP COLUMN `personal_api_key_positions`;
--> statement-breakpoint
CREATE TRIGGER organization_member_count_on_join AFTER INSERT ON organization_memberships
BEGIN UPDATE organizations SET member_count = member_count + 1 WHERE id = NEW.organization_id; END;
--> statement-breakpoint
CREATE TRIGGER organization_invite_count_on_insert AFTER INSERT ON invites
BEGIN UPDATE organizations SET invite_count = invite_count + 1 WHERE id = NEW.organization_id; END;
--> statement-breakpoint
CREATE TRIGGER organization_project_count_on_insert AFTER INSERT ON projects
BEGIN UPDATE organizations SET project_count = project_count + 1 WHERE id = NEW.organization_id; END;
--> statement-breakpoint
CREATE TRIGGER batch_export_counts_on_insert AFTER INSERT ON batch_exports WHEN NEW.deleted = 0
BEGIN
  UPDATE organizations SET batch_export_count = batch_export_count + 1 WHERE id = NEW.organization_id;
  UPDATE environments SET batch_export_count = batch_export_count + 1 WHERE id = NEW.environment_id;
END;
--> statement-breakpoint
CREATE TRIGGER user_personal_api_key_count_on_insert AFTER INSERT ON personal_api_keys
BEGIN UPDATE users SET personal_api_key_count = personal_api_key_count + 1 WHERE id = NEW.user_id; END;
--> statement-breakpoint
CREATE TRIGGER organization_webhook_count_on_insert AFTER INSERT ON webhooks
BEGIN UPDATE organizations SET webhook_count = webhook_count + 1 WHERE id = NEW.organization_id; END;
--> statement-breakpoint
CREATE TRIGGER webhook_delivery_count_on_insert AFTER INSERT ON webhook_deliveries
BEGIN UPDATE webhooks SET delivery_count = delivery_count + 1 WHERE id = NEW.webhook_id; END;
