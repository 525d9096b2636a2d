ALTER TABLE `batch_exports` ADD `offset_day` integer;--> statement-breakpoint
ALTER TABLE `batch_exports` ADD `offset_hour` integer;--> statement-breakpoint
ALTER TABLE `dashboard_tiles` ADD `show_description` integer;--> statement-breakpoint
ALTER TABLE `dashboard_tiles` ADD `transparent_background` integer;--> statement-breakpoint
ALTER TABLE `dashboard_tiles` ADD `filters_overrides` text;--> statement-breakpoint
ALTER TABLE `dashboards` ADD `breakdown_colors` text DEFAULT '[]';--> statement-breakpoint
ALTER TABLE `dashboards` ADD `data_color_theme_id` integer;--> statement-breakpoint
ALTER TABLE `dashboards` ADD `quick_filter_ids` text;--> statement-breakpoint
ALTER TABLE `users` ADD `preferences` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
CREATE INDEX `invites_target_email` ON `invites` (`target_email`,`created_at`);