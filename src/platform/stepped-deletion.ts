import { and, inArray, isNotNull, lt, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { primaryDatabase, type Database } from "./db";
import type { Bindings } from "./env";
import type { BackgroundJob, StepOutcome } from "./jobs";
import { errorFields, logLine } from "./log";

/*
 * What the deletions of a project, an organization and a webhook share: their rows go in bounded
 * steps, one background job message each, and the cron resumes a deletion whose next message was lost.
 */

/**
 * The first step's message, after the request marked the deletion. A send that fails is logged,
 * not answered as an error: the deletion is scheduled, and the cron resumes it (`resumeStalledDeletions`).
 */
export async function sendFirstStep(env: Bindings, job: BackgroundJob) {
  try {
    await env.BACKGROUND_JOBS.send(job);
  } catch (error) {
    logLine("warn", { task: "schedule deletion", job, error: errorFields(error as Error) });
  }
}

/**
 * After a step's deletes (`deleted`, each a `deleteSome`'s rows): the next step's message while
 * one of them filled its share (more may be left), else `last`, the scheduled row itself.
 */
export async function nextStepOr(
  env: Bindings,
  job: BackgroundJob,
  deleted: unknown[][],
  last: () => Promise<unknown>,
): Promise<StepOutcome> {
  if (deleted.some((rows) => rows.length === ROWS_PER_STEP)) await env.BACKGROUND_JOBS.send(job);
  else await last();
  return {};
}

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
