ALTER TABLE `webhooks` ADD `deletion_scheduled_at` text;--> statement-breakpoint
CREATE INDEX `webhooks_deletion_scheduled` ON `webhooks` (`deletion_scheduled_at`) WHERE "webhooks"."deletion_scheduled_at" is not null;--> statement-breakpoint
-- A webhook leaves its organization's count when its deletion is scheduled, not when its row goes
-- (after its deliveries, in background steps).
DROP TRIGGER `organization_webhook_count_on_delete`;--> statement-breakpoint
CREATE TRIGGER `organization_webhook_count_on_delete` AFTER DELETE ON `webhooks`
WHEN OLD.`deletion_scheduled_at` IS NULL
BEGIN UPDATE `organizations` SET `webhook_count` = `webhook_count` - 1 WHERE `id` = OLD.`organization_id`; END;--> statement-breakpoint
CREATE TRIGGER `organization_webhook_count_on_deletion_scheduled` AFTER UPDATE OF `deletion_scheduled_at` ON `webhooks`
WHEN OLD.`deletion_scheduled_at` IS NULL AND NEW.`deletion_scheduled_at` IS NOT NULL
BEGIN UPDATE `organizations` SET `webhook_count` = `webhook_count` - 1 WHERE `id` = NEW.`organization_id`; END;
