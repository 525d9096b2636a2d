import { and, eq, sql, type SQL } from "drizzle-orm";
import { activityLog, dashboards, environments, projects } from "../../db/schema";
import { dashboardRuleInSql, dashboardVisibleInSql } from "../access-rules/dashboard-rights";
import { isAdminInSql } from "../levels";
import { kindRuleOfMember } from "../access-rules/member-rule";
import { effectiveProjectLevel } from "../access-rules/project-level";
import { projectVisible } from "../access-rules/project-visibility";
import type { Actor } from "../env";
import { membershipsOf } from "../route-context/organization";
import { membershipOfCaller } from "../route-context/project";

/**
 * Who reads entries about a project: the user, their membership of the project's organization
 * and their level in the project (`effectiveProjectLevel`), as SQL read in the same statement.
 */
type ProjectEntryReader = { userId: number; membershipId: SQL<string>; projectLevel: SQL<number> };

/**
 * Entries about a dashboard (itself, its tiles, collaborators, sharing, rules) show only to those
 * who can see the dashboard: a `none` rule (on it, or on every dashboard of its project) hides its
 * name and changes here too. Its creator and the project's admins (organization admins, or a
 * project rule of `admin`) always see it, as the dashboards list decides. In SQL, so that a page
 * is read with the caller's rights in one round trip.
 */
export function dashboardEntriesVisibleTo(reader: ProjectEntryReader): SQL {
  const dashboardRule = dashboardRuleInSql(dashboards, reader.membershipId);
  const dashboardVisible = dashboardVisibleInSql(
    reader,
    { createdById: dashboards.createdById, rule: dashboardRule },
    (notHidden) =>
      sql`exists (select 1 from ${dashboards} where ${dashboards.id} = ${activityLog.dashboardId} and ${notHidden})`,
  );
  return sql`(${activityLog.dashboardId} is null or ${dashboardVisible})`;
}

/**
 * The caller's level in the project of the entry being read (`effectiveProjectLevel`); null for an entry of no project.
 */
const levelInEntryProject = (actor: Actor) =>
  sql<number>`(select ${effectiveProjectLevel} from ${membershipsOf(actor)}
    join ${projects} on ${membershipOfCaller(actor.userId)}
    where ${projects.id} = ${activityLog.projectId})`;

/**
 * The entry's project is one the caller sees (`projectVisible`, as every project route decides),
 * in the organization whose log holds the entry: a project moved to another organization leaves
 * its earlier entries to the old organization's admins.
 */
const entryProjectVisible = (actor: Actor) =>
  sql`exists (select 1 from ${projects} join ${membershipsOf(actor)} on ${membershipOfCaller(actor.userId)}
    where ${and(
      eq(projects.id, activityLog.projectId),
      eq(projects.organizationId, activityLog.organizationId),
      projectVisible,
    )})`;

/**
 * The entry's project log is not hidden from the reader by a `none` rule on it (a rule on the kind
 * `activity_log`), as the project's log refuses them; its admins are never restricted.
 */
const entryLogNotHidden = (reader: ProjectEntryReader) => {
  const environmentId = sql`(select ${environments.id} from ${environments}
    where ${environments.projectId} = ${activityLog.projectId})`;
  const rule = kindRuleOfMember("activity_log", environmentId, reader.membershipId);
  return sql`(${isAdminInSql(reader.projectLevel)} or coalesce(${rule}, 'viewer') <> 'none')`;
};

/**
 * What a caller sees of their organization's entries, as the activity log's two lists already
 * decide: an admin or owner everything (the organization's log), a member the entries of the
 * projects they see whose logs are not hidden from them, as each project's log shows them
 * (`entryLogNotHidden`, `dashboardEntriesVisibleTo`), and no
 * entry of the organization itself. `membership` is the caller's, as SQL read once per statement.
 */
export function organizationEntriesVisibleTo(
  actor: Actor,
  membership: { membershipId: SQL<string>; level: SQL<number> },
): SQL {
  const reader = {
    userId: actor.userId,
    membershipId: membership.membershipId,
    projectLevel: levelInEntryProject(actor),
  };
  const asProjectLog = sql`(${activityLog.projectId} is not null and ${entryProjectVisible(actor)}
    and ${entryLogNotHidden(reader)} and ${dashboardEntriesVisibleTo(reader)})`;
  return sql`(${isAdminInSql(membership.level)} or ${asProjectLog})`;
}
