import { and, eq, sql } from "drizzle-orm";
import { dashboards, environments, organizations, sharingConfigurations } from "../db/schema";
import type { Database } from "../platform/db";
import { selectTiles, type TileRow } from "../environments/dashboards/dashboards.queries";

/**
 * The dashboard a public link shows, and its tiles, in one round trip: only while sharing is
 * enabled, the dashboard is live and its organization allows public links. The token is found
 * through its unique index.
 */
export async function readSharedDashboard(db: Database, accessToken: string) {
  const sharedDashboardId = sql`(select ${sharingConfigurations.dashboardId} from ${sharingConfigurations}
    where ${sharingConfigurations.accessToken} = ${accessToken})`;
  const [[shared], tiles] = await db.batch([
    db
      .select({ dashboard: dashboards, accessToken: sharingConfigurations.accessToken })
      .from(sharingConfigurations)
      .innerJoin(dashboards, eq(dashboards.id, sharingConfigurations.dashboardId))
      .innerJoin(environments, eq(environments.id, dashboards.environmentId))
      .innerJoin(organizations, eq(organizations.id, environments.organizationId))
      .where(
        and(
          eq(sharingConfigurations.accessToken, accessToken),
          eq(sharingConfigurations.enabled, true),
          eq(dashboards.deleted, false),
          eq(organizations.allowPubliclySharedResources, true),
        ),
      ),
    selectTiles(db, sharedDashboardId),
  ]);
  return shared ? { ...shared, tiles: tiles as TileRow[] } : undefined;
}

export type SharedDashboardRow = NonNullable<Awaited<ReturnType<typeof readSharedDashboard>>>;
