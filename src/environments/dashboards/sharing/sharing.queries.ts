import { eq, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { environments, organizations, sharingConfigurations, type SharingSettings } from "../../../db/schema";
import type { Database } from "../../../platform/db";
import { nowIso, randomUrlSafeToken } from "../../../platform/ids";
import type { SharingConfiguration } from "./sharing.routes";

/** PostHog's access tokens: `secrets.token_urlsafe(22)`, 30 characters. */
export const newAccessToken = () => randomUrlSafeToken(22);

export type SharingRow = typeof sharingConfigurations.$inferSelect;

export const selectSharing = (db: Database, dashboardId: number) =>
  db.select().from(sharingConfigurations).where(eq(sharingConfigurations.dashboardId, dashboardId));

/** Whether the environment's organization allows public links (`allow_publicly_shared_resources`). */
export const selectPublicSharingAllowed = (db: Database, environmentId: number) =>
  db
    .select({ allowed: organizations.allowPubliclySharedResources })
    .from(environments)
    .innerJoin(organizations, eq(organizations.id, environments.organizationId))
    .where(eq(environments.id, environmentId));

/**
 * Writes the dashboard's configuration, creating it (disabled, with a new token) if it has none,
 * with the `entries` that record the change, and reads it back: one atomic batch. Concurrent
 * first reads keep the first token.
 */
export async function upsertSharing(
  db: Database,
  dashboardId: number,
  changes: { enabled?: boolean; settings?: SharingSettings; accessToken?: string } = {},
  entries: BatchItem<"sqlite">[] = [],
): Promise<SharingRow> {
  const insert = db.insert(sharingConfigurations).values({
    dashboardId,
    enabled: changes.enabled ?? false,
    accessToken: changes.accessToken ?? newAccessToken(),
    settings: changes.settings ?? {},
    createdAt: nowIso(),
  });
  const hasChanges = Object.values(changes).some((value) => value !== undefined);
  const write = hasChanges
    ? insert.onConflictDoUpdate({
        target: sharingConfigurations.dashboardId,
        set: {
          enabled: changes.enabled ?? sql`${sharingConfigurations.enabled}`,
          settings: changes.settings ?? sql`${sharingConfigurations.settings}`,
          accessToken: changes.accessToken ?? sql`${sharingConfigurations.accessToken}`,
        },
      })
    : insert.onConflictDoNothing();
  const results = await db.batch([write, ...entries, selectSharing(db, dashboardId)]);
  const [row] = results.at(-1) as SharingRow[];
  if (!row) throw new Error("the sharing configuration was not read back");
  return row;
}

export const toSharingConfiguration = (
  row: SharingRow,
  userAccessLevel: SharingConfiguration["user_access_level"],
): SharingConfiguration => ({
  created_at: row.createdAt,
  enabled: row.enabled,
  access_token: row.accessToken,
  settings: row.settings,
  // No share passwords here (a paid PostHog feature): the neutral values.
  password_required: false,
  share_passwords: [],
  user_access_level: userAccessLevel,
});
