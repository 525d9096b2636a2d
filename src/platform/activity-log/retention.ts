import { and, asc, eq, isNotNull, lte, or, sql, type SQL } from "drizzle-orm";
import { activityLog, activityLogAnchors, activityLogSegments, organizations } from "../../db/schema";
import type { Database } from "../db";
import { validationError } from "../errors";

const DEFAULT_RETENTION_DAYS = 365;
/**
 * The least an organization may keep: its admins choose, but an admin must not be able to make
 * the log forget what they did tomorrow. The deployment's maximum wins when it is lower.
 */
const MINIMUM_RETENTION_DAYS = 30;

/** Entries one statement prunes from one organization. */
const ENTRIES_PER_PRUNE = 1_000;
/** Organizations pruned per batch: two statements each. */
const ORGANIZATIONS_PER_BATCH = 10;
/** Archived segments one run deletes at most. */
const SEGMENTS_PER_RUN = 100;
/** Organizations a round looks at, and rounds per run: what one cron run may prune is bounded. */
const ORGANIZATIONS_PER_ROUND = 100;
const ROUNDS_PER_RUN = 10;

/** `ACTIVITY_LOG_RETENTION_DAYS`, or the default when unset or not a positive integer: the deployment's maximum. */
export function retentionDays(configured: string | undefined): number {
  const days = Number(configured);
  return Number.isSafeInteger(days) && days > 0 ? days : DEFAULT_RETENTION_DAYS;
}

/** What an admin may set (`activity_log_retention_days`): 400 on that field outside the deployment's bounds. */
export function assertRetentionDays(days: number, configured: string | undefined) {
  const maximum = retentionDays(configured);
  const minimum = Math.min(MINIMUM_RETENTION_DAYS, maximum);
  if (days < minimum)
    throw validationError(
      "min_value",
      `Ensure this value is greater than or equal to ${minimum}.`,
      "activity_log_retention_days",
    );
  if (days > maximum)
    throw validationError(
      "max_value",
      `Ensure this value is less than or equal to ${maximum}.`,
      "activity_log_retention_days",
    );
}

/**
 * The time before which the organization's entries go, as SQL on `organizations`: its own days,
 * else the deployment's, never more than the deployment's (a maximum lowered since applies).
 */
const cutoffOf = (maximumDays: number, now: Date) =>
  sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', ${now.toISOString()},
    '-' || min(coalesce(${organizations.activityLogRetentionDays}, ${maximumDays}), ${maximumDays}) || ' days')`;

/**
 * Organizations whose oldest kept entry is past their retention, with their cutoff: one probe of
 * each organization's first entry (its (organization, seq) index), however long its log.
 */
function selectDue(db: Database, maximumDays: number, now: Date) {
  const cutoff = cutoffOf(maximumDays, now);
  const oldest = sql`(select ${activityLog.createdAt} from ${activityLog}
    where ${activityLog.organizationId} = ${organizations.id} order by ${activityLog.seq} limit 1)`;
  return db
    .select({ organizationId: organizations.id, cutoff: cutoff.as("cutoff") })
    .from(organizations)
    .where(sql`${oldest} < ${cutoff}`)
    .limit(ORGANIZATIONS_PER_ROUND);
}

/**
 * The last entry this statement may prune: among the organization's first 1,000, the last one
 * older than the cutoff and sealed. Both are prefixes of the chain (numbers and times rise
 * together; sealing goes in order), so everything up to it goes, and nothing after it.
 */
const lastPrunable = (db: Database, organizationId: string, cutoff: string): SQL<number> => {
  const first = db
    .select({ seq: activityLog.seq, createdAt: activityLog.createdAt, hash: activityLog.hash })
    .from(activityLog)
    .where(eq(activityLog.organizationId, organizationId))
    .orderBy(asc(activityLog.seq))
    .limit(ENTRIES_PER_PRUNE)
    .as("first");
  return sql<number>`(select max(${first.seq}) from ${first}
    where ${first.createdAt} < ${cutoff} and ${first.hash} is not null)`;
};

/**
 * One organization's prefix pruned, atomically with its new anchor: the last pruned entry's
 * number and hash, from which what remains still verifies (`verdictAcross`).
 */
function pruneStatements(db: Database, organizationId: string, cutoff: string) {
  const end = lastPrunable(db, organizationId, cutoff);
  return [
    db
      .insert(activityLogAnchors)
      .select(
        db
          .select({
            organizationId: activityLog.organizationId,
            seq: activityLog.seq,
            hash: sql<string>`${activityLog.hash}`.as("hash"),
            prunedAt: sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`.as("pruned_at"),
          })
          .from(activityLog)
          .where(
            and(eq(activityLog.organizationId, organizationId), eq(activityLog.seq, end), isNotNull(activityLog.hash)),
          ),
      )
      .onConflictDoUpdate({
        target: activityLogAnchors.organizationId,
        set: { seq: sql`excluded.seq`, hash: sql`excluded.hash`, prunedAt: sql`excluded.pruned_at` },
      }),
    db
      .delete(activityLog)
      .where(and(eq(activityLog.organizationId, organizationId), sql`${activityLog.seq} <= ${end}`)),
  ] as const;
}

/** Prunes what is due in batches; returns entries deleted. */
async function pruneRound(db: Database, due: { organizationId: string; cutoff: string }[]): Promise<number> {
  let deleted = 0;
  for (let start = 0; start < due.length; start += ORGANIZATIONS_PER_BATCH) {
    const [first, ...rest] = due
      .slice(start, start + ORGANIZATIONS_PER_BATCH)
      .flatMap(({ organizationId, cutoff }) => pruneStatements(db, organizationId, cutoff));
    if (!first) break;
    const results = await db.batch([first, ...rest]);
    // Every second statement is a delete.
    deleted += results.reduce(
      (sum, result, index) => sum + (index % 2 === 1 ? ((result as D1Result).meta?.changes ?? 0) : 0),
      0,
    );
  }
  return deleted;
}

/**
 * Deletes each organization's entries older than its retention (`activity_log_retention_days`,
 * else the deployment's `maximumDays`), only sealed ones, as a prefix of its chain, 1,000 per
 * organization per statement, in rounds until none is due or the run's rounds are spent (the next
 * run goes on). Returns entries deleted.
 */
export async function pruneActivityLog(db: Database, maximumDays: number): Promise<number> {
  const now = new Date();
  let deleted = 0;
  for (let round = 0; round < ROUNDS_PER_RUN; round += 1) {
    const due = await selectDue(db, maximumDays, now);
    if (due.length === 0) break;
    const pruned = await pruneRound(db, due);
    deleted += pruned;
    // An organization due whose oldest entries are not sealed yet: the next run takes it.
    if (pruned === 0) break;
  }
  return deleted;
}

/**
 * Deletes archived segments past their organization's retention (their last entry older than the
 * cutoff), or already behind its anchor, at most 100 per run: per segment, the anchor moved to its
 * last entry first (from there the rest of the chain verifies, and the segment is no longer read),
 * then its object, then its index row. A run that stops between two steps finds the row again next
 * time, behind the anchor, and repeats them: nothing archived outlives its retention, and the chain
 * never points at an object already gone. Returns segments deleted.
 */
export async function pruneArchivedSegments(db: Database, bucket: R2Bucket, maximumDays: number): Promise<number> {
  const now = new Date();
  const anchorSeq = sql`coalesce((select ${activityLogAnchors.seq} from ${activityLogAnchors}
    where ${activityLogAnchors.organizationId} = ${activityLogSegments.organizationId}), 0)`;
  const due = await db
    .select({ segment: activityLogSegments })
    .from(activityLogSegments)
    .innerJoin(organizations, eq(organizations.id, activityLogSegments.organizationId))
    .where(
      or(
        sql`${activityLogSegments.lastCreatedAt} < ${cutoffOf(maximumDays, now)}`,
        lte(activityLogSegments.lastSeq, anchorSeq),
      ),
    )
    .orderBy(activityLogSegments.organizationId, activityLogSegments.firstSeq)
    .limit(SEGMENTS_PER_RUN);
  for (const { segment } of due) {
    await db
      .insert(activityLogAnchors)
      .values({
        organizationId: segment.organizationId,
        seq: segment.lastSeq,
        hash: segment.lastHash,
        prunedAt: now.toISOString(),
      })
      .onConflictDoUpdate({
        target: activityLogAnchors.organizationId,
        set: { seq: sql`excluded.seq`, hash: sql`excluded.hash`, prunedAt: sql`excluded.pruned_at` },
        setWhere: sql`excluded.seq > ${activityLogAnchors.seq}`,
      });
    await bucket.delete(segment.key);
    await db
      .delete(activityLogSegments)
      .where(
        and(
          eq(activityLogSegments.organizationId, segment.organizationId),
          eq(activityLogSegments.firstSeq, segment.firstSeq),
        ),
      );
  }
  return due.length;
}
