-- A text belongs to one tile. Dashboard copies made before shared their source's text rows, so
-- editing a copy's text edited the original: every tile but the first of a shared text gets its
-- own copy of it (copy_for_tile maps each new row to its tile while this runs), then a unique
-- index keeps it so.
ALTER TABLE `texts` ADD `copy_for_tile` integer;--> statement-breakpoint
INSERT INTO `texts` (`environment_id`, `body`, `created_by_id`, `last_modified_by_id`, `last_modified_at`, `copy_for_tile`)
  SELECT `texts`.`environment_id`, `texts`.`body`, `texts`.`created_by_id`, `texts`.`last_modified_by_id`, `texts`.`last_modified_at`, `tile`.`id`
  FROM `dashboard_tiles` AS `tile` JOIN `texts` ON `texts`.`id` = `tile`.`text_id`
  WHERE EXISTS (SELECT 1 FROM `dashboard_tiles` AS `earlier` WHERE `earlier`.`text_id` = `tile`.`text_id` AND `earlier`.`id` < `tile`.`id`);--> statement-breakpoint
UPDATE `dashboard_tiles` SET `text_id` = (SELECT `id` FROM `texts` WHERE `copy_for_tile` = `dashboard_tiles`.`id`)
  WHERE `id` IN (SELECT `copy_for_tile` FROM `texts` WHERE `copy_for_tile` IS NOT NULL);--> statement-breakpoint
ALTER TABLE `texts` DROP COLUMN `copy_for_tile`;--> statement-breakpoint
DROP INDEX `dashboard_tiles_text`;--> statement-breakpoint
CREATE UNIQUE INDEX `dashboard_tiles_text` ON `dashboard_tiles` (`text_id`);
