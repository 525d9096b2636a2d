import { and, asc, eq, gt, isNotNull, lt, sql } from "drizzle-orm";
import { activityLog, users, webhookDeliveries, webhooks } from "../../db/schema";
import { toActivityLogEntry } from "../../platform/activity-log/activity-log.queries";
import { activityStatement } from "../../platform/activity-log/record";
import { forEachOrganization } from "../../platform/background";
import { chunkForInsert, createDatabase, D1Meter, type Database } from "../../platform/db";
import type { Bindings } from "../../platform/env";
import { nowIso, uuid7 } from "../../platform/ids";
import { loadKeyring, unseal } from "../../platform/secrets";
import { secretContext } from "./webhook-secrets";
import { deliveryRefusal, insecureReceiversAllowed } from "./webhook-urls";

export type DeliveryMessage = { deliveryId: string };

/**
 * Entries turned into deliveries per pass: with at most 50 webhooks, a pass writes at most 1,000
 * deliveries (100 statements of one batch). Passes repeat until the organization is caught up, up
 * to `PASSES_PER_RUN`; the cron takes what is left.
 */
const ENTRIES_PER_PASS = 20;
const PASSES_PER_RUN = 25;
/** Queues take at most 100 messages per `sendBatch`. */
const MESSAGES_PER_SEND = 100;
/** A delivery is retried for a day after it was created, then `failed`. */
const RETRY_WINDOW_MS = 24 * 3_600_000;
const TIMEOUT_MS = 10_000;
/** What is kept of a receiver's answer, for `last_error`. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** When retries of a delivery made (or redelivered) at `time` stop. */
export const retryUntilFrom = (time: string) => new Date(Date.parse(time) + RETRY_WINDOW_MS).toISOString();
/** A webhook whose every delivery failed for this long is disabled. */
const DISABLE_AFTER_MS = 3 * 24 * 3_600_000;

const primary = (env: Bindings) => createDatabase(env.DB.withSession("first-primary"), new D1Meter());

const eventOf = (entry: { scope: string; activity: string }) => `${entry.scope}.${entry.activity}`;
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
async function sendDeliveryMessages(env: Bindings, deliveryIds: string[]) {
  for (let start = 0; start < deliveryIds.length; start += MESSAGES_PER_SEND) {
    const ids = deliveryIds.slice(start, start + MESSAGES_PER_SEND);
    await env.WEBHOOK_DELIVERIES.sendBatch(ids.map((deliveryId) => ({ body: { deliveryId } })));
  }
}

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
      .filter((entry) => entry.seq > webhook.lastEnqueuedSeq && matches(webhook.events, eventOf(entry)))
      .map((entry) => ({
        id: uuid7(),
        webhookId: webhook.id,
        entryId: entry.id,
        event: eventOf(entry),
        status: "pending",
        nextAttemptAt: now,
        retryUntil: retryUntilFrom(now),
        createdAt: now,
        updatedAt: now,
      })),
  );
  const advance = subscribed.map((webhook) =>
    db
      .update(webhooks)
      .set({ lastEnqueuedSeq: sql`max(${webhooks.lastEnqueuedSeq}, ${last.seq})` })
      .where(eq(webhooks.id, webhook.id)),
  );
  // Many entries times many webhooks: chunked, as D1 binds at most 100 parameters a statement.
  const inserts = chunkForInsert(webhookDeliveries, rows).map((chunk) =>
    db.insert(webhookDeliveries).values(chunk).onConflictDoNothing().returning({ id: webhookDeliveries.id }),
  );
  const [first, ...rest] = [...advance, ...inserts];
  const results = await db.batch([first!, ...rest]);
  const created = results.slice(advance.length).flat() as { id: string }[];
  await sendDeliveryMessages(env, created.map(({ id }) => id));
  return { delivered: created.length, caughtUp: entries.length < ENTRIES_PER_PASS };
}

/** Registered with `onActivitySealed`: after every request that appended entries, and on the cron. */
export async function enqueueAfterSeal(env: Bindings, organizationIds: string[]) {
  const db = primary(env);
  await forEachOrganization("enqueue webhook deliveries", organizationIds, (organizationId) => enqueueDeliveries(env, db, organizationId));
}

function base64(bytes: ArrayBuffer): string {
  return btoa(String.fromCharCode(...new Uint8Array(bytes)));
}

/**
 * Standard Webhooks' signature: HMAC-SHA256, keyed with the secret's bytes (the base64 after
 * `whsec_`), over `id.timestamp.body`, sent as `v1,<base64>`.
 */
export async function signature(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const keyBytes = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (character) => character.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return `v1,${base64(mac)}`;
}

/** At most `MAX_RESPONSE_BYTES` of a response body, never more held in memory. */
async function readBounded(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < MAX_RESPONSE_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
  const bytes = new Uint8Array(Math.min(size, MAX_RESPONSE_BYTES));
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.byteLength - offset);
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

type Attempt = { ok: true; status: number } | { ok: false; status: number | null; error: string };

/** One POST to the receiver: no redirect followed, 10 s at most, a port or a host that `deliveryRefusal` refuses never reached. */
async function post(env: Bindings, url: string, headers: Record<string, string>, body: string): Promise<Attempt> {
  const refusal = insecureReceiversAllowed(env) ? undefined : await deliveryRefusal(env, new URL(url));
  if (refusal) return { ok: false, status: null, error: refusal };
  try {
    const response = await fetch(url, { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(TIMEOUT_MS) });
    const text = await readBounded(response);
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
    return { ok: false, status: response.status, error: text.slice(0, 500) || `HTTP ${response.status}` };
  } catch (error) {
    // What went wrong (a timeout, a refused connection), never more than a line.
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : "fetch failed";
    return { ok: false, status: null, error: reason.slice(0, 500) };
  }
}

/** Exponential backoff with jitter: 10 s, 20 s, 40 s... capped at an hour. */
const backoffSeconds = (attempts: number) => Math.min(10 * 2 ** (attempts - 1), 3600) + Math.floor(Math.random() * 10);

/** Delivers one message's delivery; `retry` is asked for when the receiver failed within the window. */
export async function deliver(env: Bindings, message: Message<DeliveryMessage>) {
  const db = primary(env);
  const [[row]] = await db.batch([
    db
      .select({ delivery: webhookDeliveries, webhook: webhooks, entry: activityLog, user: users })
      .from(webhookDeliveries)
      .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
      .innerJoin(activityLog, eq(activityLog.id, webhookDeliveries.entryId))
      .leftJoin(users, eq(users.id, activityLog.userId))
      .where(eq(webhookDeliveries.id, message.body.deliveryId)),
  ]);
  if (!row || row.delivery.status !== "pending" || !row.webhook.enabled) return message.ack();
  const secret = await unseal(await loadKeyring(env), row.webhook.sealedSecret, secretContext(row.webhook.id));
  const body = JSON.stringify({ type: row.delivery.event, ...toActivityLogEntry(row.entry, row.user) });
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    "content-type": "application/json",
    "webhook-id": row.delivery.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await signature(secret, row.delivery.id, timestamp, body),
  };
  const attempt = await post(env, row.webhook.url, headers, body);
  const attempts = row.delivery.attempts + 1;
  const now = nowIso();
  const delaySeconds = backoffSeconds(attempts);
  const status = attempt.ok ? "succeeded" : now >= row.delivery.retryUntil ? "failed" : "pending";
  await db.batch([
    db
      .update(webhookDeliveries)
      .set({
        status,
        attempts,
        lastStatusCode: attempt.status,
        lastError: attempt.ok ? null : attempt.error,
        nextAttemptAt: status === "pending" ? new Date(Date.now() + delaySeconds * 1000).toISOString() : null,
        updatedAt: now,
      })
      .where(and(eq(webhookDeliveries.id, row.delivery.id), eq(webhookDeliveries.status, "pending"))),
    ...webhookHealth(db, row.webhook, attempt.ok, now),
  ]);
  if (status === "pending") message.retry({ delaySeconds });
  else message.ack();
}

const SYSTEM = { userId: null, apiKeyId: null, isSystem: true, requestId: null };

/**
 * A success clears `failingSince`; a failure sets it if unset. A webhook failing for 3 days is
 * disabled, and the activity log says so, in the same batch (the entry only if this disabled it).
 */
function webhookHealth(db: Database, webhook: typeof webhooks.$inferSelect, succeeded: boolean, now: string) {
  const ofWebhook = eq(webhooks.id, webhook.id);
  if (succeeded) return [db.update(webhooks).set({ failingSince: null }).where(ofWebhook)];
  const failingSince = webhook.failingSince ?? now;
  if (Date.parse(now) - Date.parse(failingSince) < DISABLE_AFTER_MS) {
    return [db.update(webhooks).set({ failingSince }).where(ofWebhook)];
  }
  return [
    db
      .update(webhooks)
      .set({ enabled: false, updatedAt: now })
      .where(and(ofWebhook, eq(webhooks.enabled, true))),
    activityStatement(db, SYSTEM, {
      organizationId: webhook.organizationId,
      scope: "Webhook",
      activity: "disabled",
      itemId: webhook.id,
      name: webhook.url,
      context: { reason: "Every delivery failed for 3 days.", failing_since: failingSince },
    }),
  ];
}

/** A delivery sent again: pending, with a new day of retries, and a message on the queue. */
export async function redeliver(env: Bindings, db: Database, webhookId: string, deliveryId: string) {
  const now = nowIso();
  const [delivery] = await db
    .update(webhookDeliveries)
    .set({ status: "pending", nextAttemptAt: now, retryUntil: retryUntilFrom(now), updatedAt: now })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId)))
    .returning();
  if (delivery) await env.WEBHOOK_DELIVERIES.send({ deliveryId: delivery.id });
  return delivery;
}

/** A `webhook.test` event, signed like every delivery and posted now; nothing is stored. */
export async function sendTestEvent(env: Bindings, webhook: typeof webhooks.$inferSelect) {
  const secret = await unseal(await loadKeyring(env), webhook.sealedSecret, secretContext(webhook.id));
  const id = uuid7();
  const body = JSON.stringify({ type: "webhook.test", webhook_id: webhook.id, organization_id: webhook.organizationId, created_at: nowIso() });
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await signature(secret, id, timestamp, body),
  };
  const attempt = await post(env, webhook.url, headers, body);
  return { id, ok: attempt.ok, status_code: attempt.status, error: attempt.ok ? null : attempt.error };
}

/** Messages re-sent per cron run, for deliveries whose message seems lost. */
const SWEEP_LIMIT = 500;
/** A pending delivery this late past its attempt time has lost its message. */
const LOST_AFTER_MS = 15 * 60_000;

/**
 * The cron's part of at-least-once: every organization with an enabled webhook gets an outbox
 * pass (entries a lost pass left behind), and pending deliveries long past their attempt time
 * get their message again. A duplicate message finds the delivery done and is dropped.
 */
export async function sweepWebhooks(env: Bindings) {
  const db = primary(env);
  const [organizations, lost] = await db.batch([
    db.selectDistinct({ id: webhooks.organizationId }).from(webhooks).where(eq(webhooks.enabled, true)).limit(SWEEP_LIMIT),
    db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.status, "pending"), lt(webhookDeliveries.nextAttemptAt, new Date(Date.now() - LOST_AFTER_MS).toISOString())))
      .limit(SWEEP_LIMIT),
  ]);
  await forEachOrganization(
    "enqueue webhook deliveries",
    organizations.map(({ id }) => id),
    (organizationId) => enqueueDeliveries(env, db, organizationId),
  );
  await sendDeliveryMessages(env, lost.map(({ id }) => id));
  return lost.length;
}

/** The queue consumer: each message on its own, so that one slow receiver does not fail the batch. */
export async function deliverBatch(batch: MessageBatch<DeliveryMessage>, env: Bindings) {
  await Promise.all(batch.messages.map((message) => deliver(env, message)));
}

