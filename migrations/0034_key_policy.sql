CREATE TABLE `personal_api_key_blocks` (
	`key_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`blocked_at` text NOT NULL,
	PRIMARY KEY(`key_id`, `organization_id`),
	FOREIGN KEY (`key_id`) REFERENCES `personal_api_keys`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `personal_api_key_blocks_organization` ON `personal_api_key_blocks` (`organization_id`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_idempotency_keys` (
	`api_key_id` text NOT NULL,
	`key_hash` text NOT NULL,
	`claim` text NOT NULL,
	`request_hash` text NOT NULL,
	`response_status` integer,
	`response_body` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	PRIMARY KEY(`api_key_id`, `key_hash`)
);
--> statement-breakpoint
INSERT INTO `__new_idempotency_keys`("api_key_id", "key_hash", "claim", "request_hash", "response_status", "response_body", "created_at", "expires_at") SELECT "api_key_id", "key_hash", "claim", "request_hash", "response_status", "response_body", "created_at", "expires_at" FROM `idempotency_keys`;--> statement-breakpoint
DROP TABLE `idempotency_keys`;--> statement-breakpoint
ALTER TABLE `__new_idempotency_keys` RENAME TO `idempotency_keys`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `idempotency_keys_expires_at` ON `idempotency_keys` (`expires_at`);--> statement-breakpoint
ALTER TABLE `organizations` ADD `personal_api_key_max_scopes` text;--> statement-breakpoint
ALTER TABLE `organizations` ADD `api_key_max_lifetime_days` integer;