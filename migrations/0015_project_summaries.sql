CREATE TABLE `project_summaries` (
	`organization_id` text NOT NULL,
	`shard` integer NOT NULL,
	`projects` text NOT NULL,
	PRIMARY KEY(`organization_id`, `shard`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
DROP INDEX `access_controls_membership`;--> statement-breakpoint
CREATE INDEX `access_controls_membership_resource` ON `access_controls` (`organization_membership_id`,`resource`,`resource_id`,`access_level`);--> statement-breakpoint
-- Backfill: every project in its organization's shard, with its default access rule.
INSERT INTO project_summaries (organization_id, shard, projects)
SELECT p.organization_id, (p.position - 1) / 128, json_group_object(CAST(p.id AS TEXT), json_object('id', p.id, 'uuid', p.uuid, 'api_token', p.api_token, 'name', p.name, 'completed_snippet_onboarding', p.completed_snippet_onboarding, 'has_completed_onboarding_for', json(p.has_completed_onboarding_for), 'ingested_event', p.ingested_event, 'is_demo', p.is_demo, 'timezone', p.timezone, 'access_control', p.access_control, 'default_access', d.access_level))
FROM projects AS p
LEFT JOIN access_controls AS d ON d.resource = 'project' AND d.resource_id = CAST(p.id AS TEXT) AND d.organization_membership_id IS NULL
GROUP BY p.organization_id, (p.position - 1) / 128;
--> statement-breakpoint
-- A project joins its shard once its list position is issued (projects_position_on_insert sets it).
CREATE TRIGGER projects_summary_on_position AFTER UPDATE OF position ON projects WHEN OLD.position = 0 AND NEW.position > 0
BEGIN
  INSERT OR IGNORE INTO project_summaries (organization_id, shard, projects) VALUES (NEW.organization_id, (NEW.position - 1) / 128, '{}');
  UPDATE project_summaries SET projects = json_set(projects, '$."' || NEW.id || '"', json_object('id', NEW.id, 'uuid', NEW.uuid, 'api_token', NEW.api_token, 'name', NEW.name, 'completed_snippet_onboarding', NEW.completed_snippet_onboarding, 'has_completed_onboarding_for', json(NEW.has_completed_onboarding_for), 'ingested_event', NEW.ingested_event, 'is_demo', NEW.is_demo, 'timezone', NEW.timezone, 'access_control', NEW.access_control, 'default_access', NULL))
  WHERE organization_id = NEW.organization_id AND shard = (NEW.position - 1) / 128;
END;
--> statement-breakpoint
CREATE TRIGGER projects_summary_on_update AFTER UPDATE OF name, api_token, timezone, access_control, is_demo, completed_snippet_onboarding, has_completed_onboarding_for, ingested_event ON projects WHEN NEW.position > 0
BEGIN
  UPDATE project_summaries SET projects = json_set(projects, '$."' || NEW.id || '".name', NEW.name, '$."' || NEW.id || '".api_token', NEW.api_token, '$."' || NEW.id || '".timezone', NEW.timezone, '$."' || NEW.id || '".access_control', NEW.access_control, '$."' || NEW.id || '".is_demo', NEW.is_demo, '$."' || NEW.id || '".completed_snippet_onboarding', NEW.completed_snippet_onboarding, '$."' || NEW.id || '".ingested_event', NEW.ingested_event, '$."' || NEW.id || '".has_completed_onboarding_for', json(NEW.has_completed_onboarding_for))
  WHERE organization_id = NEW.organization_id AND shard = (NEW.position - 1) / 128;
END;
--> statement-breakpoint
CREATE TRIGGER projects_summary_on_delete AFTER DELETE ON projects
BEGIN
  UPDATE project_summaries SET projects = json_remove(projects, '$."' || OLD.id || '"')
  WHERE organization_id = OLD.organization_id AND shard = (OLD.position - 1) / 128;
  DELETE FROM project_summaries WHERE organization_id = OLD.organization_id AND shard = (OLD.position - 1) / 128 AND projects = '{}';
END;
--> statement-breakpoint
CREATE TRIGGER access_controls_project_default_on_insert AFTER INSERT ON access_controls WHEN NEW.resource = 'project' AND NEW.organization_membership_id IS NULL
BEGIN
  UPDATE project_summaries SET projects = json_set(projects, '$."' || NEW.resource_id || '".default_access', NEW.access_level)
  WHERE (organization_id, shard) = (SELECT organization_id, (projects.position - 1) / 128 FROM projects WHERE id = CAST(NEW.resource_id AS INTEGER));
END;
--> statement-breakpoint
CREATE TRIGGER access_controls_project_default_on_update AFTER UPDATE OF access_level ON access_controls WHEN NEW.resource = 'project' AND NEW.organization_membership_id IS NULL
BEGIN
  UPDATE project_summaries SET projects = json_set(projects, '$."' || NEW.resource_id || '".default_access', NEW.access_level)
  WHERE (organization_id, shard) = (SELECT organization_id, (projects.position - 1) / 128 FROM projects WHERE id = CAST(NEW.resource_id AS INTEGER));
END;
--> statement-breakpoint
CREATE TRIGGER access_controls_project_default_on_delete AFTER DELETE ON access_controls WHEN OLD.resource = 'project' AND OLD.organization_membership_id IS NULL
BEGIN
  UPDATE project_summaries SET projects = json_remove(projects, '$."' || OLD.resource_id || '".default_access')
  WHERE (organization_id, shard) = (SELECT organization_id, (projects.position - 1) / 128 FROM projects WHERE id = CAST(OLD.resource_id AS INTEGER));
END;
