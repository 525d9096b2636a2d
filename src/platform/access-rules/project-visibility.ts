import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { organizationMemberships, projects } from "../../db/schema";
import { isAdmin, isAdminInSql, MembershipLevel } from "../levels";
import { ruleOfMember, type AccessLevelOf } from "./member-rule";

/**
 * Who sees a project: organization admins and owners see every project; a member sees it unless
 * their access rule on it (`ruleOfMember`: their own, else the project's default) is `none`.
 * `level` is the caller's organization level.
 */
export function projectVisibleTo(level: number, rule: AccessLevelOf<"project"> | null): boolean {
  return isAdmin(level) || (rule ?? "member") !== "none";
}

/**
 * `projectVisibleTo` in SQL. A level known to the statement is folded: an admin's rows test no
 * rule (undefined: no condition), a member's only their rule.
 */
export function projectVisibleInSql(level: SQLWrapper, rule: SQLWrapper): SQL;
export function projectVisibleInSql(level: number | SQLWrapper, rule: SQLWrapper): SQL | undefined;
export function projectVisibleInSql(level: number | SQLWrapper, rule: SQLWrapper): SQL | undefined {
  const ruleAllows = sql`coalesce(${rule}, 'member') <> 'none'`;
  if (typeof level !== "number") return sql`(${isAdminInSql(level)} or ${ruleAllows})`;
  return level >= MembershipLevel.admin ? undefined : ruleAllows;
}

/**
 * `projectVisibleInSql` for the caller's membership (`organizationMemberships`) joined on the
 * project; a project scheduled for deletion is visible to no one.
 */
export const projectVisible = sql`(${projects.deletionScheduledAt} is null and ${projectVisibleInSql(
  organizationMemberships.level,
  ruleOfMember("project", projects.id, organizationMemberships.id),
)})`;

/**
 * The caller's membership of the organization a statement reads: known (resolved before), or as
 * subqueries of the same round trip (`callerInOrganization`).
 */
export type CallerMembership = { membershipId: string | SQL; level: number | SQL };

/**
 * `projectVisibleInSql` for `membership`, the caller's in the project's organization, known or
 * read once by a subquery: no join per row. `projectId`: the project's id in the query (its
 * row's, unless given).
 */
export const projectVisibleAtLevel = (membership: CallerMembership, projectId: SQLWrapper = projects.id) =>
  projectVisibleInSql(membership.level, ruleOfMember("project", projectId, membership.membershipId));
