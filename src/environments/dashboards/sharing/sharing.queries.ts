import { and, asc, eq, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import {
  environments,
  organizations,
  sharePasswords,
  sharingConfigurations,
  users,
  type SharingSettings,
} from "../../../db/schema";
import type { Database } from "../../../platform/db";
import { nowIso, randomUrlSafeToken } from "../../../platform/ids";
import type { SharePassword, SharingConfiguration } from "./sharing.schema";

/** PostHog's access tokens: `secrets.token_urlsafe(22)`, 30 characters. */
export const newAccessToken = () => randomUrlSafeToken(22);

export type SharingRow = typeof sharingConfigurations.$inferSelect;

export const selectSharing = (db: Database, dashboardId: number) =>
  db.select().from(sharingConfigurations).where(eq(sharingConfigurations.dashboardId, dashboardId));

export type SharePasswordRow = { id: string; createdAt: string; note: string; createdByEmail: string | null };

/** The link's passwords, oldest first, with their creators' e-mail addresses (never the hashes). */
export const selectSharePasswords = (db: Database, dashboardId: number) =>
  db
    .select({
      id: sharePasswords.id,
      createdAt: sharePasswords.createdAt,
      note: sharePasswords.note,
      createdByEmail: users.email,
    })
    .from(sharePasswords)
    .leftJoin(users, eq(users.id, sharePasswords.createdById))
    .where(eq(sharePasswords.dashboardId, dashboardId))
    .orderBy(asc(sharePasswords.createdAt), asc(sharePasswords.id));

export const insertSharePassword = (
  db: Database,
  row: {
    id: string;
    dashboardId: number;
    passwordHash: string;
    note: string;
    createdById: number | null;
    createdAt: string;
  },
) => db.insert(sharePasswords).values(row);

export const deleteSharePassword = (db: Database, dashboardId: number, passwordId: string) =>
  db
    .delete(sharePasswords)
    .where(and(eq(sharePasswords.dashboardId, dashboardId), eq(sharePasswords.id, passwordId)))
    .returning({ id: sharePasswords.id });

export const toSharePassword = (row: SharePasswordRow): SharePassword => ({
  id: row.id,
  created_at: row.createdAt,
  note: row.note,
  created_by_email: row.createdByEmail ?? "deleted user",
  is_active: true,
});

/**
 * Whether the environment's organization allows public links (`allow_publicly_shared_resources`),
 * and the longest a link may live (`share_link_max_lifetime_days`).
 */
export const selectPublicSharingAllowed = (db: Database, environmentId: number) =>
  db
    .select({ allowed: organizations.allowPubliclySharedResources, maxDays: organizations.shareLinkMaxLifetimeDays })
    .from(environments)
    .innerJoin(organizations, eq(organizations.id, environments.organizationId))
    .where(eq(environments.id, environmentId));

export type SharingChanges = {
  enabled?: boolean;
  settings?: SharingSettings;
  accessToken?: string;
  /** null: no expiry; undefined: unchanged. */
  expiresAt?: string | null;
  passwordRequired?: boolean;
};

/**
 * Writes the dashboard's configuration, creating it (disabled, with a new token) if it has none,
 * with the `entries` that record the change, and reads it back with its passwords: one atomic
 * batch. Concurrent first reads keep the first token.
 */
export async function upsertSharing(
  db: Database,
  dashboardId: number,
  changes: SharingChanges = {},
  entries: BatchItem<"sqlite">[] = [],
): Promise<{ row: SharingRow; passwords: SharePasswordRow[] }> {
  const insert = db.insert(sharingConfigurations).values({
    dashboardId,
    enabled: changes.enabled ?? false,
    accessToken: changes.accessToken ?? newAccessToken(),
    settings: changes.settings ?? {},
    expiresAt: changes.expiresAt ?? null,
    passwordRequired: changes.passwordRequired ?? false,
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
          expiresAt: changes.expiresAt === undefined ? sql`${sharingConfigurations.expiresAt}` : changes.expiresAt,
          passwordRequired: changes.passwordRequired ?? sql`${sharingConfigurations.passwordRequired}`,
        },
      })
    : insert.onConflictDoNothing();
  const results = await db.batch([
    write,
    ...entries,
    selectSharing(db, dashboardId),
    selectSharePasswords(db, dashboardId),
  ]);
  const [row] = results.at(-2) as SharingRow[];
  if (!row) throw new Error("the sharing configuration was not read back");
  return { row, passwords: results.at(-1) as SharePasswordRow[] };
}

export const toSharingConfiguration = (
  { row, passwords }: { row: SharingRow; passwords: SharePasswordRow[] },
  userAccessLevel: SharingConfiguration["user_access_level"],
): SharingConfiguration => ({
  created_at: row.createdAt,
  enabled: row.enabled,
  access_token: row.accessToken,
  settings: row.settings,
  expires_at: row.expiresAt,
  password_required: row.passwordRequired,
  share_passwords: passwords.map(toSharePassword),
  view_count: row.viewCount,
  last_viewed_at: row.lastViewedAt,
  user_access_level: userAccessLevel,
});
