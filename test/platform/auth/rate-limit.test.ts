import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { exhaustedHourKey, publishExhausted, type ApiKeyHourCounter } from "../../../src/platform/auth/rate-limit";
import { randomBase62, sha256Hex } from "../../../src/platform/ids";
import { api, db, errorBody, setupOrganization } from "../../support/harness";
import { awaitRoomInWindow, freshClientAddress, secondsLeftIn } from "../../support/rate-windows";
import { personalApiKeys } from "../../../src/db/schema";
import { eq } from "drizzle-orm";

/**
 * The worker shares this isolate's `env`: a test sets the hourly limit an operator would
 * configure. The minute's limit is the rate-limiting binding's, set in wrangler.toml and used by
 * the tests as it ships.
 */
const configured = { perHour: env.RATE_LIMIT_PER_HOUR };
function configureHourlyLimit(perHour: number) {
  env.RATE_LIMIT_PER_HOUR = String(perHour);
}
afterEach(() => {
  env.RATE_LIMIT_PER_HOUR = configured.perHour;
  vi.restoreAllMocks();
});

/** The stored row of a key, found by its hash. */
async function keyRowOf(key: string) {
  const [row] = await db
    .select()
    .from(personalApiKeys)
    .where(eq(personalApiKeys.secureValue, await sha256Hex(key)));
  return row!;
}

/** Requests a key may make in a minute (`API_KEY_MINUTE_LIMITER` in wrangler.toml). */
const PER_MINUTE = 480;

/** Keys an address may have refused in a minute (`AUTH_FAILURE_LIMITER` in wrangler.toml). */
const REFUSED_KEYS_PER_ADDRESS = 30;

async function requestTimes(count: number, path: string, key: string) {
  const statuses = new Set<number>();
  for (let index = 0; index < count; index += 1) statuses.add((await api("GET", path, { key })).status);
  return [...statuses];
}

const hourCounterOf = async (key: string) =>
  env.API_KEY_HOUR_COUNTER.get(env.API_KEY_HOUR_COUNTER.idFromName(await sha256Hex(key)));

/**
 * What the key's hourly counter holds: its hour's count (null: none), how many entries it keeps
 * in all (the count, and the last report numbered by each reporter), and when its alarm rings.
 */
async function hourCounterStorage(key: string) {
  return runInDurableObject(await hourCounterOf(key), async (_counter, state) => ({
    count: state.storage.kv.get<{ count: number }>("hour")?.count ?? null,
    entries: [...state.storage.kv.list()].length,
    alarm: await state.storage.getAlarm(),
  }));
}

/** The counter counts after the response: wait until it has counted `count` requests. */
async function awaitCounted(key: string, count: number) {
  await vi.waitFor(async () => expect((await hourCounterStorage(key)).count).toBe(count));
}

describe("rate limits", () => {
  it("ships with 4800 requests an hour per key (the minute's 480 are tested as shipped, below)", () => {
    expect(configured).toEqual({ perHour: "4800" });
  });

  it("throttles a key past its minute's 480 requests, Retry-After until the minute ends; no other key", async () => {
    const busy = await setupOrganization();
    const quiet = await setupOrganization();
    const path = `/api/organizations/${busy.organization.id}`;
    await awaitRoomInWindow(60_000, 25_000);

    expect(await requestTimes(PER_MINUTE, path, busy.key)).toEqual([200]);
    const throttled = await api("GET", path, { key: busy.key });
    const expectedRetryAfter = secondsLeftIn(60_000);

    expect(throttled.status).toBe(429);
    const retryAfter = Number(throttled.headers.get("Retry-After"));
    expect(Math.abs(retryAfter - expectedRetryAfter)).toBeLessThanOrEqual(1);
    expect(throttled.body).toEqual(
      errorBody("throttled_error", "throttled", `Request was throttled. Expected available in ${retryAfter} seconds.`),
    );
    expect((await api("GET", `/api/organizations/${quiet.organization.id}`, { key: quiet.key })).status).toBe(200);
  }, 60_000);

  it("throttles a key past its hour's limit, with Retry-After until the hour ends", async () => {
    configureHourlyLimit(7);
    const { organization, key } = await setupOrganization();
    const path = `/api/organizations/${organization.id}`;
    await awaitRoomInWindow(3_600_000, 5_000);

    expect(await requestTimes(7, path, key)).toEqual([200]);
    const throttled = await api("GET", path, { key });

    expect(throttled.status).toBe(429);
    expect(Math.abs(Number(throttled.headers.get("Retry-After")) - secondsLeftIn(3_600_000))).toBeLessThanOrEqual(1);
  });

  it("refuses a throttled write before it runs, and counts without a D1 query", async () => {
    configureHourlyLimit(2);
    const { key } = await setupOrganization();
    await awaitRoomInWindow(3_600_000, 5_000);

    const first = await api("GET", "/api/organizations", { key });
    const second = await api("GET", "/api/organizations", { key });
    const refused = await api("POST", "/api/organizations", { key, body: { name: "Not made" } });

    expect(first.status).toBe(200);
    // The list itself is the one query: the key is cached, and counting it costs no D1 query.
    expect(second.cost.queries).toBe(1);
    expect(refused.status).toBe(429);
    expect(refused.cost).toEqual({ queries: 0, rowsRead: 0, rowsWritten: 0 });
  });

  it("throttles refused keys per client address, before any D1 query; no other address nor a known key", async () => {
    const { key } = await setupOrganization();
    const address = freshClientAddress();
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
    expect(
      (await api("GET", "/api/organizations", { key: unknownKey(), headers: from(freshClientAddress()) })).status,
    ).toBe(401);
    expect((await api("GET", "/api/organizations", { key, headers: from(address) })).status).toBe(200);
  });

  it("counts an IPv6 address by its /64, the block one subscriber holds; an IPv4 address whole", async () => {
    const address = freshClientAddress();
    const prefix = address.slice(0, address.lastIndexOf("::"));
    const unknownKey = () => `phx_${randomBase62(44)}`;
    await awaitRoomInWindow(60_000, 10_000);
    const refused = [];
    for (let index = 1; index <= REFUSED_KEYS_PER_ADDRESS; index += 1) {
      const from = { "CF-Connecting-IP": `${prefix}::${index.toString(16)}` };
      refused.push((await api("GET", "/api/organizations", { key: unknownKey(), headers: from })).status);
    }
    expect(new Set(refused)).toEqual(new Set([401]));
    // Another address of the same /64, written in full: past the limit.
    const sameBlock = `${prefix}:0:0:0:ffff`;
    expect(
      (await api("GET", "/api/organizations", { key: unknownKey(), headers: { "CF-Connecting-IP": sameBlock } }))
        .status,
    ).toBe(429);
    // An IPv4 address, mapped or not, is one budget of its own.
    expect(
      (
        await api("GET", "/api/organizations", {
          key: unknownKey(),
          headers: { "CF-Connecting-IP": "::ffff:192.0.2.7" },
        })
      ).status,
    ).toBe(401);
  });
});

describe("guessed tokens", () => {
  it("count against the address's limit of refusals as guessed keys do: invite tokens, then share tokens", async () => {
    const address = freshClientAddress();
    const from = { "CF-Connecting-IP": address };
    const guess = () => `phi_${randomBase62(44)}`;
    await awaitRoomInWindow(60_000, 10_000);

    const answers = [];
    for (let index = 0; index < REFUSED_KEYS_PER_ADDRESS; index += 1) {
      const path = index % 2 === 0 ? "/api/signup" : `/shared/${randomBase62(20)}.json`;
      const response = await api(index % 2 === 0 ? "POST" : "GET", path, {
        headers: from,
        body: index % 2 === 0 ? { token: guess() } : undefined,
      });
      answers.push(response.status);
    }
    expect(new Set(answers)).toEqual(new Set([404]));

    const signup = await api("POST", "/api/signup", { headers: from, body: { token: guess() } });
    const preview = await api("GET", `/api/signup/${guess()}`, { headers: from });
    const page = await api("GET", `/shared/${randomBase62(20)}.json`, { headers: from });
    expect([signup.status, preview.status, page.status]).toEqual([429, 429, 429]);
    expect(page.cost.queries).toBe(0);
    expect(
      (
        await api("POST", "/api/signup", {
          headers: { "CF-Connecting-IP": freshClientAddress() },
          body: { token: guess() },
        })
      ).status,
    ).toBe(404);
  });
});

describe("the hourly limit, counted after the response", () => {
  it("answers without waiting on the key's hourly counter", async () => {
    const { key } = await setupOrganization();
    const counters = env.API_KEY_HOUR_COUNTER;
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let asked = 0;
    // A counter that answers only once the response is in hand: were it asked on the request's
    // way, the request would never be answered.
    env.API_KEY_HOUR_COUNTER = {
      idFromName: (name: string) => counters.idFromName(name),
      get: (id: DurableObjectId) => ({
        count: async () => {
          asked += 1;
          await held;
          return counters.get(id).count();
        },
      }),
    } as unknown as typeof counters;
    try {
      const response = await api("GET", "/api/users/@me", { key });
      expect(response.status).toBe(200);
      await vi.waitFor(() => expect(asked).toBe(1));
    } finally {
      release();
      env.API_KEY_HOUR_COUNTER = counters;
    }
    await awaitCounted(key, 1);
  });

  it("reports the requests admitted while a report is out together, in one call of the counter", async () => {
    const { key } = await setupOrganization();
    await awaitRoomInWindow(3_600_000, 5_000);
    const counters = env.API_KEY_HOUR_COUNTER;
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const calls: number[] = [];
    env.API_KEY_HOUR_COUNTER = {
      idFromName: (name: string) => counters.idFromName(name),
      get: (id: DurableObjectId) => ({
        count: async (requests: number) => {
          calls.push(requests);
          await held;
          return counters.get(id).count(requests);
        },
      }),
    } as unknown as typeof counters;
    try {
      // The first request's report is held; the next four are admitted meanwhile.
      expect(await requestTimes(1, "/api/users/@me", key)).toEqual([200]);
      await vi.waitFor(() => expect(calls).toEqual([1]));
      expect(await requestTimes(4, "/api/users/@me", key)).toEqual([200]);
      expect(calls).toEqual([1]);
      release();
      await vi.waitFor(() => expect(calls).toEqual([1, 4]));
    } finally {
      release();
      env.API_KEY_HOUR_COUNTER = counters;
    }
    await awaitCounted(key, 5);
  });

  it("answers 429 to the next request of a key exhausted here, and tells other isolates through KV", async () => {
    configureHourlyLimit(3);
    const { key } = await setupOrganization();
    await awaitRoomInWindow(3_600_000, 5_000);

    // In flight together: the counter has counted none of them when the fourth arrives.
    const burst = await Promise.all(Array.from({ length: 4 }, () => api("GET", "/api/users/@me", { key })));
    expect(burst.map((response) => response.status).sort()).toEqual([200, 200, 200, 429]);
    await awaitCounted(key, 3);
    expect((await api("GET", "/api/users/@me", { key })).status).toBe(429);
    await vi.waitFor(async () =>
      expect(await env.API_KEY_CACHE.get(exhaustedHourKey(await sha256Hex(key)), "json")).toMatchObject({ count: 3 }),
    );
  });

  it("answers 429 from the first request an isolate sees of a key exhausted elsewhere", async () => {
    configureHourlyLimit(4);
    const { key } = await setupOrganization();
    await awaitRoomInWindow(3_600_000, 5_000);
    // Elsewhere: four requests counted, the last of which published the hour as used up.
    const counter = await hourCounterOf(key);
    let last = await counter.count();
    for (let index = 1; index < 4; index += 1) last = await counter.count();
    await publishExhausted(env, await sha256Hex(key), last);

    const logged = vi.spyOn(console, "log");
    const response = await api("GET", "/api/users/@me", { key });
    expect(response.status).toBe(429);
    // The request's log line names the key it throttled (its id, never the key).
    const line = logged.mock.calls.map(([text]) => JSON.parse(String(text))).find((entry) => entry.status === 429);
    expect(line).toMatchObject({ status: 429, key_id: (await keyRowOf(key)).id });
    expect(JSON.stringify(line)).not.toContain(key);
    expect(Math.abs(Number(response.headers.get("Retry-After")) - secondsLeftIn(3_600_000))).toBeLessThanOrEqual(1);
    expect(response.body).toEqual(
      errorBody(
        "throttled_error",
        "throttled",
        `Request was throttled. Expected available in ${response.headers.get("Retry-After")} seconds.`,
      ),
    );
  });

  it("goes over the limit by at most the requests in flight where the isolate had not heard of it yet", async () => {
    configureHourlyLimit(10);
    const { key } = await setupOrganization();
    await awaitRoomInWindow(3_600_000, 10_000);
    // This isolate serves the key thrice and hears the counts back: it believes 7 remain.
    expect(await requestTimes(3, "/api/users/@me", key)).toEqual([200]);
    await awaitCounted(key, 3);
    // Elsewhere (another location), the other 7 are used.
    const counter = await hourCounterOf(key);
    for (let index = 0; index < 7; index += 1) await counter.count();

    const inFlight = 5;
    const burst = await Promise.all(Array.from({ length: inFlight }, () => api("GET", "/api/users/@me", { key })));
    const over = burst.filter((response) => response.status === 200).length;
    expect(over).toBeGreaterThanOrEqual(1);
    expect(over).toBeLessThanOrEqual(inFlight);
    // Every request admitted is counted, and once the counts are back nothing more gets through.
    await awaitCounted(key, 10 + over);
    await vi.waitFor(async () => expect((await api("GET", "/api/users/@me", { key })).status).toBe(429));
    const after = await Promise.all(Array.from({ length: inFlight }, () => api("GET", "/api/users/@me", { key })));
    expect(after.map((response) => response.status)).toEqual(Array(inFlight).fill(429));
    await awaitCounted(key, 10 + over);
  });

  it("keeps a key's count until its hour ends, then deletes the counter's storage", async () => {
    const { key } = await setupOrganization();
    await awaitRoomInWindow(3_600_000, 10_000);
    const hourEnd = Date.now() - (Date.now() % 3_600_000) + 3_600_000;
    expect((await api("GET", "/api/users/@me", { key })).status).toBe(200);
    await awaitCounted(key, 1);
    // The count and this isolate's last report.
    expect(await hourCounterStorage(key)).toEqual({ count: 1, entries: 2, alarm: hourEnd });

    expect(await runDurableObjectAlarm(await hourCounterOf(key))).toBe(true);

    expect(await hourCounterStorage(key)).toEqual({ count: null, entries: 0, alarm: null });
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The key's hourly counter, as the worker calls it, through `behaviour` for this key's object
 * only (another test's report may still be on its way to its own); `count` is the real call.
 */
async function counterOfKeyBehaving(
  key: string,
  behaviour: (call: number, count: () => Promise<unknown>, id: DurableObjectId) => Promise<unknown>,
) {
  const counters = env.API_KEY_HOUR_COUNTER;
  const ours = counters.idFromName(await sha256Hex(key));
  const state = { calls: 0, restore: () => (env.API_KEY_HOUR_COUNTER = counters) };
  env.API_KEY_HOUR_COUNTER = {
    idFromName: (name: string) => counters.idFromName(name),
    get: (id: DurableObjectId) => ({
      count: async (...args: Parameters<ApiKeyHourCounter["count"]>) => {
        const real = () => counters.get(id).count(...args);
        if (!id.equals(ours)) return real();
        state.calls += 1;
        return behaviour(state.calls, real, id);
      },
    }),
  } as unknown as typeof counters;
  return state;
}

/** Until the key's hour is published used up in KV, at `count`, for the isolates that have not served it. */
const awaitPublishedUsedUp = async (key: string, count: number) =>
  vi.waitFor(
    async () =>
      expect(await env.API_KEY_CACHE.get(exhaustedHourKey(await sha256Hex(key)), "json")).toMatchObject({ count }),
    { timeout: 3_000 },
  );

describe("the hourly counter failing a report", () => {
  it("counts the requests of a call that failed before counting them, with a later call: the limit holds", async () => {
    configureHourlyLimit(3);
    const { key } = await setupOrganization();
    await awaitRoomInWindow(3_600_000, 15_000);
    // The key's Durable Object fails its first call (overloaded, reset, a deploy), then answers.
    const counter = await counterOfKeyBehaving(key, async (call, count) => {
      if (call === 1) throw new Error("Durable Object is overloaded");
      return count();
    });
    try {
      const statuses: number[] = [];
      for (let index = 0; index < 5; index += 1) {
        statuses.push((await api("GET", "/api/users/@me", { key })).status);
        await sleep(700);
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      expect(counter.calls).toBeGreaterThan(1);
    } finally {
      counter.restore();
    }
  }, 30_000);

  it("counts once a call that failed after counting (its answer lost): the key gets its whole hour", async () => {
    configureHourlyLimit(3);
    const { key } = await setupOrganization();
    await awaitRoomInWindow(3_600_000, 15_000);
    const counter = await counterOfKeyBehaving(key, async (call, count) => {
      const reported = await count();
      if (call === 1) throw new Error("Network connection lost.");
      return reported;
    });
    try {
      const statuses: number[] = [];
      for (let index = 0; index < 4; index += 1) {
        statuses.push((await api("GET", "/api/users/@me", { key })).status);
        await sleep(700);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      counter.restore();
    }
  }, 30_000);

  it("publishes the hour used up when the report that crossed it lost its answer, others counted since", async () => {
    configureHourlyLimit(3);
    const { key } = await setupOrganization();
    await awaitRoomInWindow(3_600_000, 20_000);
    const counters = env.API_KEY_HOUR_COUNTER;
    const counter = await counterOfKeyBehaving(key, async (call, count, id) => {
      const reported = await count();
      if (call === 3) {
        // The third report crossed the limit (3), but its answer was lost; meanwhile another
        // location reported a request it admitted before it knew (4: not the crossing one).
        await counters.get(id).count(1, { reporter: "another-location", sequence: 1 });
        throw new Error("Network connection lost.");
      }
      return reported;
    });
    try {
      for (let index = 0; index < 3; index += 1) {
        expect((await api("GET", "/api/users/@me", { key })).status).toBe(200);
        await sleep(700);
      }
      // Sent again as it was, the third report is answered with the count it made (3): still the
      // one that crossed the limit, it tells the other locations.
      await vi.waitFor(() => expect(counter.calls).toBeGreaterThanOrEqual(4), { timeout: 3_000 });
      await awaitPublishedUsedUp(key, 3);
    } finally {
      counter.restore();
    }
    expect((await hourCounterStorage(key)).count).toBe(4);
  }, 30_000);

  it("reports what a report gave up on, once the counter answers, though the isolate now refuses the key", async () => {
    configureHourlyLimit(3);
    const { key } = await setupOrganization();
    await awaitRoomInWindow(3_600_000, 20_000);
    const failing = { on: true };
    const counter = await counterOfKeyBehaving(key, async (_call, count) => {
      if (failing.on) throw new Error("Durable Object is overloaded. Requests queued for too long.");
      return count();
    });
    try {
      for (let index = 0; index < 3; index += 1) {
        expect((await api("GET", "/api/users/@me", { key })).status).toBe(200);
      }
      // Every report has made its calls and given up.
      await vi.waitFor(() => expect(counter.calls).toBeGreaterThanOrEqual(3), { timeout: 5_000 });
      await sleep(1_500);
      failing.on = false;
      // This isolate refuses the key (it knows its three requests), and reports them: the counter
      // publishes the hour as used up for every other isolate.
      expect((await api("GET", "/api/users/@me", { key })).status).toBe(429);
      await awaitPublishedUsedUp(key, 3);
    } finally {
      counter.restore();
    }
  }, 30_000);
});
