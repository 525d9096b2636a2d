import { and, asc, desc, eq, isNull, not, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import {
  dashboards,
  environments,
  organizations,
  sharePasswords,
  sharingConfigurations,
  shareViewerLinks,
  shareViewerViews,
  users,
  type SharingSettings,
} from "../../../db/schema";
import { inJsonList, isNotNullViolationOf, whileHolds, type Database } from "../../../platform/db";
import { nowIso, randomUrlSafeToken } from "../../../platform/ids";
import { MAX_ALLOWED_EMAILS, type SharePassword, type SharingConfiguration } from "./sharing.schema";

/** PostHog's access tokens: `secrets.token_urlsafe(22)`, 30 characters. */
export const newAccessToken = () => randomUrlSafeToken(22);

export type SharingRow = typeof sharingConfigurations.$inferSelect;

export const selectSharing = (db: Database, dashboardId: number) =>
  db.select().from(sharingConfigurations).where(eq(sharingConfigurations.dashboardId, dashboardId));

type SharePasswordRow = { id: string; createdAt: string; note: string; createdByEmail: string | null };

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

/**
 * A link's passwords at most: a visitor's wrong guess is tried against each (one key derivation
 * apiece), so their number bounds what an anonymous request may cost.
 */
export const MAX_SHARE_PASSWORDS = 10;

/**
 * The password, while the link holds fewer than `MAX_SHARE_PASSWORDS` (else the batch fails: NOT
 * NULL of `dashboard_id`) and still requires a password, as it was read (else NOT NULL of
 * `password_hash`: `isPasswordProtectionOff`): a password is never made for a link open to all.
 */
export function insertSharePassword(
  db: Database,
  row: {
    id: string;
    dashboardId: number;
    passwordHash: string;
    note: string;
    createdById: number | null;
    createdAt: string;
  },
) {
  const held = db.$count(sharePasswords, eq(sharePasswords.dashboardId, row.dashboardId));
  const dashboardId = whileHolds(row.dashboardId, sql`${held} < ${MAX_SHARE_PASSWORDS}`);
  const protectedLink = sql`exists (select 1 from ${sharingConfigurations}
    where ${sharingConfigurations.dashboardId} = ${row.dashboardId} and ${sharingConfigurations.passwordRequired} = 1)`;
  const passwordHash = whileHolds(row.passwordHash, protectedLink);
  return db.insert(sharePasswords).values({ ...row, dashboardId, passwordHash });
}

/** A password refused because the link's password protection was turned off meanwhile (`insertSharePassword`). */
export const isPasswordProtectionOff = (error: unknown) => isNotNullViolationOf(error, sharePasswords.passwordHash);

export const deleteSharePassword = (db: Database, dashboardId: number, passwordId: string) =>
  db
    .delete(sharePasswords)
    .where(and(eq(sharePasswords.dashboardId, dashboardId), eq(sharePasswords.id, passwordId)))
    .returning({ id: sharePasswords.id });

type VerifiedViewerRow = typeof shareViewerViews.$inferSelect;

/** The allow-listed addresses that viewed the link, most recent first: at most one per address on the list. */
export const selectVerifiedViewers = (db: Database, dashboardId: number) =>
  db
    .select()
    .from(shareViewerViews)
    .where(eq(shareViewerViews.dashboardId, dashboardId))
    .orderBy(desc(shareViewerViews.lastViewedAt), asc(shareViewerViews.email))
    .limit(MAX_ALLOWED_EMAILS);

/** Rows of addresses no longer on the allow-list: all of them when it is lifted (null). */
const offTheList = (email: SQLiteColumn, allowedEmails: string[] | null) =>
  allowedEmails === null ? undefined : not(inJsonList(email, allowedEmails));

/** The views of the addresses no longer on the allow-list. */
const deleteViewsOffTheList = (db: Database, dashboardId: number, allowedEmails: string[] | null) =>
  db
    .delete(shareViewerViews)
    .where(and(eq(shareViewerViews.dashboardId, dashboardId), offTheList(shareViewerViews.email, allowedEmails)));

/**
 * The one-time links not used yet that a write takes back: all of them when the token changes (a
 * link is for the token it was e-mailed with), else those of addresses it takes off the list (or
 * all, when it lifts the list), so that listing an address again brings back none of its codes.
 */
function deleteLinksTakenBack(db: Database, dashboardId: number, changes: SharingChanges) {
  const { accessToken, allowedEmails } = changes;
  if (accessToken === undefined && allowedEmails === undefined) return [];
  const taken = accessToken === undefined ? offTheList(shareViewerLinks.email, allowedEmails ?? null) : undefined;
  return [
    db
      .delete(shareViewerLinks)
      .where(and(eq(shareViewerLinks.dashboardId, dashboardId), isNull(shareViewerLinks.usedAt), taken)),
  ];
}

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

type SharingChanges = {
  enabled?: boolean;
  settings?: SharingSettings;
  accessToken?: string;
  /** null: no expiry; undefined: unchanged. */
  expiresAt?: string | null;
  passwordRequired?: boolean;
  /** null: no allow-list; undefined: unchanged. */
  allowedEmails?: string[] | null;
};

/**
 * The viewer sessions' secret a write leaves: a new one when the write drops an address of the
 * stored allow-list (or lifts it), which ends every viewer session. A session is signed for its
 * address alone, so one ended only while the address is off the list would come back with it;
 * those still listed verify their address again. Decided on the list as stored when the write
 * runs, not as read: an address listed meanwhile and dropped by this write ends its sessions too.
 */
function viewerSessionSecretAfter(allowedEmails: string[] | null | undefined) {
  const kept = sql`coalesce(${sharingConfigurations.viewerSessionSecret}, ${newViewerSessionSecret()})`;
  if (allowedEmails === undefined) return kept;
  const dropsAnAddress = sql`exists (select 1 from json_each(${sharingConfigurations.allowedEmails}) as listed
    where listed.value not in (select value from json_each(${JSON.stringify(allowedEmails ?? [])})))`;
  return sql`case when ${dropsAnAddress} then ${newViewerSessionSecret()} else ${kept} end`;
}

/** What a configuration answers with: its row, its passwords and its verified viewers. */
type SharingRead = { row: SharingRow; passwords: SharePasswordRow[]; viewers: VerifiedViewerRow[] };

/** The secret of viewer sessions: 32 random bytes. */
const newViewerSessionSecret = () => randomUrlSafeToken(32);

/**
 * Before a write of a dashboard's sharing: the dashboard's row, rewritten only while `stillEditor`
 * holds (else NOT NULL of its restriction level fails the batch) and it is not deleted (else NOT
 * NULL of its last modification), with its copy of `enabled`, which
 * its lists read, when that changes (this is the only write of it): turned on only while the
 * organization allows public links (else NOT NULL of the copy fails the batch).
 */
export function sharingWriteHeld(
  db: Database,
  dashboard: { id: number; environmentId: number },
  stillEditor: SQL,
  enabled?: boolean,
) {
  const allowed = sql`exists (select 1 from ${environments}
    join ${organizations} on ${organizations.id} = ${environments.organizationId}
    where ${environments.id} = ${dashboard.environmentId} and ${organizations.allowPubliclySharedResources} = 1)`;
  return db
    .update(dashboards)
    .set({
      restrictionLevel: whileHolds(sql<number>`${dashboards.restrictionLevel}`, stillEditor),
      // Still live: a soft delete meanwhile refuses the write (NOT NULL: `isDashboardDeletedMeanwhile`).
      lastModifiedAt: whileHolds(sql<string>`${dashboards.lastModifiedAt}`, sql`${dashboards.deleted} = 0`),
      sharingEnabled: enabled ? whileHolds(sql<boolean>`1`, allowed) : enabled,
    })
    .where(eq(dashboards.id, dashboard.id));
}

/** What a sharing PATCH judges its change on, and its entries' "before": the link's settings as read. */
export type TrackedSharing = Pick<
  SharingRow,
  "enabled" | "settings" | "expiresAt" | "passwordRequired" | "allowedEmails"
>;

/** The settings of a link never written yet: disabled, open, without expiry. */
export const UNWRITTEN_SHARING: TrackedSharing = {
  enabled: false,
  settings: {},
  expiresAt: null,
  passwordRequired: false,
  allowedEmails: null,
};

/**
 * Before a sharing PATCH's write: the link is still as read (`read`: a link never written reads
 * as the defaults), else NOT NULL of `enabled` fails the whole batch (`isSharingChangedMeanwhile`),
 * and the PATCH is judged again on what landed meanwhile.
 */
export function sharingAsRead(db: Database, dashboardId: number, read: TrackedSharing) {
  const column = sharingConfigurations;
  const allowList = read.allowedEmails === null ? null : JSON.stringify(read.allowedEmails);
  const asRead = sql`${column.enabled} = ${read.enabled ? 1 : 0}
    and json(${column.settings}) = json(${JSON.stringify(read.settings)})
    and ${column.expiresAt} is ${read.expiresAt}
    and ${column.passwordRequired} = ${read.passwordRequired ? 1 : 0}
    and json(${column.allowedEmails}) is json(${allowList})`;
  return db
    .update(sharingConfigurations)
    .set({ enabled: whileHolds(sql<boolean>`${column.enabled}`, asRead) })
    .where(eq(sharingConfigurations.dashboardId, dashboardId));
}

export const isSharingChangedMeanwhile = (error: unknown) => isNotNullViolationOf(error, sharingConfigurations.enabled);

/** A sharing write refused by `sharingWriteHeld` because its dashboard was deleted meanwhile. */
export const isDashboardDeletedMeanwhile = (error: unknown) => isNotNullViolationOf(error, dashboards.lastModifiedAt);

/**
 * After a write of a link's protection, in its batch: the link ends with passwords or with an
 * allow-list, never both, however writes interleaved (each is judged on the configuration it
 * read). Else NOT NULL of `password_required` fails the whole batch (`isBothProtections`).
 */
export const notBothProtections = (db: Database, dashboardId: number) =>
  db
    .update(sharingConfigurations)
    .set({
      passwordRequired: whileHolds(
        sql<boolean>`${sharingConfigurations.passwordRequired}`,
        sql`not (${sharingConfigurations.passwordRequired} = 1 and ${sharingConfigurations.allowedEmails} is not null)`,
      ),
    })
    .where(eq(sharingConfigurations.dashboardId, dashboardId));

/**
 * After a write whose expiry was decided by the organization's share-link lifetime limit as read
 * (`maxDays`): the limit is still that one, else NOT NULL of `access_token` fails the whole batch
 * (`isLifetimeChanged`): a link enabled while an admin sets a limit is not left beyond it.
 */
export const lifetimeAsRead = (
  db: Database,
  dashboard: { id: number; environmentId: number },
  maxDays: number | null,
) =>
  db
    .update(sharingConfigurations)
    .set({
      accessToken: whileHolds(
        sql<string>`${sharingConfigurations.accessToken}`,
        sql`(select ${organizations.shareLinkMaxLifetimeDays} from ${environments}
          join ${organizations} on ${organizations.id} = ${environments.organizationId}
          where ${environments.id} = ${dashboard.environmentId}) is ${maxDays}`,
      ),
    })
    .where(eq(sharingConfigurations.dashboardId, dashboard.id));

/** Whether a batch failed because the organization's share-link lifetime limit changed since its read. */
export const isLifetimeChanged = (error: unknown) => isNotNullViolationOf(error, sharingConfigurations.accessToken);

/** Whether a batch failed because a link would have ended with both passwords and an allow-list. */
export const isBothProtections = (error: unknown) =>
  isNotNullViolationOf(error, sharingConfigurations.passwordRequired);

/**
 * Writes the dashboard's configuration, creating it (disabled, with a new token) if it has none,
 * with the statements `alongside` (the `sharingWriteHeld` guard, the entries that record the
 * change), and reads it back with its passwords and verified viewers: one atomic batch. Concurrent
 * first reads keep the first token. A new allow-list drops the views of the addresses it no
 * longer holds.
 */
export async function upsertSharing(
  db: Database,
  dashboardId: number,
  changes: SharingChanges = {},
  alongside: BatchItem<"sqlite">[] = [],
  before: BatchItem<"sqlite">[] = [],
): Promise<SharingRead> {
  const insert = db.insert(sharingConfigurations).values({
    dashboardId,
    enabled: changes.enabled ?? false,
    accessToken: changes.accessToken ?? newAccessToken(),
    settings: changes.settings ?? {},
    expiresAt: changes.expiresAt ?? null,
    passwordRequired: changes.passwordRequired ?? false,
    allowedEmails: changes.allowedEmails ?? null,
    viewerSessionSecret: newViewerSessionSecret(),
    createdAt: nowIso(),
  });
  const hasChanges = Object.values(changes).some((value) => value !== undefined);
  const unchanged = <T>(value: T | undefined, column: SQLiteColumn) => (value === undefined ? sql`${column}` : value);
  const write = hasChanges
    ? insert.onConflictDoUpdate({
        target: sharingConfigurations.dashboardId,
        set: {
          enabled: unchanged(changes.enabled, sharingConfigurations.enabled),
          settings: unchanged(changes.settings, sharingConfigurations.settings),
          accessToken: unchanged(changes.accessToken, sharingConfigurations.accessToken),
          expiresAt: unchanged(changes.expiresAt, sharingConfigurations.expiresAt),
          passwordRequired: unchanged(changes.passwordRequired, sharingConfigurations.passwordRequired),
          allowedEmails: unchanged(changes.allowedEmails, sharingConfigurations.allowedEmails),
          viewerSessionSecret: viewerSessionSecretAfter(changes.allowedEmails),
        },
      })
    : insert.onConflictDoNothing();
  const viewsOffTheList =
    changes.allowedEmails === undefined ? [] : [deleteViewsOffTheList(db, dashboardId, changes.allowedEmails)];
  // `before` holds what the write was judged on, so it runs first.
  const [first = write, ...rest] = [...before, write];
  const results = await db.batch([
    first,
    ...rest,
    ...alongside,
    ...viewsOffTheList,
    ...deleteLinksTakenBack(db, dashboardId, changes),
    selectSharing(db, dashboardId),
    selectSharePasswords(db, dashboardId),
    selectVerifiedViewers(db, dashboardId),
  ]);
  const [row] = results.at(-3) as SharingRow[];
  if (!row) throw new Error("the sharing configuration was not read back");
  return { row, passwords: results.at(-2) as SharePasswordRow[], viewers: results.at(-1) as VerifiedViewerRow[] };
}

export const toSharingConfiguration = (
  { row, passwords, viewers }: SharingRead,
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
  allowed_emails: row.allowedEmails,
  verified_viewers: viewers.map(({ email, viewCount, lastViewedAt }) => ({
    email,
    view_count: viewCount,
    last_viewed_at: lastViewedAt,
  })),
  user_access_level: userAccessLevel,
});
