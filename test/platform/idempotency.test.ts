import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import worker from "../../src/index";
import { IDEMPOTENCY_TTL_MS } from "../../src/platform/idempotency";
import { REPLACED_VALUE_REFUSED } from "../../src/platform/auth/key-policy";
import { sha256Hex } from "../../src/platform/ids";
import { dashboardsPath } from "../environments/dashboard-fixtures";
import { keyIdOf } from "../support/activity-log";
import { expectError } from "../support/error-bodies";
import { addMember, addMembership, api, db, errorBody, setupOrganization } from "../support/harness";
import { MembershipLevel } from "../../src/platform/levels";

type Organization = Awaited<ReturnType<typeof setupOrganization>>;

const createWithKey = (organization: Organization, idempotencyKey: string, body: unknown, key = organization.key) =>
  api("POST", dashboardsPath(organization.project.id), {
    key,
    body,
    headers: { "Idempotency-Key": idempotencyKey },
  });

const dashboardsNamed = async (organization: Organization, name: string) =>
  db
    .select({ id: schema.dashboards.id })
    .from(schema.dashboards)
    .where(and(eq(schema.dashboards.environmentId, organization.project.id), eq(schema.dashboards.name, name)));

const runScheduledPass = () => worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);

const REUSED = errorBody(
  "invalid_request",
  "idempotency_key_reused",
  "This Idempotency-Key was already used with another request (method, path, body, or what @current stood for). " +
    "Use a new key.",
);

/** A retry whose first request succeeded but whose answer cannot be replayed, for `why`. */
const notKept = (why: string) =>
  errorBody(
    "conflict",
    "idempotency_response_not_kept",
    `The request with this Idempotency-Key succeeded, but ${why}; it was not run again.`,
  );

const NOT_KEPT = notKept(
  "its answer was not kept (it showed a secret, which is shown only once, or it was over 64 KiB)",
);

describe("Idempotency-Key on POST", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("creates one dashboard for three parallel retries: the others get the first answer or 409", async () => {
    const organization = await setupOrganization();
    const responses = await Promise.all(
      [1, 2, 3].map(() => createWithKey(organization, "parallel-key", { name: "Parallel" })),
    );

    expect(await dashboardsNamed(organization, "Parallel")).toHaveLength(1);
    const created = responses.filter((response) => response.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const response of created) expect(response.body).toEqual(created[0]!.body);
    for (const response of responses.filter((each) => each.status !== 201)) {
      expectError(
        response,
        409,
        errorBody(
          "conflict",
          "idempotency_key_in_use",
          "A request with this Idempotency-Key is still running. Retry later.",
        ),
      );
      expect(response.headers.get("Retry-After")).toBe("1");
    }
  });

  it("answers a retry after success with the same status and body, marked replayed, and creates nothing", async () => {
    const organization = await setupOrganization();
    const first = await createWithKey(organization, "retry-key", { name: "Retried" });
    expect(first.status).toBe(201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();

    const retry = await createWithKey(organization, "retry-key", { name: "Retried" });

    expect({ status: retry.status, body: retry.body }).toEqual({ status: 201, body: first.body });
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(retry.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    expect(retry.headers.get("Cache-Control")).toBe("no-store");
    expect(await dashboardsNamed(organization, "Retried")).toHaveLength(1);
  });

  it("answers 422 to the same key with another body, and creates nothing", async () => {
    const organization = await setupOrganization();
    expect((await createWithKey(organization, "reused-key", { name: "First body" })).status).toBe(201);

    const reused = await createWithKey(organization, "reused-key", { name: "Second body" });

    expectError(reused, 422, REUSED);
    expect(await dashboardsNamed(organization, "Second body")).toHaveLength(0);
  });

  it("keeps another caller's same key apart", async () => {
    const organization = await setupOrganization();
    const other = await addMember(organization.organization.id, 1);
    const mine = await createWithKey(organization, "shared-key", { name: "Apart" });

    const theirs = await createWithKey(organization, "shared-key", { name: "Apart" }, other.key);

    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.headers.get("Idempotent-Replayed")).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(await dashboardsNamed(organization, "Apart")).toHaveLength(2);
  });

  it("frees the key when the request fails, so that a corrected retry runs", async () => {
    const organization = await setupOrganization();
    const invalid = await createWithKey(organization, "failing-key", { name: 5 });
    expect(invalid.status).toBe(400);

    const corrected = await createWithKey(organization, "failing-key", { name: "Corrected" });

    expect(corrected.status).toBe(201);
    expect(corrected.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("refuses a key over 255 characters, and changes nothing without the header", async () => {
    const organization = await setupOrganization();
    const tooLong = await createWithKey(organization, "k".repeat(256), { name: "Too long" });
    expectError(
      tooLong,
      400,
      errorBody(
        "validation_error",
        "invalid_idempotency_key",
        "The Idempotency-Key header must have 1 to 255 characters.",
      ),
    );

    const plain = [
      await api("POST", dashboardsPath(organization.project.id), { key: organization.key, body: { name: "Plain" } }),
      await api("POST", dashboardsPath(organization.project.id), { key: organization.key, body: { name: "Plain" } }),
    ];
    expect(plain.map((response) => response.status)).toEqual([201, 201]);
    expect(await dashboardsNamed(organization, "Plain")).toHaveLength(2);
  });

  it("keeps no answer that shows a secret: a retry runs nothing again and answers 409", async () => {
    const organization = await setupOrganization();
    const create = () =>
      api("POST", "/api/personal_api_keys", {
        key: organization.key,
        body: { label: "Retried key", scopes: ["*"] },
        headers: { "Idempotency-Key": "secret-key" },
      });
    const first = await create();
    expect(first.status).toBe(201);

    const retry = await create();

    expectError(retry, 409, NOT_KEPT);
    const keys = await api("GET", "/api/personal_api_keys", { key: organization.key });
    expect(keys.body.filter((key: { label: string }) => key.label === "Retried key")).toHaveLength(1);
    const stored = await env.DB.prepare("select * from idempotency_keys where api_key_id = ?")
      .bind(await keyIdOf(organization.owner))
      .all();
    expect(stored.results).toEqual([expect.objectContaining({ response_status: 201, response_body: null })]);
    expect(JSON.stringify(stored.results)).not.toContain("secret-key");
  });

  it("replays no rolled key's new value to its replaced value, which the roll was meant to end", async () => {
    const organization = await setupOrganization();
    const keyId = await keyIdOf(organization.owner);
    const roll = () =>
      api("POST", `/api/personal_api_keys/${keyId}/roll`, {
        key: organization.key,
        body: { overlap_seconds: 600 },
        headers: { "Idempotency-Key": "roll-1" },
      });
    const rolled = await roll();
    expect(rolled.status).toBe(200);
    // Whoever holds the leaked old value, still working through the overlap, sends the same request:
    // refused before any kept answer is looked at, since a replaced value manages no key.
    const replayed = await roll();
    expectError(replayed, 403, errorBody("authentication_error", "permission_denied", REPLACED_VALUE_REFUSED));
    expect(JSON.stringify(replayed.body)).not.toContain(rolled.body.value);
    // The key's current value, retrying the same request, is told its answer was not kept: a secret.
    const retried = await api("POST", `/api/personal_api_keys/${keyId}/roll`, {
      key: rolled.body.value,
      body: { overlap_seconds: 600 },
      headers: { "Idempotency-Key": "roll-1" },
    });
    expectError(retried, 409, NOT_KEPT);
  });

  it("keeps no answer over 64 KiB, and still runs nothing twice", async () => {
    const organization = await setupOrganization();
    const body = { name: "Large", description: "d".repeat(65_536) };
    expect((await createWithKey(organization, "large-key", body)).status).toBe(201);

    const retry = await createWithKey(organization, "large-key", body);

    expectError(retry, 409, NOT_KEPT);
    expect(await dashboardsNamed(organization, "Large")).toHaveLength(1);
  });

  it("answers 409 for an answer sealed with a retired encryption key, and runs nothing twice", async () => {
    const organization = await setupOrganization();
    const body = { name: "Sealed long ago" };
    expect((await createWithKey(organization, "retired-key", body)).status).toBe(201);
    // As after a rotation whose former key was removed: the answer names a key no longer configured.
    const kept = eq(schema.idempotencyKeys.apiKeyId, await keyIdOf(organization.owner));
    const [row] = await db
      .select({ sealed: schema.idempotencyKeys.responseBody })
      .from(schema.idempotencyKeys)
      .where(kept);
    const retired = row!.sealed!.replace(/^enc:v1:[^:]+:/, "enc:v1:retired:");
    await db.update(schema.idempotencyKeys).set({ responseBody: retired }).where(kept);

    const retry = await createWithKey(organization, "retired-key", body);

    expectError(retry, 409, notKept("its answer was sealed with an encryption key since retired"));
    expect(await dashboardsNamed(organization, "Sealed long ago")).toHaveLength(1);
  });

  it("takes over the claim of a request that died, once its lease has ended", async () => {
    const organization = await setupOrganization();
    const stale = new Date(Date.now() - 1_000).toISOString();
    await db.insert(schema.idempotencyKeys).values({
      apiKeyId: await keyIdOf(organization.owner),
      keyHash: await sha256Hex("abandoned-key"),
      claim: "a request that never answered",
      requestHash: "of another request",
      createdAt: stale,
      expiresAt: stale,
    });

    const response = await createWithKey(organization, "abandoned-key", { name: "Taken over" });

    expect(response.status).toBe(201);
    expect(await dashboardsNamed(organization, "Taken over")).toHaveLength(1);
  });

  it("lets a key be used again once its day has passed", async () => {
    const organization = await setupOrganization();
    vi.useFakeTimers({ toFake: ["Date"] });
    const start = Date.now();
    expect((await createWithKey(organization, "daily-key", { name: "Day one" })).status).toBe(201);

    vi.setSystemTime(start + IDEMPOTENCY_TTL_MS - 1_000);
    expectError(await createWithKey(organization, "daily-key", { name: "Day two" }), 422, REUSED);

    vi.setSystemTime(start + IDEMPOTENCY_TTL_MS + 1_000);
    const later = await createWithKey(organization, "daily-key", { name: "Day two" });

    expect(later.status).toBe(201);
    expect(later.headers.get("Idempotent-Replayed")).toBeNull();
    expect(await dashboardsNamed(organization, "Day two")).toHaveLength(1);
  });

  it("deletes expired keys on the cron, and keeps the others", async () => {
    const organization = await setupOrganization();
    await createWithKey(organization, "old-key", { name: "Old" });
    await createWithKey(organization, "new-key", { name: "New" });
    const apiKeyId = await keyIdOf(organization.owner);
    await db
      .update(schema.idempotencyKeys)
      .set({ expiresAt: new Date(Date.now() - 1_000).toISOString() })
      .where(
        and(
          eq(schema.idempotencyKeys.apiKeyId, apiKeyId),
          eq(schema.idempotencyKeys.keyHash, await sha256Hex("old-key")),
        ),
      );

    await runScheduledPass();

    const left = await db
      .select({ keyHash: schema.idempotencyKeys.keyHash })
      .from(schema.idempotencyKeys)
      .where(eq(schema.idempotencyKeys.apiKeyId, apiKeyId));
    expect(left).toEqual([{ keyHash: await sha256Hex("new-key") }]);
  });
});

describe("an idempotency key goes with its request and its API key", () => {
  const keptAnswersOf = (apiKeyId: string) =>
    db
      .select({ keyHash: schema.idempotencyKeys.keyHash })
      .from(schema.idempotencyKeys)
      .where(eq(schema.idempotencyKeys.apiKeyId, apiKeyId));

  const createServiceKey = async (organization: Organization, label: string) => {
    const created = await api("POST", `/api/organizations/${organization.organization.id}/service_keys`, {
      key: organization.key,
      body: { label, scopes: ["dashboard:write"] },
    });
    expect(created.status).toBe(201);
    return created.body as { id: string; value: string };
  };

  /** Every kept answer of `apiKeyId` past its expiry, as a day later; then the cron's pass. */
  const aDayLater = async (apiKeyId: string) => {
    await db
      .update(schema.idempotencyKeys)
      .set({ expiresAt: new Date(Date.now() - 1_000).toISOString() })
      .where(eq(schema.idempotencyKeys.apiKeyId, apiKeyId));
    await runScheduledPass();
  };

  it("leaves a revoked personal key's kept answers to the expiry cron: revoking writes the same few rows", async () => {
    const organization = await setupOrganization();
    const keyId = await keyIdOf(organization.owner);
    const other = await api("POST", "/api/personal_api_keys", {
      key: organization.key,
      body: { label: "revoker", scopes: ["*"] },
    });
    for (const index of [1, 2, 3]) {
      expect((await createWithKey(organization, `kept-${index}`, { name: `Kept ${index}` })).status).toBe(201);
    }
    expect(await keptAnswersOf(keyId)).toHaveLength(3);

    const revoked = await api("DELETE", `/api/personal_api_keys/${keyId}`, { key: other.body.value });
    expect(revoked.status).toBe(204);

    // Deleting them with the key would write a row each, in one statement, however many it kept.
    expect(revoked.cost.rowsWritten).toBeLessThanOrEqual(30);
    expect(await keptAnswersOf(keyId)).toHaveLength(3);
    await aDayLater(keyId);
    expect(await keptAnswersOf(keyId)).toEqual([]);
  });

  it("leaves a service key's kept answers to the expiry cron, revoked or gone with its organization", async () => {
    const organization = await setupOrganization();
    const revoked = await createServiceKey(organization, "revoked");
    const remaining = await createServiceKey(organization, "remaining");
    for (const [index, serviceKey] of [revoked, remaining].entries()) {
      expect((await createWithKey(organization, "sync", { name: `Sync ${index}` }, serviceKey.value)).status).toBe(201);
      expect(await keptAnswersOf(serviceKey.id)).toHaveLength(1);
    }
    const revokePath = `/api/organizations/${organization.organization.id}/service_keys/${revoked.id}`;
    expect((await api("DELETE", revokePath, { key: organization.key })).status).toBe(204);
    const organizationPath = `/api/organizations/${organization.organization.id}`;
    expect((await api("DELETE", organizationPath, { key: organization.key })).status).toBe(204);

    for (const serviceKey of [revoked, remaining]) {
      await aDayLater(serviceKey.id);
      expect(await keptAnswersOf(serviceKey.id)).toEqual([]);
    }
  });

  it("answers 422 to a retry through @current that names another project now, never the first answer", async () => {
    const first = await setupOrganization();
    const second = await setupOrganization();
    await addMembership(second.organization.id, first.owner, MembershipLevel.member);
    const createInCurrent = () =>
      api("POST", "/api/environments/@current/dashboards", {
        key: first.key,
        body: { name: "Acquisition plans" },
        headers: { "Idempotency-Key": "create-plans" },
      });
    expect((await createInCurrent()).status).toBe(201);
    const switched = await api("PATCH", "/api/users/@me", {
      key: first.key,
      body: { set_current_team: second.project.id },
    });
    expect(switched.status).toBe(200);

    const retry = await createInCurrent();

    expectError(retry, 422, REUSED);
    expect(await dashboardsNamed(second, "Acquisition plans")).toEqual([]);
    expect(await dashboardsNamed(first, "Acquisition plans")).toHaveLength(1);
  });
});

describe("a kept request's fingerprint", () => {
  const keysAtStart = { current: env.SECRETS_ENCRYPTION_KEY, old: env.SECRETS_ENCRYPTION_OLD_KEYS };
  afterEach(() => {
    env.SECRETS_ENCRYPTION_KEY = keysAtStart.current;
    env.SECRETS_ENCRYPTION_OLD_KEYS = keysAtStart.old;
  });

  const storedFingerprint = async (organization: Organization, idempotencyKey: string) =>
    (
      await db
        .select({ requestHash: schema.idempotencyKeys.requestHash })
        .from(schema.idempotencyKeys)
        .where(
          and(
            eq(schema.idempotencyKeys.apiKeyId, await keyIdOf(organization.owner)),
            eq(schema.idempotencyKeys.keyHash, await sha256Hex(idempotencyKey)),
          ),
        )
    )[0]!.requestHash;

  it("is keyed: a dump cannot test a guessed password in the body with a plain hash", async () => {
    const organization = await setupOrganization();
    const { project, key } = organization;
    const path = `/api/environments/${project.id}/batch_exports`;
    const config = { user: "posthog", password: "Winter2026!", host: "db.example.com", database: "events" };
    const body = { name: "Events to Postgres", interval: "hour", destination: { type: "Postgres", config } };
    const idempotencyKey = crypto.randomUUID();
    const created = await api("POST", path, { key, body, headers: { "Idempotency-Key": idempotencyKey } });
    expect(created.status).toBe(201);

    const stored = await storedFingerprint(organization, idempotencyKey);
    const keyId = (await sha256Hex(env.SECRETS_ENCRYPTION_KEY!)).slice(0, 8);
    expect(stored).toMatch(new RegExp(`^${keyId}:[0-9a-f]{64}$`));
    // What a reader of a dump could rebuild, the guessed password in it, hashed plainly.
    const guess = await sha256Hex(`POST ${path}  ${project.id}\n${JSON.stringify(body)}`);
    expect(stored).not.toContain(guess);
    // The retry is still told from another request: replayed, or 422 for another body.
    const retry = await api("POST", path, { key, body, headers: { "Idempotency-Key": idempotencyKey } });
    expect([retry.status, retry.headers.get("Idempotent-Replayed"), retry.body.id]).toEqual([
      201,
      "true",
      created.body.id,
    ]);
    const other = { ...body, destination: { type: "Postgres", config: { ...config, password: "Spring2027!" } } };
    expectError(
      await api("POST", path, { key, body: other, headers: { "Idempotency-Key": idempotencyKey } }),
      422,
      REUSED,
    );
  });

  it("replays a retry across a rotation of the encryption key, while the former key is kept", async () => {
    const organization = await setupOrganization();
    const idempotencyKey = crypto.randomUUID();
    const first = await createWithKey(organization, idempotencyKey, { name: "Rotated" });
    expect(first.status).toBe(201);
    env.SECRETS_ENCRYPTION_OLD_KEYS = env.SECRETS_ENCRYPTION_KEY;
    env.SECRETS_ENCRYPTION_KEY = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));

    const retry = await createWithKey(organization, idempotencyKey, { name: "Rotated" });
    expect([retry.status, retry.headers.get("Idempotent-Replayed"), retry.body.id]).toEqual([
      201,
      "true",
      first.body.id,
    ]);
    expectError(await createWithKey(organization, idempotencyKey, { name: "Other" }), 422, REUSED);
    expect(await dashboardsNamed(organization, "Rotated")).toHaveLength(1);
  });
});
