import { eq } from "drizzle-orm";
import { expect, vi } from "vitest";
import * as schema from "../../src/db/schema";
import type { DeliveryMessage } from "../../src/organizations/webhooks/deliveries";
import { api, db, setupOrganization } from "./harness";
import { consumeAttempt } from "./queues";

/** Webhooks' receivers in tests: `WEBHOOKS_ALLOW_INSECURE` lets them be plain http, and `fetch` is mocked. */
export const RECEIVER = "http://receiver.test/hook";

export type Organization = Awaited<ReturnType<typeof setupOrganization>>;
export const webhooksPath = (organization: Organization) =>
  `/api/organizations/${organization.organization.id}/webhooks`;

export async function subscribe(organization: Organization, body: Record<string, unknown> = {}) {
  const response = await api("POST", webhooksPath(organization), {
    key: organization.key,
    body: { url: RECEIVER, events: ["OrganizationMembership.updated"], ...body },
  });
  expect(response.status).toBe(201);
  return response.body as { id: string; secret: string };
}

type Received = { url: string; headers: Record<string, string>; body: string };

/** The receivers: capture what is posted to them and answer `status`. */
export function receiver(status: number) {
  const received: Received[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    received.push({ url: request.url, headers: Object.fromEntries(request.headers), body: await request.text() });
    return new Response(status === 200 ? "ok" : "receiver down", { status });
  });
  return received;
}

export async function eventually<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("never happened");
}

/**
 * An entry and its delivery written directly, so that only the test's own consumer call delivers
 * it (pending, unless `fields` say otherwise). `seq`: the entry's number, unique in the organization.
 */
export async function seedPendingDelivery(
  organization: Organization,
  webhookId: string,
  fields: { seq?: number } & Partial<typeof schema.webhookDeliveries.$inferInsert> = {},
) {
  const { seq = 1000, ...delivery } = fields;
  const entryId = crypto.randomUUID();
  await db.insert(schema.activityLog).values({
    id: entryId,
    organizationId: organization.organization.id,
    seq,
    isSystem: true,
    activity: "updated",
    scope: "Organization",
    itemId: organization.organization.id,
    detail: JSON.stringify({ name: "Acme", changes: null, context: null }),
    createdAt: new Date().toISOString(),
    hash: "0".repeat(64),
  });
  const deliveryId = crypto.randomUUID();
  const now = new Date().toISOString();
  await db.insert(schema.webhookDeliveries).values({
    id: deliveryId,
    webhookId,
    entryId,
    event: "Organization.updated",
    status: "pending",
    retryUntil: new Date(Date.now() + 3_600_000).toISOString(),
    createdAt: now,
    updatedAt: now,
    ...delivery,
  });
  return deliveryId;
}

export const storedDelivery = async (deliveryId: string) =>
  (await db.select().from(schema.webhookDeliveries).where(eq(schema.webhookDeliveries.id, deliveryId)))[0]!;

/** The delivery's message consumed: acked, nothing posted, and the delivery settled failed for `reason`. */
export async function expectSettledUnsent(deliveryId: string, reason: string) {
  const received = receiver(200);
  const attempt = await consume(deliveryId, 1);
  expect(attempt.explicitAcks).toEqual(["message"]);
  expect(received).toEqual([]);
  expect(await storedDelivery(deliveryId)).toMatchObject({ status: "failed", nextAttemptAt: null, lastError: reason });
}

/** The delivery's message handed to the consumer as its `attempt`-th attempt. */
export const consume = (deliveryId: string, attempt: number) =>
  consumeAttempt<DeliveryMessage>("webhook-deliveries", { deliveryId }, attempt);
