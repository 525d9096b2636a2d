-- A kept answer names its key (personal or service) without a foreign key, since it may name
-- either table: these delete a key's kept answers with the key, however it goes (revoked, or
-- with its organization or user by cascade), so that no sealed answer outlives its key.
CREATE TRIGGER `personal_api_keys_idempotency_on_delete` AFTER DELETE ON `personal_api_keys` BEGIN
  DELETE FROM `idempotency_keys` WHERE `api_key_id` = old.`id`;
END;--> statement-breakpoint
CREATE TRIGGER `service_api_keys_idempotency_on_delete` AFTER DELETE ON `service_api_keys` BEGIN
  DELETE FROM `idempotency_keys` WHERE `api_key_id` = old.`id`;
END;
