DROP INDEX `dashboard_tiles_dashboard`;--> statement-breakpoint
CREATE INDEX `dashboard_tiles_dashboard_live` ON `dashboard_tiles` (`dashboard_id`,`deleted`);--> statement-breakpoint
-- A revoked key's kept answers go with the expiry cron (bounded statements, within 24 hours) rather
-- than all at once with the key: a key may keep tens of thousands, and one statement deleting them
-- would hold the database for every tenant. None can be replayed: its key no longer authenticates.
DROP TRIGGER `personal_api_keys_idempotency_on_delete`;--> statement-breakpoint
DROP TRIGGER `service_api_keys_idempotency_on_delete`;
