import { and, eq, sql, type SQL } from "drizzle-orm";
import { batchExports, environments, organizations } from "../../db/schema";
import { liveBatchExports } from "../../environments/batch-exports/batch-exports.queries";
import { inJsonList, type Database } from "../../platform/db";
import type { Actor } from "../../platform/env";
import type { OrganizationRef } from "../../platform/route-context/organization";
import { counterOf } from "../../platform/pagination";
import { projectVisibleAtLevel, type CallerMembership } from "../../platform/access-rules/project-visibility";
import { projectsHiddenFrom } from "../../platform/route-context/project";

/** The organization and the caller's membership of it: resolved, or subqueries of the read (`callerInOrganization`). */
export type OrganizationCaller = CallerMembership & { organizationId: OrganizationRef };

/**
 * The organization's live exports whose project the caller may see, by the projects' visibility
 * rule; an admin's rows test nothing, not even their project (read only for the rule). A key
 * scoped to some projects reaches only theirs.
 */
export function visibleExportsOfOrganization(actor: Actor, caller: OrganizationCaller): SQL | undefined {
  const projectOfExport = sql`(select ${environments.projectId} from ${environments}
    where ${environments.id} = ${batchExports.environmentId})`;
  const inKeyScope = actor.scopedTeams.length > 0 ? inJsonList(projectOfExport, actor.scopedTeams) : undefined;
  return and(
    eq(batchExports.organizationId, caller.organizationId),
    liveBatchExports,
    projectVisibleAtLevel(caller, projectOfExport),
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
  const inHidden = sql`(select sum(${environments.batchExportCount}) from (${hidden}) as "hidden"
    cross join ${environments} on ${environments.projectId} = "hidden"."id")`;
  return sql<number>`(${counter} - coalesce(${inHidden}, 0))`;
}
