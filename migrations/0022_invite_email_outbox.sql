ALTER TABLE `invites` ADD `email_status` text DEFAULT 'not_sent' NOT NULL;--> statement-breakpoint
ALTER TABLE `invites` ADD `email_attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `invites` ADD `email_next_attempt_at` text;--> statement-breakpoint
ALTER TABLE `invites` ADD `email_outbox` text;--> statement-breakpoint
CREATE INDEX `invites_email_pending` ON `invites` (`email_next_attempt_at`) WHERE "invites"."email_status" = 'pending';--> statement-breakpoint
-- Invites written before e-mail went through the queue: those whose send was made after the response (its outcome
-- went to the log only) count as sent; those not sent for want of a transport, as not configured.
UPDATE `invites` SET `email_status` = CASE WHEN `emailing_attempt_made` = 1 THEN 'sent' WHEN `send_email` = 1 THEN 'not_configured' ELSE 'not_sent' END;
