import { createExecutionContext, createMessageBatch, createScheduledController, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { and, eq, isNotNull, like } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../../src/db/schema";
import worker from "../../../src/index";
import { enqueueDeliveries, type DeliveryMessage } from "../../../src/organizations/webhooks/deliveries";
import { primaryDatabase } from "../../../src/platform/db";
import { DELIVERY_ATTEMPTS } from "../../../src/organizations/webhooks/retry-schedule";
import { sha256Hex } from "../../../src/platform/ids";
import { seedEntries } from "../../support/activity-log";
import { api, db, setupOrganization } from "../../support/harness";
import { consumeDeadLetter } from "../../support/queues";
import { beforeWrites, onBoundStatements, waitingFor } from "../../support/races";
import {
  consume,
  eventually,
  expectSettledUnsent,
  receiver,
  seedPendingDelivery,
  storedDelivery,
  subscribe,
  webhooksPath,
} from "../../support/webhooks";

const runCron = () => worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
const twoHoursAgo = () => new Date(Date.now() - 2 * 3_600_000).toISOString();

// The Worker reads its secrets from this `env`: a test changes them as `wrangler secret put` would.
const keysAtStart = { current: env.SECRETS_ENCRYPTION_KEY, old: env.SECRETS_ENCRYPTION_OLD_KEYS };

afterEach(() => {
  env.SECRETS_ENCRYPTION_KEY = keysAtStart.current;
  env.SECRETS_ENCRYPTION_OLD_KEYS = keysAtStart.old;
  vi.restoreAllMocks();
});

/** Messages sent to a queue binding kept off the real queue, for the test's own consumer calls. */
function captured(queue: Queue) {
  const sent: unknown[] = [];
  vi.spyOn(queue, "send").mockImplementation(async (body) => {
    sent.push(body);
    return { metadata: { metrics: { backlogCount: sent.length, backlogBytes: 0 } } } as never;
  });
  vi.spyOn(queue, "sendBatch").mockImplementation(async (messages) => {
    sent.push(...[...messages].map((message) => message.body));
    return { metadata: { metrics: { backlogCount: sent.length, backlogBytes: 0 } } } as never;
  });
  return sent;
}

describe("background work on webhooks, at least once", () => {
  it("does not let a late (or duplicate) dead letter undo a redelivery asked for since", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"] });
    // Exhausted two hours ago; its dead letter is late, so the cron marks it failed.
    const deliveryId = await seedPendingDelivery(organization, id, {
      attempts: DELIVERY_ATTEMPTS,
      nextAttemptAt: null,
      updatedAt: twoHoursAgo(),
    });
    const sent = captured(env.WEBHOOK_DELIVERIES);
    await runCron();
    const ended = await storedDelivery(deliveryId);
    expect(ended.status).toBe("failed");

    // An admin redelivers it: pending, its message on the queue.
    const deliveriesPath = `${webhooksPath(organization)}/${id}/deliveries`;
    const again = await api("POST", `${deliveriesPath}/${deliveryId}/redeliver`, { key: organization.key });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ id: deliveryId, status: "pending" });
    expect(sent).toContainEqual({ deliveryId, retryUntil: expect.any(String) });

    // The first schedule's dead letter arrives now (late, or a duplicate of one consumed before).
    await consumeDeadLetter<DeliveryMessage>("webhook-deliveries-dead-letters", {
      deliveryId,
      retryUntil: ended.retryUntil,
    });
    // Then the redelivery's message: the receiver is back.
    const received = receiver(200);
    await consume(deliveryId, 1);
    expect(received.filter((post) => post.headers["webhook-id"] === deliveryId)).toHaveLength(1);
    expect((await storedDelivery(deliveryId)).status).toBe("succeeded");
  });

  it("does not fail a whole batch of deliveries over one whose webhook's secret cannot be opened", async () => {
    const poisoned = await setupOrganization();
    const healthy = await setupOrganization();
    const bad = await subscribe(poisoned, { events: ["*"] });
    const good = await subscribe(healthy, { events: ["*"] });
    // Sealed with a key no longer configured (a former key dropped before every row was re-sealed).
    const [row] = await db.select().from(schema.webhooks).where(eq(schema.webhooks.id, bad.id));
    await db
      .update(schema.webhooks)
      .set({ sealedSecret: row!.sealedSecret.replace(/^enc:v1:[^:]*:/, "enc:v1:dropped:") })
      .where(eq(schema.webhooks.id, bad.id));
    const badDelivery = await seedPendingDelivery(poisoned, bad.id);
    const goodDelivery = await seedPendingDelivery(healthy, good.id);
    const received = receiver(200);

    const batch = createMessageBatch<DeliveryMessage>("webhook-deliveries", [
      { id: "poisoned", timestamp: new Date(), attempts: 1, body: { deliveryId: badDelivery } },
      { id: "healthy", timestamp: new Date(), attempts: 1, body: { deliveryId: goodDelivery } },
    ]);
    let thrown: unknown = null;
    await worker.queue(batch, env).catch((error: unknown) => {
      thrown = error;
    });
    // What the healthy message's handling went on doing after the handler threw, settled.
    await eventually(async () => ((await storedDelivery(goodDelivery)).status === "pending" ? undefined : true));
    const result = await getQueueResult(batch, createExecutionContext());
    // A handler that throws has Queues retry every message of the batch it did not ack by then:
    // the poisoned one is dealt with on its own (retried or acked), the batch is not failed.
    expect(thrown).toBeNull();
    expect(result.explicitAcks).toContain("healthy");
    expect([...result.explicitAcks, ...result.retryMessages.map((message) => message.msgId)]).toContain("poisoned");
    expect(received.filter((post) => post.headers["webhook-id"] === goodDelivery)).toHaveLength(1);
  });

  it("re-seals every other webhook's secret when one sealed under a dropped key cannot be opened", async () => {
    const organization = await setupOrganization();
    const lostOne = await subscribe(organization, { events: ["*"] });
    const { id } = await subscribe(organization, { url: "http://receiver.test/other", events: ["*"] });
    // As a key removed before the cron re-sealed everything: that one secret can no longer be opened.
    await db
      .update(schema.webhooks)
      .set({ sealedSecret: "enc:v1:00000000:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" })
      .where(eq(schema.webhooks.id, lostOne.id));
    // A rotation of the encryption key: the current key becomes a former key, a new key is set.
    const newKey = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
    env.SECRETS_ENCRYPTION_OLD_KEYS = env.SECRETS_ENCRYPTION_KEY;
    env.SECRETS_ENCRYPTION_KEY = newKey;
    await runCron();
    await runCron();
    const newKeyId = (await sha256Hex(newKey)).slice(0, 8);
    const [row] = await db.select().from(schema.webhooks).where(eq(schema.webhooks.id, id));
    // The webhook whose secret opens is re-sealed under the new key, so that the former key can go.
    expect(row!.sealedSecret.startsWith(`enc:v1:${newKeyId}:`)).toBe(true);
  });

  it("enqueues the other webhooks' deliveries when one is deleted during the pass", async () => {
    const organization = await setupOrganization();
    const kept = await subscribe(organization, { events: ["*"] });
    const deleted = await subscribe(organization, { events: ["*"] });
    captured(env.WEBHOOK_DELIVERIES);
    const deliveriesOf = (webhookId: string) =>
      db.select().from(schema.webhookDeliveries).where(eq(schema.webhookDeliveries.webhookId, webhookId));
    // Whatever the passes after those requests did, both webhooks are behind every entry again.
    await eventually(async () => (await deliveriesOf(deleted.id)).length > 0 || undefined);
    await db.delete(schema.webhookDeliveries);
    await db.update(schema.webhooks).set({ lastEnqueuedSeq: 0 });
    const deleteWebhook = async () =>
      (await api("DELETE", `${webhooksPath(organization)}/${deleted.id}`, { key: organization.key })).status;
    const ran = beforeWrites([[/^insert into "webhook_deliveries"/, deleteWebhook]]);

    await enqueueDeliveries(env, primaryDatabase(env), organization.organization.id);
    vi.restoreAllMocks();

    expect(ran).toEqual([204]);
    expect((await deliveriesOf(kept.id)).length).toBeGreaterThan(0);
  });

  it("catches up in the cron a lost outbox pass, however many organizations have webhooks", async () => {
    // 500 organizations with an enabled webhook, caught up (nothing to deliver).
    const now = new Date().toISOString();
    const caughtUpWebhook = (id: string, organizationId: string) => ({
      id,
      organizationId,
      url: "http://receiver.test/hook",
      events: ["*"],
      enabled: true,
      sealedSecret: "unused",
      lastEnqueuedSeq: 0,
      createdAt: now,
      updatedAt: now,
    });
    const fillers = Array.from({ length: 500 }, (_, index) => {
      const suffix = String(index).padStart(12, "0");
      return { organization: `00000000-0000-7000-8000-${suffix}`, webhook: `00000000-0000-7000-9000-${suffix}` };
    });
    for (let start = 0; start < fillers.length; start += 4) {
      const chunk = fillers.slice(start, start + 4);
      await db.insert(schema.organizations).values(
        chunk.map(({ organization }) => ({
          id: organization,
          name: `Filler ${organization}`,
          slug: `filler-${organization}`,
          createdAt: now,
          updatedAt: now,
        })),
      );
      await db
        .insert(schema.webhooks)
        .values(chunk.map(({ organization, webhook }) => caughtUpWebhook(webhook, organization)));
    }
    try {
      // One more organization: its entry was sealed, but the pass after the response was lost.
      const organization = await setupOrganization();
      const organizationId = organization.organization.id;
      const webhookId = crypto.randomUUID();
      await db.insert(schema.webhooks).values(caughtUpWebhook(webhookId, organizationId));
      await seedEntries(organizationId, 1, 1000);
      captured(env.WEBHOOK_DELIVERIES);
      await runCron();
      const deliveries = await db
        .select()
        .from(schema.webhookDeliveries)
        .where(eq(schema.webhookDeliveries.webhookId, webhookId));
      expect(deliveries).toHaveLength(1);
    } finally {
      await db.delete(schema.organizations).where(like(schema.organizations.id, "00000000-0000-7000-8000-%"));
    }
  }, 60_000);
});

describe("a delivery of an event the webhook no longer subscribes to", () => {
  const UNSUBSCRIBED = "The webhook no longer subscribes to this event: it was not sent.";

  /** A webhook taking every event, a delivery of `Organization.updated` made then, and a PATCH narrowing it. */
  async function narrowedAfter(delivery: Parameters<typeof seedPendingDelivery>[2]) {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"] });
    const deliveryId = await seedPendingDelivery(organization, id, delivery);
    const patched = await api("PATCH", `${webhooksPath(organization)}/${id}`, {
      key: organization.key,
      body: { events: ["OrganizationMembership.updated"] },
    });
    expect(patched.status).toBe(200);
    return { organization, webhookId: id, deliveryId };
  }

  it("is settled unsent when its message comes: pending, it is not posted", async () => {
    const { deliveryId } = await narrowedAfter({ seq: 5000 });
    await expectSettledUnsent(deliveryId, UNSUBSCRIBED);
  });

  it("is not posted when retried either: the retry is accepted, and settled unsent", async () => {
    const { organization, webhookId, deliveryId } = await narrowedAfter({
      seq: 5001,
      status: "failed",
      attempts: 8,
      nextAttemptAt: null,
    });
    const retried = await api("POST", `${webhooksPath(organization)}/${webhookId}/deliveries/${deliveryId}/retry`, {
      key: organization.key,
    });
    expect(retried.status).toBe(202);
    await expectSettledUnsent(deliveryId, UNSUBSCRIBED);
  });
});

describe("a redelivery whose message the queue refuses", () => {
  it("is answered 202 (it is pending: the cron's sweep sends it), not 500, and keeps its Idempotency-Key", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"] });
    const deliveryId = await seedPendingDelivery(organization, id, { status: "failed", nextAttemptAt: null });
    const sendBatch = env.WEBHOOK_DELIVERIES.sendBatch.bind(env.WEBHOOK_DELIVERIES);
    vi.spyOn(env.WEBHOOK_DELIVERIES, "sendBatch").mockImplementation(async (messages) => {
      if ([...messages].some((message) => (message.body as DeliveryMessage).deliveryId === deliveryId))
        throw new Error("Queue send failed");
      return sendBatch(messages);
    });
    const path = `${webhooksPath(organization)}/${id}/deliveries/${deliveryId}/redeliver`;
    const headers = { "Idempotency-Key": "redeliver-1" };
    const first = await api("POST", path, { key: organization.key, headers });
    expect([first.status, first.body]).toEqual([202, expect.objectContaining({ id: deliveryId, status: "pending" })]);
    expect((await storedDelivery(deliveryId)).status).toBe("pending");
    const again = await api("POST", path, { key: organization.key, headers });
    expect([again.status, again.headers.get("Idempotent-Replayed")]).toEqual([202, "true"]);
  });
});

describe("an outbox pass racing a change of a webhook's events", () => {
  it("does not skip, for good, an entry the new events match when it read the webhook before the change", async () => {
    const organization = await setupOrganization();
    const organizationId = organization.organization.id;
    const webhook = await subscribe(organization, { events: ["OrganizationMembership.updated"] });
    // The pass after its creation is done: the webhook is caught up.
    await eventually(async () => {
      const [row] = await db.select().from(schema.webhooks).where(eq(schema.webhooks.id, webhook.id));
      return row!.lastEnqueuedSeq > 0 || undefined;
    });
    captured(env.WEBHOOK_DELIVERIES);

    // A pass (another request's, after its response) has read the webhook, with its old events.
    // Meanwhile an admin adds `Organization.updated` to them (200), then renames the organization
    // (200): that entry is written after the webhook subscribes to it, and is sealed before the
    // pass reads the log. The passes after those two requests come a moment after the first
    // pass's write.
    let hooked = false;
    let passDone = false;
    let endPass!: () => void;
    const passEnded = new Promise<void>((resolve) => (endPass = resolve));
    const statuses: number[] = [];
    onBoundStatements((query, values, bound) => {
      if (!hooked && /from "activity_log" where .*"hash" is not null/.test(query) && values[0] === organizationId) {
        hooked = true;
        const meanwhile = (async () => {
          const patched = await api("PATCH", `${webhooksPath(organization)}/${webhook.id}`, {
            key: organization.key,
            body: { events: ["OrganizationMembership.updated", "Organization.updated"] },
          });
          const renamed = await api("PATCH", `/api/organizations/${organizationId}`, {
            key: organization.key,
            body: { name: "Renamed" },
          });
          statuses.push(patched.status, renamed.status);
          await eventually(async () => {
            const sealed = await db
              .select()
              .from(schema.activityLog)
              .where(
                and(
                  eq(schema.activityLog.organizationId, organizationId),
                  eq(schema.activityLog.scope, "Organization"),
                  isNotNull(schema.activityLog.hash),
                ),
              );
            return sealed.length > 0 || undefined;
          });
        })();
        return waitingFor(meanwhile, bound);
      }
      const readsWebhooks =
        /^select .* from "webhooks" where \("webhooks"\."organization_id" = \? and "webhooks"\."enabled" = \?\)/;
      if (hooked && !passDone && readsWebhooks.test(query) && values[0] === organizationId) {
        return waitingFor(passEnded, bound);
      }
      return bound;
    });
    await enqueueDeliveries(env, primaryDatabase(env), organizationId);
    passDone = true;
    endPass();
    await new Promise((resolve) => setTimeout(resolve, 500));
    vi.restoreAllMocks();
    expect(statuses).toEqual([200, 200]);
    // And the cron, which catches up lost passes.
    captured(env.WEBHOOK_DELIVERIES);
    await runCron();

    const listed = await api("GET", `${webhooksPath(organization)}/${webhook.id}/deliveries`, {
      key: organization.key,
    });
    expect(listed.status).toBe(200);
    // The rename happened after the webhook subscribed to `Organization.updated`: it is delivered.
    expect(listed.body.results.map((delivery: { event: string }) => delivery.event)).toContain("Organization.updated");
  });
});

describe("a receiver holding consecutive deliveries", () => {
  it("recomputes each entry's hash from the previous one's, dashboards' entries included", async () => {
    const organization = await setupOrganization();
    const projectId = organization.project.id;
    const { id } = await subscribe(organization, { events: ["*"] });
    const received = receiver(200);
    const dashboard = await api("POST", `/api/environments/${projectId}/dashboards`, {
      key: organization.key,
      body: { name: "Weekly" },
    });
    expect(dashboard.status).toBe(201);
    const sharingPath = `/api/environments/${projectId}/dashboards/${dashboard.body.id}/sharing`;
    expect((await api("PATCH", sharingPath, { key: organization.key, body: { enabled: true } })).status).toBe(200);
    const deliveriesPath = `${webhooksPath(organization)}/${id}/deliveries`;
    // Webhook.created, Dashboard.created, SharingConfiguration.enabled.
    const deliveries: { id: string }[] = await eventually(async () => {
      const { results, count } = (await api("GET", deliveriesPath, { key: organization.key })).body;
      const done = results.every((delivery: { status: string }) => delivery.status === "succeeded");
      return count >= 3 && done ? results : undefined;
    });
    type Delivered = Record<string, unknown> & {
      type: string;
      seq: number;
      hash: string;
      user: { id: number } | null;
      detail: { name: unknown; changes: unknown; context: unknown };
    };
    const payloads = deliveries
      .map(({ id }) => JSON.parse(received.find((post) => post.headers["webhook-id"] === id)!.body) as Delivered)
      .sort((left, right) => left.seq - right.seq);

    const checked = [];
    let previousHash = payloads[0]!.hash;
    for (const entry of payloads.slice(1)) {
      const { detail, user } = entry;
      // docs/activity-log.md, "Tamper evidence": the canonical JSON of the fields an entry carries.
      const canonical = {
        activity: entry.activity,
        api_key_id: entry.api_key_id,
        created_at: entry.created_at,
        dashboard_id: entry.dashboard_id,
        detail: JSON.stringify({ name: detail.name, changes: detail.changes, context: detail.context }),
        id: entry.id,
        is_system: entry.is_system,
        item_id: entry.item_id,
        organization_id: entry.organization_id,
        project_id: entry.project_id,
        request_id: entry.request_id,
        scope: entry.scope,
        seq: entry.seq,
        user_id: user?.id ?? null,
      };
      checked.push([entry.type, (await sha256Hex(previousHash + JSON.stringify(canonical))) === entry.hash]);
      previousHash = entry.hash;
    }
    expect(checked).toEqual([
      ["Dashboard.created", true],
      ["SharingConfiguration.enabled", true],
    ]);
  });
});
