ALTER TABLE `dashboard_tiles` ADD `show_description` integer;--> statement-breakpoint
ALTER TABLE `dashboard_tiles` ADD `transparent_background` integer;--> statement-breakpoint
ALTER TABLE `dashboard_tiles` ADD `filters_overrides` text;--> statement-breakpoint
ALTER TABLE `dashboards` ADD `breakdown_colors` text DEFAULT '[]';--> statement-breakpoint
ALTER TABLE `dashboards` ADD `data_color_theme_id` integer;--> statement-breakpoint
ALTER TABLE `dashboards` ADD `quick_filter_ids` text;