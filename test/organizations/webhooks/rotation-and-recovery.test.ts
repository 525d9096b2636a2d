import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../../src/db/schema";
import worker from "../../../src/index";
import { apiKeyCacheKey } from "../../../src/platform/auth/api-keys";
import { inJsonList } from "../../../src/platform/db";
import { sha256Hex } from "../../../src/platform/ids";
import { MembershipLevel } from "../../../src/platform/levels";
import { keyIdOf } from "../../support/activity-log";
import {
  AUTHENTICATION_FAILED,
  expectError,
  INSUFFICIENT_LEVEL,
  missingScope,
  NOT_FOUND,
} from "../../support/error-bodies";
import { addMember, api, createApiKey, db, ISO_TIMESTAMP, setupOrganization } from "../../support/harness";
import { beforeWrites } from "../../support/races";
import {
  consume,
  eventually,
  receiver,
  RECEIVER,
  seedPendingDelivery,
  storedDelivery,
  subscribe,
  webhooksPath,
  type Organization,
} from "../../support/webhooks";

afterEach(() => vi.restoreAllMocks());

const rotate = (organization: Organization, webhookId: string, body?: unknown) =>
  api("POST", `${webhooksPath(organization)}/${webhookId}/rotate_secret`, { key: organization.key, body });

/** Delivers a new delivery of the webhook now, and answers what the receiver got. */
async function deliverOne(organization: Organization, webhookId: string, seq: number) {
  const received = receiver(200);
  const deliveryId = await seedPendingDelivery(organization, webhookId, { seq });
  await consume(deliveryId, 1);
  const post = received.find((candidate) => candidate.headers["webhook-id"] === deliveryId);
  expect(post).toBeDefined();
  vi.restoreAllMocks();
  return post!;
}

const verifies = (secret: string, post: { body: string; headers: Record<string, string> }) => {
  try {
    new StandardWebhook(secret).verify(post.body, post.headers);
    return true;
  } catch {
    return false;
  }
};

describe("rotating a webhook's secret with an overlap", () => {
  it("signs with both secrets during the overlap, then with the new one only", async () => {
    const organization = await setupOrganization();
    const { id, secret: oldSecret } = await subscribe(organization, { events: ["*"] });

    const rotated = await rotate(organization, id, { overlap_seconds: 3_600 });

    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.secret as string;
    expect(newSecret).toMatch(/^whsec_/);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(3_590_000);
    expect(rotated.body.previous_secret_expires_at).toMatch(ISO_TIMESTAMP);
    const [entry] = (
      await api("GET", `/api/organizations/${organization.organization.id}/activity_log?activity=secret_rotated`, {
        key: organization.key,
      })
    ).body.results;
    expect(entry).toMatchObject({
      scope: "Webhook",
      item_id: id,
      api_key_id: await keyIdOf(organization.owner),
      detail: { context: { overlap_seconds: 3_600 } },
    });
    expect(JSON.stringify(entry)).not.toContain(newSecret.slice(6));

    const during = await deliverOne(organization, id, 2_000);
    expect(during.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/=]+ v1,[A-Za-z0-9+/=]+$/);
    expect(verifies(oldSecret, during)).toBe(true);
    expect(verifies(newSecret, during)).toBe(true);
    expect(verifies(`whsec_${btoa("another secret, 32 bytes long!!!")}`, during)).toBe(false);

    // The overlap ends (as if an hour had passed); the cron drops the old secret.
    await db
      .update(schema.webhooks)
      .set({ previousSecretExpiresAt: new Date(Date.now() - 1_000).toISOString() })
      .where(eq(schema.webhooks.id, id));
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
    const [row] = await db.select().from(schema.webhooks).where(eq(schema.webhooks.id, id));
    expect(row).toMatchObject({ previousSealedSecret: null, previousSecretExpiresAt: null });
    expect(
      (await api("GET", `${webhooksPath(organization)}/${id}`, { key: organization.key })).body
        .previous_secret_expires_at,
    ).toBeNull();

    const after = await deliverOne(organization, id, 2_001);
    expect(after.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect(verifies(newSecret, after)).toBe(true);
    expect(verifies(oldSecret, after)).toBe(false);
  });

  it("stops the old secret at once without an overlap, and bounds the overlap to a day", async () => {
    const organization = await setupOrganization();
    const { id, secret: oldSecret } = await subscribe(organization, { events: ["*"] });
    for (const [body, attr] of [
      [{ overlap_seconds: 86_401 }, "overlap_seconds"],
      [{ overlap_seconds: -1 }, "overlap_seconds"],
      [{ overlap_seconds: 1.5 }, "overlap_seconds"],
      [{ overlap_seconds: "3600" }, "overlap_seconds"],
    ] as const) {
      const refused = await rotate(organization, id, body);
      expect({ body, status: refused.status, attr: refused.body.attr }).toEqual({ body, status: 400, attr });
    }
    const rotated = await rotate(organization, id);
    expect(rotated.body.previous_secret_expires_at).toBeNull();
    const post = await deliverOne(organization, id, 2_000);
    expect(verifies(rotated.body.secret, post)).toBe(true);
    expect(verifies(oldSecret, post)).toBe(false);
    expect((await rotate(organization, id, { overlap_seconds: 86_400 })).status).toBe(200);
  });
});

describe("recovering a webhook's failed deliveries", () => {
  const SINCE = "2026-05-01T00:00:00Z";
  const UNTIL = "2026-07-01T00:00:00Z";
  const inRange = (index: number) => new Date(Date.parse("2026-06-01T00:00:00Z") + index * 1_000).toISOString();

  /** Deliveries of every kind, written directly; those that recovery must send again are returned apart. */
  async function seedHistory(organization: Organization, webhookId: string, otherWebhookId: string) {
    let seq = 3_000;
    const seed = (webhook: string, status: string, createdAt: string) =>
      seedPendingDelivery(organization, webhook, {
        seq: (seq += 1),
        status,
        createdAt,
        updatedAt: createdAt,
        attempts: status === "pending" ? 0 : 8,
      });
    const expected: string[] = [];
    // 150 failed in the range: more than one step's 100.
    for (let index = 0; index < 150; index += 1) expected.push(await seed(webhookId, "failed", inRange(index)));
    const others = [
      await seed(webhookId, "failed", "2026-01-01T00:00:00.000Z"),
      await seed(webhookId, "failed", "2026-08-01T00:00:00.000Z"),
      await seed(webhookId, "succeeded", inRange(500)),
      await seed(otherWebhookId, "failed", inRange(600)),
    ];
    return { expected, others };
  }

  it("sends again exactly the failed deliveries of the range, in bounded steps, in the background", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"] });
    const other = await subscribe(organization, { url: `${RECEIVER}/other`, events: ["*"] });
    const { expected, others } = await seedHistory(organization, id, other.id);
    const received = receiver(200);

    const response = await api("POST", `${webhooksPath(organization)}/${id}/recover`, {
      key: organization.key,
      body: { since: SINCE, until: UNTIL },
    });

    expect(response.status).toBe(202);
    expect(response.body).toEqual({
      webhook_id: id,
      since: "2026-05-01T00:00:00.000Z",
      until: "2026-07-01T00:00:00.000Z",
    });
    const statusesOf = async (ids: string[]) =>
      (
        await db
          .select({ status: schema.webhookDeliveries.status })
          .from(schema.webhookDeliveries)
          .where(inJsonList(schema.webhookDeliveries.id, ids))
      ).map((row) => row.status);
    await expect
      .poll(async () => (await statusesOf(expected)).filter((status) => status === "succeeded").length, {
        timeout: 30_000,
        interval: 200,
      })
      .toBe(expected.length);
    const seeded = new Set([...expected, ...others]);
    const resent = received.map((post) => post.headers["webhook-id"]!).filter((deliveryId) => seeded.has(deliveryId));
    expect(resent.sort()).toEqual([...expected].sort());
    expect((await statusesOf(others)).sort()).toEqual(["failed", "failed", "failed", "succeeded"]);
  }, 60_000);

  it("is for admins with webhook:write, on an enabled webhook of their organization; bad ranges named", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"] });
    const path = `${webhooksPath(organization)}/${id}/recover`;
    for (const [body, attr] of [
      [{ since: UNTIL, until: SINCE }, "until"],
      [{ since: SINCE, until: SINCE }, "until"],
      [{ until: UNTIL }, "since"],
      [{ since: "last week" }, "since"],
      // `until` is now when not sent: a `since` still to come makes the range empty.
      [{ since: new Date(Date.now() + 3_600_000).toISOString() }, "since"],
    ] as const) {
      const refused = await api("POST", path, { key: organization.key, body });
      expect({ body, status: refused.status, type: refused.body.type, attr: refused.body.attr }).toEqual({
        body,
        status: 400,
        type: "validation_error",
        attr,
      });
    }
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    expectError(await api("POST", path, { key: member.key, body: { since: SINCE } }), 403, INSUFFICIENT_LEVEL);
    const reader = await createApiKey(organization.owner, { scopes: ["webhook:read"] });
    expectError(
      await api("POST", path, { key: reader.value, body: { since: SINCE } }),
      403,
      missingScope("webhook:write"),
    );
    const outsider = await setupOrganization();
    expectError(await api("POST", path, { key: outsider.key, body: { since: SINCE } }), 404, NOT_FOUND);
    expectError(
      await api("POST", `${webhooksPath(outsider)}/${id}/recover`, { key: outsider.key, body: { since: SINCE } }),
      404,
      NOT_FOUND,
    );

    await api("PATCH", `${webhooksPath(organization)}/${id}`, { key: organization.key, body: { enabled: false } });
    expectError(await api("POST", path, { key: organization.key, body: { since: SINCE } }), 409, {
      type: "conflict",
      code: "conflict",
      detail: "The webhook is disabled: enable it (PATCH) before recovering its deliveries.",
      attr: null,
    });
    // `until` defaults to now.
    await api("PATCH", `${webhooksPath(organization)}/${id}`, { key: organization.key, body: { enabled: true } });
    const accepted = await api("POST", path, { key: organization.key, body: { since: SINCE } });
    expect(accepted.status).toBe(202);
    expect(Date.now() - Date.parse(accepted.body.until)).toBeLessThan(5_000);
  });

  it("is refused (403) to an admin demoted meanwhile: no failed delivery is made pending again", async () => {
    const organization = await setupOrganization();
    const admin = await addMember(organization.organization.id, MembershipLevel.admin);
    const { id } = await subscribe(organization, { events: ["*"] });
    const failed = await seedPendingDelivery(organization, id, { seq: 4_000, status: "failed", attempts: 8 });
    const sent = vi.spyOn(env.WEBHOOK_DELIVERIES, "sendBatch");
    const demotion = beforeWrites([
      [
        /^update "webhook_deliveries" set "status"/,
        async () =>
          (
            await api("PATCH", `/api/organizations/${organization.organization.id}/members/${admin.user.uuid}`, {
              key: organization.key,
              body: { level: MembershipLevel.member },
            })
          ).status,
      ],
    ]);

    const refused = await api("POST", `${webhooksPath(organization)}/${id}/recover`, {
      key: admin.key,
      body: { since: new Date(Date.now() - 3_600_000).toISOString() },
    });

    vi.restoreAllMocks();
    expect(demotion).toEqual([200]);
    expectError(refused, 403, INSUFFICIENT_LEVEL);
    expect(await storedDelivery(failed)).toMatchObject({ status: "failed", attempts: 8 });
    // The demotion's own event was enqueued; the failed delivery was not.
    const resent = sent.mock.calls.flatMap(([messages]) =>
      [...messages].map((message) => (message.body as { deliveryId: string }).deliveryId),
    );
    expect(resent).not.toContain(failed);
  });
});

describe("webhooks: an admin demoted meanwhile gets no signing secret", () => {
  it("rotate_secret refuses and keeps the secret the receiver knows", async () => {
    const organization = await setupOrganization();
    const admin = await addMember(organization.organization.id, MembershipLevel.admin);
    const webhook = await subscribe(organization);
    const sealedSecret = () =>
      db
        .select({ sealed: schema.webhooks.sealedSecret })
        .from(schema.webhooks)
        .where(eq(schema.webhooks.id, webhook.id));
    const [before] = await sealedSecret();
    const demote = async () =>
      (
        await api("PATCH", `/api/organizations/${organization.organization.id}/members/${admin.user.uuid}`, {
          key: organization.key,
          body: { level: MembershipLevel.member },
        })
      ).status;
    const demotion = beforeWrites([[/^update "webhooks" set "sealed_secret"/, demote]]);
    const rotated = await api("POST", `${webhooksPath(organization)}/${webhook.id}/rotate_secret`, {
      key: admin.key,
      body: {},
    });
    vi.restoreAllMocks();
    expect(demotion).toEqual([200]);
    expect([rotated.status, rotated.body]).toEqual([403, INSUFFICIENT_LEVEL]);
    expect(await sealedSecret()).toEqual([before]);
  });
});

describe("rotating a webhook's secret with a key revoked a moment ago", () => {
  it("is refused (401) while another location's cache still admits the key: a signing secret outlives it", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["OrganizationMembership.updated"] });
    const hook = `${webhooksPath(organization)}/${id}`;
    // A key of the owner's, used once (so a location caches it), then revoked.
    const leaked = await createApiKey(organization.owner);
    expect((await api("GET", hook, { key: leaked.value })).status).toBe(200);
    const entryName = apiKeyCacheKey(await sha256Hex(leaked.value));
    const cached = await eventually(async () => (await env.API_KEY_CACHE.get(entryName)) ?? undefined);
    expect((await api("DELETE", `/api/personal_api_keys/${leaked.id}`, { key: organization.key })).status).toBe(204);
    // As another location's KV keeps it for up to a minute after the revocation.
    await env.API_KEY_CACHE.put(entryName, cached, { expirationTtl: 60 });

    const rotated = await api("POST", `${hook}/rotate_secret`, { key: leaked.value, body: {} });

    expectError(rotated, 401, AUTHENTICATION_FAILED);
    const log = await api("GET", `/api/organizations/${organization.organization.id}/activity_log?scope=Webhook`, {
      key: organization.key,
    });
    expect(log.body.results.map((entry: { activity: string }) => entry.activity)).toEqual(["created"]);
    // The receiver's secret is the one it had: the owner's own rotation still answers with a new one.
    expect((await rotate(organization, id, {})).status).toBe(200);
  });
});
