import { and, eq, isNull, sql } from "drizzle-orm";
import { dashboards, environments, organizations, projects, sharePasswords, sharingConfigurations } from "../db/schema";
import type { Database } from "../platform/db";
import { selectTiles, type TileRow } from "../environments/dashboards/dashboards.queries";

/**
 * The dashboard a public link shows, its tiles and its share passwords' hashes, in one round trip:
 * only while the dashboard is live, its project not being deleted, and its organization allows
 * public links. Whether the link is
 * enabled, unexpired and unlocked is the caller's to decide from `sharing`. The token is found
 * through its unique index.
 */
export async function readSharedDashboard(db: Database, accessToken: string) {
  const sharedDashboardId = sql`(select ${sharingConfigurations.dashboardId} from ${sharingConfigurations}
    where ${sharingConfigurations.accessToken} = ${accessToken})`;
  const [[shared], tiles, passwords] = await db.batch([
    db
      .select({
        dashboard: dashboards,
        sharing: {
          accessToken: sharingConfigurations.accessToken,
          enabled: sharingConfigurations.enabled,
          expiresAt: sharingConfigurations.expiresAt,
          passwordRequired: sharingConfigurations.passwordRequired,
        },
      })
      .from(sharingConfigurations)
      .innerJoin(dashboards, eq(dashboards.id, sharingConfigurations.dashboardId))
      .innerJoin(environments, eq(environments.id, dashboards.environmentId))
      .innerJoin(projects, eq(projects.id, environments.projectId))
      .innerJoin(organizations, eq(organizations.id, environments.organizationId))
      .where(
        and(
          eq(sharingConfigurations.accessToken, accessToken),
          eq(dashboards.deleted, false),
          isNull(projects.deletionScheduledAt),
          eq(organizations.allowPubliclySharedResources, true),
        ),
      ),
    selectTiles(db, sharedDashboardId),
    db
      .select({ id: sharePasswords.id, passwordHash: sharePasswords.passwordHash })
      .from(sharePasswords)
      .where(eq(sharePasswords.dashboardId, sharedDashboardId)),
  ]);
  return shared ? { ...shared, tiles: tiles as TileRow[], passwords } : undefined;
}

/** One more view of the link, at `viewedAt`: run after the response, so that it never slows the page. */
export const recordSharedView = (db: Database, dashboardId: number, viewedAt: string) =>
  db
    .update(sharingConfigurations)
    .set({ viewCount: sql`${sharingConfigurations.viewCount} + 1`, lastViewedAt: viewedAt })
    .where(eq(sharingConfigurations.dashboardId, dashboardId));

export type SharedDashboardRow = NonNullable<Awaited<ReturnType<typeof readSharedDashboard>>>;
