-- Project names are unique as readers see them: name_key is now nameKey(name) (NFKC, case folded,
-- invisible characters dropped; src/platform/names.ts), computed in the Worker, which SQL cannot
-- do. A name of printable ASCII only has the same key either way: those rows are marked current
-- (version 1). The others keep the key SQLite's lower() gave them (version 0) until the scheduled
-- pass recomputes it (recomputeStaleNameKeys), a batch at a time, through the partial index.
ALTER TABLE `projects` ADD `name_key_version` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE projects SET name_key_version = 1 WHERE name NOT GLOB '*[^ -~]*';--> statement-breakpoint
CREATE INDEX `projects_stale_name_key` ON `projects` (`id`) WHERE name_key_version < 1;
