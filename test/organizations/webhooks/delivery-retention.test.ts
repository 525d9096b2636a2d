import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import * as schema from "../../../src/db/schema";
import worker from "../../../src/index";
import { archiveCutoff, hotDays } from "../../../src/platform/activity-log/archive";
import { pruneDeliveries } from "../../../src/organizations/webhooks/delivery-retention";
import { chunkForInsert, createDatabase, D1Meter } from "../../../src/platform/db";
import { uuid7 } from "../../../src/platform/ids";
import { api, db, setupOrganization } from "../../support/harness";
import { firstEntryOf, seedEntries } from "../../support/activity-log";
import { consume, receiver, storedDelivery, subscribe, webhooksPath, type Organization } from "../../support/webhooks";

const runCron = () => worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();

type Delivery = typeof schema.webhookDeliveries.$inferInsert;

/** `count` deliveries of the webhook, as the outbox writes them, then `fields`. */
const deliveries = (webhookId: string, count: number, fields: Partial<Delivery>): Delivery[] =>
  Array.from({ length: count }, () => ({
    id: uuid7(),
    webhookId,
    entryId: uuid7(),
    event: "Organization.updated",
    status: "succeeded",
    attempts: 1,
    retryUntil: daysAgo(0),
    createdAt: daysAgo(0),
    updatedAt: daysAgo(0),
    ...fields,
  }));

async function insert(rows: Delivery[]) {
  const [first, ...rest] = chunkForInsert(schema.webhookDeliveries, rows).map((chunk) =>
    db.insert(schema.webhookDeliveries).values(chunk),
  );
  if (first) await db.batch([first, ...rest]);
}

async function listed(organization: Organization, webhookId: string) {
  const response = await api("GET", `${webhooksPath(organization)}/${webhookId}/deliveries?limit=100`, {
    key: organization.key,
  });
  expect(response.status).toBe(200);
  const body = response.body as { count: number; results: { id: string; status: string }[] };
  return { count: body.count, ids: body.results.map((delivery) => delivery.id).sort() };
}

describe("finished webhook deliveries leave with their archived events", () => {
  it("deletes the succeeded and failed ones older than the archive window, keeps pending and newer ones", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization);
    const old = daysAgo(hotDays(env.ACTIVITY_LOG_HOT_DAYS) + 2);
    const archived = [
      ...deliveries(id, 2, { createdAt: old }),
      ...deliveries(id, 2, { status: "failed", createdAt: old, lastStatusCode: 500 }),
    ];
    // Still on its schedule, however old: its next attempt settles it.
    const pending = deliveries(id, 1, { status: "pending", createdAt: old, nextAttemptAt: daysAgo(0) });
    const recent = [
      ...deliveries(id, 2, { createdAt: daysAgo(1) }),
      ...deliveries(id, 1, { status: "failed", createdAt: daysAgo(1) }),
    ];
    await insert([...archived, ...pending, ...recent]);
    // Another organization's are held to the same window.
    const other = await setupOrganization();
    const { id: otherId } = await subscribe(other);
    const otherRecent = deliveries(otherId, 1, { createdAt: daysAgo(1) });
    await insert([...deliveries(otherId, 3, { createdAt: old }), ...otherRecent]);

    await runCron();

    const kept = [...pending, ...recent].map((delivery) => delivery.id!).sort();
    expect(await listed(organization, id)).toEqual({ count: kept.length, ids: kept });
    expect(await listed(other, otherId)).toEqual({ count: 1, ids: [otherRecent[0]!.id!] });
    // A second run finds nothing more to delete.
    await runCron();
    expect(await listed(organization, id)).toEqual({ count: kept.length, ids: kept });
  });

  it("keeps one whose event is still in the database (the archive failed): it can be sent again", async () => {
    const organization = await setupOrganization();
    const organizationId = organization.organization.id;
    await seedEntries(organizationId, 3, 1000, (hotDays(env.ACTIVITY_LOG_HOT_DAYS) + 10) * 86_400_000);
    const entry = await firstEntryOf(organizationId);
    const { id } = await subscribe(organization, { events: ["*"] });
    const [failed] = deliveries(id, 1, {
      entryId: entry.id,
      event: `${entry.scope}.${entry.activity}`,
      status: "failed",
      createdAt: entry.createdAt,
    });
    await insert([failed!]);

    // R2 down: the archive step fails (each step runs on its own), and the entry stays in D1.
    const bucketDown = new Proxy({}, { get: () => () => Promise.reject(new Error("R2 is unavailable")) });
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), {
      ...env,
      ACTIVITY_LOG_ARCHIVE: bucketDown as R2Bucket,
    });

    const path = `${webhooksPath(organization)}/${id}/deliveries`;
    expect((await listed(organization, id)).ids).toContain(failed!.id);
    expect((await api("POST", `${path}/${failed!.id}/redeliver`, { key: organization.key })).status).toBe(202);
    const received = receiver(200);
    await consume(failed!.id!, 1);
    vi.restoreAllMocks();
    expect(received).toHaveLength(1);
    expect(await storedDelivery(failed!.id!)).toMatchObject({ status: "succeeded" });
  });

  it("reads along each webhook's index, not every delivery, and goes on past one statement's share", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization);
    const old = daysAgo(hotDays(env.ACTIVITY_LOG_HOT_DAYS) + 2);
    // 1,200 due (three statements' worth), beside 3,000 newer ones a scan would read.
    await insert([...deliveries(id, 1_200, { createdAt: old }), ...deliveries(id, 3_000, { createdAt: daysAgo(1) })]);
    const meter = new D1Meter();
    const cutoff = archiveCutoff(hotDays(env.ACTIVITY_LOG_HOT_DAYS), new Date());

    const deleted = await pruneDeliveries(createDatabase(env.DB.withSession("first-primary"), meter), cutoff);

    expect(deleted).toBe(1_200);
    const webhooks = await db.$count(schema.webhooks);
    expect(meter.queries).toBe(3);
    // About seven a deletion (finding it, its entry's absence, its row and four index entries, its
    // webhook's count), and the webhooks walked by each statement: the 3,000 newer ones, read three
    // times, would pass it.
    expect(meter.rowsRead).toBeLessThanOrEqual(8 * deleted + 3 * webhooks + 50);
    expect(await listed(organization, id)).toMatchObject({ count: 3_000 });
  });
});
