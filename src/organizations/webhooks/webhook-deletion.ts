import { and, eq, inArray, isNotNull } from "drizzle-orm";
import { webhookDeliveries, webhooks } from "../../db/schema";
import { primaryDatabase } from "../../platform/db";
import type { Bindings } from "../../platform/env";
import type { BackgroundJob, StepOutcome } from "../../platform/jobs";
import { deleteSome, nextStepOr, resumeStalledDeletions } from "../../platform/stepped-deletion";

type WebhookDeletion = Extract<BackgroundJob, { kind: "delete_webhook" }>;

/*
 * A webhook's DELETE schedules its deletion (`deletion_scheduled_at`, and disabled): no route shows
 * it and nothing is sent to it from then on. Its deliveries, of which nothing bounds the number,
 * go in background steps, so that the request writes a few rows however many it had.
 */

/**
 * One step: a bounded batch of the scheduled webhook's deliveries; when none is left, the webhook.
 * Then the next step's message, or nothing. At-least-once: a step for a webhook gone, or never
 * scheduled, deletes nothing.
 */
export async function deleteWebhookStep(env: Bindings, job: WebhookDeletion): Promise<StepOutcome> {
  const db = primaryDatabase(env);
  const scheduled = and(eq(webhooks.id, job.webhookId), isNotNull(webhooks.deletionScheduledAt));
  const ofScheduled = db.select({ id: webhooks.id }).from(webhooks).where(scheduled);
  const deleted = await deleteSome(
    db,
    webhookDeliveries,
    webhookDeliveries.id,
    inArray(webhookDeliveries.webhookId, ofScheduled),
  );
  // Once none is left (disabled and hidden, it gets no new delivery meanwhile), the webhook.
  return nextStepOr(env, job, [deleted], () => db.delete(webhooks).where(scheduled));
}

/** Webhooks whose deletion stalled get a step's message again (`resumeStalledDeletions`). */
export const resumeStalledWebhookDeletions = (env: Bindings) =>
  resumeStalledDeletions<string>(env, webhooks, webhooks.id, webhooks.deletionScheduledAt, (id) => ({
    kind: "delete_webhook",
    webhookId: id,
  }));
