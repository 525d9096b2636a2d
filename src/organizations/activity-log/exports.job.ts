import { and, asc, eq, gt, lt, lte, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { activityLog, activityLogAnchors, activityLogExports } from "../../db/schema";
import {
  readSegment,
  segmentsReadAtOnce,
  selectSegmentsBetween,
  type SegmentRow,
} from "../../platform/activity-log/archive";
import { previousHashOf, sealChain } from "../../platform/activity-log/chain";
import { CONTENT_TYPES, exportRecord, formatLines, type ExportFormat } from "../../platform/activity-log/export-format";
import { inJsonList, primaryDatabase, type Database } from "../../platform/db";
import type { Bindings } from "../../platform/env";
import { nowIso } from "../../platform/ids";
import type { BackgroundJob, StepOutcome } from "../../platform/jobs";
import { partKey, type ExportRow } from "./exports.queries";

type EntryRow = typeof activityLog.$inferSelect;

type ExportPart = Extract<BackgroundJob, { kind: "export_part" }>;

/** Entries per part: one message, one R2 object, a bounded amount of memory. */
const ENTRIES_PER_PART = 1_000;
/**
 * Numbers one part reads at most: with a scope filter, a part may find fewer than 1,000 entries
 * among them (even none) and the next part goes on from there. Numbers are gapless, so this
 * bounds the rows a part reads whatever the filter.
 */
const SCAN_WINDOW = 10_000;
/** A stalled export (its next message lost) is resumed by the cron after this long. */
const STALLED_AFTER_MS = 10 * 60_000;

const previous = alias(activityLog, "previous");

/**
 * The part's entries in order, each with the hash of the entry before it (by number, whatever the
 * filter kept), so that every exported line carries the hash its own was computed from.
 */
function selectPartEntries(db: Database, row: ExportRow, windowEnd: number) {
  return db
    .select({ entry: activityLog, previousHash: previous.hash })
    .from(activityLog)
    .leftJoin(
      previous,
      and(eq(previous.organizationId, activityLog.organizationId), eq(previous.seq, sql`${activityLog.seq} - 1`)),
    )
    .where(
      and(
        eq(activityLog.organizationId, row.organizationId),
        gt(activityLog.seq, row.cursorSeq),
        lte(activityLog.seq, windowEnd),
        row.scopes ? inJsonList(activityLog.scope, row.scopes) : undefined,
      ),
    )
    .orderBy(asc(activityLog.seq))
    .limit(ENTRIES_PER_PART);
}

/** Archived segments one part looks at most (it reads as many of them as `segmentsReadAtOnce` lets). */
const SEGMENTS_PER_PART = 10;

/**
 * The part's entries from archived segments, as `selectPartEntries` reads those kept here, filtered
 * by the export's scopes and times (its range of numbers covers whole segments at its ends).
 */
async function archivedPartEntries(bucket: R2Bucket, segments: SegmentRow[], row: ExportRow, windowEnd: number) {
  const contents = await Promise.all(segments.map((segment) => readSegment(bucket, segment)));
  return contents.flatMap((content, index) =>
    content.rows
      .map((entry, line) => ({
        entry,
        previousHash: line === 0 ? segments[index]!.previousHash : (content.rows[line - 1]!.hash ?? null),
      }))
      .filter(
        ({ entry }) =>
          entry.seq > row.cursorSeq &&
          entry.seq <= windowEnd &&
          entry.createdAt >= row.fromTime &&
          entry.createdAt < row.toTime &&
          (row.scopes === null || row.scopes.includes(entry.scope)),
      ),
  );
}

/**
 * One step of an export: the entries after its cursor (at most 1,000) become part `part`, one R2
 * object, then the export records the part and moves its cursor, only if no other run of this
 * step did (`parts` = `part`), and sends the next step. A step run twice writes the same object
 * (the same entries, the same bytes) and records nothing more.
 */
export async function writeExportPart(env: Bindings, job: ExportPart): Promise<StepOutcome> {
  const db = primaryDatabase(env);
  const [[row], [anchor]] = await db.batch([
    db.select().from(activityLogExports).where(eq(activityLogExports.id, job.exportId)),
    db
      .select()
      .from(activityLogAnchors)
      .where(
        eq(
          activityLogAnchors.organizationId,
          sql`(select ${activityLogExports.organizationId} from ${activityLogExports}
            where ${activityLogExports.id} = ${job.exportId})`,
        ),
      ),
  ]);
  if (!row || row.parts !== job.part || row.status === "succeeded" || row.status === "failed") return {};
  const scanEnd = Math.min(row.cursorSeq + SCAN_WINDOW, row.lastSeq);
  // The segments of the range (and the one ending at the cursor: the hash the next entry follows),
  // and the entries kept here, read together: the archive cannot move entries between the two.
  const [segments, kept] = await db.batch([
    selectSegmentsBetween(db, row.organizationId, row.cursorSeq, scanEnd, SEGMENTS_PER_PART + 2),
    selectPartEntries(db, row, scanEnd),
  ]);
  const archived = segments.filter((segment) => segment.lastSeq > row.cursorSeq);
  const beforeCursor = segments.find((segment) => segment.lastSeq === row.cursorSeq);
  let rows: { entry: EntryRow; previousHash: string | null }[];
  let windowEnd = scanEnd;
  if (archived.length > 0) {
    // Archived: this part reads segments only (one read's worth), the entries kept here come after.
    const read = segmentsReadAtOnce(archived);
    windowEnd = Math.min(scanEnd, read.at(-1)!.lastSeq);
    rows = (await archivedPartEntries(env.ACTIVITY_LOG_ARCHIVE, read, row, windowEnd)).slice(0, ENTRIES_PER_PART);
  } else {
    rows = kept.map(({ entry, previousHash }) => ({
      entry,
      previousHash: previousHash ?? (entry.seq === row.cursorSeq + 1 ? (beforeCursor?.lastHash ?? null) : null),
    }));
  }
  if (rows.some(({ entry }) => entry.hash === null)) {
    // Created moments ago: its last entries are being sealed. Seal them, and come back.
    await sealChain(db, row.organizationId);
    return { retryAfterSeconds: 2 };
  }
  const records = rows.map(({ entry, previousHash }) =>
    exportRecord(entry, previousHashOf(entry.seq, previousHash, anchor)),
  );
  const text = formatLines(row.format as ExportFormat, records, job.part === 0);
  await env.ACTIVITY_LOG_EXPORTS.put(partKey(row, job.part), text, {
    httpMetadata: { contentType: CONTENT_TYPES[row.format as ExportFormat] },
  });
  const cursor = rows.length === ENTRIES_PER_PART ? rows.at(-1)!.entry.seq : windowEnd;
  const done = cursor >= row.lastSeq;
  const now = nowIso();
  const [recorded] = await db
    .update(activityLogExports)
    .set({
      parts: job.part + 1,
      cursorSeq: cursor,
      entries: sql`${activityLogExports.entries} + ${rows.length}`,
      bytes: sql`${activityLogExports.bytes} + ${new TextEncoder().encode(text).byteLength}`,
      status: done ? "succeeded" : "running",
      completedAt: done ? now : null,
      updatedAt: now,
    })
    .where(and(eq(activityLogExports.id, row.id), eq(activityLogExports.parts, job.part)))
    .returning({ id: activityLogExports.id });
  if (recorded && !done) await env.BACKGROUND_JOBS.send({ kind: "export_part", exportId: row.id, part: job.part + 1 });
  return {};
}

/** An export whose step kept failing: `failed`, with the reason, so that its creator sees it. */
export async function failExport(env: Bindings, job: ExportPart, error: Error) {
  const db = primaryDatabase(env);
  await db
    .update(activityLogExports)
    .set({ status: "failed", error: error.message.slice(0, 500), updatedAt: nowIso() })
    .where(and(eq(activityLogExports.id, job.exportId), sql`${activityLogExports.status} in ('pending', 'running')`));
}

/**
 * The cron's part of at-least-once: an unfinished export not advanced for 10 minutes (a next step
 * never sent, or dropped after its retries) gets the message of its next step again, up to 100 a
 * run. A step already done finds its part recorded and does nothing.
 */
export async function resumeStalledExports(env: Bindings): Promise<number> {
  const db = primaryDatabase(env);
  const stalled = await db
    .select({ id: activityLogExports.id, parts: activityLogExports.parts })
    .from(activityLogExports)
    // Spelled as the partial index's condition, so that the index serves it.
    .where(
      and(
        sql`${activityLogExports.status} in ('pending', 'running')`,
        lt(activityLogExports.updatedAt, new Date(Date.now() - STALLED_AFTER_MS).toISOString()),
      ),
    )
    .limit(100);
  if (stalled.length > 0) {
    await env.BACKGROUND_JOBS.sendBatch(
      stalled.map((row) => ({ body: { kind: "export_part" as const, exportId: row.id, part: row.parts } })),
    );
  }
  return stalled.length;
}
