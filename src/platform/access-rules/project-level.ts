import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { organizationMemberships, projects } from "../../db/schema";
import { MembershipLevel } from "../levels";
import { ruleOfMember, type AccessLevelOf } from "./member-rule";

/**
 * The caller's level in a project: their organization level, raised to admin by a project rule of
 * `admin` (`ruleOfMember`), as PostHog's `effective_membership_level`.
 */
export function projectLevel(level: number, rule: AccessLevelOf<"project"> | null): number {
  return Math.max(level, rule === "admin" ? MembershipLevel.admin : 0);
}

/** `projectLevel` in SQL. */
export const projectLevelInSql = (level: SQLWrapper, rule: SQLWrapper): SQL<number> =>
  sql<number>`max(${level}, case when ${rule} = 'admin' then ${MembershipLevel.admin} else 0 end)`;

/** `projectLevelInSql` for the caller's membership (`organizationMemberships`) joined on the project. */
export const effectiveProjectLevel = projectLevelInSql(
  organizationMemberships.level,
  ruleOfMember("project", projects.id, organizationMemberships.id),
);
