import { and, eq, or, sql, type SQL } from "drizzle-orm";
import { batchExports, environments, organizations } from "../../db/schema";
import { liveBatchExports } from "../../environments/batch-exports/batch-exports.queries";
import { inJsonList, type Database } from "../../platform/db";
import { isAdminInSql } from "../../platform/levels";
import type { Actor } from "../../platform/env";
import type { OrganizationRef } from "../../platform/organization-context";
import { counterOf } from "../../platform/pagination";
import { projectsHiddenFrom, type CallerMembership } from "../../platform/project-context";

/** The organization and the caller's membership of it: resolved, or subqueries of the read (`callerInOrganization`). */
export type OrganizationCaller = CallerMembership & { organizationId: OrganizationRef };

/** `columns` of the environments of the projects a query of `id` (`projectsHiddenFrom`) selects. */
const ofEnvironmentsOf = (hidden: SQL, columns: SQL) =>
  sql`select ${columns} from (${hidden}) as "hidden"
    cross join ${environments} on ${environments.projectId} = "hidden"."id"`;

/**
 * The organization's live exports whose project the caller may see: not in an environment of the
 * projects their rules hide (`projectsHiddenFrom`, the few private or ruled ones, read once per
 * statement), tested on the list's index entry, which holds the environment (each test costs a
 * row read, besides the entry's: 2 per row skipped by an offset, where the project's rule cost 3);
 * an admin's rows test nothing. A key scoped to some projects reaches only theirs.
 */
export function visibleExportsOfOrganization(actor: Actor, caller: OrganizationCaller): SQL | undefined {
  const projectOfExport = sql`(select ${environments.projectId} from ${environments} where ${environments.id} = ${batchExports.environmentId})`;
  const inKeyScope = actor.scopedTeams.length > 0 ? inJsonList(projectOfExport, actor.scopedTeams) : undefined;
  const hidden = projectsHiddenFrom(caller.organizationId, caller);
  const notHidden =
    hidden && sql`${batchExports.environmentId} not in (${ofEnvironmentsOf(hidden, sql`${environments.id}`)})`;
  return and(
    eq(batchExports.organizationId, caller.organizationId),
    liveBatchExports,
    // Each test of the list costs a row read: an admin known only to the statement skips it.
    notHidden && typeof caller.level !== "number" ? or(isAdminInSql(caller.level), notHidden) : notHidden,
    inKeyScope,
  );
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
  const inHidden = sql`(${ofEnvironmentsOf(hidden, sql`sum(${environments.batchExportCount})`)})`;
  return sql<number>`(${counter} - coalesce(${inHidden}, 0))`;
}
