ALTER TABLE `dashboards` ADD `sharing_enabled` integer DEFAULT false NOT NULL;--> statement-breakpoint
UPDATE dashboards SET sharing_enabled = coalesce((SELECT enabled FROM sharing_configurations WHERE dashboard_id = dashboards.id), 0);
--> statement-breakpoint
CREATE TRIGGER dashboard_sharing_enabled_on_insert AFTER INSERT ON sharing_configurations
BEGIN
  UPDATE dashboards SET sharing_enabled = NEW.enabled WHERE id = NEW.dashboard_id;
END;
--> statement-breakpoint
CREATE TRIGGER dashboard_sharing_enabled_on_update AFTER UPDATE OF enabled ON sharing_configurations
BEGIN
  UPDATE dashboards SET sharing_enabled = NEW.enabled WHERE id = NEW.dashboard_id;
END;
--> statement-breakpoint
CREATE TRIGGER dashboard_sharing_enabled_on_delete AFTER DELETE ON sharing_configurations
BEGIN
  UPDATE dashboards SET sharing_enabled = 0 WHERE id = OLD.dashboard_id;
END;
