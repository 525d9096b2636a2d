import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/*
 * One schema for the whole service. Timestamps are stored as ISO 8601 strings in UTC (what the
 * API returns), so no conversion happens between D1 and the wire. Integer ids where PostHog's
 * API has integers (users, projects, environments, dashboards, tiles), UUIDs where it has UUIDs.
 * Every column a delete cascades through (ON DELETE CASCADE / SET NULL) leads an index: without
 * one, SQLite scans the whole child table, every tenant's rows, for each parent row deleted.
 * A list's index holds its whole order, ties broken by id, and the id: a page is one range of it
 * (`joinPage`), from the start or from a cursor's row.
 */

const createdAt = () => text("created_at").notNull();
const json = <T>(name: string) => text(name, { mode: "json" }).$type<T>();

type HedgehogConfig = Record<string, unknown> | null;
type NotificationSettings = Record<string, unknown>;
/** Preferences a user sets and reads back, stored without this API acting on them (defaults applied when read). */
type UserPreferences = Record<string, unknown>;

export const users = sqliteTable("users", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  uuid: text("uuid").notNull().unique(),
  distinctId: text("distinct_id").notNull(),
  firstName: text("first_name").notNull().default(""),
  lastName: text("last_name").notNull().default(""),
  email: text("email").notNull().unique(),
  isEmailVerified: integer("is_email_verified", { mode: "boolean" }).notNull().default(false),
  hedgehogConfig: json<HedgehogConfig>("hedgehog_config"),
  roleAtOrganization: text("role_at_organization").notNull().default(""),
  createdAt: createdAt(),
  lastLogin: text("last_login"),
  notificationSettings: json<NotificationSettings>("notification_settings").notNull().default(sql`'{}'`),
  themeMode: text("theme_mode"),
  preferences: json<UserPreferences>("preferences").notNull().default(sql`'{}'`),
  /**
   * The user's choice of what `@current` means (PATCH `/api/users/@me`); null: the first one.
   * Not foreign keys: leaving or deleting an organization must not need a write per user, and
   * a choice the user can no longer see simply falls back to the first one.
   */
  currentOrganizationId: text("current_organization_id"),
  currentProjectId: integer("current_project_id"),
  /** How many organizations the user is a member of, kept by triggers (see migrations/): their list's count. */
  organizationCount: integer("organization_count").notNull().default(0),
});

export const organizations = sqliteTable(
  "organizations",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /**
     * Derived from the name at creation (`acme`, `acme-2`), then never changed. The empty default
     * exists only so that the column could be added to existing rows (then backfilled).
     */
    slug: text("slug").notNull().default(""),
    logoMediaId: text("logo_media_id"),
    isMemberJoinEmailEnabled: integer("is_member_join_email_enabled", { mode: "boolean" }).notNull().default(true),
    enforce2fa: integer("enforce_2fa", { mode: "boolean" }),
    membersCanInvite: integer("members_can_invite", { mode: "boolean" }).notNull().default(true),
    membersCanUsePersonalApiKeys: integer("members_can_use_personal_api_keys", { mode: "boolean" })
      .notNull()
      .default(true),
    allowPubliclySharedResources: integer("allow_publicly_shared_resources", { mode: "boolean" })
      .notNull()
      .default(true),
    /** Days its activity-log entries are kept; null: the deployment's `ACTIVITY_LOG_RETENTION_DAYS`. */
    activityLogRetentionDays: integer("activity_log_retention_days"),
    /** The longest a share link may live, in days, from when its expiry is set; null: no limit. */
    shareLinkMaxLifetimeDays: integer("share_link_max_lifetime_days"),
    /** The most scopes a member's personal key may use here; null: no ceiling (docs/keys.md, "Key policy"). */
    personalApiKeyMaxScopes: json<string[]>("personal_api_key_max_scopes"),
    /** The longest a personal key reaching it may live, in days from its creation or roll; null: no limit. */
    apiKeyMaxLifetimeDays: integer("api_key_max_lifetime_days"),
    /** Kept by triggers on organization_memberships (a custom migration): read in O(1). */
    memberCount: integer("member_count").notNull().default(0),
    /**
     * Each list's exact count, kept by triggers on its table (migration list_counters), so that
     * every write, cascades included, keeps it, and reading it costs one row. Batch exports count
     * the live ones (not soft-deleted).
     */
    inviteCount: integer("invite_count").notNull().default(0),
    domainCount: integer("domain_count").notNull().default(0),
    projectCount: integer("project_count").notNull().default(0),
    batchExportCount: integer("batch_export_count").notNull().default(0),
    webhookCount: integer("webhook_count").notNull().default(0),
    roleCount: integer("role_count").notNull().default(0),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
    /** Raised by every write of the organization's own fields (never by its counters): its `ETag`. */
    version: integer("version").notNull().default(1),
    /**
     * When a DELETE scheduled the organization's removal: its memberships and service keys went at
     * once (its invites open nothing from then on), and a background job removes the rest, then
     * the organization itself.
     */
    deletionScheduledAt: text("deletion_scheduled_at"),
  },
  (table) => [
    uniqueIndex("organizations_slug").on(table.slug),
    // The few being deleted: what the cron reads to resume a deletion whose next step was lost.
    index("organizations_deletion_scheduled")
      .on(table.deletionScheduledAt)
      .where(sql`${table.deletionScheduledAt} is not null`),
  ],
);

/**
 * A user's place in an organization. Each one's user's names and e-mail are indexed for the
 * members' `?search=` in `members_search`, an FTS5 table keyed by the membership's rowid, kept by
 * triggers (migrations/ only). A migration that rebuilds this table (drizzle-kit's copy into
 * `__new_organization_memberships`) renumbers the rowids: it must rebuild that index after it, as
 * migrations/0047_member_search.sql says.
 */
export const organizationMemberships = sqliteTable(
  "organization_memberships",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    level: integer("level").notNull(),
    joinedAt: text("joined_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    uniqueIndex("organization_memberships_organization_user").on(table.organizationId, table.userId),
    // A user's organizations in creation order (organization ids are UUIDv7: time first), with
    // their level and membership: their list, and `@current`'s first, read along the index alone.
    index("organization_memberships_user_organization").on(table.userId, table.organizationId, table.level, table.id),
    index("organization_memberships_organization_joined").on(table.organizationId, table.joinedAt, table.id),
    // Owners are counted before an owner is removed or demoted: read the owners, not every member.
    index("organization_memberships_organization_level").on(table.organizationId, table.level),
  ],
);

export const personalApiKeys = sqliteTable(
  "personal_api_keys",
  {
    id: text("id").primaryKey(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    label: text("label").notNull(),
    /** sha256 hex of the key; the key itself is never stored. */
    secureValue: text("secure_value").notNull().unique(),
    maskValue: text("mask_value").notNull(),
    scopes: json<string[]>("scopes").notNull(),
    scopedOrganizations: json<string[]>("scoped_organizations").notNull(),
    scopedTeams: json<number[]>("scoped_teams").notNull(),
    createdAt: createdAt(),
    lastUsedAt: text("last_used_at"),
    /** After it, the key answers 401 `api_key_expired`; null: it does not expire. */
    expiresAt: text("expires_at"),
    lastRolledAt: text("last_rolled_at"),
    /** sha256 hex of the value a roll replaced, accepted until `previous_value_expires_at`. */
    previousSecureValue: text("previous_secure_value").unique(),
    previousValueExpiresAt: text("previous_value_expires_at"),
  },
  (table) => [index("personal_api_keys_user").on(table.userId, table.createdAt, table.id)],
);

/**
 * Keys an organization owns (`pho_`): they act as the organization, at admin level, and outlive
 * whoever created them (`created_by_id` is set null when that user is deleted). Value, expiry and
 * roll work as a personal key's.
 */
export const serviceApiKeys = sqliteTable(
  "service_api_keys",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    createdById: integer("created_by_id").references(() => users.id, { onDelete: "set null" }),
    label: text("label").notNull(),
    /** sha256 hex of the key; the key itself is never stored. */
    secureValue: text("secure_value").notNull().unique(),
    maskValue: text("mask_value").notNull(),
    scopes: json<string[]>("scopes").notNull(),
    scopedTeams: json<number[]>("scoped_teams").notNull(),
    createdAt: createdAt(),
    lastUsedAt: text("last_used_at"),
    expiresAt: text("expires_at"),
    lastRolledAt: text("last_rolled_at"),
    previousSecureValue: text("previous_secure_value").unique(),
    previousValueExpiresAt: text("previous_value_expires_at"),
  },
  (table) => [
    index("service_api_keys_organization").on(table.organizationId, table.createdAt, table.id),
    index("service_api_keys_created_by").on(table.createdById),
  ],
);

/**
 * A member's personal key an admin took out of the organization's reach: the key keeps working
 * elsewhere. Read with the membership on every request, so it applies from the next one.
 */
export const personalApiKeyBlocks = sqliteTable(
  "personal_api_key_blocks",
  {
    keyId: text("key_id")
      .notNull()
      .references(() => personalApiKeys.id, { onDelete: "cascade" }),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    blockedAt: text("blocked_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.keyId, table.organizationId] }),
    // Deleting an organization removes its blocks along this index, not by reading every block.
    index("personal_api_key_blocks_organization").on(table.organizationId),
  ],
);

/** Project settings the API stores and echoes without reasoning about them (defaults applied when read). */
type ProjectSettings = Record<string, unknown>;

export const projects = sqliteTable(
  "projects",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    uuid: text("uuid").notNull().unique(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** `nameKey(name)` (src/platform/names.ts), so that names unique as readers see them is an index, not a scan. */
    nameKey: text("name_key").notNull(),
    apiToken: text("api_token").notNull().unique(),
    liveEventsToken: text("live_events_token").notNull(),
    timezone: text("timezone").notNull().default("UTC"),
    accessControl: integer("access_control", { mode: "boolean" }).notNull().default(false),
    isDemo: integer("is_demo", { mode: "boolean" }).notNull().default(false),
    completedSnippetOnboarding: integer("completed_snippet_onboarding", { mode: "boolean" }).notNull().default(false),
    hasCompletedOnboardingFor: json<unknown>("has_completed_onboarding_for"),
    ingestedEvent: integer("ingested_event", { mode: "boolean" }).notNull().default(false),
    settings: json<ProjectSettings>("settings").notNull(),
    /**
     * When a DELETE scheduled the project's removal: from then on no route shows it, and a
     * background job removes its rows, then the project itself.
     */
    deletionScheduledAt: text("deletion_scheduled_at"),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
    /** Raised by every write of the project's own fields, its privacy and its deletion: its `ETag`. */
    version: integer("version").notNull().default(1),
  },
  (table) => [
    uniqueIndex("projects_organization_name_key").on(table.organizationId, table.nameKey),
    // With the deletion's mark, so that lists, which skip projects being deleted, read the index alone.
    index("projects_organization_created").on(
      table.organizationId,
      table.createdAt,
      table.id,
      table.deletionScheduledAt,
    ),
    // The private ones alone (a default rule of `none`): what a member's count of the list subtracts.
    index("projects_organization_private").on(table.organizationId).where(sql`${table.accessControl} = 1`),
    // The few being deleted: what the cron reads to resume a deletion whose next step was lost.
    index("projects_deletion_scheduled")
      .on(table.deletionScheduledAt)
      .where(sql`${table.deletionScheduledAt} is not null`),
  ],
);

/** PostHog's "team": a project's environment. The first one shares the project's id. */
export const environments = sqliteTable(
  "environments",
  {
    id: integer("id").primaryKey(),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    createdAt: createdAt(),
    /** Live (not soft-deleted) rows, kept by triggers (migration list_counters), as the organization's counts are. */
    batchExportCount: integer("batch_export_count").notNull().default(0),
    dashboardCount: integer("dashboard_count").notNull().default(0),
  },
  (table) => [
    index("environments_project").on(table.projectId),
    index("environments_organization").on(table.organizationId),
  ],
);

export type PrivateProjectAccess = { id: number; level: "member" | "admin" }[] | null;

export const invites = sqliteTable(
  "invites",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    targetEmail: text("target_email").notNull(),
    firstName: text("first_name").notNull().default(""),
    level: integer("level").notNull(),
    message: text("message"),
    privateProjectAccess: json<PrivateProjectAccess>("private_project_access"),
    sendEmail: integer("send_email", { mode: "boolean" }).notNull(),
    combinePendingInvites: integer("combine_pending_invites", { mode: "boolean" }).notNull(),
    emailingAttemptMade: integer("emailing_attempt_made", { mode: "boolean" }).notNull().default(false),
    /**
     * The invite e-mail's progress (src/organizations/invites/invite-emails.ts): `pending` while
     * queued or retried, then `sent` or `failed`; `not_sent` when `send_email` is false,
     * `not_configured` when no transport was set.
     */
    emailStatus: text("email_status").notNull().default("not_sent"),
    emailAttempts: integer("email_attempts").notNull().default(0),
    /** When the next attempt is due; null once none is (sent, failed, or the schedule exhausted). */
    emailNextAttemptAt: text("email_next_attempt_at"),
    /**
     * The outbox: the composed e-mail, accept token included, sealed (src/platform/secrets.ts)
     * and written with the invite; cleared once sent.
     */
    emailOutbox: text("email_outbox"),
    createdById: integer("created_by_id").references(() => users.id, { onDelete: "set null" }),
    /**
     * SHA-256 of the acceptance token, which only the inviter and the invitee ever see. Null
     * for invites made before tokens existed: they cannot be accepted and must be sent again.
     */
    tokenHash: text("token_hash").unique(),
    /**
     * SHA-256 of a second token, which only the invite's e-mail carries: signing up with it
     * proves the address (the inviter holds `token_hash`'s). Null when no e-mail was composed.
     */
    mailedTokenHash: text("mailed_token_hash").unique(),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    index("invites_organization_created").on(table.organizationId, table.createdAt, table.id),
    index("invites_organization_email").on(table.organizationId, table.targetEmail),
    // A user's pending invites to other organizations (`/api/users/@me`), by their e-mail.
    index("invites_target_email").on(table.targetEmail, table.createdAt),
    index("invites_created_by").on(table.createdById),
    index("invites_email_pending").on(table.emailNextAttemptAt).where(sql`${table.emailStatus} = 'pending'`),
  ],
);

export const domains = sqliteTable(
  "domains",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    domain: text("domain").notNull().unique(),
    verificationChallenge: text("verification_challenge").notNull(),
    verifiedAt: text("verified_at"),
    lastVerificationRetry: text("last_verification_retry"),
    jitProvisioningEnabled: integer("jit_provisioning_enabled", { mode: "boolean" }).notNull().default(false),
    ssoEnforcement: text("sso_enforcement").notNull().default(""),
    samlEntityId: text("saml_entity_id"),
    samlAcsUrl: text("saml_acs_url"),
    samlX509Cert: text("saml_x509_cert"),
    createdAt: createdAt(),
  },
  (table) => [index("domains_organization_domain").on(table.organizationId, table.domain, table.id)],
);

type BatchExportDestinationConfig = Record<string, unknown>;

export const batchExports = sqliteTable(
  "batch_exports",
  {
    id: text("id").primaryKey(),
    environmentId: integer("environment_id")
      .notNull()
      .references(() => environments.id, { onDelete: "cascade" }),
    /** Copied from the environment so that organization routes filter and update in one statement. */
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    model: text("model").notNull().default("events"),
    destinationType: text("destination_type").notNull(),
    /** Secrets included, each sealed (see `sealedSecretsKeyId`); responses strip them. */
    destinationConfig: json<BatchExportDestinationConfig>("destination_config").notNull(),
    /**
     * The id of the encryption key that sealed the secrets in `destination_config`. Null: written
     * before secrets were encrypted, still plaintext until the re-sealing pass reaches the row.
     */
    sealedSecretsKeyId: text("sealed_secrets_key_id"),
    interval: text("interval").notNull(),
    paused: integer("paused", { mode: "boolean" }).notNull().default(false),
    lastPausedAt: text("last_paused_at"),
    startAt: text("start_at"),
    endAt: text("end_at"),
    hogqlQuery: text("hogql_query").notNull().default(""),
    filters: json<unknown>("filters"),
    timezone: text("timezone").notNull().default("UTC"),
    /** When a run starts: the weekday of a weekly one (0, Sunday, to 6), the hour of a daily or weekly one. */
    offsetDay: integer("offset_day"),
    offsetHour: integer("offset_hour"),
    deleted: integer("deleted", { mode: "boolean" }).notNull().default(false),
    createdAt: createdAt(),
    lastUpdatedAt: text("last_updated_at").notNull(),
  },
  (table) => [
    index("batch_exports_environment_created").on(table.environmentId, table.deleted, table.createdAt, table.id),
    // With the environment: a member's page tests each export's project without reading the export.
    index("batch_exports_organization_created").on(
      table.organizationId,
      table.deleted,
      table.createdAt,
      table.id,
      table.environmentId,
    ),
    index("batch_exports_sealed_secrets_key").on(table.sealedSecretsKeyId),
  ],
);

export const dashboards = sqliteTable(
  "dashboards",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    environmentId: integer("environment_id")
      .notNull()
      .references(() => environments.id, { onDelete: "cascade" }),
    name: text("name").notNull().default(""),
    description: text("description").notNull().default(""),
    pinned: integer("pinned", { mode: "boolean" }).notNull().default(false),
    deleted: integer("deleted", { mode: "boolean" }).notNull().default(false),
    creationMode: text("creation_mode", { enum: ["default", "template", "duplicate"] })
      .notNull()
      .default("default"),
    restrictionLevel: integer("restriction_level").notNull().default(21),
    filters: json<Record<string, unknown>>("filters").notNull().default(sql`'{}'`),
    variables: json<Record<string, unknown>>("variables").notNull().default(sql`'{}'`),
    tags: json<string[]>("tags").notNull().default(sql`'[]'`),
    /** Chart preferences stored for PostHog's app, not acted on here. */
    breakdownColors: json<unknown>("breakdown_colors").default(sql`'[]'`),
    dataColorThemeId: integer("data_color_theme_id"),
    quickFilterIds: json<string[]>("quick_filter_ids"),
    createdById: integer("created_by_id").references(() => users.id, { onDelete: "set null" }),
    createdAt: createdAt(),
    lastModifiedAt: text("last_modified_at").notNull(),
    /** Written at most once an hour, after the response that retrieved it. */
    lastAccessedAt: text("last_accessed_at"),
    /**
     * Its sharing configuration's `enabled`, written with it (`upsertSharing`): a list reads no other table for it.
     */
    sharingEnabled: integer("sharing_enabled", { mode: "boolean" }).notNull().default(false),
    /** Raised by every change to the dashboard or its tiles: its `ETag`, and its newest `dashboard_versions` row. */
    version: integer("version").notNull().default(1),
  },
  // In the list's order (pinned first, then name), so that a page stops after its last row.
  (table) => [
    index("dashboards_environment_listing").on(
      table.environmentId,
      table.deleted,
      sql`${table.pinned} desc`,
      table.name,
      table.id,
    ),
    // A creator's live dashboards in one environment (those a rule on every dashboard leaves them), and the cascade.
    index("dashboards_created_by_environment").on(table.createdById, table.environmentId, table.deleted),
  ],
);

/**
 * Each tag of a live dashboard, one row each, kept by triggers from `dashboards.tags` (see
 * migrations/): `?tags=` reads the environment's dashboards with a tag along the index instead of
 * testing every dashboard's list. A soft-deleted dashboard has none. Their names and descriptions
 * are indexed for `?search=` in `dashboards_search`, an FTS5 table (migrations/ only).
 */
export const dashboardTags = sqliteTable(
  "dashboard_tags",
  {
    dashboardId: integer("dashboard_id")
      .notNull()
      .references(() => dashboards.id, { onDelete: "cascade" }),
    environmentId: integer("environment_id").notNull(),
    tag: text("tag").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.dashboardId, table.tag] }),
    index("dashboard_tags_environment_tag").on(table.environmentId, table.tag, table.dashboardId),
  ],
);

/**
 * A dashboard as each change left it: its fields and tiles as one JSON snapshot, written in the
 * batch of the change. Only the newest `DASHBOARD_VERSIONS_KEPT` of a dashboard are kept.
 * `WITHOUT ROWID` (migrations/ only): a row is its primary key's entry, one written row a version.
 */
export const dashboardVersions = sqliteTable(
  "dashboard_versions",
  {
    dashboardId: integer("dashboard_id")
      .notNull()
      .references(() => dashboards.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    createdAt: createdAt(),
    /** Not a foreign key: an index for it would cost every version a second written row. */
    createdById: integer("created_by_id"),
    /** The personal API key the change came through, if any. */
    keyId: text("key_id"),
    summary: text("summary").notNull(),
    snapshot: text("snapshot").notNull(),
  },
  (table) => [primaryKey({ columns: [table.dashboardId, table.version] })],
);

export const insights = sqliteTable(
  "insights",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    environmentId: integer("environment_id")
      .notNull()
      .references(() => environments.id, { onDelete: "cascade" }),
    shortId: text("short_id").notNull().unique(),
    name: text("name"),
    derivedName: text("derived_name"),
    description: text("description").notNull().default(""),
    query: json<Record<string, unknown>>("query"),
    favorited: integer("favorited", { mode: "boolean" }).notNull().default(false),
    tags: json<string[]>("tags").notNull().default(sql`'[]'`),
    deleted: integer("deleted", { mode: "boolean" }).notNull().default(false),
    createdById: integer("created_by_id").references(() => users.id, { onDelete: "set null" }),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    index("insights_environment").on(table.environmentId),
    index("insights_created_by").on(table.createdById),
  ],
);

export const texts = sqliteTable(
  "texts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    environmentId: integer("environment_id")
      .notNull()
      .references(() => environments.id, { onDelete: "cascade" }),
    body: text("body").notNull().default(""),
    createdById: integer("created_by_id").references(() => users.id, { onDelete: "set null" }),
    lastModifiedById: integer("last_modified_by_id").references(() => users.id, {
      onDelete: "set null",
    }),
    lastModifiedAt: text("last_modified_at").notNull(),
  },
  (table) => [
    index("texts_environment").on(table.environmentId),
    index("texts_created_by").on(table.createdById),
    index("texts_last_modified_by").on(table.lastModifiedById),
  ],
);

export type TileLayouts = Record<string, unknown>;

export const dashboardTiles = sqliteTable(
  "dashboard_tiles",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    dashboardId: integer("dashboard_id")
      .notNull()
      .references(() => dashboards.id, { onDelete: "cascade" }),
    insightId: integer("insight_id").references(() => insights.id, { onDelete: "cascade" }),
    textId: integer("text_id").references(() => texts.id, { onDelete: "cascade" }),
    layouts: json<TileLayouts>("layouts").notNull().default(sql`'{}'`),
    color: text("color"),
    /** Display preferences stored for PostHog's app, not acted on here. */
    showDescription: integer("show_description", { mode: "boolean" }),
    transparentBackground: integer("transparent_background", { mode: "boolean" }),
    filtersOverrides: json<Record<string, unknown>>("filters_overrides"),
    deleted: integer("deleted", { mode: "boolean" }).notNull().default(false),
    createdAt: createdAt(),
  },
  (table) => [
    // With `deleted`: reading a dashboard's live tiles skips the removed ones, however many are kept.
    index("dashboard_tiles_dashboard_live").on(table.dashboardId, table.deleted),
    index("dashboard_tiles_insight").on(table.insightId),
    // A text belongs to one tile: a shared one would let whoever may edit one dashboard edit another.
    uniqueIndex("dashboard_tiles_text").on(table.textId),
  ],
);

export const dashboardCollaborators = sqliteTable(
  "dashboard_collaborators",
  {
    id: text("id").primaryKey(),
    dashboardId: integer("dashboard_id")
      .notNull()
      .references(() => dashboards.id, { onDelete: "cascade" }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    level: integer("level").notNull(),
    addedAt: text("added_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    uniqueIndex("dashboard_collaborators_dashboard_user").on(table.dashboardId, table.userId),
    index("dashboard_collaborators_user").on(table.userId),
  ],
);

export type SharingSettings = Record<string, boolean>;

export const sharingConfigurations = sqliteTable("sharing_configurations", {
  dashboardId: integer("dashboard_id")
    .primaryKey()
    .references(() => dashboards.id, { onDelete: "cascade" }),
  enabled: integer("enabled", { mode: "boolean" }).notNull().default(false),
  /** PostHog shows the token in GET sharing, so it is stored as is; the unique index finds it. */
  accessToken: text("access_token").notNull().unique(),
  settings: json<SharingSettings>("settings").notNull().default(sql`'{}'`),
  createdAt: createdAt(),
  /** The link stops working at this instant; null: never. */
  expiresAt: text("expires_at"),
  /** Visitors must give one of the configuration's share passwords. */
  passwordRequired: integer("password_required", { mode: "boolean" }).notNull().default(false),
  /** Views of the public link, counted at most once a minute (no visitor data is kept). */
  viewCount: integer("view_count").notNull().default(0),
  lastViewedAt: text("last_viewed_at"),
  /**
   * The e-mail allow-list, lower-cased: a visitor must prove one of these addresses through a
   * one-time link before the link shows anything. Null: no allow-list.
   */
  allowedEmails: json<string[]>("allowed_emails"),
  /**
   * The secret that signs the sessions of verified viewers (random, never sent): written with
   * the configuration, and on its first write for rows made before it existed.
   */
  viewerSessionSecret: text("viewer_session_secret"),
});

/**
 * The one-time links an allow-listed visitor asks for: only the token's SHA-256 is kept. The
 * e-mail that carries the token waits in `email_outbox`, sealed, until the queue's consumer sends
 * it. The unique index lets an address ask once per link a minute; the cron deletes expired rows.
 */
export const shareViewerLinks = sqliteTable(
  "share_viewer_links",
  {
    id: text("id").primaryKey(),
    dashboardId: integer("dashboard_id")
      .notNull()
      .references(() => sharingConfigurations.dashboardId, { onDelete: "cascade" }),
    email: text("email").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    /** Minutes since the epoch when it was asked for. */
    issuedMinute: integer("issued_minute").notNull(),
    createdAt: createdAt(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
    emailOutbox: text("email_outbox"),
    /** When the e-mail's next attempt is due while it waits (its message retrying): the cron's mark of a lost one. */
    emailNextAttemptAt: text("email_next_attempt_at"),
  },
  (table) => [
    uniqueIndex("share_viewer_links_address_minute").on(table.dashboardId, table.email, table.issuedMinute),
    index("share_viewer_links_expires_at").on(table.expiresAt),
  ],
);

/** Views by verified viewers, per allow-listed address; an address taken off the list loses its row. */
export const shareViewerViews = sqliteTable(
  "share_viewer_views",
  {
    dashboardId: integer("dashboard_id")
      .notNull()
      .references(() => sharingConfigurations.dashboardId, { onDelete: "cascade" }),
    email: text("email").notNull(),
    viewCount: integer("view_count").notNull().default(0),
    lastViewedAt: text("last_viewed_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.dashboardId, table.email] })],
);

/** The passwords of a password-protected link: PBKDF2 hashes with their own salt, never the password. */
export const sharePasswords = sqliteTable(
  "share_passwords",
  {
    id: text("id").primaryKey(),
    dashboardId: integer("dashboard_id")
      .notNull()
      .references(() => sharingConfigurations.dashboardId, { onDelete: "cascade" }),
    /** `pbkdf2-sha256$<iterations>$<salt, base64url>$<hash, base64url>` */
    passwordHash: text("password_hash").notNull(),
    note: text("note").notNull().default(""),
    createdById: integer("created_by_id").references(() => users.id, { onDelete: "set null" }),
    createdAt: createdAt(),
  },
  (table) => [index("share_passwords_dashboard").on(table.dashboardId)],
);

/** An organization's roles (RBAC): named groups of members that access rules may name. */
export const roles = sqliteTable(
  "roles",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** `nameKey(name)`: a role's name is unique in its organization as readers see it. */
    nameKey: text("name_key").notNull(),
    createdById: integer("created_by_id").references(() => users.id, { onDelete: "set null" }),
    /** Kept by triggers on role_memberships (migration roles): the members list's count in one row. */
    memberCount: integer("member_count").notNull().default(0),
    createdAt: createdAt(),
  },
  (table) => [
    uniqueIndex("roles_organization_name").on(table.organizationId, table.nameKey),
    index("roles_organization_created").on(table.organizationId, table.createdAt, table.id),
    index("roles_created_by").on(table.createdById),
  ],
);

/** A member's place in a role: one row per (role, organization membership). */
export const roleMemberships = sqliteTable(
  "role_memberships",
  {
    id: text("id").primaryKey(),
    roleId: text("role_id")
      .notNull()
      .references(() => roles.id, { onDelete: "cascade" }),
    organizationMembershipId: text("organization_membership_id")
      .notNull()
      .references(() => organizationMemberships.id, { onDelete: "cascade" }),
    joinedAt: text("joined_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    uniqueIndex("role_memberships_role_member").on(table.roleId, table.organizationMembershipId),
    index("role_memberships_role_joined").on(table.roleId, table.joinedAt, table.id),
    // A member's roles, read with every rule that names a role; and the cascade when the membership goes.
    index("role_memberships_member_role").on(table.organizationMembershipId, table.roleId),
  ],
);

/**
 * Access rules on one resource (a member's, a role's, or the default for everyone), e.g. resource
 * "dashboard" and its id, or "project" (whose rules live in its first environment, which shares its
 * id). Private projects are rules too.
 */
export const accessControls = sqliteTable(
  "access_controls",
  {
    id: text("id").primaryKey(),
    environmentId: integer("environment_id")
      .notNull()
      .references(() => environments.id, { onDelete: "cascade" }),
    resource: text("resource").notNull(),
    resourceId: text("resource_id").notNull(),
    /** null with `roleId` null: the resource's default rule for everyone in the project. */
    organizationMembershipId: text("organization_membership_id").references(() => organizationMemberships.id, {
      onDelete: "cascade",
    }),
    /** A role's rule (its members' rule); null for a member's rule and the default. */
    roleId: text("role_id").references(() => roles.id, { onDelete: "cascade" }),
    accessLevel: text("access_level", { enum: ["none", "viewer", "editor", "manager", "member", "admin"] }).notNull(),
    createdById: integer("created_by_id").references(() => users.id, { onDelete: "set null" }),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    uniqueIndex("access_controls_resource_member").on(table.resource, table.resourceId, table.organizationMembershipId),
    // Partial, as the role index below: a lookup of the default (`role_id is null`) must not read along them.
    uniqueIndex("access_controls_resource_role")
      .on(table.resource, table.resourceId, table.roleId)
      .where(sql`${table.roleId} is not null`),
    // A unique index treats NULLs as distinct: this one keeps a single default rule per resource.
    uniqueIndex("access_controls_resource_default")
      .on(table.resource, table.resourceId)
      .where(sql`${table.organizationMembershipId} is null and ${table.roleId} is null`),
    // A role's rules of one kind without reading the table (a member's roles' rules), and the cascade.
    index("access_controls_role_resource")
      .on(table.roleId, table.resource, table.resourceId, table.accessLevel)
      .where(sql`${table.roleId} is not null`),
    // Leads with the environment for the cascade; a list finds the environment's default rules of one kind in it.
    index("access_controls_environment_resource").on(
      table.environmentId,
      table.resource,
      table.organizationMembershipId,
    ),
    // A member's own rules of one kind without reading the table, and the cascade when the membership goes.
    index("access_controls_membership_resource").on(
      table.organizationMembershipId,
      table.resource,
      table.resourceId,
      table.accessLevel,
    ),
    index("access_controls_created_by").on(table.createdById),
  ],
);

/**
 * Rules on a kind of resource in one environment (every dashboard, every survey...), PostHog's
 * resource-level access controls: a member's, a role's, or the default for everyone.
 */
export const resourceAccessControls = sqliteTable(
  "resource_access_controls",
  {
    id: text("id").primaryKey(),
    environmentId: integer("environment_id")
      .notNull()
      .references(() => environments.id, { onDelete: "cascade" }),
    resource: text("resource").notNull(),
    organizationMembershipId: text("organization_membership_id").references(() => organizationMemberships.id, {
      onDelete: "cascade",
    }),
    roleId: text("role_id").references(() => roles.id, { onDelete: "cascade" }),
    accessLevel: text("access_level").notNull(),
    createdById: integer("created_by_id").references(() => users.id, { onDelete: "set null" }),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    uniqueIndex("resource_access_controls_member").on(
      table.environmentId,
      table.resource,
      table.organizationMembershipId,
    ),
    uniqueIndex("resource_access_controls_role")
      .on(table.environmentId, table.resource, table.roleId)
      .where(sql`${table.roleId} is not null`),
    // NULLs are distinct in the unique indexes above: this one keeps a single default per kind.
    uniqueIndex("resource_access_controls_default")
      .on(table.environmentId, table.resource)
      .where(sql`${table.organizationMembershipId} is null and ${table.roleId} is null`),
    // For the cascades; partial, so that no lookup of the default (both null) reads along them.
    index("resource_access_controls_membership")
      .on(table.organizationMembershipId)
      .where(sql`${table.organizationMembershipId} is not null`),
    index("resource_access_controls_role_id").on(table.roleId).where(sql`${table.roleId} is not null`),
    index("resource_access_controls_created_by").on(table.createdById),
  ],
);

/**
 * The organization's activity log: append-only, one gapless `seq` per organization, assigned by
 * the INSERT itself inside the batch that makes the change (so concurrent writers cannot take the
 * same number). `hash` chains each entry to the one before; it is filled in right after the batch
 * commits (see src/platform/activity-log/chain.ts). No foreign keys to projects or users: an entry
 * outlives what it describes. It goes with its organization.
 */
export const activityLog = sqliteTable(
  "activity_log",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    projectId: integer("project_id"),
    /** Set on entries about a dashboard or its parts: a project's log hides them from whoever cannot see it. */
    dashboardId: integer("dashboard_id"),
    userId: integer("user_id"),
    apiKeyId: text("api_key_id"),
    isSystem: integer("is_system", { mode: "boolean" }).notNull(),
    activity: text("activity").notNull(),
    scope: text("scope").notNull(),
    itemId: text("item_id"),
    /** The entry's `detail` as JSON text, hashed exactly as stored. */
    detail: text("detail").notNull(),
    requestId: text("request_id"),
    createdAt: createdAt(),
    hash: text("hash"),
  },
  (table) => [
    uniqueIndex("activity_log_organization_seq").on(table.organizationId, table.seq),
    index("activity_log_organization_scope").on(table.organizationId, table.scope, table.seq),
    index("activity_log_organization_item").on(table.organizationId, table.itemId, table.seq),
    index("activity_log_organization_user").on(table.organizationId, table.userId, table.seq),
    index("activity_log_organization_activity").on(table.organizationId, table.activity, table.seq),
    index("activity_log_organization_created").on(table.organizationId, table.createdAt, table.seq),
    index("activity_log_project").on(table.projectId, table.seq),
    // The project log's filters that PostHog's clients send: a kind's entries, an item's history.
    index("activity_log_project_scope").on(table.projectId, table.scope, table.seq),
    index("activity_log_project_item").on(table.projectId, table.itemId, table.seq),
    index("activity_log_created").on(table.createdAt),
    // What the sealer looks for after every write: only the few entries not yet hashed.
    index("activity_log_unsealed").on(table.organizationId, table.seq).where(sql`${table.hash} is null`),
  ],
);

/**
 * Where an organization's remaining chain starts once retention has pruned older entries: the
 * last pruned entry's number and hash.
 */
export const activityLogAnchors = sqliteTable("activity_log_anchors", {
  organizationId: text("organization_id")
    .primaryKey()
    .references(() => organizations.id, { onDelete: "cascade" }),
  seq: integer("seq").notNull(),
  hash: text("hash").notNull(),
  prunedAt: text("pruned_at").notNull(),
});

/**
 * The organization's entries moved out of the database into the archive bucket: one sealed NDJSON
 * object per segment (consecutive entries of one UTC day), found by one indexed read. `hash` is
 * the SHA-256 of the object's text; `previousHash` and `lastHash` are the chain's hashes before its
 * first entry and of its last, so that the chain goes on across the database and the archive.
 */
export const activityLogSegments = sqliteTable(
  "activity_log_segments",
  {
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    firstSeq: integer("first_seq").notNull(),
    lastSeq: integer("last_seq").notNull(),
    firstCreatedAt: text("first_created_at").notNull(),
    lastCreatedAt: text("last_created_at").notNull(),
    key: text("key").notNull(),
    hash: text("hash").notNull(),
    previousHash: text("previous_hash"),
    lastHash: text("last_hash").notNull(),
    entries: integer("entries").notNull(),
    bytes: integer("bytes").notNull(),
    archivedAt: text("archived_at").notNull(),
  },
  (table) => [
    uniqueIndex("activity_log_segments_organization_seq").on(table.organizationId, table.firstSeq),
    index("activity_log_segments_organization_last").on(table.organizationId, table.lastSeq),
    // An entry's URL finds its segment by the time in its id (UUIDv7): one seek, a few rows.
    index("activity_log_segments_organization_created").on(table.organizationId, table.firstCreatedAt),
  ],
);

/**
 * An organization's webhook subscriptions. The signing secret is sealed (AES-GCM, bound to the
 * webhook's id); `lastEnqueuedSeq` is how far in the organization's activity log entries have
 * been turned into deliveries, so each entry is considered once and a lost pass is resumed.
 */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    events: json<string[]>("events").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    description: text("description").notNull().default(""),
    sealedSecret: text("sealed_secret").notNull(),
    /**
     * The secret a rotation with an overlap replaced (sealed as `sealedSecret` was, same context):
     * deliveries are signed with both until `previousSecretExpiresAt`, then the cron drops it.
     */
    previousSealedSecret: text("previous_sealed_secret"),
    previousSecretExpiresAt: text("previous_secret_expires_at"),
    createdById: integer("created_by_id"),
    lastEnqueuedSeq: integer("last_enqueued_seq").notNull(),
    /** Since when every delivery has failed (null after a success): 3 days of it disables the webhook. */
    failingSince: text("failing_since"),
    /** Its deliveries, kept by triggers (migration webhook_counters). */
    deliveryCount: integer("delivery_count").notNull().default(0),
    /**
     * Set by its DELETE: from then on no route shows it and nothing is sent to it; its deliveries
     * go in background steps, then the row (`webhook-deletion.ts`).
     */
    deletionScheduledAt: text("deletion_scheduled_at"),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    index("webhooks_organization_created").on(table.organizationId, table.createdAt, table.id),
    // What the cron looks for to drop an old secret: only webhooks in a rotation's overlap.
    index("webhooks_previous_secret_expiry")
      .on(table.previousSecretExpiresAt)
      .where(sql`${table.previousSecretExpiresAt} is not null`),
    // The few being deleted: what the cron reads to resume a deletion whose next step was lost.
    index("webhooks_deletion_scheduled")
      .on(table.deletionScheduledAt)
      .where(sql`${table.deletionScheduledAt} is not null`),
  ],
);

/** One entry's delivery to one webhook; its id is the `webhook-id` header, the same on every attempt. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    entryId: text("entry_id").notNull(),
    event: text("event").notNull(),
    status: text("status").notNull(),
    attempts: integer("attempts").notNull().default(0),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    nextAttemptAt: text("next_attempt_at"),
    /**
     * No longer read: the retry schedule (one Queue retry per step, then the dead-letter queue)
     * decides when a delivery fails. Still written, so that the code deployed before it keeps
     * working while a deploy rolls out.
     */
    retryUntil: text("retry_until").notNull(),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    index("webhook_deliveries_pending").on(table.nextAttemptAt).where(sql`${table.status} = 'pending'`),
    uniqueIndex("webhook_deliveries_webhook_entry").on(table.webhookId, table.entryId),
    index("webhook_deliveries_webhook_created").on(table.webhookId, table.createdAt, table.id),
    // The deliveries list filtered by status (`?status=failed`), and recoveries, read only those.
    index("webhook_deliveries_webhook_status").on(table.webhookId, table.status, table.createdAt, table.id),
  ],
);

/**
 * An export of an organization's activity log, built in the background (a Queue message per part
 * of at most 1,000 entries, one R2 object each) and downloaded through the API. `cursorSeq` is the
 * last `seq` the parts written so far cover; `parts` how many there are (the next part's number).
 * The range of `seq` the times select is fixed when the export is created (`firstSeq`..`lastSeq`).
 */
export const activityLogExports = sqliteTable(
  "activity_log_exports",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    createdById: integer("created_by_id"),
    format: text("format").notNull(),
    fromTime: text("from_time").notNull(),
    toTime: text("to_time").notNull(),
    scopes: json<string[] | null>("scopes"),
    firstSeq: integer("first_seq").notNull(),
    lastSeq: integer("last_seq").notNull(),
    status: text("status").notNull(),
    cursorSeq: integer("cursor_seq").notNull(),
    parts: integer("parts").notNull().default(0),
    entries: integer("entries").notNull().default(0),
    bytes: integer("bytes").notNull().default(0),
    error: text("error"),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
    completedAt: text("completed_at"),
  },
  (table) => [
    index("activity_log_exports_organization").on(table.organizationId, table.createdAt),
    // What the cron looks for to resume an export whose next message was lost.
    index("activity_log_exports_unfinished").on(table.updatedAt).where(sql`${table.status} in ('pending', 'running')`),
  ],
);

/**
 * A POST sent with an `Idempotency-Key`, per personal API key: claimed before the handler runs
 * (the primary key makes a concurrent retry see the claim), then its answer kept for a day.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    /**
     * A personal or a service key's id: no foreign key, as it names a row of either table. A
     * revoked key's rows go with the others when they expire (`expires_at`, a day at most).
     */
    apiKeyId: text("api_key_id").notNull(),
    /** sha256 hex of the header's value. */
    keyHash: text("key_hash").notNull(),
    /** A random token per claim: only the request holding it completes or releases the row. */
    claim: text("claim").notNull(),
    /** sha256 hex of the method, path and body: a retry must send the same. */
    requestHash: text("request_hash").notNull(),
    /** Null while the first request runs. */
    responseStatus: integer("response_status"),
    /** Sealed (see secrets.ts); null while running, or when the answer was too large to keep. */
    responseBody: text("response_body"),
    createdAt: createdAt(),
    /** A running claim's lease, then the kept answer's end: past it, the key is free again. */
    expiresAt: text("expires_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.apiKeyId, table.keyHash] }),
    // What the cron deletes, oldest first.
    index("idempotency_keys_expires_at").on(table.expiresAt),
  ],
);
