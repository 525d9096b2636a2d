import { and, eq, exists, ne, sql, type SQL } from "drizzle-orm";
import { batchExports, environments, organizationMemberships, projectAccessGrants, projects } from "../../db/schema";
import type { Database } from "../../platform/db";
import type { Actor } from "../../platform/env";
import { nowIso } from "../../platform/ids";
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

/**
 * Pause or unpause as one conditional UPDATE ... RETURNING, never a read and then a write.
 * Setting the state an export already has changes nothing: `last_paused_at` and
 * `last_updated_at` move only when `paused` does.
 */
export async function setPaused(db: Database, where: SQL | undefined, paused: boolean) {
  const now = nowIso();
  const changes = ne(batchExports.paused, paused);
  const nowIfChanged = (column: typeof batchExports.lastUpdatedAt | typeof batchExports.lastPausedAt) =>
    sql`CASE WHEN ${changes} THEN ${now} ELSE ${column} END`;
  const [row] = await db
    .update(batchExports)
    .set({
      paused,
      lastUpdatedAt: nowIfChanged(batchExports.lastUpdatedAt),
      ...(paused ? { lastPausedAt: nowIfChanged(batchExports.lastPausedAt) } : {}),
    })
    .where(where)
    .returning({ paused: batchExports.paused });
  return row;
}
