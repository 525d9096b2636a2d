ALTER TABLE `projects` ADD `deletion_scheduled_at` text;--> statement-breakpoint
CREATE INDEX `projects_deletion_scheduled` ON `projects` (`deletion_scheduled_at`) WHERE "projects"."deletion_scheduled_at" is not null;--> statement-breakpoint
-- A project scheduled for deletion leaves its organization's count at once; its row, deleted
-- later by the background job, is then not counted again.
DROP TRIGGER organization_project_count_on_delete;
--> statement-breakpoint
CREATE TRIGGER organization_project_count_on_delete AFTER DELETE ON projects WHEN OLD.deletion_scheduled_at IS NULL
BEGIN UPDATE organizations SET project_count = project_count - 1 WHERE id = OLD.organization_id; END;
--> statement-breakpoint
CREATE TRIGGER organization_project_count_on_deletion_scheduled AFTER UPDATE OF deletion_scheduled_at ON projects
WHEN OLD.deletion_scheduled_at IS NULL AND NEW.deletion_scheduled_at IS NOT NULL
BEGIN UPDATE organizations SET project_count = project_count - 1 WHERE id = NEW.organization_id; END;
