import { and, asc, eq, gt, gte, lt, sql } from "drizzle-orm";
import { webhookDeliveries } from "../../db/schema";
import { primaryDatabase } from "../../platform/db";
import type { Bindings } from "../../platform/env";
import { nowIso } from "../../platform/ids";
import type { BackgroundJob, StepOutcome } from "../../platform/jobs";
import { MESSAGES_PER_SEND, retryUntilFrom, sendDeliveryMessages } from "./deliveries";

type Recovery = Extract<BackgroundJob, { kind: "recover_deliveries" }>;

/**
 * One step of a recovery: the webhook's next failed deliveries (one send of messages: 100) created
 * in the range, along its (webhook, status, position) index after the step's position, made
 * pending again with the schedule from its start, and their messages sent; then the next step.
 * The update only takes deliveries still failed, so a step run twice sends none of them twice;
 * one lost before its messages leaves them pending, and the cron's sweep sends them.
 */
export async function recoverStep(env: Bindings, job: Recovery): Promise<StepOutcome> {
  const db = primaryDatabase(env);
  const now = nowIso();
  const next = db
    .select({ id: webhookDeliveries.id, position: webhookDeliveries.position })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.webhookId, job.webhookId),
        eq(webhookDeliveries.status, "failed"),
        gt(webhookDeliveries.position, job.afterPosition),
        gte(webhookDeliveries.createdAt, job.since),
        lt(webhookDeliveries.createdAt, job.until),
      ),
    )
    .orderBy(asc(webhookDeliveries.position))
    .limit(MESSAGES_PER_SEND);
  const [selected, recovered] = await db.batch([
    next,
    db
      .update(webhookDeliveries)
      .set({ status: "pending", nextAttemptAt: now, retryUntil: retryUntilFrom(now), updatedAt: now })
      .where(and(sql`${webhookDeliveries.id} in (select "id" from (${next}))`, eq(webhookDeliveries.status, "failed")))
      .returning({ id: webhookDeliveries.id }),
  ]);
  await sendDeliveryMessages(env, recovered.map(({ id }) => id));
  const last = selected.at(-1);
  if (selected.length === MESSAGES_PER_SEND && last) {
    await env.BACKGROUND_JOBS.send({ ...job, afterPosition: last.position });
  }
  return {};
}
