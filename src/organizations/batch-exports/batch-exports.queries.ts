import { and, eq, exists, type SQL } from "drizzle-orm";
import { batchExports, environments, projects } from "../../db/schema";
import { liveBatchExports } from "../../environments/batch-exports/batch-exports.queries";
import type { Database } from "../../platform/db";
import type { Actor, OrganizationContext } from "../../platform/env";
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
  const projectFilters = [projectVisibleAtLevel(organization), ...projectsInKeyScope(actor)].filter(
    (filter) => filter !== undefined,
  );
  if (projectFilters.length === 0) return ofOrganization;
  const visibleProject = db
    .select({ id: environments.id })
    .from(environments)
    .innerJoin(projects, eq(projects.id, environments.projectId))
    .where(and(eq(environments.id, batchExports.environmentId), ...projectFilters));
  return and(ofOrganization, exists(visibleProject));
}
