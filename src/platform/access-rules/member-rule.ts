import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { accessControls, roleMemberships } from "../../db/schema";

/** The levels a rule may give, per kind of resource, lowest first (PostHog's). */
export const RESOURCE_ACCESS_LEVELS = {
  dashboard: ["none", "viewer", "editor", "manager"],
  project: ["none", "member", "admin"],
} as const;

/** What the rules of a resource type are about: `"dashboard"`, `"project"`. */
export type AccessControlledResourceName = keyof typeof RESOURCE_ACCESS_LEVELS;
export type AccessLevelOf<R extends AccessControlledResourceName> = (typeof RESOURCE_ACCESS_LEVELS)[R][number];

/**
 * The access level a member's rules give them on one resource, as PostHog enforces it: the
 * highest of their own rule and their roles' rules, where any exists; else the resource's default
 * for everyone; else null. A member's own `none` therefore loses to a role's grant, and a default
 * never lowers what a member or role rule gives.
 */
export function memberRule<R extends AccessControlledResourceName>(
  resource: R,
  rules: { own: AccessLevelOf<R> | null; ofRoles: readonly AccessLevelOf<R>[]; default: AccessLevelOf<R> | null },
): AccessLevelOf<R> | null {
  const levels: readonly AccessLevelOf<R>[] = RESOURCE_ACCESS_LEVELS[resource];
  const named = [rules.own, ...rules.ofRoles].filter((level): level is AccessLevelOf<R> => level !== null);
  if (named.length === 0) return rules.default;
  return named.reduce((highest, level) => (levels.indexOf(level) > levels.indexOf(highest) ? level : highest));
}

/** A rule that names neither a member nor a role: the resource's default for everyone. */
export const isDefaultRule = sql`(${accessControls.organizationMembershipId} is null and ${accessControls.roleId} is null)`;

/** The roles a membership holds, as a query of `role_id` (read along the member's index). */
export const rolesOfMember = (membershipId: SQLWrapper | string) =>
  sql`select ${roleMemberships.roleId} from ${roleMemberships}
    where ${roleMemberships.organizationMembershipId} = ${membershipId}`;

/**
 * The highest of the levels `column` holds over the rows read, as one aggregate (null without
 * rows). The levels are this file's constants, written into the statement rather than bound: a
 * list repeats the rule per statement, and D1 binds at most 100 parameters.
 */
function highestLevelInSql(resource: AccessControlledResourceName, column: SQLWrapper): SQL {
  const levels = RESOURCE_ACCESS_LEVELS[resource];
  const rank = levels.map((level, index) => `when '${level}' then ${index}`).join(" ");
  const level = levels.map((name, index) => `when ${index} then '${name}'`).join(" ");
  return sql`case max(case ${column} ${sql.raw(rank)} end) ${sql.raw(level)} end`;
}

/**
 * `memberRule` in SQL. `resourceId` is usually a column of the outer query, so that a list reads
 * each row's rules through the rules' unique indexes: the member's own and their roles' (an
 * aggregate, no sort), else the default (one lookup).
 */
export function ruleOfMember<R extends AccessControlledResourceName>(
  resource: R,
  resourceId: SQLWrapper | string,
  membershipId: SQLWrapper | string,
): SQL<AccessLevelOf<R> | null> {
  const ofResource = sql`${accessControls.resource} = ${resource}
    and ${accessControls.resourceId} = cast(${resourceId} as text)`;
  const named = sql`(${accessControls.organizationMembershipId} = ${membershipId}
    or ${accessControls.roleId} in (${rolesOfMember(membershipId)}))`;
  return sql<AccessLevelOf<R> | null>`coalesce(
    (select ${highestLevelInSql(resource, accessControls.accessLevel)} from ${accessControls}
      where ${ofResource} and ${named}),
    (select ${accessControls.accessLevel} from ${accessControls} where ${ofResource} and ${isDefaultRule}))`;
}
