ALTER TABLE `organizations` ADD `webhook_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `delivery_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The webhook list's and the deliveries list's counts, kept by triggers as the other lists' are
-- (list_counters): a list reads its count in one row, and the webhook limit is checked against it.
UPDATE organizations SET webhook_count = (SELECT count(*) FROM webhooks WHERE webhooks.organization_id = organizations.id);
--> statement-breakpoint
UPDATE webhooks SET delivery_count = (SELECT count(*) FROM webhook_deliveries WHERE webhook_deliveries.webhook_id = webhooks.id);
--> statement-breakpoint
CREATE TRIGGER organization_webhook_count_on_insert AFTER INSERT ON webhooks
BEGIN
  UPDATE organizations SET webhook_count = webhook_count + 1 WHERE id = NEW.organization_id;
END;
--> statement-breakpoint
CREATE TRIGGER organization_webhook_count_on_delete AFTER DELETE ON webhooks
BEGIN
  UPDATE organizations SET webhook_count = webhook_count - 1 WHERE id = OLD.organization_id;
END;
--> statement-breakpoint
CREATE TRIGGER webhook_delivery_count_on_insert AFTER INSERT ON webhook_deliveries
BEGIN
  UPDATE webhooks SET delivery_count = delivery_count + 1 WHERE id = NEW.webhook_id;
END;
--> statement-breakpoint
CREATE TRIGGER webhook_delivery_count_on_delete AFTER DELETE ON webhook_deliveries
BEGIN
  UPDATE webhooks SET delivery_count = delivery_count - 1 WHERE id = OLD.webhook_id;
END;
