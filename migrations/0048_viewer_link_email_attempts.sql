ALTER TABLE `share_viewer_links` ADD `email_next_attempt_at` text;--> statement-breakpoint
-- Links whose e-mail still waits: due from when they were asked for, as the cron judged them until now.
UPDATE `share_viewer_links` SET `email_next_attempt_at` = `created_at` WHERE `email_outbox` IS NOT NULL;
