import { z } from "@hono/zod-openapi";
import { validationError } from "../../platform/errors";
import { RuleSubjectInput } from "../../platform/access-controls/rule-subject";

/** The levels a rule on a kind of resource gives, lowest first (PostHog's resource levels). */
export const RESOURCE_TYPE_LEVELS = ["none", "viewer", "editor", "manager"] as const;

/**
 * The kinds of resources PostHog's resource-level rules are about, less those this API acts on
 * itself: it holds no actions, flags, surveys..., so their rules are stored and returned for
 * PostHog's clients and act on nothing here. Dashboards (whose rules are per dashboard here) and
 * projects (per project) are refused; see docs/roles.md.
 */
export const STORED_RESOURCE_TYPES = [
  "action",
  "activity_log",
  "customer_analytics",
  "early_access_feature",
  "endpoint",
  "error_tracking",
  "experiment",
  "export",
  "external_data_source",
  "feature_flag",
  "insight",
  "llm_analytics",
  "logs",
  "notebook",
  "revenue_analytics",
  "session_recording",
  "sharing_configuration",
  "survey",
  "tracing",
  "warehouse_objects",
  "web_analytics",
] as const;
export type StoredResourceType = (typeof STORED_RESOURCE_TYPES)[number];

/** PostHog's bounds: an action is at least viewed; the activity log at most viewed. */
const MINIMUM: Partial<Record<StoredResourceType, (typeof RESOURCE_TYPE_LEVELS)[number]>> = { action: "viewer" };
const MAXIMUM: Partial<Record<StoredResourceType, (typeof RESOURCE_TYPE_LEVELS)[number]>> = { activity_log: "viewer" };

export const PutResourceAccessControlInput = z
  .object({
    resource: z.string().openapi({ description: "The kind of resource, `survey` say.", example: "survey" }),
    access_level: z
      .string()
      .nullable()
      .openapi({ description: "none, viewer, editor or manager; null removes the rule." }),
    ...RuleSubjectInput,
  })
  .openapi("PutResourceAccessControl");

/** The resource a PUT names, if this API keeps rules for it; else PostHog's 400, or ours for what it acts on. */
export function checkedResourceType(resource: string): StoredResourceType {
  if ((STORED_RESOURCE_TYPES as readonly string[]).includes(resource)) return resource as StoredResourceType;
  if (resource === "dashboard" || resource === "project") {
    throw validationError(
      "invalid_input",
      `Rules on every ${resource} are not supported here: set each ${resource}'s rules with its access_controls.`,
      "resource",
    );
  }
  throw validationError(
    "invalid_choice",
    `Invalid resource. Must be one of: ${STORED_RESOURCE_TYPES.join(", ")}`,
    "resource",
  );
}

/** A level the kind of resource accepts (within its bounds), or null (remove the rule). */
export function checkedTypeLevel(resource: StoredResourceType, level: string | null): string | null {
  if (level === null) return null;
  const levels: readonly string[] = RESOURCE_TYPE_LEVELS;
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
