import { and, eq, isNotNull, lt, lte, max, sql } from "drizzle-orm";
import { activityLog, activityLogAnchors } from "../../db/schema";
import type { Database } from "../db";
import { nowIso } from "../ids";

export const DEFAULT_RETENTION_DAYS = 365;

/** Organizations pruned per batch: two statements each. */
const ORGANIZATIONS_PER_BATCH = 40;

/** `ACTIVITY_LOG_RETENTION_DAYS`, or the default when unset or not a positive integer. */
export function retentionDays(configured: string | undefined): number {
  const days = Number(configured);
  return Number.isSafeInteger(days) && days > 0 ? days : DEFAULT_RETENTION_DAYS;
}

/**
 * Deletes entries older than the retention period, only sealed ones, as a prefix of each
 * organization's chain. The last pruned entry's number and hash become the organization's anchor
 * in the same batch, so the entries that remain still verify from there. Returns entries deleted.
 */
export async function pruneActivityLog(db: Database, days: number, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - days * 86_400_000).toISOString();
  const ends = await db
    .select({ organizationId: activityLog.organizationId, seq: max(activityLog.seq).mapWith(Number) })
    .from(activityLog)
    .where(and(lt(activityLog.createdAt, cutoff), isNotNull(activityLog.hash)))
    .groupBy(activityLog.organizationId);
  let deleted = 0;
  for (let start = 0; start < ends.length; start += ORGANIZATIONS_PER_BATCH) {
    const statements = ends.slice(start, start + ORGANIZATIONS_PER_BATCH).flatMap(({ organizationId, seq }) => [
      db
        .insert(activityLogAnchors)
        .select(
          db
            .select({
              organizationId: activityLog.organizationId,
              seq: activityLog.seq,
              hash: sql<string>`${activityLog.hash}`.as("hash"),
              prunedAt: sql<string>`${nowIso()}`.as("pruned_at"),
            })
            .from(activityLog)
            .where(and(eq(activityLog.organizationId, organizationId), eq(activityLog.seq, seq))),
        )
        .onConflictDoUpdate({
          target: activityLogAnchors.organizationId,
          set: { seq: sql`excluded.seq`, hash: sql`excluded.hash`, prunedAt: sql`excluded.pruned_at` },
        }),
      db.delete(activityLog).where(and(eq(activityLog.organizationId, organizationId), lte(activityLog.seq, seq))),
    ]);
    const [first, ...rest] = statements;
    if (!first) break;
    const results = await db.batch([first, ...rest]);
    // Every second statement is a delete.
    deleted += results.reduce((sum, result, index) => sum + (index % 2 === 1 ? ((result as D1Result).meta?.changes ?? 0) : 0), 0);
  }
  return deleted;
}
