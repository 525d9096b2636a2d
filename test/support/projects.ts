import { expect } from "vitest";
import { ISO_TIMESTAMP, UUID } from "./harness";

/** A batch export's body with an S3 destination, as the projects' tests create one. */
export const S3_EXPORT = {
  name: "Events to S3",
  interval: "hour",
  destination: {
    type: "S3",
    config: { bucket_name: "b", region: "us-east-1", prefix: "p/", aws_access_key_id: "A", aws_secret_access_key: "s" },
  },
};

/** Every request field of a project at its default. */
const PROJECT_REQUEST_DEFAULTS = {
  product_description: null,
  app_urls: [],
  slack_incoming_webhook: null,
  anonymize_ips: false,
  completed_snippet_onboarding: false,
  test_account_filters: [],
  test_account_filters_default_checked: false,
  path_cleaning_filters: [],
  is_demo: false,
  timezone: "UTC",
  data_attributes: [],
  person_display_name_properties: [],
  correlation_config: null,
  autocapture_opt_out: false,
  autocapture_exceptions_opt_in: false,
  autocapture_web_vitals_opt_in: false,
  autocapture_web_vitals_allowed_metrics: null,
  autocapture_exceptions_errors_to_ignore: null,
  capture_console_log_opt_in: false,
  capture_performance_opt_in: false,
  session_recording_opt_in: false,
  session_recording_sample_rate: null,
  session_recording_minimum_duration_milliseconds: null,
  session_recording_linked_flag: null,
  session_recording_network_payload_capture_config: null,
  session_replay_config: null,
  survey_config: null,
  access_control: false,
  week_start_day: null,
  primary_dashboard: null,
  live_events_columns: [],
  recording_domains: [],
  inject_web_apps: false,
  extra_settings: null,
  modifiers: null,
  has_completed_onboarding_for: null,
  surveys_opt_in: false,
  heatmaps_opt_in: false,
  flags_persistence_default: false,
  tags: [],
  session_recording_masking_config: null,
  session_recording_url_trigger_config: [],
  session_recording_url_blocklist_config: [],
  session_recording_event_trigger_config: [],
  session_recording_trigger_match_type_config: null,
  session_recording_trigger_groups: null,
  session_recording_retention_period: "30d",
  receive_org_level_activity_logs: false,
  business_model: null,
  conversations_enabled: false,
  conversations_settings: null,
  logs_settings: null,
  proactive_tasks_enabled: false,
  revenue_analytics_config: {},
  marketing_analytics_config: {},
  customer_analytics_config: {},
  workflows_config: {},
  feature_flag_policy_config: {},
  base_currency: "USD",
  capture_dead_clicks: false,
  cookieless_server_hash_mode: 0,
  human_friendly_comparison_periods: false,
  feature_flag_confirmation_enabled: false,
  feature_flag_confirmation_message: null,
  default_evaluation_contexts_enabled: false,
  require_evaluation_contexts: false,
  default_data_theme: null,
  onboarding_tasks: null,
  web_analytics_pre_aggregated_tables_enabled: false,
};

/** The full project object, generated fields matched by shape. */
export function expectedProject(fields: {
  id?: number;
  organization: string;
  name: string;
  level: number;
  overrides?: Record<string, unknown>;
}) {
  return {
    ...PROJECT_REQUEST_DEFAULTS,
    ...fields.overrides,
    id: fields.id ?? expect.any(Number),
    uuid: expect.stringMatching(UUID),
    organization: fields.organization,
    name: fields.name,
    api_token: expect.stringMatching(/^phc_[0-9A-Za-z]{43}$/),
    live_events_token: expect.any(String),
    ingested_event: false,
    created_at: expect.stringMatching(ISO_TIMESTAMP),
    updated_at: expect.stringMatching(ISO_TIMESTAMP),
    effective_membership_level: fields.level,
    has_group_types: false,
    group_types: [],
    person_on_events_querying_enabled: false,
    default_modifiers: {},
    product_intents: [],
    secret_api_token: null,
    secret_api_token_backup: null,
    heatmaps_screenshot_secret: null,
    user_access_level: fields.level >= 8 ? "admin" : "member",
    is_pending_deletion: false,
    deletion_scheduled_at: null,
    managed_viewsets: {},
    available_setup_task_ids: [],
    project_id: fields.id ?? expect.any(Number),
  };
}

/** The abbreviated list item: exactly the seed's fields. */
export function expectedProjectListItem(project: {
  id: number;
  uuid: string;
  organizationId: string;
  apiToken: string;
  name: string;
  accessControl?: boolean;
}) {
  return {
    id: project.id,
    uuid: project.uuid,
    organization: project.organizationId,
    api_token: project.apiToken,
    name: project.name,
    completed_snippet_onboarding: false,
    has_completed_onboarding_for: null,
    ingested_event: false,
    is_demo: false,
    timezone: "UTC",
    access_control: project.accessControl ?? false,
    project_id: project.id,
    tags: [],
  };
}

type ProjectPathRow = { id: number; organizationId: string };

/** The three paths of a project: its organization's, the projects tree, and its environment. */
export const PROJECT_PATHS = [
  {
    tree: "organization",
    path: (project: ProjectPathRow) => `/api/organizations/${project.organizationId}/projects/${project.id}`,
  },
  { tree: "projects", path: (project: ProjectPathRow) => `/api/projects/${project.id}` },
  { tree: "environments", path: (project: ProjectPathRow) => `/api/environments/${project.id}` },
] as const;

/** Project settings that take any JSON value, each bounded alone (64 KiB serialized). */
export const OPAQUE_SETTINGS = [
  "test_account_filters",
  "path_cleaning_filters",
  "data_attributes",
  "correlation_config",
  "autocapture_web_vitals_allowed_metrics",
  "autocapture_exceptions_errors_to_ignore",
  "session_recording_linked_flag",
  "session_recording_network_payload_capture_config",
  "session_replay_config",
  "survey_config",
  "extra_settings",
  "modifiers",
  "session_recording_masking_config",
  "session_recording_trigger_groups",
  "conversations_settings",
  "logs_settings",
  "onboarding_tasks",
  "has_completed_onboarding_for",
];
/** Those that take a list of any JSON (1,000 entries at most), bounded alone too. */
export const OPAQUE_LIST_SETTINGS = ["session_recording_url_trigger_config", "session_recording_url_blocklist_config"];
/** Those that take any JSON object, bounded alone too. */
export const OPAQUE_OBJECT_SETTINGS = [
  "revenue_analytics_config",
  "marketing_analytics_config",
  "customer_analytics_config",
  "workflows_config",
  "feature_flag_policy_config",
];
