import { and, asc, eq, gt, isNotNull, lte, sql, type SQL } from "drizzle-orm";
import { activityLog, activityLogAnchors, activityLogSegments } from "../../db/schema";
import { selectEntriesWithUsers } from "../../platform/activity-log/activity-log.queries";
import { selectArchivedMatching } from "../../platform/activity-log/archived-reads";
import { organizationEntriesVisibleTo } from "../../platform/activity-log/visibility";
import { inJsonList, type Database } from "../../platform/db";
import type { Actor } from "../../platform/env";
import { callerInOrganization, type OrganizationRef } from "../../platform/route-context/organization";

/** What one read of the feed covers: the entries after `after`, at most `limit` of them listed. */
export type FeedWindow = {
  organizationId: OrganizationRef;
  actor: Actor;
  after: number;
  limit: number;
  events?: string[];
};

/**
 * Where the read starts: after the cursor, or after the retention anchor when the cursor points
 * into what was pruned (so that an old cursor still moves on).
 */
const startOf = (window: FeedWindow) =>
  sql<number>`max(cast(${window.after} as integer),
    coalesce((select ${activityLogAnchors.seq} from ${activityLogAnchors}
    where ${activityLogAnchors.organizationId} = ${window.organizationId}), 0))`;

/**
 * The `limit` + 1 numbers after the start. Numbers are gapless, so this range holds at most that
 * many entries: an index seek on (organization, seq) and a page of rows, whatever the filters
 * and the caller's visibility leave of them. Only sealed entries (sealing goes in order, so they
 * are a prefix): an event is listed once it is final, as webhooks send it.
 */
function scanned(window: FeedWindow): SQL {
  const start = startOf(window);
  return and(
    eq(activityLog.organizationId, window.organizationId),
    gt(activityLog.seq, start),
    lte(activityLog.seq, sql`${start} + ${window.limit + 1}`),
    isNotNull(activityLog.hash),
  )!;
}

/** What the feed lists of the entries it reads: those the caller sees, of the events asked for. */
function listedFor(window: FeedWindow): SQL | undefined {
  const visible = organizationEntriesVisibleTo(window.actor, callerInOrganization(window.actor, window.organizationId));
  const named = window.events
    ? inJsonList(sql`${activityLog.scope} || '.' || ${activityLog.activity}`, window.events)
    : undefined;
  return and(visible, named);
}

/**
 * The feed's two reads, for the caller's round trip: the entries of the range the caller sees
 * and asked for, in order, and how far the range went (its last sealed number) and where it began.
 */
export function feedStatements(db: Database, window: FeedWindow) {
  return [
    selectEntriesWithUsers(db)
      .where(and(scanned(window), listedFor(window)))
      .orderBy(asc(activityLog.seq))
      .limit(window.limit + 1),
    db
      .select({
        start: startOf(window).mapWith(Number),
        end: sql<number | null>`(select max(${activityLog.seq}) from ${activityLog} where ${scanned(window)})`.mapWith(
          Number,
        ),
      })
      .from(sql`(select 1)`),
  ] as const;
}

/** Archived segments one read of the feed reads at most; a range past them waits for the next read. */
export const SEGMENTS_PER_READ = 10;

/** The segments holding the range after the cursor, in order, read in the feed's round trip. */
export const feedSegments = (db: Database, window: FeedWindow) =>
  db
    .select()
    .from(activityLogSegments)
    .where(
      and(
        eq(activityLogSegments.organizationId, window.organizationId),
        gt(activityLogSegments.lastSeq, startOf(window)),
        lte(activityLogSegments.firstSeq, sql`${startOf(window)} + ${window.limit + 1}`),
      ),
    )
    .orderBy(asc(activityLogSegments.firstSeq))
    .limit(SEGMENTS_PER_READ);

/** The ids among archived `entries` that the caller sees and asked for: the feed's own conditions. */
export const visibleArchivedIds = (db: Database, window: FeedWindow, entries: (typeof activityLog.$inferSelect)[]) =>
  selectArchivedMatching(db, entries, listedFor(window));
