import { userBasicColumns, type UserBasicRow } from "../user-basic";
import { and, asc, desc, eq, gt, gte, isNull, lt, lte, sql, type SQL } from "drizzle-orm";
import {
  activityLog,
  activityLogAnchors,
  activityLogSegments,
  organizations,
  serviceApiKeys,
  users,
} from "../../db/schema";
import { inJsonList, isNotNullViolation, whileHolds, type Database } from "../db";
import { entryServiceKey, type PageRow } from "./activity-log.queries";
import { sha256Hex } from "../ids";
import {
  canonicalRecord,
  chainStart,
  chainStatements,
  previousHashOf,
  verdictOf,
  walkChain,
  type ChainVerdict,
} from "./chain";

type EntryRow = typeof activityLog.$inferSelect;
export type SegmentRow = typeof activityLogSegments.$inferSelect;

/** Days entries stay in the database when `ACTIVITY_LOG_HOT_DAYS` is unset or not a positive integer. */
const DEFAULT_HOT_DAYS = 30;
/** Entries in one segment at most: one R2 object, a bounded amount of memory to write or read it. */
const ENTRIES_PER_SEGMENT = 1_000;
/** Organizations one round looks at; segments one cron run writes at most (the next run goes on). */
const ORGANIZATIONS_PER_ROUND = 50;
const SEGMENTS_PER_RUN = 20;

/** `ACTIVITY_LOG_HOT_DAYS`, or the default when unset or not a positive integer. */
export function hotDays(configured: string | undefined): number {
  const days = Number(configured);
  return Number.isSafeInteger(days) && days > 0 ? days : DEFAULT_HOT_DAYS;
}

/**
 * The start of the UTC day `days` days before `now`: entries written before it are archived, whole
 * days at a time, so that a segment's entries are fixed once it is due and a retried pass writes
 * the same object.
 */
export function archiveCutoff(days: number, now: Date): string {
  const day = new Date(now.getTime() - days * 86_400_000);
  return `${day.toISOString().slice(0, 10)}T00:00:00.000Z`;
}

/** One line of a segment: what the entry's hash covers (`canonicalRecord`), then its `hash`. */
export const segmentLine = (row: EntryRow) => `${JSON.stringify({ ...canonicalRecord(row), hash: row.hash })}\n`;

type SegmentRecord = ReturnType<typeof canonicalRecord> & { hash: string | null };

/** An entry as stored, from a line of a segment. */
function rowOfLine(line: string): EntryRow {
  const record = JSON.parse(line) as SegmentRecord;
  return {
    id: record.id,
    organizationId: record.organization_id,
    seq: record.seq,
    projectId: record.project_id,
    dashboardId: record.dashboard_id,
    userId: record.user_id,
    apiKeyId: record.api_key_id,
    isSystem: record.is_system,
    activity: record.activity,
    scope: record.scope,
    itemId: record.item_id,
    detail: record.detail,
    requestId: record.request_id,
    createdAt: record.created_at,
    hash: record.hash,
  };
}

/** Where a segment is kept: by organization, the UTC day of its entries, and its first number. */
const segmentKey = (organizationId: string, firstCreatedAt: string, firstSeq: number) =>
  `${organizationId}/${firstCreatedAt.slice(0, 10)}/${String(firstSeq).padStart(12, "0")}.ndjson`;

/** A segment read back: its entries in order, and whether its text is the one sealed (`hash`). */
type SegmentContent = { rows: EntryRow[]; intact: boolean };

/** Reads a segment's object; a missing or unreadable one is not intact and has no entries. */
export async function readSegment(bucket: R2Bucket, segment: SegmentRow): Promise<SegmentContent> {
  const object = await bucket.get(segment.key);
  if (!object) return { rows: [], intact: false };
  const text = await object.text();
  const intact = (await sha256Hex(text)) === segment.hash;
  try {
    return { rows: text.split("\n").filter(Boolean).map(rowOfLine), intact };
  } catch {
    return { rows: [], intact: false };
  }
}

/** Segments read at once at most, and their text (as their `bytes` record): a Worker has 128 MB. */
const SEGMENTS_READ_AT_ONCE = 10;
const SEGMENT_BYTES_READ_AT_ONCE = 16 * 1024 * 1024;

/**
 * The first of `segments` that one read holds: up to 10, while their text stays within 16 MiB, and
 * at least one. A segment holds 1,000 entries of up to 16 KiB of changes each: ten such at once,
 * parsed, would not fit in a Worker's memory; a day's few hundred small entries read ten at once.
 */
export function segmentsReadAtOnce(segments: SegmentRow[]): SegmentRow[] {
  let bytes = 0;
  let count = 0;
  for (const segment of segments) {
    bytes += segment.bytes;
    if (count === SEGMENTS_READ_AT_ONCE || (count > 0 && bytes > SEGMENT_BYTES_READ_AT_ONCE)) break;
    count += 1;
  }
  return segments.slice(0, count);
}

/** The organization's segments after its retention anchor (what retention has not deleted), in order. */
export const selectSegments = (db: Database, organizationId: string | SQL<string>) =>
  db
    .select()
    .from(activityLogSegments)
    .where(
      and(
        eq(activityLogSegments.organizationId, organizationId),
        gt(
          activityLogSegments.lastSeq,
          sql`coalesce((select ${activityLogAnchors.seq} from ${activityLogAnchors}
            where ${activityLogAnchors.organizationId} = ${organizationId}), 0)`,
        ),
      ),
    )
    .orderBy(asc(activityLogSegments.firstSeq));

/** The organization's segments holding numbers in [`from`, `to`], in order, at most `limit`. */
export const selectSegmentsBetween = (db: Database, organizationId: string, from: number, to: number, limit: number) =>
  db
    .select()
    .from(activityLogSegments)
    .where(
      and(
        eq(activityLogSegments.organizationId, organizationId),
        gte(activityLogSegments.lastSeq, from),
        lte(activityLogSegments.firstSeq, to),
      ),
    )
    .orderBy(asc(activityLogSegments.firstSeq))
    .limit(limit);

/** The organization's segments starting below `before`, newest first, at most `limit`. */
export const selectSegmentsBelow = (db: Database, organizationId: string | SQL, before: number, limit: number) =>
  db
    .select()
    .from(activityLogSegments)
    .where(and(eq(activityLogSegments.organizationId, organizationId), lt(activityLogSegments.firstSeq, before)))
    .orderBy(desc(activityLogSegments.firstSeq))
    .limit(limit);

/** The organization's last segment, as SQL columns read in a batch. */
const selectLastSegment = (db: Database, organizationId: string) =>
  db
    .select()
    .from(activityLogSegments)
    .where(eq(activityLogSegments.organizationId, organizationId))
    .orderBy(desc(activityLogSegments.lastSeq))
    .limit(1);

/** Organizations whose oldest entry in the database was written before the cutoff. */
function selectDue(db: Database, cutoff: string) {
  const oldest = sql`(select ${activityLog.createdAt} from ${activityLog}
    where ${activityLog.organizationId} = ${organizations.id} order by ${activityLog.seq} limit 1)`;
  return (
    db
      .select({ organizationId: organizations.id })
      .from(organizations)
      // An organization being deleted is not archived: its deletion removes the segments it lists.
      .where(and(isNull(organizations.deletionScheduledAt), sql`${oldest} < ${cutoff}`))
      .limit(ORGANIZATIONS_PER_ROUND)
  );
}

/**
 * Moves the organization's oldest entries, those of one UTC day before the cutoff (at most 1,000,
 * sealed, from the first on), into one segment: the object is put first, then its index row is
 * inserted and the entries deleted in one transaction. A pass that stops between the two puts the
 * same object again (same key, same entries, same bytes) the next time. Returns entries moved.
 */
async function archiveOne(db: Database, bucket: R2Bucket, organizationId: string, cutoff: string): Promise<number> {
  const [oldest, [lastSegment], [anchor]] = await db.batch([
    db
      .select()
      .from(activityLog)
      .where(eq(activityLog.organizationId, organizationId))
      .orderBy(asc(activityLog.seq))
      .limit(ENTRIES_PER_SEGMENT),
    selectLastSegment(db, organizationId),
    db.select().from(activityLogAnchors).where(eq(activityLogAnchors.organizationId, organizationId)),
  ]);
  const first = oldest[0];
  if (!first) return 0;
  const day = first.createdAt.slice(0, 10);
  const rows: EntryRow[] = [];
  for (const row of oldest) {
    if (row.hash === null || row.createdAt >= cutoff || row.createdAt.slice(0, 10) !== day) break;
    if (row.seq !== first.seq + rows.length) break;
    rows.push(row);
  }
  const last = rows.at(-1);
  if (!last?.hash) return 0;
  const previousHash = previousHashOf(
    first.seq,
    lastSegment?.lastSeq === first.seq - 1 ? lastSegment.lastHash : null,
    anchor,
  );
  const text = rows.map(segmentLine).join("");
  const hash = await sha256Hex(text);
  const key = segmentKey(organizationId, first.createdAt, first.seq);
  await bucket.put(key, text, {
    httpMetadata: { contentType: "application/x-ndjson" },
    customMetadata: {
      hash,
      first_seq: String(first.seq),
      last_seq: String(last.seq),
      previous_hash: previousHash ?? "",
    },
  });
  // Written only while every entry read is still here: a retention pass at the same moment may have
  // pruned the first ones, which the segment must not keep (nor the chain then walk from them).
  // Nor once the organization's deletion began: its last step may have listed the segments already.
  const inDatabase = db.$count(
    activityLog,
    and(
      eq(activityLog.organizationId, organizationId),
      gte(activityLog.seq, first.seq),
      lte(activityLog.seq, last.seq),
    ),
  );
  const notBeingDeleted = sql`not exists (select 1 from ${organizations}
    where ${organizations.id} = ${organizationId} and ${organizations.deletionScheduledAt} is not null)`;
  const written = db.batch([
    db.insert(activityLogSegments).values({
      organizationId: whileHolds(organizationId, and(sql`${inDatabase} = ${rows.length}`, notBeingDeleted)!),
      firstSeq: first.seq,
      lastSeq: last.seq,
      firstCreatedAt: first.createdAt,
      lastCreatedAt: last.createdAt,
      key,
      hash,
      previousHash,
      lastHash: last.hash,
      entries: rows.length,
      bytes: new TextEncoder().encode(text).byteLength,
      archivedAt: new Date().toISOString(),
    }),
    db
      .delete(activityLog)
      .where(
        and(
          eq(activityLog.organizationId, organizationId),
          gte(activityLog.seq, first.seq),
          lte(activityLog.seq, last.seq),
        ),
      ),
  ]);
  try {
    await written;
  } catch (error) {
    if (!isNotNullViolation(error)) throw error;
    // Pruned meanwhile, or archived by another pass at the same moment (the same key, the same
    // bytes, recorded by that pass): the object goes only when no segment records it.
    const [recorded] = await db
      .select({ key: activityLogSegments.key })
      .from(activityLogSegments)
      .where(and(eq(activityLogSegments.organizationId, organizationId), eq(activityLogSegments.firstSeq, first.seq)));
    // One segment per first entry (a unique index): the key is the same whichever pass wrote it.
    if (recorded?.key !== key) await bucket.delete(key);
    return 0;
  }
  return rows.length;
}

/**
 * Moves entries written before the hot window (`days`, whole UTC days) out of the database into
 * segments, at most 20 segments (20,000 entries) per run, organization by organization; the next
 * run goes on. Returns entries moved.
 */
export async function archiveActivityLog(db: Database, bucket: R2Bucket, days: number, now = new Date()) {
  const cutoff = archiveCutoff(days, now);
  let segments = 0;
  let moved = 0;
  while (segments < SEGMENTS_PER_RUN) {
    const due = await selectDue(db, cutoff);
    let progressed = false;
    for (const { organizationId } of due.slice(0, SEGMENTS_PER_RUN - segments)) {
      const entries = await archiveOne(db, bucket, organizationId, cutoff);
      segments += 1;
      moved += entries;
      progressed ||= entries > 0;
    }
    // Nothing due, or only organizations whose oldest entries are not sealed yet: the next run.
    if (!progressed) break;
  }
  return moved;
}

/**
 * The verdict on the whole chain: each segment after the anchor read back and recomputed in turn
 * (an entry altered shows at its number; an object missing, cut or otherwise changed, at its
 * segment's first), then the entries kept here.
 */
export async function verdictAcross(
  bucket: R2Bucket,
  segments: SegmentRow[],
  rows: EntryRow[],
  anchor: { seq: number; hash: string } | undefined,
): Promise<ChainVerdict> {
  const archived = segments.reduce((sum, segment) => sum + segment.entries, 0);
  let previous = chainStart(anchor);
  for (const segment of segments) {
    const content = await readSegment(bucket, segment);
    const { end, firstInvalid } = await walkChain(previous, content.rows);
    const whole = content.intact && end.seq === segment.lastSeq && content.rows[0]?.seq === segment.firstSeq;
    if (firstInvalid !== null || !whole) {
      const first = firstInvalid ?? Math.min(segment.firstSeq, previous.seq + 1);
      return { valid: false, entries: archived + rows.length, first_invalid: first, head: null };
    }
    previous = end;
  }
  return verdictOf(rows, previous, archived);
}

/** Verifies the organization's whole chain, archived and kept here, at the database `db` reads. */
export async function verifyChain(db: Database, bucket: R2Bucket, organizationId: string): Promise<ChainVerdict> {
  const [rows, [anchor], segments] = await db.batch([
    ...chainStatements(db, organizationId),
    selectSegments(db, organizationId),
  ]);
  return verdictAcross(bucket, segments, rows, anchor);
}

/** The users and service keys that made archived entries: two statements for a batch. */
export function authorStatements(db: Database, rows: EntryRow[]) {
  const present = <T>(values: (T | null)[]) => [...new Set(values.filter((value): value is T => value !== null))];
  const userIds = present(rows.map((row) => row.userId));
  const keyIds = present(rows.map((row) => row.apiKeyId));
  return [
    db.select(userBasicColumns(users)).from(users).where(inJsonList(users.id, userIds)),
    db.select(entryServiceKey).from(serviceApiKeys).where(inJsonList(serviceApiKeys.id, keyIds)),
  ] as const;
}

/** Archived entries with who made them (`authorStatements`' results), as entries kept here are read. */
export function withAuthors(
  rows: EntryRow[],
  [found, keys]: readonly [UserBasicRow[], { id: string; label: string }[]],
): PageRow[] {
  const userById = new Map(found.map((user) => [user.id, user]));
  const keyById = new Map(keys.map((key) => [key.id, key]));
  return rows.map((entry) => ({
    entry,
    user: (entry.userId === null ? undefined : userById.get(entry.userId)) ?? null,
    serviceKey: (entry.apiKeyId === null ? undefined : keyById.get(entry.apiKeyId)) ?? null,
  }));
}

/** Archived entries with who made them, in one round trip (none when there are none). */
export async function withUsers(db: Database, rows: EntryRow[]): Promise<PageRow[]> {
  if (rows.length === 0) return [];
  return withAuthors(rows, await db.batch(authorStatements(db, rows)));
}
