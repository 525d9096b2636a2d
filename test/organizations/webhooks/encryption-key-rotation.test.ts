import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../../src/db/schema";
import worker from "../../../src/index";
import { sha256Hex } from "../../../src/platform/ids";
import { api, db, setupOrganization } from "../../support/harness";
import { receiver, subscribe, webhooksPath } from "../../support/webhooks";

// The Worker reads its secrets from this `env`: a test changes them as `wrangler secret put` would.
const keysAtStart = { current: env.SECRETS_ENCRYPTION_KEY, old: env.SECRETS_ENCRYPTION_OLD_KEYS };

afterEach(() => {
  env.SECRETS_ENCRYPTION_KEY = keysAtStart.current;
  env.SECRETS_ENCRYPTION_OLD_KEYS = keysAtStart.old;
  vi.restoreAllMocks();
});

const runCron = () => worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);

describe("webhook signing secrets through a rotation of the encryption key (docs/security.md)", () => {
  it("are re-sealed by the cron, so that the former key can go and receivers keep their secrets", async () => {
    const organization = await setupOrganization();
    const { id, secret: oldSecret } = await subscribe(organization, { events: ["*"] });
    const rotated = await api("POST", `${webhooksPath(organization)}/${id}/rotate_secret`, {
      key: organization.key,
      body: { overlap_seconds: 3_600 },
    });
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.secret as string;

    // Steps 1 and 2: the current key becomes a former key, a new key is set.
    const newKey = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
    env.SECRETS_ENCRYPTION_OLD_KEYS = env.SECRETS_ENCRYPTION_KEY;
    env.SECRETS_ENCRYPTION_KEY = newKey;
    // Step 3: the cron re-seals; the documented query then counts no webhook left.
    await runCron();
    const newKeyId = (await sha256Hex(newKey)).slice(0, 8);
    const left = await env.DB.prepare(
      `SELECT count(*) AS left FROM webhooks WHERE sealed_secret NOT LIKE 'enc:v1:' || ?1 || ':%'
         OR previous_sealed_secret NOT LIKE 'enc:v1:' || ?1 || ':%'`,
    )
      .bind(newKeyId)
      .first<{ left: number }>();
    expect(left).toEqual({ left: 0 });
    const [row] = await db.select().from(schema.webhooks).where(eq(schema.webhooks.id, id));
    expect(row!.sealedSecret.startsWith(`enc:v1:${newKeyId}:`)).toBe(true);
    expect(row!.previousSealedSecret!.startsWith(`enc:v1:${newKeyId}:`)).toBe(true);

    // The former key removed: a delivery is still signed with both secrets of the overlap.
    env.SECRETS_ENCRYPTION_OLD_KEYS = "";
    const received = receiver(200);
    const tested = await api("POST", `${webhooksPath(organization)}/${id}/test`, { key: organization.key });
    expect(tested.status).toBe(200);
    const post = received.find((candidate) => candidate.headers["webhook-id"] === tested.body.id)!;
    expect(new StandardWebhook(newSecret).verify(post.body, post.headers)).toMatchObject({ type: "webhook.test" });
    expect(new StandardWebhook(oldSecret).verify(post.body, post.headers)).toMatchObject({ type: "webhook.test" });
  });

  it("are not read while no former key is configured: one sealed under an unknown key fails nothing", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"] });
    // As a key removed before the cron re-sealed everything: that secret can no longer be opened.
    const lost = "enc:v1:00000000:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    await db.update(schema.webhooks).set({ sealedSecret: lost }).where(eq(schema.webhooks.id, id));
    env.SECRETS_ENCRYPTION_OLD_KEYS = "";
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    await runCron();
    const steps = errors.mock.calls.map(([line]) => JSON.parse(String(line)).step);
    expect(steps).not.toContain("re-seal webhook secrets");
    const [row] = await db.select().from(schema.webhooks).where(eq(schema.webhooks.id, id));
    expect(row!.sealedSecret).toBe(lost);
  });
});
