import { and, eq, exists, type SQL } from "drizzle-orm";
import { batchExports, environments, organizationMemberships, projectAccessGrants, projects } from "../../db/schema";
import type { Database } from "../../platform/db";
import type { Actor } from "../../platform/env";
import {
  grantOfCaller,
  membershipOfCaller,
  projectsInKeyScope,
  projectVisible,
} from "../../platform/project-context";
import { liveBatchExports } from "../../environments/batch-exports/batch-exports.queries";

/**
 * The organization's live exports whose project the caller may see: a private project's exports
 * stay hidden from members without access (SPEC 10), and a key scoped to some projects reaches
 * only theirs. A correlated EXISTS, so that one statement both filters and, for pause, writes.
 */
export function visibleExportsOfOrganization(db: Database, actor: Actor, organizationId: string): SQL | undefined {
  const visibleProject = db
    .select({ id: environments.id })
    .from(environments)
    .innerJoin(projects, eq(projects.id, environments.projectId))
    .innerJoin(organizationMemberships, membershipOfCaller(actor.userId))
    .leftJoin(projectAccessGrants, grantOfCaller(actor.userId))
    .where(and(eq(environments.id, batchExports.environmentId), projectVisible, ...projectsInKeyScope(actor)));
  return and(eq(batchExports.organizationId, organizationId), liveBatchExports, exists(visibleProject));
}
