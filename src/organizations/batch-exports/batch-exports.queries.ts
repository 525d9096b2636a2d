import { and, eq, or, sql, type SQL } from "drizzle-orm";
import { batchExports, environments, organizations } from "../../db/schema";
import { liveBatchExports } from "../../environments/batch-exports/batch-exports.queries";
import { inJsonList, type Database } from "../../platform/db";
import type { Actor } from "../../platform/env";
import type { OrganizationRef } from "../../platform/route-context/organization";
import { counterOf } from "../../platform/pagination";
import { isAdminInSql } from "../../platform/levels";
import type { CallerMembership } from "../../platform/access-rules/project-visibility";
import { projectsHiddenFrom } from "../../platform/route-context/project";

/** The organization and the caller's membership of it: resolved, or subqueries of the read (`callerInOrganization`). */
export type OrganizationCaller = CallerMembership & { organizationId: OrganizationRef };

/**
 * The environments of `projects` (a query of `id`) as one text, `,4,9,` (`,,` for none), read once
 * per statement, from the FROM clause: SQLite bounds how deep an expression nests (100), and a
 * subquery there does not count toward it.
 */
const environmentListOf = (
  projects: SQL,
) => sql`(select ',' || coalesce(group_concat(${environments.id}, ','), '') || ','
  from (${projects}) as "hidden" cross join ${environments} on ${environments.projectId} = "hidden"."id")`;

/**
 * The organization's live exports whose project the caller may see: those outside the
 * environments of the projects the caller's rules hide (`projectsHiddenFrom`), read once, not a
 * rule per row. Each entry is tested by a search in their text (`environmentListOf`), not by a
 * lookup in a subquery's rows, which D1 counts as a row read: an offset would read two rows per
 * entry it skips. An admin's rows test nothing. A key scoped to some projects reaches only theirs.
 */
export function visibleExportsOfOrganization(actor: Actor, caller: OrganizationCaller): SQL | undefined {
  const hidden = projectsHiddenFrom(caller.organizationId, caller);
  // A level read by the statement is tested first, once: an admin's rows look nothing up.
  const outsideHidden = hidden
    ? or(
        typeof caller.level === "number" ? undefined : isAdminInSql(caller.level),
        sql`instr(${environmentListOf(hidden)}, ',' || ${batchExports.environmentId} || ',') = 0`,
      )
    : undefined;
  const projectOfExport = sql`(select ${environments.projectId} from ${environments}
    where ${environments.id} = ${batchExports.environmentId})`;
  const inKeyScope = actor.scopedTeams.length > 0 ? inJsonList(projectOfExport, actor.scopedTeams) : undefined;
  return and(eq(batchExports.organizationId, caller.organizationId), liveBatchExports, outsideHidden, inKeyScope);
}

/**
 * How many exports the caller sees: the organization's counter less those in the environments of
 * the projects their rules hide (each environment's counter). A key scoped to some projects
 * counts theirs.
 */
export function countOfVisibleExports(db: Database, actor: Actor, caller: OrganizationCaller): SQL<number> {
  if (actor.scopedTeams.length > 0)
    return sql<number>`${db.$count(batchExports, visibleExportsOfOrganization(actor, caller))}`;
  const counter = counterOf(organizations.batchExportCount, eq(organizations.id, caller.organizationId));
  const hidden = projectsHiddenFrom(caller.organizationId, caller);
  if (!hidden) return counter;
  const inHidden = sql`(select sum(${environments.batchExportCount}) from (${hidden}) as "hidden"
    cross join ${environments} on ${environments.projectId} = "hidden"."id")`;
  return sql<number>`(${counter} - coalesce(${inHidden}, 0))`;
}
