import { z } from "@hono/zod-openapi";
import type { projects } from "../db/schema";
import { boundedJson, boundedJsonObject, boundedText, idList, normalizeTags, tagList } from "../platform/input-limits";
import { isAdmin } from "../platform/levels";
import { visibleName } from "../platform/names";
import { Timestamp } from "../platform/timestamps";

const storedJson = boundedJson(z.unknown());
const structured = storedJson.nullable().optional().default(null);
const nullableBoolean = z.boolean().nullable().optional().default(false);
const stringList = idList(boundedText()).nullable().optional().default([]);
const nullableStringList = idList(boundedText().nullable()).nullable().optional().default([]);
/** As PostHog's: empty and null entries are dropped, not stored (a form's blank rows). */
const listWithoutBlanks = idList(boundedText().nullable())
  .overwrite((entries) => entries.filter((entry) => entry))
  .nullable()
  .optional()
  .default([]);
/** A list of opaque JSON is one opaque value: 64 KiB for the whole list, as every other. */
const jsonList = boundedJson(idList(z.unknown())).nullable().optional().default([]);
const configObject = boundedJsonObject().optional().default({});

/**
 * An IANA zone name, as PostHog's choices list them: not a UTC offset (`+01:00`), which `Intl` also
 * takes, and in its own case (`Intl` reads `europe/paris` as `Europe/Paris`): each part of a zone's
 * name begins with a capital (`US/Pacific`, `Etc/GMT+1`, `UTC`), and a canonical one is as written.
 */
function isTimezone(value: string) {
  if (!value.split("/").every((part) => /^[A-Z]/.test(part))) return false;
  try {
    const named = new Intl.DateTimeFormat("en-US", { timeZone: value }).resolvedOptions().timeZone;
    return named === value || named.toLowerCase() !== value.toLowerCase();
  } catch {
    return false;
  }
}

/** An IANA time zone name, refused as PostHog refuses an unknown choice. */
export const TimezoneName = z
  .string()
  .refine(isTimezone, {
    error: (issue) => `"${String(issue.input)}" is not a valid choice.`,
    params: { code: "invalid_choice" },
  })
  .openapi({
    description: "An IANA time zone name, as written in the tz database: `UTC`, `Europe/Paris`, `US/Pacific`.",
    example: "UTC",
  });

/**
 * Settings a project stores and echoes (defaults: booleans false, lists [], objects
 * null). Kept in one JSON column: the API reasons about none of them.
 */
const ProjectSettingsInput = z.object({
  product_description: z.string().max(1000).nullable().optional().default(null),
  app_urls: listWithoutBlanks,
  slack_incoming_webhook: z.string().max(500).nullable().optional().default(null),
  anonymize_ips: z.boolean().optional().default(false),
  test_account_filters: storedJson.optional().default([]),
  test_account_filters_default_checked: nullableBoolean,
  path_cleaning_filters: storedJson.nullable().optional().default([]),
  data_attributes: storedJson.optional().default([]),
  person_display_name_properties: stringList,
  correlation_config: structured,
  autocapture_opt_out: nullableBoolean,
  autocapture_exceptions_opt_in: nullableBoolean,
  autocapture_web_vitals_opt_in: nullableBoolean,
  autocapture_web_vitals_allowed_metrics: structured,
  autocapture_exceptions_errors_to_ignore: structured,
  capture_console_log_opt_in: nullableBoolean,
  capture_performance_opt_in: nullableBoolean,
  session_recording_opt_in: z.boolean().optional().default(false),
  session_recording_sample_rate: z
    .string()
    .regex(
      /^(0(\.\d{1,2})?|1(\.0{1,2})?)$/,
      "Ensure the sample rate is a decimal between 0 and 1 with at most 2 decimal places.",
    )
    .openapi({ example: "0.5" })
    .nullable()
    .optional()
    .default(null),
  session_recording_minimum_duration_milliseconds: z
    .number()
    .int()
    .min(0)
    .max(30000)
    .nullable()
    .optional()
    .default(null),
  session_recording_linked_flag: structured,
  session_recording_network_payload_capture_config: structured,
  session_replay_config: structured,
  survey_config: structured,
  week_start_day: z
    .union([z.literal(0), z.literal(1)])
    .nullable()
    .optional()
    .default(null),
  primary_dashboard: z.number().int().nullable().optional().default(null),
  live_events_columns: stringList,
  recording_domains: listWithoutBlanks,
  inject_web_apps: nullableBoolean,
  extra_settings: structured,
  modifiers: structured,
  surveys_opt_in: nullableBoolean,
  heatmaps_opt_in: nullableBoolean,
  flags_persistence_default: nullableBoolean,
  tags: tagList().transform(normalizeTags).optional().default([]),
  session_recording_masking_config: structured,
  session_recording_url_trigger_config: jsonList,
  session_recording_url_blocklist_config: jsonList,
  session_recording_event_trigger_config: nullableStringList,
  session_recording_trigger_match_type_config: z.string().max(24).nullable().optional().default(null),
  session_recording_trigger_groups: structured,
  session_recording_retention_period: z.enum(["30d", "90d", "1y", "5y"]).optional().default("30d"),
  receive_org_level_activity_logs: nullableBoolean,
  business_model: z.enum(["b2b", "b2c", "other", ""]).nullable().optional().default(null),
  conversations_enabled: nullableBoolean,
  conversations_settings: structured,
  logs_settings: structured,
  proactive_tasks_enabled: nullableBoolean,
  revenue_analytics_config: configObject,
  marketing_analytics_config: configObject,
  customer_analytics_config: configObject,
  workflows_config: configObject,
  feature_flag_policy_config: configObject,
  base_currency: z
    .string()
    .regex(/^[A-Z]{3}$/, "Enter an ISO 4217 currency code, such as USD.")
    .openapi({ example: "EUR" })
    .optional()
    .default("USD"),
  capture_dead_clicks: nullableBoolean,
  cookieless_server_hash_mode: z
    .union([z.literal(0), z.literal(1), z.literal(2)])
    .nullable()
    .optional()
    .default(0)
    .openapi({ description: "0: disabled, 1: stateless, 2: stateful." }),
  human_friendly_comparison_periods: nullableBoolean,
  feature_flag_confirmation_enabled: nullableBoolean,
  feature_flag_confirmation_message: boundedText().nullable().optional().default(null),
  default_evaluation_contexts_enabled: nullableBoolean,
  require_evaluation_contexts: nullableBoolean,
  default_data_theme: z.number().int().min(-2147483648).max(2147483647).nullable().optional().default(null),
  onboarding_tasks: structured,
  web_analytics_pre_aggregated_tables_enabled: nullableBoolean,
});

/** Unique in its organization as readers see it (`nameKey`), and without invisible characters. */
const ProjectName = visibleName(z.string().trim().min(1).max(200));

export const ProjectInput = ProjectSettingsInput.extend({
  name: ProjectName.optional().openapi({
    description: 'Defaults to "Default project" (then "Default project 2", ...).',
  }),
  completed_snippet_onboarding: z.boolean().optional().default(false),
  is_demo: z.boolean().optional().default(false),
  timezone: TimezoneName.optional().default("UTC"),
  access_control: z.boolean().optional().default(false),
  has_completed_onboarding_for: structured,
}).openapi("ProjectInput");
export type ProjectInput = z.infer<typeof ProjectInput>;

export const PROJECT_SETTINGS_KEYS = Object.keys(ProjectSettingsInput.shape) as (keyof z.infer<
  typeof ProjectSettingsInput
>)[];
/** Applied when a project is read, so that a row stores only what was set (bootstrap stores `{}`). */
const PROJECT_SETTINGS_DEFAULTS = ProjectSettingsInput.parse({});

export const ProjectListItem = z
  .object({
    id: z.number().int(),
    uuid: z.string().uuid(),
    organization: z.string().uuid(),
    api_token: z.string(),
    name: z.string(),
    completed_snippet_onboarding: z.boolean(),
    has_completed_onboarding_for: z.unknown().nullable(),
    ingested_event: z.boolean(),
    is_demo: z.boolean(),
    timezone: z.string(),
    access_control: z.boolean(),
    project_id: z.number().int().openapi({ description: "The project's id: each project is its one environment." }),
    tags: z.array(z.string()),
  })
  .openapi("ProjectListItem");

const projectSettingsOutput = Object.fromEntries(
  PROJECT_SETTINGS_KEYS.map((key) => [key, ProjectSettingsInput.shape[key].unwrap().unwrap()]),
) as {
  [K in keyof typeof ProjectSettingsInput.shape]: ReturnType<
    ReturnType<(typeof ProjectSettingsInput.shape)[K]["unwrap"]>["unwrap"]
  >;
};

/** A PATCH takes every create field with the same rules, and no defaults: what is not sent is kept. */
export const ProjectUpdateInput = z
  .object({
    ...projectSettingsOutput,
    name: ProjectName,
    completed_snippet_onboarding: z.boolean(),
    is_demo: z.boolean(),
    timezone: TimezoneName,
    access_control: z.boolean(),
    has_completed_onboarding_for: storedJson.nullable(),
  })
  .partial()
  .openapi("ProjectUpdate");
export type ProjectUpdateInput = z.infer<typeof ProjectUpdateInput>;

/** `POST /api/projects/{id}/change_organization`: the organization the project moves to. */
export const ChangeOrganizationInput = z
  .object({
    // Optional, as in PostHog: left out, it names no organization of the caller's (400 after the checks of the key).
    organization_id: z
      .string()
      .optional()
      .openapi({ description: "The organization to move the project to (its id)." }),
  })
  .openapi("ProjectChangeOrganization");
export type ChangeOrganizationInput = z.infer<typeof ChangeOrganizationInput>;

export const Project = ProjectListItem.extend({
  ...projectSettingsOutput,
  created_at: Timestamp,
  updated_at: Timestamp,
  effective_membership_level: z.number().int().nullable(),
  has_group_types: z.boolean(),
  group_types: z.array(z.record(z.string(), z.unknown())).openapi({ description: "Always empty: no groups here." }),
  live_events_token: z.string(),
  // As PostHog's current generated document types them (an older one said strings: `"false"` is truthy).
  person_on_events_querying_enabled: z.boolean(),
  default_modifiers: z.record(z.string(), z.unknown()),
  product_intents: z
    .array(z.record(z.string(), z.unknown()))
    .openapi({ description: "Always empty: no product intents here." }),
  secret_api_token: z.string().nullable().openapi({ description: "Always null: no feature-flag secret here." }),
  secret_api_token_backup: z.string().nullable(),
  heatmaps_screenshot_secret: z.string().nullable().openapi({ description: "Always null: no heatmaps here." }),
  user_access_level: z
    .enum(["member", "admin"])
    .openapi({ description: "The caller's access to the project: `admin` from level 8 (or an `admin` rule)." }),
  is_pending_deletion: z.boolean().openapi({ description: "Always false: a project is deleted at once." }),
  deletion_scheduled_at: Timestamp.nullable().openapi({ description: "Always null: a project is deleted at once." }),
  managed_viewsets: z.record(z.string(), z.boolean()).openapi({ description: "Always empty: no data warehouse here." }),
  available_setup_task_ids: z
    .array(z.string())
    .openapi({ description: "Always empty: no product here has setup tasks." }),
}).openapi("Project");
export type Project = z.infer<typeof Project>;

type ProjectRow = typeof projects.$inferSelect;

/** What a list item shows of a project: its columns but the settings, and the settings' `tags`. */
export type ProjectListRow = Pick<
  ProjectRow,
  | "id"
  | "uuid"
  | "organizationId"
  | "apiToken"
  | "name"
  | "completedSnippetOnboarding"
  | "hasCompletedOnboardingFor"
  | "ingestedEvent"
  | "isDemo"
  | "timezone"
  | "accessControl"
  | "createdAt"
> & { tags: string[] };

/** A whole project row as a list item reads it. */
export const asListRow = (row: ProjectRow): ProjectListRow => ({
  ...row,
  tags: (row.settings as { tags?: string[] }).tags ?? [],
});

export function toProjectListItem(row: ProjectListRow): z.infer<typeof ProjectListItem> {
  return {
    id: row.id,
    uuid: row.uuid,
    organization: row.organizationId,
    api_token: row.apiToken,
    name: row.name,
    completed_snippet_onboarding: row.completedSnippetOnboarding,
    has_completed_onboarding_for: row.hasCompletedOnboardingFor ?? null,
    ingested_event: row.ingestedEvent,
    is_demo: row.isDemo,
    timezone: row.timezone,
    access_control: row.accessControl,
    project_id: row.id,
    tags: row.tags,
  };
}

/** The full object; `effective_membership_level` is the caller's organization level. */
export function toProject(row: ProjectRow, membershipLevel: number): Project {
  return {
    ...toProjectListItem(asListRow(row)),
    ...PROJECT_SETTINGS_DEFAULTS,
    ...(row.settings as Partial<z.infer<typeof ProjectSettingsInput>>),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    effective_membership_level: membershipLevel,
    has_group_types: false,
    group_types: [],
    live_events_token: row.liveEventsToken,
    person_on_events_querying_enabled: false,
    default_modifiers: {},
    product_intents: [],
    secret_api_token: null,
    secret_api_token_backup: null,
    heatmaps_screenshot_secret: null,
    user_access_level: isAdmin(membershipLevel) ? "admin" : "member",
    is_pending_deletion: false,
    deletion_scheduled_at: null,
    managed_viewsets: {},
    available_setup_task_ids: [],
  };
}
