import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { accessControls, resourceAccessControls as kindRules, roleMemberships } from "../../db/schema";

/** The levels a rule may give, per kind of resource, lowest first (PostHog's). */
export const RESOURCE_ACCESS_LEVELS = {
  dashboard: ["none", "viewer", "editor", "manager"],
  project: ["none", "member", "admin"],
  activity_log: ["none", "viewer"],
} as const;

/** What the rules of a resource type are about: `"dashboard"`, `"project"`, `"activity_log"`. */
export type AccessControlledResourceName = keyof typeof RESOURCE_ACCESS_LEVELS;
export type AccessLevelOf<R extends AccessControlledResourceName> = (typeof RESOURCE_ACCESS_LEVELS)[R][number];

/** The highest of some levels of a resource, or null for none. */
function highestOf<R extends AccessControlledResourceName>(
  resource: R,
  levels: readonly (AccessLevelOf<R> | null)[],
): AccessLevelOf<R> | null {
  const order: readonly AccessLevelOf<R>[] = RESOURCE_ACCESS_LEVELS[resource];
  return levels.reduce<AccessLevelOf<R> | null>(
    (highest, level) =>
      level !== null && (highest === null || order.indexOf(level) > order.indexOf(highest)) ? level : highest,
    null,
  );
}

/**
 * The level a member's rules on a kind of resource give them on every resource of that kind in
 * the project (PostHog's resource-level rules, `resource_id` null), as PostHog enforces it: the
 * highest of their own, their roles' and the kind's default for everyone; null where none exists.
 * Unlike a rule on one resource, the default is weighed with the others: a default of `viewer`
 * outranks a member's own `none`.
 */
export function kindRule<R extends AccessControlledResourceName>(
  resource: R,
  rules: { own: AccessLevelOf<R> | null; ofRoles: readonly AccessLevelOf<R>[]; default: AccessLevelOf<R> | null },
): AccessLevelOf<R> | null {
  return highestOf(resource, [rules.own, ...rules.ofRoles, rules.default]);
}

/**
 * The access level a member's rules give them on one resource, as PostHog enforces it: the
 * highest of their own rule and their roles' rules on the resource, where any exists; else what
 * the rules on its kind give them (`kindRule`), where any exists; else the resource's default for
 * everyone; else null. A member's own `none` therefore loses to a role's grant, a default never
 * lowers what a member or role rule gives, and a rule on the kind outranks the resource's default.
 */
export function memberRule<R extends AccessControlledResourceName>(
  resource: R,
  rules: {
    own: AccessLevelOf<R> | null;
    ofRoles: readonly AccessLevelOf<R>[];
    ofKind?: AccessLevelOf<R> | null;
    default: AccessLevelOf<R> | null;
  },
): AccessLevelOf<R> | null {
  return highestOf(resource, [rules.own, ...rules.ofRoles]) ?? rules.ofKind ?? rules.default;
}

/** A rule that names neither a member nor a role: the resource's default for everyone. */
export const isDefaultRule = sql`(${accessControls.organizationMembershipId} is null
  and ${accessControls.roleId} is null)`;

/**
 * The rules of the roles a membership holds on resources of one kind, as a query of the
 * resource's `id`: from the member's roles (few, often none) to each one's rules.
 */
export const resourcesRuledForRolesOf = (resource: AccessControlledResourceName, membershipId: SQLWrapper | string) =>
  sql`select cast(${accessControls.resourceId} as integer) as "id" from ${roleMemberships}
    cross join ${accessControls} on ${accessControls.roleId} = ${roleMemberships.roleId}
      and ${accessControls.resource} = ${resource}
    where ${roleMemberships.organizationMembershipId} = ${membershipId}`;

/** The roles a membership holds, as a query of `role_id` (read along the member's index). */
const rolesOfMember = (membershipId: SQLWrapper | string) =>
  sql`select ${roleMemberships.roleId} from ${roleMemberships}
    where ${roleMemberships.organizationMembershipId} = ${membershipId}`;

/** A resource's name written into the statement, as its levels are: a key of this file's constants. */
const resourceLiteral = (resource: AccessControlledResourceName) => sql.raw(`'${resource}'`);

/** A level's rank among the resource's levels (lowest 0), as SQL; null for null. */
function rankInSql(resource: AccessControlledResourceName, level: SQLWrapper): SQL<number | null> {
  const cases = RESOURCE_ACCESS_LEVELS[resource].map((name, index) => `when '${name}' then ${index}`).join(" ");
  return sql<number | null>`(case ${level} ${sql.raw(cases)} end)`;
}

/** The level of a rank (`rankInSql`), as SQL; null for any other value. */
function levelOfRankInSql(resource: AccessControlledResourceName, rank: SQLWrapper): SQL {
  const cases = RESOURCE_ACCESS_LEVELS[resource].map((name, index) => `when ${index} then '${name}'`).join(" ");
  return sql`(case ${rank} ${sql.raw(cases)} end)`;
}

/**
 * `memberRule` in SQL. `resourceId` is usually a column of the outer query, so that a list reads
 * each row's rules through the rules' unique indexes, one lookup each: the member's own rule
 * (resource, id, member), their roles' (resource, id, role: one lookup per role they hold, the
 * highest kept), else `ofKind` (`kindRuleOfMember`, read once per statement), else the default.
 * An OR of the member's and the roles' would read every rule of the resource. The resource and
 * levels are this file's constants, written into the statement rather than bound: a list repeats
 * the rule per statement, and D1 binds at most 100 parameters.
 */
export function ruleOfMember<R extends AccessControlledResourceName>(
  resource: R,
  resourceId: SQLWrapper | string,
  membershipId: SQLWrapper | string,
  ofKind: SQL<AccessLevelOf<R> | null> = sql`null`,
): SQL<AccessLevelOf<R> | null> {
  const ofResource = sql`${accessControls.resource} = ${resourceLiteral(resource)}
    and ${accessControls.resourceId} = cast(${resourceId} as text)`;
  const own = sql`(select ${rankInSql(resource, accessControls.accessLevel)} from ${accessControls}
    where ${ofResource} and ${accessControls.organizationMembershipId} = ${membershipId})`;
  // From the member's roles (few, often none) to each one's rule: nothing read for a member without roles.
  const ofRoles = sql`(select max(${rankInSql(resource, accessControls.accessLevel)}) from ${roleMemberships}
    cross join ${accessControls} on ${accessControls.roleId} = ${roleMemberships.roleId} and ${ofResource}
    where ${roleMemberships.organizationMembershipId} = ${membershipId})`;
  // Whether the member holds a role at all: for a known member, one seek per statement (SQLite
  // runs an uncorrelated subquery once), so that a list spends nothing per row on roles they lack.
  const holdsRoles = sql`exists (${rolesOfMember(membershipId)})`;
  // SQLite's max() of several values is null when one is: -1 stands for "no rule".
  const highest = sql`nullif(max(coalesce(${own}, -1),
    coalesce(case when ${holdsRoles} then ${ofRoles} end, -1)), -1)`;
  // The default's own partial index, named: SQLite would rather walk the member index's null entries.
  return sql<AccessLevelOf<R> | null>`coalesce(${levelOfRankInSql(resource, highest)}, ${ofKind},
    (select ${accessControls.accessLevel} from ${accessControls} indexed by access_controls_resource_default
      where ${ofResource} and ${isDefaultRule}))`;
}

/**
 * `kindRule` in SQL: the member's level on every resource of a kind in an environment, or null.
 * Three index lookups (their own rule, one per role they hold, the default), none of them about
 * a row of the outer query when `environmentId` is a value: SQLite then reads it once per
 * statement, whatever the number of rows it decides. The membership is read once (a list's is a
 * subquery).
 */
export function kindRuleOfMember<R extends AccessControlledResourceName>(
  resource: R,
  environmentId: SQLWrapper | number,
  membershipId: SQLWrapper | string,
): SQL<AccessLevelOf<R> | null> {
  const kind = resourceLiteral(resource);
  const ofKind = sql`${kindRules.environmentId} = ${environmentId} and ${kindRules.resource} = ${kind}`;
  const member = sql`"kind_rule_caller"."membership_id"`;
  const rank = rankInSql(resource, kindRules.accessLevel);
  const own = sql`(select ${rank} from ${kindRules}
    where ${ofKind} and ${kindRules.organizationMembershipId} = ${member})`;
  const ofRoles = sql`(select max(${rank}) from ${roleMemberships}
    cross join ${kindRules} on ${kindRules.roleId} = ${roleMemberships.roleId} and ${ofKind}
    where ${roleMemberships.organizationMembershipId} = ${member})`;
  const byDefault = sql`(select ${rank} from ${kindRules} indexed by resource_access_controls_default
    where ${ofKind} and ${kindRules.organizationMembershipId} is null and ${kindRules.roleId} is null)`;
  const highest = sql`nullif(max(coalesce(${own}, -1), coalesce(${ofRoles}, -1), coalesce(${byDefault}, -1)), -1)`;
  // First whether the environment holds a rule on the kind at all: one seek, where most hold none, rather
  // than the caller's membership read again by each statement that tests the rule.
  return sql<AccessLevelOf<R> | null>`(case when exists (select 1 from ${kindRules} where ${ofKind})
    then (select ${levelOfRankInSql(resource, highest)}
      from (select ${membershipId} as "membership_id") as "kind_rule_caller") end)`;
}
