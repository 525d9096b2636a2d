CREATE TABLE `access_controls` (
	`id` text PRIMARY KEY NOT NULL,
	`environment_id` integer NOT NULL,
	`resource` text NOT NULL,
	`resource_id` text NOT NULL,
	`organization_membership_id` text,
	`access_level` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`environment_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`organization_membership_id`) REFERENCES `organization_memberships`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `access_controls_resource_member` ON `access_controls` (`resource`,`resource_id`,`organization_membership_id`);--> statement-breakpoint
CREATE TABLE `batch_exports` (
	`id` text PRIMARY KEY NOT NULL,
	`environment_id` integer NOT NULL,
	`organization_id` text NOT NULL,
	`name` text NOT NULL,
	`model` text DEFAULT 'events' NOT NULL,
	`destination_type` text NOT NULL,
	`destination_config` text NOT NULL,
	`interval` text NOT NULL,
	`paused` integer DEFAULT false NOT NULL,
	`last_paused_at` text,
	`start_at` text,
	`end_at` text,
	`hogql_query` text DEFAULT '' NOT NULL,
	`filters` text,
	`timezone` text DEFAULT 'UTC' NOT NULL,
	`deleted` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	`last_updated_at` text NOT NULL,
	FOREIGN KEY (`environment_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `batch_exports_environment_created` ON `batch_exports` (`environment_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `batch_exports_organization_created` ON `batch_exports` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `dashboard_collaborators` (
	`id` text PRIMARY KEY NOT NULL,
	`dashboard_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`level` integer NOT NULL,
	`added_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`dashboard_id`) REFERENCES `dashboards`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dashboard_collaborators_dashboard_user` ON `dashboard_collaborators` (`dashboard_id`,`user_id`);--> statement-breakpoint
CREATE TABLE `dashboard_tiles` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`dashboard_id` integer NOT NULL,
	`insight_id` integer,
	`text_id` integer,
	`layouts` text DEFAULT '{}' NOT NULL,
	`color` text,
	`deleted` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`dashboard_id`) REFERENCES `dashboards`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`insight_id`) REFERENCES `insights`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`text_id`) REFERENCES `texts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `dashboard_tiles_dashboard` ON `dashboard_tiles` (`dashboard_id`);--> statement-breakpoint
CREATE INDEX `dashboard_tiles_insight` ON `dashboard_tiles` (`insight_id`);--> statement-breakpoint
CREATE TABLE `dashboards` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`environment_id` integer NOT NULL,
	`name` text DEFAULT '' NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`pinned` integer DEFAULT false NOT NULL,
	`deleted` integer DEFAULT false NOT NULL,
	`creation_mode` text DEFAULT 'default' NOT NULL,
	`restriction_level` integer DEFAULT 21 NOT NULL,
	`filters` text DEFAULT '{}' NOT NULL,
	`variables` text DEFAULT '{}' NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`created_by_id` integer,
	`created_at` text NOT NULL,
	`last_modified_at` text NOT NULL,
	FOREIGN KEY (`environment_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `dashboards_environment_listing` ON `dashboards` (`environment_id`,`deleted`,"pinned" desc,`name`,`id`);--> statement-breakpoint
CREATE TABLE `domains` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`domain` text NOT NULL,
	`verification_challenge` text NOT NULL,
	`verified_at` text,
	`last_verification_retry` text,
	`jit_provisioning_enabled` integer DEFAULT false NOT NULL,
	`sso_enforcement` text DEFAULT '' NOT NULL,
	`saml_entity_id` text,
	`saml_acs_url` text,
	`saml_x509_cert` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `domains_domain_unique` ON `domains` (`domain`);--> statement-breakpoint
CREATE INDEX `domains_organization_domain` ON `domains` (`organization_id`,`domain`);--> statement-breakpoint
CREATE TABLE `environments` (
	`id` integer PRIMARY KEY NOT NULL,
	`project_id` integer NOT NULL,
	`organization_id` text NOT NULL,
	`name` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `environments_project` ON `environments` (`project_id`);--> statement-breakpoint
CREATE TABLE `insights` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`environment_id` integer NOT NULL,
	`short_id` text NOT NULL,
	`name` text,
	`derived_name` text,
	`description` text DEFAULT '' NOT NULL,
	`query` text,
	`favorited` integer DEFAULT false NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`deleted` integer DEFAULT false NOT NULL,
	`created_by_id` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`environment_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `insights_short_id_unique` ON `insights` (`short_id`);--> statement-breakpoint
CREATE INDEX `insights_environment` ON `insights` (`environment_id`);--> statement-breakpoint
CREATE TABLE `invites` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`target_email` text NOT NULL,
	`first_name` text DEFAULT '' NOT NULL,
	`level` integer NOT NULL,
	`message` text,
	`private_project_access` text,
	`send_email` integer NOT NULL,
	`combine_pending_invites` integer NOT NULL,
	`emailing_attempt_made` integer DEFAULT false NOT NULL,
	`created_by_id` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `invites_organization_created` ON `invites` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `invites_organization_email` ON `invites` (`organization_id`,`target_email`);--> statement-breakpoint
CREATE TABLE `organization_memberships` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`user_id` integer NOT NULL,
	`level` integer NOT NULL,
	`joined_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `organization_memberships_organization_user` ON `organization_memberships` (`organization_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `organization_memberships_user` ON `organization_memberships` (`user_id`);--> statement-breakpoint
CREATE INDEX `organization_memberships_organization_joined` ON `organization_memberships` (`organization_id`,`joined_at`);--> statement-breakpoint
CREATE TABLE `organizations` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `personal_api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`label` text NOT NULL,
	`secure_value` text NOT NULL,
	`mask_value` text NOT NULL,
	`scopes` text NOT NULL,
	`scoped_organizations` text NOT NULL,
	`scoped_teams` text NOT NULL,
	`created_at` text NOT NULL,
	`last_used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `personal_api_keys_secure_value_unique` ON `personal_api_keys` (`secure_value`);--> statement-breakpoint
CREATE INDEX `personal_api_keys_user` ON `personal_api_keys` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `project_access_grants` (
	`project_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`level` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`project_id`, `user_id`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `project_access_grants_user` ON `project_access_grants` (`user_id`);--> statement-breakpoint
CREATE TABLE `projects` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uuid` text NOT NULL,
	`organization_id` text NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`api_token` text NOT NULL,
	`live_events_token` text NOT NULL,
	`timezone` text DEFAULT 'UTC' NOT NULL,
	`access_control` integer DEFAULT false NOT NULL,
	`is_demo` integer DEFAULT false NOT NULL,
	`completed_snippet_onboarding` integer DEFAULT false NOT NULL,
	`has_completed_onboarding_for` text,
	`ingested_event` integer DEFAULT false NOT NULL,
	`settings` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `projects_uuid_unique` ON `projects` (`uuid`);--> statement-breakpoint
CREATE UNIQUE INDEX `projects_api_token_unique` ON `projects` (`api_token`);--> statement-breakpoint
CREATE UNIQUE INDEX `projects_organization_name_key` ON `projects` (`organization_id`,`name_key`);--> statement-breakpoint
CREATE INDEX `projects_organization_created` ON `projects` (`organization_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `sharing_configurations` (
	`dashboard_id` integer PRIMARY KEY NOT NULL,
	`enabled` integer DEFAULT false NOT NULL,
	`access_token` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`dashboard_id`) REFERENCES `dashboards`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sharing_configurations_access_token_unique` ON `sharing_configurations` (`access_token`);--> statement-breakpoint
CREATE TABLE `texts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`environment_id` integer NOT NULL,
	`body` text DEFAULT '' NOT NULL,
	`created_by_id` integer,
	`last_modified_by_id` integer,
	`last_modified_at` text NOT NULL,
	FOREIGN KEY (`environment_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`last_modified_by_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uuid` text NOT NULL,
	`distinct_id` text NOT NULL,
	`first_name` text DEFAULT '' NOT NULL,
	`last_name` text DEFAULT '' NOT NULL,
	`email` text NOT NULL,
	`is_email_verified` integer DEFAULT false NOT NULL,
	`hedgehog_config` text,
	`role_at_organization` text DEFAULT '' NOT NULL,
	`created_at` text NOT NULL,
	`last_login` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_uuid_unique` ON `users` (`uuid`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);