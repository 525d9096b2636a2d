import { and, eq, inArray, lt, notExists } from "drizzle-orm";
import { activityLog, webhookDeliveries, webhooks } from "../../db/schema";
import type { Database } from "../../platform/db";

/** Deliveries one statement deletes, and statements one cron run makes at most (the next run goes on). */
const DELIVERIES_PER_DELETE = 500;
const DELETES_PER_RUN = 10;

/**
 * Deletes finished deliveries (succeeded or failed) created before `cutoff`, the start of the
 * activity log's archive window, whose events have left the database (archived or pruned): they
 * can no longer be sent again, and only their history would stay. Pending ones stay: their schedule settles them.
 * Each statement walks the webhooks, then each one's (webhook, status, created_at) index (CROSS
 * JOIN keeps that order: SQLite would otherwise scan every delivery). Returns deliveries deleted.
 */
export async function pruneDeliveries(db: Database, cutoff: string): Promise<number> {
  let deleted = 0;
  for (let round = 0; round < DELETES_PER_RUN; round += 1) {
    const due = db
      .select({ id: webhookDeliveries.id })
      .from(webhooks)
      .crossJoin(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.webhookId, webhooks.id),
          inArray(webhookDeliveries.status, ["succeeded", "failed"]),
          lt(webhookDeliveries.createdAt, cutoff),
          // Its event really gone: an archive run that failed or lags leaves it sendable.
          notExists(
            db.select({ id: activityLog.id }).from(activityLog).where(eq(activityLog.id, webhookDeliveries.entryId)),
          ),
        ),
      )
      .limit(DELIVERIES_PER_DELETE);
    // Their ids, not `changes`, which counts the rows the count's trigger updates too.
    const gone = await db
      .delete(webhookDeliveries)
      .where(inArray(webhookDeliveries.id, due))
      .returning({ id: webhookDeliveries.id });
    deleted += gone.length;
    if (gone.length < DELIVERIES_PER_DELETE) break;
  }
  return deleted;
}
