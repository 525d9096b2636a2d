import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../../src/db/schema";
import { sweepWebhooks } from "../../../src/organizations/webhooks/deliveries";
import { archiveActivityLog } from "../../../src/platform/activity-log/archive";
import { firstEntryOf, seedEntries } from "../../support/activity-log";
import { api, db, setupOrganization } from "../../support/harness";
import { expectSettledUnsent, subscribe, webhooksPath, type Organization } from "../../support/webhooks";

afterEach(() => vi.restoreAllMocks());

const DAY = 86_400_000;

/** Three sealed entries of one day, 40 days ago: the oldest is returned. */
async function seedOldEntries(organization: Organization) {
  const organizationId = organization.organization.id;
  await seedEntries(organizationId, 3, 1000, 40 * DAY);
  return firstEntryOf(organizationId);
}

describe("a delivery whose entry was archived since", () => {
  it("is settled as failed when sent again, not left pending for the cron to send for ever", async () => {
    const organization = await setupOrganization();
    const entry = await seedOldEntries(organization);
    const { id: webhookId } = await subscribe(organization, { events: ["*"] });
    // A delivery of that entry, made back then, that failed (its receiver was down).
    const deliveryId = crypto.randomUUID();
    await db.insert(schema.webhookDeliveries).values({
      id: deliveryId,
      webhookId,
      entryId: entry.id,
      event: `${entry.scope}.${entry.activity}`,
      status: "failed",
      attempts: 8,
      retryUntil: entry.createdAt,
      createdAt: entry.createdAt,
      updatedAt: entry.createdAt,
    });
    // The cron moves entries past the hot window (30 days) into R2.
    await archiveActivityLog(db, env.ACTIVITY_LOG_ARCHIVE, 30);
    expect(await db.select().from(schema.activityLog).where(eq(schema.activityLog.id, entry.id))).toEqual([]);

    const redelivered = await api(
      "POST",
      `${webhooksPath(organization)}/${webhookId}/deliveries/${deliveryId}/redeliver`,
      {
        key: organization.key,
      },
    );
    expect(redelivered.status).toBe(202);
    await expectSettledUnsent(deliveryId, "The event's entry was archived or pruned: it can no longer be delivered.");
    // Settled: the cron's sweep has nothing to send again.
    expect(await sweepWebhooks(env)).toBe(0);
  });
});
