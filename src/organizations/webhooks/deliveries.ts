import { userBasicColumns } from "../../platform/user-basic";
import { errorFields, logLine } from "../../platform/log";
import { and, asc, eq, gt, inArray, isNotNull, isNull, lt, lte, ne, sql, type SQL } from "drizzle-orm";
import { activityLog, serviceApiKeys, users, webhookDeliveries, webhooks } from "../../db/schema";
import { entryServiceKey, serviceKeyOfEntry } from "../../platform/activity-log/activity-log.queries";
import { eventNameOf, eventPayload } from "../../platform/activity-log/event-payload";
import { sealOrganizations } from "../../platform/activity-log/after-response";
import { eachMessage, forEachOrganization } from "../../platform/background";
import { chunkForInsert, inJsonList, isForeignKeyViolation, primaryDatabase, type Database } from "../../platform/db";
import type { Bindings } from "../../platform/env";
import { nowIso, uuid7 } from "../../platform/ids";
import { post, signedHeaders, signingSecrets, type Attempt } from "./receiver";
import { disableWebhook } from "./webhooks.queries";
import { delayAfter, RETRY_DELAYS_SECONDS } from "./retry-schedule";

/**
 * A delivery's queue message. `retryUntil` names the schedule it belongs to (a redelivery starts
 * another): a dead letter of an earlier schedule does not fail the one running now. Messages
 * queued before it was added carry none.
 */
export type DeliveryMessage = { deliveryId: string; retryUntil?: string };

/**
 * Entries turned into deliveries per pass: with at most 50 webhooks, a pass writes at most 1,000
 * deliveries (100 statements of one batch). Passes repeat until the organization is caught up, up
 * to `PASSES_PER_RUN`; the cron takes what is left.
 */
const ENTRIES_PER_PASS = 20;
const PASSES_PER_RUN = 25;
/** Queues take at most 100 messages per `sendBatch`. */
export const MESSAGES_PER_SEND = 100;
/** How long the retry schedule lasts, from a delivery's first attempt (Retry-After aside). */
const SCHEDULE_MS = RETRY_DELAYS_SECONDS.reduce((sum, delay) => sum + delay, 0) * 1000;

/** When the schedule of a delivery made (or redelivered) at `time` ends: written to `retryUntil`, for the record. */
export const retryUntilFrom = (time: string) => new Date(Date.parse(time) + SCHEDULE_MS).toISOString();
/** A webhook whose every delivery failed for this long is disabled. */
const DISABLE_AFTER_MS = 3 * 24 * 3_600_000;

const matches = (events: string[], event: string) => events.includes("*") || events.includes(event);

/** Outbox passes for one organization until it is caught up (or `PASSES_PER_RUN` is reached). */
export async function enqueueDeliveries(env: Bindings, db: Database, organizationId: string) {
  let created = 0;
  for (let pass = 0; pass < PASSES_PER_RUN; pass += 1) {
    const { delivered, caughtUp } = await enqueuePass(env, db, organizationId);
    created += delivered;
    if (caughtUp) break;
  }
  return created;
}

/** One queue message per delivery, in sends Queues accept. */
export async function sendDeliveryMessages(env: Bindings, deliveries: { id: string; retryUntil: string }[]) {
  for (let start = 0; start < deliveries.length; start += MESSAGES_PER_SEND) {
    const sent = deliveries.slice(start, start + MESSAGES_PER_SEND);
    await env.WEBHOOK_DELIVERIES.sendBatch(
      sent.map(({ id, retryUntil }) => ({ body: { deliveryId: id, retryUntil } })),
    );
  }
}

/** What a delivery's message names: its id and schedule. */
const scheduled = { id: webhookDeliveries.id, retryUntil: webhookDeliveries.retryUntil };

/**
 * The outbox pass, after entries are sealed: each enabled webhook of the organization gets a
 * delivery for every sealed entry after its `lastEnqueuedSeq` that its events match. The
 * deliveries (unique per webhook and entry, so a repeated pass adds none) and each webhook's new
 * position are one batch; then one queue message per new delivery. A message lost between the
 * two is sent again by the cron's sweep.
 */
async function enqueuePass(env: Bindings, db: Database, organizationId: string) {
  const subscribed = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.organizationId, organizationId), eq(webhooks.enabled, true)));
  if (subscribed.length === 0) return { delivered: 0, caughtUp: true };
  const from = Math.min(...subscribed.map((webhook) => webhook.lastEnqueuedSeq));
  const entries = await db
    .select({ id: activityLog.id, seq: activityLog.seq, scope: activityLog.scope, activity: activityLog.activity })
    .from(activityLog)
    .where(and(eq(activityLog.organizationId, organizationId), gt(activityLog.seq, from), isNotNull(activityLog.hash)))
    .orderBy(asc(activityLog.seq))
    .limit(ENTRIES_PER_PASS);
  const last = entries.at(-1);
  if (!last) return { delivered: 0, caughtUp: true };
  const now = nowIso();
  const rows = subscribed.flatMap((webhook) =>
    entries
      .filter((entry) => entry.seq > webhook.lastEnqueuedSeq && matches(webhook.events, eventNameOf(entry)))
      .map((entry) => ({
        id: uuid7(),
        webhookId: webhook.id,
        entryId: entry.id,
        event: eventNameOf(entry),
        status: "pending",
        nextAttemptAt: now,
        retryUntil: retryUntilFrom(now),
        createdAt: now,
        updatedAt: now,
      })),
  );
  // Only a webhook whose events are still the ones matched: one changed meanwhile stays where it
  // was, and the next pass (the change's own) matches these entries again with its new events.
  const advance = subscribed.map((webhook) =>
    db
      .update(webhooks)
      .set({ lastEnqueuedSeq: sql`max(${webhooks.lastEnqueuedSeq}, ${last.seq})` })
      .where(and(eq(webhooks.id, webhook.id), eq(webhooks.events, webhook.events))),
  );
  // Many entries times many webhooks: chunked, as D1 binds at most 100 parameters a statement.
  const inserts = chunkForInsert(webhookDeliveries, rows).map((chunk) =>
    db.insert(webhookDeliveries).values(chunk).onConflictDoNothing().returning(scheduled),
  );
  const [first, ...rest] = [...advance, ...inserts];
  const results = await db.batch([first!, ...rest]).catch((error: unknown) => {
    // A webhook deleted since it was read: the next pass reads the ones left, without it.
    if (isForeignKeyViolation(error)) return null;
    throw error;
  });
  if (!results) return { delivered: 0, caughtUp: false };
  const created = results.slice(advance.length).flat() as { id: string; retryUntil: string }[];
  await sendDeliveryMessages(env, created);
  return { delivered: created.length, caughtUp: entries.length < ENTRIES_PER_PASS };
}

/** Registered with `onActivitySealed`: after every request that appended entries, and on the cron. */
export async function enqueueAfterSeal(env: Bindings, organizationIds: string[]) {
  const db = primaryDatabase(env);
  await forEachOrganization("enqueue webhook deliveries", organizationIds, (organizationId) =>
    enqueueDeliveries(env, db, organizationId),
  );
}

type DeliveryRow = typeof webhookDeliveries.$inferSelect;
type WebhookRow = typeof webhooks.$inferSelect;

/**
 * What follows an attempt: success; `gone` (410: the receiver says it will never take one again);
 * a retry after the schedule's next delay (a 429's or 503's Retry-After may lengthen it); or, past
 * the schedule's last attempt, `exhausted`: the message goes to the dead-letter queue.
 */
type Outcome =
  | { kind: "succeeded" }
  | { kind: "gone" }
  | { kind: "retry"; delaySeconds: number }
  | { kind: "exhausted" };

function outcomeOf(attempt: Attempt, attemptNumber: number): Outcome {
  if (attempt.ok) return { kind: "succeeded" };
  if (attempt.status === 410) return { kind: "gone" };
  const delaySeconds = delayAfter(attemptNumber, attempt.retryAfterSeconds);
  return delaySeconds === undefined ? { kind: "exhausted" } : { kind: "retry", delaySeconds };
}

/**
 * The delivery after an attempt: still `pending` while the schedule goes on (dead letters are marked failed by their
 * consumer).
 */
function recordAttempt(db: Database, delivery: DeliveryRow, attempt: Attempt, outcome: Outcome, now: string) {
  const status = outcome.kind === "succeeded" ? "succeeded" : outcome.kind === "gone" ? "failed" : "pending";
  return db
    .update(webhookDeliveries)
    .set({
      status,
      attempts: delivery.attempts + 1,
      lastStatusCode: attempt.status,
      lastError: attempt.ok ? null : attempt.error,
      nextAttemptAt:
        outcome.kind === "retry" ? new Date(Date.parse(now) + outcome.delaySeconds * 1000).toISOString() : null,
      updatedAt: now,
    })
    .where(pendingDelivery(delivery.id));
}

/** A pending delivery, by id: what an attempt's outcome is written to. */
const pendingDelivery = (id: string) => and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, "pending"));

/** A delivery settled unsent: failed, with why, and no further attempt. */
const settledUnsent = (lastError: string, now: string) => ({
  status: "failed" as const,
  lastError,
  nextAttemptAt: null,
  updatedAt: now,
});
const ENTRY_GONE = "The event's entry was archived or pruned: it can no longer be delivered.";
const UNSUBSCRIBED = "The webhook no longer subscribes to this event: it was not sent.";

/**
 * Delivers one message's delivery, then acks it or retries it as the schedule says (`message.attempts` is the attempt's
 * number).
 */
async function deliver(env: Bindings, message: Message<DeliveryMessage>) {
  const db = primaryDatabase(env);
  const [[row]] = await db.batch([
    db
      .select({
        delivery: webhookDeliveries,
        webhook: webhooks,
        entry: activityLog,
        user: userBasicColumns(users),
        serviceKey: entryServiceKey,
      })
      .from(webhookDeliveries)
      .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
      .leftJoin(activityLog, eq(activityLog.id, webhookDeliveries.entryId))
      .leftJoin(users, eq(users.id, activityLog.userId))
      .leftJoin(serviceApiKeys, serviceKeyOfEntry)
      .where(eq(webhookDeliveries.id, message.body.deliveryId)),
  ]);
  if (!row || row.delivery.status !== "pending" || !row.webhook.enabled) return message.ack();
  const { entry } = row;
  // Archived or pruned since (a redelivery or recovery of an old event), or taken out of the
  // webhook's events since it was enqueued: settled, not left pending, and never sent.
  const unsubscribed = !matches(row.webhook.events, row.delivery.event);
  if (!entry || unsubscribed) {
    const why = entry ? UNSUBSCRIBED : ENTRY_GONE;
    await db.update(webhookDeliveries).set(settledUnsent(why, nowIso())).where(pendingDelivery(row.delivery.id));
    return message.ack();
  }
  const body = JSON.stringify(eventPayload({ ...row, entry }));
  const headers = await signedHeaders(await signingSecrets(env, row.webhook), row.delivery.id, body);
  const attempt = await post(env, row.webhook.url, headers, body);
  const outcome = outcomeOf(attempt, message.attempts);
  const now = nowIso();
  const health = webhookHealth(db, row.webhook, attempt, now);
  await db.batch([recordAttempt(db, row.delivery, attempt, outcome, now), ...health.statements]);
  // A `Webhook.disabled` entry was appended, no request's seal follows it: sealed here, so that it
  // reaches the events feed and the other webhooks now, not at the next write or cron run.
  if (health.mayDisable) await sealOrganizations(env, [row.webhook.organizationId]);
  if (outcome.kind === "retry") message.retry({ delaySeconds: outcome.delaySeconds });
  // Past `max_retries`, Queues moves the message to the dead-letter queue.
  else if (outcome.kind === "exhausted") message.retry();
  else message.ack();
}

/**
 * A success clears `failingSince`; a failure sets it if unset. A receiver answering 410 Gone has
 * its webhook disabled at once; one failing for 3 days too. Both in the attempt's batch, and only
 * while the webhook still points at the receiver that answered: an admin who redirected it
 * meanwhile is not overruled by the receiver they left. The 3 days are judged on the row as the
 * write finds it, so that a PATCH turning the webhook on meanwhile (which clears `failingSince`)
 * starts them again.
 */
function webhookHealth(db: Database, webhook: WebhookRow, attempt: Attempt, now: string) {
  const condition = eq(webhooks.url, webhook.url);
  const ofWebhook = and(eq(webhooks.id, webhook.id), condition);
  if (attempt.ok) return { statements: [db.update(webhooks).set({ failingSince: null }).where(ofWebhook)] };
  if (attempt.status === 410) {
    const reason = { reason: "The receiver answered 410 Gone." };
    return { statements: disableWebhook(db, webhook, reason, { condition }), mayDisable: true };
  }
  const failing = [
    db
      .update(webhooks)
      .set({ failingSince: sql`coalesce(${webhooks.failingSince}, ${now})` })
      .where(ofWebhook),
  ];
  const failingSince = webhook.failingSince ?? now;
  if (Date.parse(now) - Date.parse(failingSince) < DISABLE_AFTER_MS) return { statements: failing };
  const cutoff = new Date(Date.parse(now) - DISABLE_AFTER_MS).toISOString();
  const context = { reason: "Every delivery failed for 3 days.", failing_since: failingSince };
  const disabling = disableWebhook(db, webhook, context, {
    condition: and(condition, lte(webhooks.failingSince, cutoff)),
  });
  return { statements: [...failing, ...disabling], mayDisable: true };
}

/**
 * The dead-letter queue's consumer: deliveries whose schedule is exhausted (or whose processing
 * kept failing) are marked `failed`, in one statement for the batch, and each is a JSON line for
 * the operator; the deliveries list shows them (`?status=failed`), and they can be redelivered.
 * A duplicate finds its delivery no longer pending and changes nothing.
 */
export async function recordDeadLetters(batch: MessageBatch<DeliveryMessage>, env: Bindings) {
  const db = primaryDatabase(env);
  const letters = batch.messages.map((message) => message.body);
  const failed = await db
    .update(webhookDeliveries)
    .set({ status: "failed", nextAttemptAt: null, updatedAt: nowIso() })
    .where(
      and(
        inJsonList(
          webhookDeliveries.id,
          letters.map((letter) => letter.deliveryId),
        ),
        eq(webhookDeliveries.status, "pending"),
        // Of the schedule its dead letter ended, not one a redelivery started since.
        sql`exists (select 1 from json_each(${JSON.stringify(letters)}) as "letter"
          where json_extract("letter"."value", '$.deliveryId') = ${webhookDeliveries.id}
            and coalesce(json_extract("letter"."value", '$.retryUntil'), ${webhookDeliveries.retryUntil})
              = ${webhookDeliveries.retryUntil})`,
      ),
    )
    .returning({
      id: webhookDeliveries.id,
      webhookId: webhookDeliveries.webhookId,
      attempts: webhookDeliveries.attempts,
    });
  for (const delivery of failed) {
    logLine("warn", {
      task: "webhook dead letter",
      delivery_id: delivery.id,
      webhook_id: delivery.webhookId,
      attempts: delivery.attempts,
    });
  }
  batch.ackAll();
}

/**
 * A delivery sent again: pending, with the retry schedule from its start, and a message on the
 * queue, while `held` holds ("refused" otherwise). One already pending is answered as it is: its
 * message is on its way.
 */
export async function redeliver(
  env: Bindings,
  db: Database,
  webhookId: string,
  deliveryId: string,
  held: SQL | undefined,
) {
  const now = nowIso();
  const ofWebhook = and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId));
  const [delivery] = await db
    .update(webhookDeliveries)
    .set({ status: "pending", nextAttemptAt: now, retryUntil: retryUntilFrom(now), updatedAt: now })
    // One still pending has its message on the queue: a second would post it twice, each retrying.
    .where(and(ofWebhook, ne(webhookDeliveries.status, "pending"), held))
    .returning();
  if (delivery) {
    try {
      await sendDeliveryMessages(env, [delivery]);
    } catch (error) {
      // It is pending: the cron's sweep sends a lost message. A 500 here would tell the caller
      // nothing happened, and free their `Idempotency-Key`.
      logLine("warn", { task: "redeliver webhook delivery", delivery_id: delivery.id, error: errorFields(error) });
    }
    return delivery;
  }
  // Not written: pending already (answered as it is), or `held` no longer held.
  const [found] = await db
    .select({ delivery: webhookDeliveries, held: sql<number>`${held ?? sql`1`}`.mapWith(Boolean) })
    .from(webhookDeliveries)
    .where(ofWebhook);
  if (!found) return undefined;
  return found.held ? found.delivery : "refused";
}

/** A `webhook.test` event, signed like every delivery and posted now; nothing is stored. */
export async function sendTestEvent(env: Bindings, webhook: WebhookRow) {
  const id = uuid7();
  const body = JSON.stringify({
    type: "webhook.test",
    webhook_id: webhook.id,
    organization_id: webhook.organizationId,
    created_at: nowIso(),
  });
  const attempt = await post(env, webhook.url, await signedHeaders(await signingSecrets(env, webhook), id, body), body);
  return { id, ok: attempt.ok, status_code: attempt.status, error: attempt.ok ? null : attempt.error };
}

/** Messages re-sent per cron run, for deliveries whose message seems lost. */
const SWEEP_LIMIT = 500;
/** A pending delivery this late past its attempt time has lost its message. */
const LOST_AFTER_MS = 15 * 60_000;
/** A delivery exhausted this long ago and still pending has lost its dead letter. */
const DEAD_LETTER_LOST_AFTER_MS = 60 * 60_000;

/** The newest sealed entry of the webhook's organization, read from the top of its log along its index. */
const newestSealedSeq = sql<number>`(select ${activityLog.seq} from ${activityLog}
  where ${activityLog.organizationId} = ${webhooks.organizationId} and ${activityLog.hash} is not null
  order by ${activityLog.seq} desc limit 1)`;

/**
 * The cron's part of at-least-once: every organization with an enabled webhook behind its log
 * gets an outbox pass (entries a lost pass left behind); pending deliveries long past their attempt time get
 * their message again (a duplicate finds the delivery done and is dropped); an exhausted one whose
 * dead letter never arrived is marked failed, as its consumer would have; and previous secrets
 * past their overlap are dropped.
 */
export async function sweepWebhooks(env: Bindings) {
  const db = primaryDatabase(env);
  const now = nowIso();
  const [organizations, lost] = await db.batch([
    db
      .selectDistinct({ id: webhooks.organizationId })
      .from(webhooks)
      // Only those behind their organization's newest sealed entry: the caught-up ones (nearly all)
      // would otherwise fill the limit, run after run, and hide a lost pass past them.
      .where(and(eq(webhooks.enabled, true), lt(webhooks.lastEnqueuedSeq, newestSealedSeq)))
      .limit(SWEEP_LIMIT),
    // Claimed as they are read (their attempt time moved to now), so that a run at the same time,
    // or the next one while the message waits on the queue, does not send a second message.
    db
      .update(webhookDeliveries)
      .set({ nextAttemptAt: now })
      .where(
        inArray(
          webhookDeliveries.id,
          db
            .select({ id: webhookDeliveries.id })
            .from(webhookDeliveries)
            .where(
              and(
                eq(webhookDeliveries.status, "pending"),
                lt(webhookDeliveries.nextAttemptAt, new Date(Date.now() - LOST_AFTER_MS).toISOString()),
                // A disabled webhook's deliveries wait, pending, for it to be enabled again: re-sending
                // them would only have them acked unsent, every run, crowding out the lost ones.
                inArray(
                  webhookDeliveries.webhookId,
                  db.select({ id: webhooks.id }).from(webhooks).where(eq(webhooks.enabled, true)),
                ),
              ),
            )
            .limit(SWEEP_LIMIT),
        ),
      )
      .returning(scheduled),
    db
      .update(webhookDeliveries)
      .set({ status: "failed", updatedAt: now })
      .where(
        and(
          eq(webhookDeliveries.status, "pending"),
          isNull(webhookDeliveries.nextAttemptAt),
          lt(webhookDeliveries.updatedAt, new Date(Date.now() - DEAD_LETTER_LOST_AFTER_MS).toISOString()),
        ),
      ),
    db
      .update(webhooks)
      .set({ previousSealedSecret: null, previousSecretExpiresAt: null })
      .where(sql`${webhooks.previousSecretExpiresAt} is not null and ${webhooks.previousSecretExpiresAt} <= ${now}`),
  ]);
  await forEachOrganization(
    "enqueue webhook deliveries",
    organizations.map(({ id }) => id),
    (organizationId) => enqueueDeliveries(env, db, organizationId),
  );
  await sendDeliveryMessages(env, lost);
  return lost.length;
}

/** The queue consumer: each message on its own, so that one slow or failing delivery does not fail the batch. */
export const deliverBatch = (batch: MessageBatch<DeliveryMessage>, env: Bindings) =>
  eachMessage(
    "webhook delivery",
    batch.messages,
    (message) => deliver(env, message),
    (body) => ({ delivery_id: body.deliveryId }),
  );
