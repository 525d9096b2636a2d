import { and, eq, exists, or, sql, type SQL } from "drizzle-orm";
import { batchExports, environments, organizations, projects } from "../../db/schema";
import { liveBatchExports } from "../../environments/batch-exports/batch-exports.queries";
import type { Database } from "../../platform/db";
import type { Actor } from "../../platform/env";
import { isAdmin, isAdminInSql } from "../../platform/levels";
import type { OrganizationRef } from "../../platform/organization-context";
import { counterOf, counterWhen } from "../../platform/pagination";
import { projectsInKeyScope, projectVisibleAtLevel, type CallerMembership } from "../../platform/project-context";

/** The organization and the caller's membership of it: resolved, or subqueries of the read (`callerInOrganization`). */
export type OrganizationCaller = CallerMembership & { organizationId: OrganizationRef };

/**
 * The organization's live exports whose project the caller may see: a private project's exports
 * stay hidden from members without access (private projects), and a key scoped to some projects reaches
 * only theirs. When the caller's level is known, admins with an unscoped key need no per-row test;
 * otherwise a correlated EXISTS on the project, so that one statement both filters and, for
 * pause, writes.
 */
export function visibleExportsOfOrganization(db: Database, actor: Actor, caller: OrganizationCaller): SQL | undefined {
  const ofOrganization = and(eq(batchExports.organizationId, caller.organizationId), liveBatchExports);
  const projectFilters = projectFiltersOf(actor, caller);
  if (projectFilters.length === 0) return ofOrganization;
  const visibleProject = db
    .select({ id: environments.id })
    .from(environments)
    .innerJoin(projects, eq(projects.id, environments.projectId))
    .where(and(eq(environments.id, batchExports.environmentId), ...projectFilters));
  // A level read in the same statement: an admin's rows skip the per-row test.
  const adminWithUnscopedKey =
    typeof caller.level === "number" || projectsInKeyScope(actor).length > 0
      ? undefined
      : isAdminInSql(caller.level);
  return and(ofOrganization, adminWithUnscopedKey ? or(adminWithUnscopedKey, exists(visibleProject)) : exists(visibleProject));
}

function projectFiltersOf(actor: Actor, caller: CallerMembership) {
  return [projectVisibleAtLevel(caller), ...projectsInKeyScope(actor)].filter((filter) => filter !== undefined);
}

/**
 * How many exports the caller sees: the organization's counter when they see every project, else
 * a count of the visible ones (which reads the organization's exports).
 */
export function countOfVisibleExports(db: Database, actor: Actor, caller: OrganizationCaller): SQL<number> {
  const counted = db.$count(batchExports, visibleExportsOfOrganization(db, actor, caller));
  const counter = counterOfAllExports(actor, caller);
  return counter ? sql<number>`coalesce(${counter}, ${counted})` : sql<number>`${counted}`;
}

/** The organization's counter when the caller sees every export (an admin's unscoped key), else null. */
export function counterOfAllExports(actor: Actor, caller: OrganizationCaller): SQL<number> | undefined {
  if (projectsInKeyScope(actor).length > 0) return undefined;
  const counter = counterOf(organizations.batchExportCount, eq(organizations.id, caller.organizationId));
  if (typeof caller.level === "number") return isAdmin(caller.level) ? counter : undefined;
  return counterWhen(isAdminInSql(caller.level), counter);
}
