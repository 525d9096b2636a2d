CREATE TABLE `idempotency_keys` (
	`api_key_id` text NOT NULL,
	`key_hash` text NOT NULL,
	`claim` text NOT NULL,
	`request_hash` text NOT NULL,
	`response_status` integer,
	`response_body` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	PRIMARY KEY(`api_key_id`, `key_hash`),
	FOREIGN KEY (`api_key_id`) REFERENCES `personal_api_keys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_expires_at` ON `idempotency_keys` (`expires_at`);