import { z } from "@hono/zod-openapi";
import type { Actor } from "../env";
import { permissionDenied } from "../errors";

const RESOURCES = [
  "access_control",
  "activity_log",
  "batch_export",
  "dashboard",
  "organization",
  "organization_member",
  "personal_api_key",
  "project",
  "sharing_configuration",
  "user",
  "webhook",
] as const;

type Resource = (typeof RESOURCES)[number];

/** A scope a route may require: a typo in a route's `scope` fails to compile. */
export type Scope = "*" | `${Resource}:read` | `${Resource}:write`;

export const SCOPES: readonly Scope[] = [
  "*",
  ...RESOURCES.flatMap((resource) => [`${resource}:read` as const, `${resource}:write` as const]),
];

/**
 * The kinds PostHog's personal API keys take scopes on: `get_scope_descriptions()` of
 * posthog/scopes.py (github.com/PostHog/posthog), its internal kinds left out. A key may hold a
 * scope on any of them, as PostHog's web app presets give them ("MCP Server": all of them), though
 * only `RESOURCES`' open a route here.
 */
const POSTHOG_SCOPE_KINDS = [
  "action",
  "access_control",
  "account",
  "activity_log",
  "agent_application",
  "alert",
  "annotation",
  "approvals",
  "batch_export",
  "batch_import",
  "business_knowledge",
  "cohort",
  "comment",
  "conversation",
  "customer_analytics",
  "customer_journey",
  "customer_profile_config",
  "dashboard",
  "event_filter",
  "dashboard_template",
  "dataset",
  "desktop_recording",
  "early_access_feature",
  "endpoint",
  "error_tracking",
  "evaluation",
  "element",
  "event_definition",
  "experiment",
  "experiment_saved_metric",
  "export",
  "external_data_schema",
  "external_data_source",
  "feature_flag",
  "file_system",
  "file_system_shortcut",
  "group",
  "health_issue",
  "heatmap",
  "hog_flow",
  "hog_function",
  "insight",
  "insight_variable",
  "integration",
  "legal_document",
  "link",
  "live_debugger",
  "ai_gateway",
  "llm_analytics",
  "llm_gateway",
  "llm_prompt",
  "llm_provider_key",
  "llm_skill",
  "logs",
  "marketing_analytics",
  "metrics",
  "notebook",
  "organization",
  "organization_integration",
  "organization_member",
  "person",
  "persisted_folder",
  "plugin",
  "product_tour",
  "project",
  "property_definition",
  "query",
  "replay_scanner",
  "revenue_analytics",
  "session_recording",
  "session_recording_playlist",
  "sharing_configuration",
  "signal_scout",
  "streamlit_app",
  "subscription",
  "survey",
  "tagger",
  "ticket",
  "task",
  "tracing",
  "uploaded_media",
  "usage_metric",
  "user",
  "user_interview",
  "visual_review",
  "warehouse_objects",
  "warehouse_table",
  "warehouse_view",
  "web_analytics",
  "webhook",
  "wizard_session",
] as const;

const KEY_SCOPES: ReadonlySet<string> = new Set([
  ...SCOPES,
  ...POSTHOG_SCOPE_KINDS.flatMap((kind) => [`${kind}:read`, `${kind}:write`]),
]);

/** A scope a key (or an organization's ceiling on keys) may hold: this API's and PostHog's. */
export const KeyScope = z
  .string()
  .refine((scope) => KEY_SCOPES.has(scope), {
    error: (issue) => `"${String(issue.input)}" is not a valid choice.`,
    params: { code: "invalid_choice" },
  })
  .openapi({
    description: "`*`, or `<kind>:read` or `<kind>:write` for a kind of PostHog's; those of this API open its routes.",
    example: "dashboard:read",
  });

/** `*` grants everything; `X:write` also grants `X:read`. */
export function scopesGrant(granted: readonly string[], required: string): boolean {
  if (granted.includes("*") || granted.includes(required)) return true;
  const [resource, action] = required.split(":");
  return action === "read" && granted.includes(`${resource}:write`);
}

export function assertScope(actor: Actor, required: string) {
  if (!scopesGrant(actor.scopes, required)) {
    throw permissionDenied(`API key missing required scope '${required}'`);
  }
}
