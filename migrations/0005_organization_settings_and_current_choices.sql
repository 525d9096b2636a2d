ALTER TABLE `dashboards` ADD `last_accessed_at` text;--> statement-breakpoint
ALTER TABLE `organizations` ADD `slug` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `organizations` ADD `logo_media_id` text;--> statement-breakpoint
ALTER TABLE `organizations` ADD `is_member_join_email_enabled` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `organizations` ADD `enforce_2fa` integer;--> statement-breakpoint
ALTER TABLE `organizations` ADD `members_can_invite` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `organizations` ADD `members_can_use_personal_api_keys` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `organizations` ADD `member_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `notification_settings` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `theme_mode` text;--> statement-breakpoint
ALTER TABLE `users` ADD `current_organization_id` text;--> statement-breakpoint
ALTER TABLE `users` ADD `current_project_id` integer;