import { and, inArray, isNotNull, lt, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { primaryDatabase, type Database } from "./db";
import type { Bindings } from "./env";
import type { BackgroundJob } from "./jobs";

/*
 * What a project's and an organization's deletions share: their rows go in bounded steps, one
 * background job message each, and the cron resumes a deletion whose next message was lost.
 */

/** Rows of each kind one step of a deletion removes (what goes with a row by cascade goes too). */
export const ROWS_PER_STEP = 100;

/** Up to `ROWS_PER_STEP` rows of `table` matching `where`, deleted; their ids returned. */
export function deleteSome(db: Database, table: SQLiteTable, id: SQLiteColumn, where: SQL | undefined) {
  const some = db.select({ id }).from(table).where(where).limit(ROWS_PER_STEP);
  return db.delete(table).where(inArray(id, some)).returning({ id });
}

/** A deletion not finished this long after it was scheduled is resumed by the cron. */
const STALLED_AFTER_MS = 10 * 60_000;

/**
 * The cron's part of a stepped deletion's at-least-once: each row of `table` scheduled for
 * deletion over ten minutes ago and still there (its first message lost, or a step's dropped)
 * gets a step's message again (`job`), up to 100 a run. How many did.
 */
export async function resumeStalledDeletions<Id>(
  env: Bindings,
  table: SQLiteTable,
  id: SQLiteColumn,
  scheduledAt: SQLiteColumn,
  job: (id: Id) => BackgroundJob,
): Promise<number> {
  const stalled = await primaryDatabase(env)
    .select({ id })
    .from(table)
    .where(and(isNotNull(scheduledAt), lt(scheduledAt, new Date(Date.now() - STALLED_AFTER_MS).toISOString())))
    .limit(100);
  if (stalled.length > 0) await env.BACKGROUND_JOBS.sendBatch(stalled.map((row) => ({ body: job(row.id as Id) })));
  return stalled.length;
}
