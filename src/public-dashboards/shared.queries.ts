import { and, eq, exists, gt, isNull, notExists, or, sql, type SQLWrapper } from "drizzle-orm";
import {
  dashboards,
  environments,
  organizations,
  projects,
  sharePasswords,
  shareViewerLinks,
  shareViewerViews,
  sharingConfigurations,
} from "../db/schema";
import type { Database } from "../platform/db";
import { selectTiles, type TileRow } from "../environments/dashboards/dashboards.queries";

/** A shared dashboard's link can open at all: the dashboard live, its project staying, its organization allowing it. */
const linkMayOpen = and(
  eq(dashboards.deleted, false),
  isNull(projects.deletionScheduledAt),
  eq(organizations.allowPubliclySharedResources, true),
);

/** `linkMayOpen`, for a sharing configuration read without its dashboard's joins. */
const linkMayOpenHere = (db: Database) =>
  exists(
    db
      .select({ one: sql`1` })
      .from(dashboards)
      .innerJoin(environments, eq(environments.id, dashboards.environmentId))
      .innerJoin(projects, eq(projects.id, environments.projectId))
      .innerJoin(organizations, eq(organizations.id, environments.organizationId))
      .where(and(eq(dashboards.id, sharingConfigurations.dashboardId), linkMayOpen)),
  );

/** The address (a value, or a column) is on the link's allow-list. */
const onAllowList = (email: SQLWrapper | string | undefined) =>
  sql`exists (select 1 from json_each(${sharingConfigurations.allowedEmails}) where value = ${email})`;

/** The link is on and unexpired at `now` (ISO timestamps compare as text). */
const linkOnAt = (now: string) =>
  and(
    eq(sharingConfigurations.enabled, true),
    or(isNull(sharingConfigurations.expiresAt), gt(sharingConfigurations.expiresAt, now)),
  );

/**
 * The dashboard a public link shows, its tiles and its share passwords' hashes, in one round trip:
 * only while the dashboard is live, its project not being deleted, and its organization allows
 * public links. Whether the link is
 * enabled, unexpired and unlocked is the caller's to decide from `sharing`. The token is found
 * through its unique index. The tiles only of a link open to anyone who has it: a locked link's
 * (a password, an allow-list) are read once a visitor's session opens it (`readSharedTiles`), so
 * that its form costs a few rows however large the dashboard.
 */
export async function readSharedDashboard(db: Database, accessToken: string) {
  const sharedDashboardId = sql`(select ${sharingConfigurations.dashboardId} from ${sharingConfigurations}
    where ${sharingConfigurations.accessToken} = ${accessToken})`;
  const openDashboardId = sql`(select ${sharingConfigurations.dashboardId} from ${sharingConfigurations}
    where ${sharingConfigurations.accessToken} = ${accessToken}
      and not ${sharingConfigurations.passwordRequired} and ${sharingConfigurations.allowedEmails} is null)`;
  const [[shared], tiles, passwords] = await db.batch([
    db
      .select({
        dashboard: dashboards,
        sharing: {
          accessToken: sharingConfigurations.accessToken,
          enabled: sharingConfigurations.enabled,
          expiresAt: sharingConfigurations.expiresAt,
          passwordRequired: sharingConfigurations.passwordRequired,
          allowedEmails: sharingConfigurations.allowedEmails,
          viewerSessionSecret: sharingConfigurations.viewerSessionSecret,
        },
      })
      .from(sharingConfigurations)
      .innerJoin(dashboards, eq(dashboards.id, sharingConfigurations.dashboardId))
      .innerJoin(environments, eq(environments.id, dashboards.environmentId))
      .innerJoin(projects, eq(projects.id, environments.projectId))
      .innerJoin(organizations, eq(organizations.id, environments.organizationId))
      .where(and(eq(sharingConfigurations.accessToken, accessToken), linkMayOpen)),
    selectTiles(db, openDashboardId),
    db
      .select({ id: sharePasswords.id, passwordHash: sharePasswords.passwordHash })
      .from(sharePasswords)
      .where(eq(sharePasswords.dashboardId, sharedDashboardId)),
  ]);
  return shared ? { ...shared, tiles: tiles as TileRow[], passwords } : undefined;
}

/** What a visitor's session was checked against on the link's first read. */
export type OpenedWith = { accessToken: string; passwordId?: string; email?: string; viewerSecret: string | null };

/**
 * The tiles of a locked link's dashboard, for a visitor whose session opened it, read only while
 * the link still opens as it did on its first read: the same token, enabled, unexpired at `now`,
 * and still holding the visitor's credential (their password, or their address on the list with
 * the same viewer secret). Undefined once a refresh, a pause or a credential's removal landed in
 * between: nothing written after the revoke answered reaches the old session.
 */
export async function readSharedTiles(db: Database, opened: OpenedWith, now: string) {
  const credentialHolds =
    opened.passwordId === undefined
      ? sql`not ${sharingConfigurations.passwordRequired}
          and ${sharingConfigurations.viewerSessionSecret} = ${opened.viewerSecret}
          and ${onAllowList(opened.email)}`
      : sql`${sharingConfigurations.passwordRequired} and exists (select 1 from ${sharePasswords}
          where ${sharePasswords.id} = ${opened.passwordId}
            and ${sharePasswords.dashboardId} = ${sharingConfigurations.dashboardId})`;
  const stillOpen = db
    .select({ dashboardId: sharingConfigurations.dashboardId })
    .from(sharingConfigurations)
    .where(
      and(
        eq(sharingConfigurations.accessToken, opened.accessToken),
        linkOnAt(now),
        credentialHolds,
        linkMayOpenHere(db),
      ),
    );
  const [open, tiles] = await db.batch([stillOpen, selectTiles(db, sql`(${stillOpen})`)]);
  return open.length > 0 ? (tiles as TileRow[]) : undefined;
}

/**
 * One more view of the link, at `viewedAt`, and of the verified `viewer`'s address if any: run
 * after the response, so that it never slows the page.
 */
export async function recordSharedView(db: Database, dashboardId: number, viewedAt: string, viewer: string | null) {
  const view = db
    .update(sharingConfigurations)
    .set({ viewCount: sql`${sharingConfigurations.viewCount} + 1`, lastViewedAt: viewedAt })
    .where(eq(sharingConfigurations.dashboardId, dashboardId));
  if (viewer === null) return view;
  // Only while the address is still on the list: taking it off deletes its row, which a view
  // recorded just after must not bring back.
  const stillAllowed = onAllowList(viewer);
  const viewerView = db
    .insert(shareViewerViews)
    .select(
      db
        .select({
          dashboardId: sharingConfigurations.dashboardId,
          email: sql<string>`${viewer}`.as("email"),
          viewCount: sql<number>`1`.as("view_count"),
          lastViewedAt: sql<string>`${viewedAt}`.as("last_viewed_at"),
        })
        .from(sharingConfigurations)
        .where(and(eq(sharingConfigurations.dashboardId, dashboardId), stillAllowed)),
    )
    .onConflictDoUpdate({
      target: [shareViewerViews.dashboardId, shareViewerViews.email],
      set: { viewCount: sql`${shareViewerViews.viewCount} + 1`, lastViewedAt: viewedAt },
    });
  return db.batch([view, viewerView]);
}

type NewViewerLink = typeof shareViewerLinks.$inferInsert;

/**
 * A one-time link for the link `accessToken`, unless its address already got one for this link in
 * the same minute: whether it was written. Written after the response, so a refresh or the
 * address's removal may have landed since the request was read; each deletes the link's unused
 * codes, and so, in the same batch, does the write, so that none is e-mailed for a token refreshed
 * away or to an address taken off the list.
 */
export async function insertViewerLink(db: Database, link: NewViewerLink, accessToken: string) {
  const stillAsked = db
    .select({ one: sql`1` })
    .from(sharingConfigurations)
    .where(
      and(
        eq(sharingConfigurations.dashboardId, link.dashboardId),
        eq(sharingConfigurations.accessToken, accessToken),
        onAllowList(link.email),
      ),
    );
  const [written, withdrawn] = await db.batch([
    db.insert(shareViewerLinks).values(link).onConflictDoNothing().returning({ id: shareViewerLinks.id }),
    db
      .delete(shareViewerLinks)
      .where(and(eq(shareViewerLinks.id, link.id), notExists(stillAsked)))
      .returning({ id: shareViewerLinks.id }),
  ]);
  return written.length > 0 && withdrawn.length === 0;
}

/**
 * Uses the one-time link whose token hashes to `tokenHash`, on this link's dashboard, if it is
 * unused and unexpired: one conditional write, so that of two concurrent uses one wins. Its
 * address, if it was used now.
 */
export const useViewerLink = (db: Database, dashboardId: number, tokenHash: string, now: string) =>
  db
    .update(shareViewerLinks)
    .set({ usedAt: now, emailOutbox: null })
    .where(
      and(
        eq(shareViewerLinks.tokenHash, tokenHash),
        eq(shareViewerLinks.dashboardId, dashboardId),
        isNull(shareViewerLinks.usedAt),
        gt(shareViewerLinks.expiresAt, now),
      ),
    )
    .returning({ email: shareViewerLinks.email });

export type SharedDashboardRow = NonNullable<Awaited<ReturnType<typeof readSharedDashboard>>>;

/**
 * A one-time link's e-mail, and whether its address may still view the dashboard: the link on,
 * unexpired and able to open, the address still on its list. A link taken from the address since
 * sends nothing (not even the dashboard's name).
 */
export async function readViewerLinkEmail(db: Database, viewerLinkId: string, now: string) {
  const openToAddress = db
    .select({ one: sql`1` })
    .from(sharingConfigurations)
    .where(
      and(
        eq(sharingConfigurations.dashboardId, shareViewerLinks.dashboardId),
        linkMayOpenHere(db),
        linkOnAt(now),
        onAllowList(shareViewerLinks.email),
      ),
    );
  const [link] = await db
    .select({
      outbox: shareViewerLinks.emailOutbox,
      expiresAt: shareViewerLinks.expiresAt,
      mayView: sql<boolean>`exists ${openToAddress}`.mapWith(Boolean),
    })
    .from(shareViewerLinks)
    .where(eq(shareViewerLinks.id, viewerLinkId));
  return link;
}
