ALTER TABLE `batch_exports` ADD `offset_day` integer;--> statement-breakpoint
ALTER TABLE `batch_exports` ADD `offset_hour` integer;