import { and, asc, eq, gte, lt, sql, type SQL } from "drizzle-orm";
import { webhookDeliveries } from "../../db/schema";
import { primaryDatabase } from "../../platform/db";
import type { Bindings } from "../../platform/env";
import { nowIso } from "../../platform/ids";
import type { BackgroundJob, StepOutcome } from "../../platform/jobs";
import { MESSAGES_PER_SEND, retryUntilFrom, sendDeliveryMessages } from "./deliveries";

type Recovery = Extract<BackgroundJob, { kind: "recover_deliveries" }>;

/**
 * One step of a recovery: the webhook's next failed deliveries (one send of messages: 100) created
 * in the range, along its (webhook, status, created_at, id) index after the step's last one, made
 * pending again with the schedule from its start, and their messages sent; then the next step.
 * The update only takes deliveries still failed, so a step run twice sends none of them twice;
 * one lost before its messages leaves them pending, and the cron's sweep sends them.
 *
 * The request runs the first step itself, `held` to what it judged (the caller still an admin):
 * when that no longer holds, nothing is recovered and the answer says so (`refused`).
 */
export async function recoverStep(env: Bindings, job: Recovery, held?: SQL): Promise<StepOutcome & { refused?: true }> {
  const db = primaryDatabase(env);
  const now = nowIso();
  const next = db
    .select({ id: webhookDeliveries.id, createdAt: webhookDeliveries.createdAt })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.webhookId, job.webhookId),
        eq(webhookDeliveries.status, "failed"),
        job.after === null
          ? undefined
          : sql`(${webhookDeliveries.createdAt}, ${webhookDeliveries.id}) > (${job.after.createdAt}, ${job.after.id})`,
        gte(webhookDeliveries.createdAt, job.since),
        lt(webhookDeliveries.createdAt, job.until),
      ),
    )
    .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id))
    .limit(MESSAGES_PER_SEND);
  const [[holds], selected, recovered] = await db.batch([
    db.select({ held: sql<number>`${held ?? sql`1`}` }).from(sql`(select 1)`),
    next,
    db
      .update(webhookDeliveries)
      .set({ status: "pending", nextAttemptAt: now, retryUntil: retryUntilFrom(now), updatedAt: now })
      .where(
        and(sql`${webhookDeliveries.id} in (select "id" from (${next}))`, eq(webhookDeliveries.status, "failed"), held),
      )
      .returning({ id: webhookDeliveries.id, retryUntil: webhookDeliveries.retryUntil }),
  ]);
  if (!holds?.held) return { refused: true };
  await sendDeliveryMessages(env, recovered);
  const last = selected.at(-1);
  if (selected.length === MESSAGES_PER_SEND && last) {
    await env.BACKGROUND_JOBS.send({ ...job, after: { createdAt: last.createdAt, id: last.id } });
  }
  return {};
}
