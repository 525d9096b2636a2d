import { z } from "@hono/zod-openapi";
import { validationError } from "../../platform/errors";
import { RuleSubjectInput } from "../../platform/access-controls/rule-subject";
import { RESOURCE_ACCESS_LEVELS } from "../../platform/access-rules/member-rule";

/** The levels a rule on a kind of resource gives, lowest first (PostHog's resource levels). */
export const RESOURCE_TYPE_LEVELS = RESOURCE_ACCESS_LEVELS.dashboard;

/**
 * The kinds of resources PostHog's resource-level rules are about. A rule on `dashboard` acts on
 * every dashboard of the project (`kindRuleOfMember`), one on `activity_log` on the project's log;
 * the others are stored and returned for PostHog's clients and act on nothing here: this API
 * holds no actions, flags, surveys..., and
 * PostHog itself reads no rule on `project` at this level (a project's rules are its own,
 * `access_controls`). See docs/roles.md. The list is PostHog's `ACCESS_CONTROL_RESOURCES`
 * (github.com/PostHog/posthog, posthog/rbac/user_access_control.py) and `project`.
 */
export const STORED_RESOURCE_TYPES = [
  "action",
  "activity_log",
  "ai_observability_clusters",
  "customer_analytics",
  "dashboard",
  "early_access_feature",
  "endpoint",
  "error_tracking",
  "evaluation",
  "experiment",
  "export",
  "external_data_source",
  "feature_flag",
  "heatmap",
  "hog_flow",
  "insight",
  "llm_analytics",
  "llm_playground",
  "llm_skill",
  "logs",
  "mcp_analytics",
  "metrics",
  "notebook",
  "project",
  "replay_scanner",
  "revenue_analytics",
  "session_recording",
  "sharing_configuration",
  "survey",
  "tagger",
  "ticket",
  "toolbar",
  "tracing",
  "warehouse_objects",
  "web_analytics",
] as const;
type StoredResourceType = (typeof STORED_RESOURCE_TYPES)[number];

/** PostHog's bounds: an action is at least viewed; the activity log and the toolbar at most viewed. */
const MINIMUM: Partial<Record<StoredResourceType, (typeof RESOURCE_TYPE_LEVELS)[number]>> = { action: "viewer" };
const MAXIMUM: Partial<Record<StoredResourceType, (typeof RESOURCE_TYPE_LEVELS)[number]>> = {
  activity_log: "viewer",
  toolbar: "viewer",
};

export const PutResourceAccessControlInput = z
  .object({
    resource: z.string().openapi({ description: "The kind of resource, `survey` say.", example: "survey" }),
    access_level: z.string().nullable().openapi({
      description: "none, viewer, editor or manager (none, member or admin on `project`); null removes it.",
    }),
    ...RuleSubjectInput,
  })
  // A member or a role, never both; a level the resource has.
  .openapi("PutResourceAccessControl", {
    example: { resource: "survey", access_level: "viewer", role: "0195d3a6-7c1e-7f3a-9b2c-5d4e3f2a1b0c" },
  });

/** The resource a PUT names, if this API keeps rules for it; else PostHog's 400. */
export function checkedResourceType(resource: string): StoredResourceType {
  if ((STORED_RESOURCE_TYPES as readonly string[]).includes(resource)) return resource as StoredResourceType;
  throw validationError(
    "invalid_choice",
    `Invalid resource. Must be one of: ${STORED_RESOURCE_TYPES.join(", ")}`,
    "resource",
  );
}

/** The levels a rule on the kind accepts, lowest first: a project's are a member's levels, as PostHog's. */
const levelsOf = (resource: StoredResourceType): readonly string[] =>
  resource === "project" ? RESOURCE_ACCESS_LEVELS.project : RESOURCE_TYPE_LEVELS;

/** A level the kind of resource accepts (within its bounds), or null (remove the rule). */
export function checkedTypeLevel(resource: StoredResourceType, level: string | null): string | null {
  if (level === null) return null;
  const levels = levelsOf(resource);
  if (!levels.includes(level)) {
    throw validationError(
      "invalid_choice",
      `Invalid access level. Must be one of: ${levels.join(", ")}`,
      "access_level",
    );
  }
  const minimum = MINIMUM[resource];
  if (minimum && levels.indexOf(level) < levels.indexOf(minimum)) {
    throw validationError(
      "invalid_input",
      `Access level cannot be set below the minimum '${minimum}' for ${resource}.`,
      "access_level",
    );
  }
  const maximum = MAXIMUM[resource];
  if (maximum && levels.indexOf(level) > levels.indexOf(maximum)) {
    throw validationError(
      "invalid_input",
      `Access level cannot be set above the maximum '${maximum}' for ${resource}.`,
      "access_level",
    );
  }
  return level;
}
