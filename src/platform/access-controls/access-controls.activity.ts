import { sql, type SQL } from "drizzle-orm";
import { accessControls as rules } from "../../db/schema";
import { resourceActivity } from "../activity-log/resource-activity";
import type { Context } from "hono";
import type { AppEnv, ProjectContext } from "../env";
import { uuid7 } from "../ids";
import type { RuleSubject } from "./rule-subject";

/**
 * Access rules are created, changed (their level) and removed, on projects and dashboards alike,
 * and on kinds of resources (`resource_access_controls`).
 */
const accessControlActivity = resourceActivity("AccessControl", { fields: ["access_level"] });

type RuleOf = {
  resource: string;
  /** The resource's id as its rules store it (read in the request's first batch); null: every one of its kind. */
  resourceId: string | null;
  /** Whom the rule is for: a member, a role, or neither (the default for everyone). */
  subject: RuleSubject;
  /** The member's e-mail or the role's name; null for the default. */
  name: string | null;
  /** The rule's level: as written, or, for a rule removed, as it was. */
  accessLevel: string | null;
};

/**
 * A rule is named by its member's e-mail or its role's name (the default rule has no name) and
 * described by what it is on. `ruleId`: the rule's id, or SQL reading it when the write may have
 * just created it.
 */
const accessControlItem = (project: ProjectContext, ruleId: string | SQL, rule: RuleOf) => ({
  organizationId: project.organizationId,
  projectId: project.projectId,
  // A dashboard's rules are the dashboard's business: hidden with it from those it hides from.
  dashboardId: rule.resource === "dashboard" && rule.resourceId !== null ? Number(rule.resourceId) : null,
  itemId: ruleId,
  name: rule.name,
  context: {
    resource: rule.resource,
    resource_id: rule.resourceId,
    organization_member: rule.subject.membershipId,
    role: rule.subject.roleId,
    access_level: rule.accessLevel,
  },
});

/** The id of the rule `where` finds, read after the upsert that wrote it. */
export const ruleIdInBatch = (where: SQL | undefined): SQL =>
  sql`select ${rules.id} from ${rules} where ${where} limit 1`;

/**
 * The entry of a write of one rule, placed right after it: `deleted` (`writtenId` null; it
 * records nothing when no rule was there, the DELETE having matched nothing), `created`, or
 * `updated` with its level (none when it did not change). `writtenId` reads the id of the rule an
 * upsert wrote; whether the rule existed is as read.
 */
export function ruleWriteEntry(
  c: Context<AppEnv>,
  project: ProjectContext,
  rule: RuleOf,
  existing: { id: string; accessLevel: string } | undefined,
  writtenId: SQL | null,
) {
  if (writtenId === null) {
    return accessControlActivity.record(c, "deleted", accessControlItem(project, existing?.id ?? "", rule));
  }
  const item = accessControlItem(project, writtenId, rule);
  if (!existing) return accessControlActivity.record(c, "created", item);
  const after = { access_level: rule.accessLevel };
  return accessControlActivity.changed(c, "updated", item, { access_level: existing.accessLevel }, after);
}

/** The columns every new rule shares, whichever table keeps it. */
export const newRuleColumns = <L extends string>(
  subject: RuleSubject,
  level: L,
  userId: number | null,
  now: string,
) => ({
  id: uuid7(),
  organizationMembershipId: subject.membershipId,
  roleId: subject.roleId,
  accessLevel: level,
  createdById: userId,
  createdAt: now,
  updatedAt: now,
});
