import { and, eq, exists, type SQL } from "drizzle-orm";
import { batchExports, environments, organizations, projects } from "../../db/schema";
import { liveBatchExports } from "../../environments/batch-exports/batch-exports.queries";
import type { Database } from "../../platform/db";
import type { Actor, OrganizationContext } from "../../platform/env";
import { counterOf } from "../../platform/pagination";
import { projectsInKeyScope, projectVisibleAtLevel } from "../../platform/project-context";

/**
 * The organization's live exports whose project the caller may see: a private project's exports
 * stay hidden from members without access (private projects), and a key scoped to some projects reaches
 * only theirs. The caller's level is known, so admins with an unscoped key need no per-row test;
 * otherwise a correlated EXISTS on the project, so that one statement both filters and, for
 * pause, writes.
 */
export function visibleExportsOfOrganization(
  db: Database,
  actor: Actor,
  organization: OrganizationContext,
): SQL | undefined {
  const ofOrganization = and(eq(batchExports.organizationId, organization.id), liveBatchExports);
  const projectFilters = projectFiltersOf(actor, organization);
  if (projectFilters.length === 0) return ofOrganization;
  const visibleProject = db
    .select({ id: environments.id })
    .from(environments)
    .innerJoin(projects, eq(projects.id, environments.projectId))
    .where(and(eq(environments.id, batchExports.environmentId), ...projectFilters));
  return and(ofOrganization, exists(visibleProject));
}

function projectFiltersOf(actor: Actor, organization: OrganizationContext) {
  return [projectVisibleAtLevel(organization), ...projectsInKeyScope(actor)].filter((filter) => filter !== undefined);
}

/**
 * How many exports the caller sees: the organization's counter when they see every project, else
 * a count of the visible ones (which reads the organization's exports).
 */
export function countOfVisibleExports(db: Database, actor: Actor, organization: OrganizationContext) {
  if (projectFiltersOf(actor, organization).length === 0) {
    return counterOf(organizations.batchExportCount, eq(organizations.id, organization.id));
  }
  return db.$count(batchExports, visibleExportsOfOrganization(db, actor, organization));
}
