import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { randomBase62 } from "../../src/platform/ids";
import { api, errorBody, setupOrganization } from "../support/harness";

/** The worker shares this isolate's `env`: a test sets the limits an operator would configure. */
const configured = { perMinute: env.RATE_LIMIT_PER_MINUTE, perHour: env.RATE_LIMIT_PER_HOUR };
function configureLimits(perMinute: number, perHour: number) {
  env.RATE_LIMIT_PER_MINUTE = String(perMinute);
  env.RATE_LIMIT_PER_HOUR = String(perHour);
}
afterEach(() => {
  env.RATE_LIMIT_PER_MINUTE = configured.perMinute;
  env.RATE_LIMIT_PER_HOUR = configured.perHour;
});

/**
 * Windows are aligned to the clock: with less than `needMs` left in this one, start in the
 * next, so that the requests cannot straddle two windows.
 */
async function awaitRoomInWindow(windowMs: number, needMs: number) {
  const leftMs = windowMs - (Date.now() % windowMs);
  if (leftMs < needMs) await new Promise((resolve) => setTimeout(resolve, leftMs + 50));
}

/** Keys an address may have refused in a minute (`AUTH_FAILURE_LIMITER` in wrangler.toml). */
const REFUSED_KEYS_PER_ADDRESS = 30;

const secondsLeftIn = (windowMs: number) => Math.ceil((windowMs - (Date.now() % windowMs)) / 1000);

async function requestTimes(count: number, path: string, key: string) {
  const statuses = new Set<number>();
  for (let index = 0; index < count; index += 1) statuses.add((await api("GET", path, { key })).status);
  return [...statuses];
}

describe("rate limits", () => {
  it("ships with 480 requests a minute and 4800 an hour per key", () => {
    expect(configured).toEqual({ perMinute: "480", perHour: "4800" });
  });

  it("throttles a key past its minute's limit, with Retry-After until the minute ends, and no other key", async () => {
    configureLimits(5, 1000);
    const busy = await setupOrganization();
    const quiet = await setupOrganization();
    const path = `/api/organizations/${busy.organization.id}`;
    await awaitRoomInWindow(60_000, 5_000);

    expect(await requestTimes(5, path, busy.key)).toEqual([200]);
    const throttled = await api("GET", path, { key: busy.key });
    const expectedRetryAfter = secondsLeftIn(60_000);

    expect(throttled.status).toBe(429);
    const retryAfter = Number(throttled.headers.get("Retry-After"));
    expect(Math.abs(retryAfter - expectedRetryAfter)).toBeLessThanOrEqual(1);
    expect(throttled.body).toEqual(
      errorBody("throttled_error", "throttled", `Request was throttled. Expected available in ${retryAfter} seconds.`),
    );
    expect((await api("GET", `/api/organizations/${quiet.organization.id}`, { key: quiet.key })).status).toBe(200);
  });

  it("throttles a key past its hour's limit, with Retry-After until the hour ends", async () => {
    configureLimits(100, 7);
    const { organization, key } = await setupOrganization();
    const path = `/api/organizations/${organization.id}`;
    await awaitRoomInWindow(3_600_000, 5_000);

    expect(await requestTimes(7, path, key)).toEqual([200]);
    const throttled = await api("GET", path, { key });

    expect(throttled.status).toBe(429);
    expect(Math.abs(Number(throttled.headers.get("Retry-After")) - secondsLeftIn(3_600_000))).toBeLessThanOrEqual(1);
  });

  it("refuses a throttled write before it runs, and counts without a D1 query", async () => {
    configureLimits(2, 1000);
    const { key } = await setupOrganization();
    await awaitRoomInWindow(60_000, 5_000);

    const first = await api("GET", "/api/organizations", { key });
    const second = await api("GET", "/api/organizations", { key });
    const refused = await api("POST", "/api/organizations", { key, body: { name: "Not made" } });

    expect(first.status).toBe(200);
    // The list itself is the one query: the key is cached, and counting it costs no D1 query.
    expect(second.cost.queries).toBe(1);
    expect(refused.status).toBe(429);
    expect(refused.cost).toEqual({ queries: 0, rowsRead: 0, rowsWritten: 0 });
  });

  it("throttles refused keys per client address, before any D1 query, and no other address nor a known key", async () => {
    const { key } = await setupOrganization();
    // A documentation address (RFC 5737), another in every run of the suite.
    const address = `192.0.2.${1 + Math.floor(Math.random() * 254)}`;
    const from = (ip: string) => ({ "CF-Connecting-IP": ip });
    const unknownKey = () => `phx_${randomBase62(44)}`;
    expect((await api("GET", "/api/organizations", { key })).status).toBe(200);
    await awaitRoomInWindow(60_000, 10_000);

    const refused = [];
    for (let index = 0; index < REFUSED_KEYS_PER_ADDRESS; index += 1) {
      refused.push((await api("GET", "/api/organizations", { key: unknownKey(), headers: from(address) })).status);
    }
    expect(new Set(refused)).toEqual(new Set([401]));
    const over = await api("GET", "/api/organizations", { key: unknownKey(), headers: from(address) });
    const overAgain = await api("GET", "/api/organizations", { key: unknownKey(), headers: from(address) });
    const malformed = await api("GET", "/api/organizations", { key: "phx_short", headers: from(address) });

    expect(over.status).toBe(429);
    const retryAfter = Number(over.headers.get("Retry-After"));
    expect(Math.abs(retryAfter - secondsLeftIn(60_000))).toBeLessThanOrEqual(1);
    expect(over.body).toEqual(
      errorBody("throttled_error", "throttled", `Request was throttled. Expected available in ${retryAfter} seconds.`),
    );
    expect(overAgain.status).toBe(429);
    expect(overAgain.cost.queries).toBe(0);
    expect(malformed.status).toBe(429);
    expect((await api("GET", "/api/organizations", { key: unknownKey(), headers: from("198.51.100.1") })).status).toBe(401);
    expect((await api("GET", "/api/organizations", { key, headers: from(address) })).status).toBe(200);
  });
});
