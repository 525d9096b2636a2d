import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import journal from "../../migrations/meta/_journal.json";
import app from "../../src/index";
import { addMember, api, createApiKey, nextLink, setupOrganization } from "../support/harness";
import { sha256Hex } from "../../src/platform/ids";
import { onBoundStatements } from "../support/races";
import { seedEntries } from "../support/activity-log";
import { MembershipLevel } from "../../src/platform/levels";

/** The Worker with `PUBLIC_BASE_URL` set, as a deployment behind a proxy would have it. */
async function behindProxy(path: string, key: string) {
  const context = createExecutionContext();
  const request = new Request(`http://10.0.0.7:8787${path}`, { headers: { Authorization: `Bearer ${key}` } });
  const response = await app.fetch(request, { ...env, PUBLIC_BASE_URL: "https://api.example.test/" }, context);
  await waitOnExecutionContext(context);
  return (await response.json()) as Record<string, unknown>;
}

/** A browser's preflight: no key, ever. */
const preflight = (origin: string) =>
  exports.default.fetch(
    new Request("http://localhost/api/organizations", {
      method: "OPTIONS",
      headers: {
        Origin: origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type",
      },
    }),
  );

/** `/healthz` as a Worker configured with `overrides` answers it. */
async function healthWith(overrides: Partial<typeof env>) {
  const context = createExecutionContext();
  const response = await app.fetch(new Request("http://localhost/healthz"), { ...env, ...overrides }, context);
  await waitOnExecutionContext(context);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const newestMigration = () => env.TEST_MIGRATIONS.at(-1)!.name;

describe("GET /healthz", () => {
  it("answers ok without a key, after one database read", async () => {
    const response = await api("GET", "/healthz");
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: "ok" });
    expect(response.cost.queries).toBe(1);
    expect(response.cost.rowsRead).toBeLessThanOrEqual(2);
  });

  it("knows the newest migration of migrations/: the journal the Worker bundles lists every file", () => {
    expect(journal.entries.map((entry) => `${entry.tag}.sql`)).toEqual(
      env.TEST_MIGRATIONS.map((migration) => migration.name),
    );
  });

  it("is a 503 naming the key when SECRETS_ENCRYPTION_KEY is missing", async () => {
    expect(await healthWith({ SECRETS_ENCRYPTION_KEY: "" })).toEqual({
      status: 503,
      body: { status: "unavailable", reasons: ["SECRETS_ENCRYPTION_KEY is not set"] },
    });
  });

  it("is a 503 when a key is not 32 bytes of base64, never showing the key", async () => {
    for (const key of ["c2hvcnQ=", "not base64 at all!", "dGVzdCBrZXk6IHNlYWxzIHNlY3JldHMgaW4gdGVzdHM=AAAA"]) {
      const response = await healthWith({ SECRETS_ENCRYPTION_KEY: key });
      expect(response).toEqual({
        status: 503,
        body: { status: "unavailable", reasons: ["SECRETS_ENCRYPTION_KEY is not 32 bytes in base64"] },
      });
      expect(JSON.stringify(response.body)).not.toContain(key);
    }
    const formerKey = await healthWith({ SECRETS_ENCRYPTION_OLD_KEYS: "c2hvcnQ=" });
    expect(formerKey.body.reasons).toEqual(["a key of SECRETS_ENCRYPTION_OLD_KEYS is not 32 bytes in base64"]);
  });

  it("is a 503 naming both migrations when D1 is behind the code, and ok again once migrated", async () => {
    const newest = newestMigration();
    const previous = env.TEST_MIGRATIONS.at(-2)!.name;
    await env.DB.prepare("DELETE FROM d1_migrations WHERE name = ?").bind(newest).run();
    try {
      const response = await api("GET", "/healthz");
      expect(response.status).toBe(503);
      expect(response.body).toEqual({
        status: "unavailable",
        reasons: [`D1 migrations behind: the newest applied is ${previous}, the code needs ${newest}`],
      });
    } finally {
      await env.DB.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(newest).run();
    }
    expect((await api("GET", "/healthz")).status).toBe(200);
  });

  it("is a 503 when no migration was ever applied, with every reason at once", async () => {
    await env.DB.prepare("ALTER TABLE d1_migrations RENAME TO d1_migrations_aside").run();
    try {
      const response = await healthWith({ SECRETS_ENCRYPTION_KEY: "" });
      expect(response).toEqual({
        status: 503,
        body: {
          status: "unavailable",
          reasons: [
            "SECRETS_ENCRYPTION_KEY is not set",
            `D1 migrations not applied: the code needs ${newestMigration()}`,
          ],
        },
      });
    } finally {
      await env.DB.prepare("ALTER TABLE d1_migrations_aside RENAME TO d1_migrations").run();
    }
  });
});

describe("CORS", () => {
  it("answers a preflight from an allowed origin without a key", async () => {
    const response = await preflight("https://app.example.test");
    expect(response.status).toBe(204);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("https://app.example.test");
    expect(response.headers.get("Access-Control-Allow-Headers")).toBe(
      "Authorization,Content-Type,X-D1-Bookmark,X-Request-Id,Idempotency-Key,If-Match,If-None-Match",
    );
  });

  it("allows no other origin", async () => {
    const response = await preflight("https://elsewhere.example.test");
    expect(response.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });

  it("lets an allowed origin read the answer of a real request", async () => {
    const { key } = await setupOrganization();
    const response = await api("GET", "/api/users/@me", { key, headers: { Origin: "https://app.example.test" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("https://app.example.test");
  });
});

describe("the request log", () => {
  afterEach(() => vi.restoreAllMocks());

  it("writes one JSON line per request: ids, route pattern, status, cost; never the key", async () => {
    const { organization, key } = await setupOrganization();
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);

    const response = await api("GET", `/api/organizations/${organization.id}`, {
      key,
      headers: { "X-Request-Id": "req-123" },
    });

    expect(response.headers.get("X-Request-Id")).toBe("req-123");
    expect(log).toHaveBeenCalledTimes(1);
    const line = String(log.mock.calls[0]![0]);
    expect(line).not.toContain(key);
    expect(line).not.toContain(organization.id);
    expect(JSON.parse(line)).toEqual({
      level: "info",
      request_id: "req-123",
      method: "GET",
      route: "/api/organizations/:organization_id",
      status: 200,
      duration_ms: expect.any(Number),
      d1: {
        queries: response.cost.queries,
        rows_read: response.cost.rowsRead,
        rows_written: 0,
        duration_ms: expect.any(Number),
      },
      key_id: expect.any(String),
      user_id: expect.any(Number),
    });
  });

  it("names the route that answered, not another its path also matches", async () => {
    const { key } = await setupOrganization();
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const routes = [];
    for (const path of ["/api/users/@me", "/api/organizations/@current", "/api/projects/@current/dashboards"]) {
      expect((await api("GET", path, { key })).status).toBe(200);
      routes.push(JSON.parse(String(log.mock.calls.at(-1)![0])).route);
    }
    expect(routes).toEqual([
      "/api/users/@me",
      "/api/organizations/:organization_id",
      "/api/projects/:project_id/dashboards",
    ]);
  });
});

describe("every log line", () => {
  afterEach(() => vi.restoreAllMocks());

  const linesOf = (spy: { mock: { calls: unknown[][] } }) => spy.mock.calls.map(([line]) => JSON.parse(String(line)));

  it("names the request it was written in, or the cron or queue run, each run with an id of its own", async () => {
    const { organization, key } = await setupOrganization();
    const domain = await api("POST", `/api/organizations/${organization.id}/domains`, {
      key,
      body: { domain: "logged.example.com" },
    });
    const warnings = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    vi.spyOn(globalThis, "fetch").mockRejectedValue(new Error("resolver down"));
    await api("POST", `/api/organizations/${organization.id}/domains/${domain.body.id}/verify`, {
      key,
      headers: { "X-Request-Id": "req-dns" },
    });
    expect(linesOf(warnings)).toContainEqual(
      expect.objectContaining({ level: "warn", request_id: "req-dns", task: "dns lookup" }),
    );

    // Entries past the deployment's retention: each cron run prunes them and says so.
    const [first, second] = [await setupOrganization(), await setupOrganization()];
    const infos = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const cron = "*/10 * * * *";
    // A queue run's lines are named likewise: the e-mail and webhook dead-letter tests read them.
    await seedEntries(first.organization.id, 2, 1000, 400 * 86_400_000);
    await app.scheduled(createScheduledController({ cron }), env);
    await seedEntries(second.organization.id, 2, 1000, 400 * 86_400_000);
    await app.scheduled(createScheduledController({ cron }), env);
    const pruned = linesOf(infos).filter((line) => String(line.done).startsWith("pruned"));
    expect(pruned).toEqual([
      { level: "info", run_id: expect.any(String), cron, task: "cron", done: expect.any(String) },
      { level: "info", run_id: expect.any(String), cron, task: "cron", done: expect.any(String) },
    ]);
    expect(pruned[0].run_id).not.toBe(pruned[1].run_id);
  });
});

describe("the request log of a failure", () => {
  afterEach(() => vi.restoreAllMocks());

  it("names a failed query's SQL and the database's error, never the values it bound", async () => {
    const { owner } = await setupOrganization();
    // Not in KV yet: the request looks it up in D1, by the hash of its value.
    const fresh = await createApiKey(owner);
    const failed = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const unavailable = async () => {
      throw new Error("D1_ERROR: the database is unavailable");
    };
    onBoundStatements((_query, _values, bound) =>
      Object.assign(bound, { all: unavailable, raw: unavailable, first: unavailable, run: unavailable }),
    );

    const response = await api("GET", "/api/users/@me", { key: fresh.value });

    expect(response.status).toBe(500);
    const line = String(failed.mock.calls.at(-1)![0]);
    expect(line).not.toContain(await sha256Hex(fresh.value));
    expect(JSON.parse(line).error).toMatchObject({
      name: "DrizzleQueryError",
      message: expect.stringMatching(/^Failed query: select /),
      cause: "D1_ERROR: the database is unavailable",
    });
  });
});

describe("work left for after the response", () => {
  afterEach(() => vi.restoreAllMocks());

  /** Every console line, and the JSON warn or error lines of request `requestId` once written (or none in 2 s). */
  function capturedLines() {
    const lines: string[] = [];
    for (const method of ["log", "warn", "error"] as const) {
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    }
    const failuresOf = async (requestId: string) => {
      const failures = () =>
        lines
          .flatMap((line) => (line.startsWith("{") ? [JSON.parse(line) as Record<string, unknown>] : []))
          .filter((line) => line.request_id === requestId && line.level !== "info");
      for (let attempt = 0; attempt < 40 && failures().length === 0; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return failures();
    };
    return { lines, failuresOf };
  }

  /** Statements matching `pattern` fail as D1 does when unavailable, on the binding and on sessions alike. */
  function failingStatements(pattern: RegExp) {
    const unavailable = async () => {
      throw new Error("D1_ERROR: the database is unavailable");
    };
    const failing = (bound: D1PreparedStatement) =>
      Object.assign(bound, { all: unavailable, raw: unavailable, first: unavailable, run: unavailable });
    const prepare = env.DB.prepare.bind(env.DB);
    vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
      const statement = prepare(query);
      const bind = statement.bind.bind(statement);
      if (pattern.test(query)) statement.bind = (...values: unknown[]) => failing(bind(...values));
      return statement;
    });
    onBoundStatements((query, _values, bound) => (pattern.test(query) ? failing(bound) : bound));
  }

  /** KV writes of keys starting with one of `prefixes` refused, as KV refuses a second write within a second. */
  function refusedKvWrites(prefixes: string[]) {
    const put = env.API_KEY_CACHE.put.bind(env.API_KEY_CACHE);
    vi.spyOn(env.API_KEY_CACHE, "put").mockImplementation(async (name, ...rest) => {
      if (prefixes.some((prefix) => String(name).startsWith(prefix))) {
        throw new Error("KV PUT failed: 429 Too Many Requests");
      }
      return put(name, ...rest);
    });
  }

  it("logs a failed write one JSON line naming the request and the task, never the values it bound", async () => {
    const { key, project } = await setupOrganization();
    const dashboard = await api("POST", `/api/environments/${project.id}/dashboards`, { key, body: { name: "Seen" } });
    const sharing = await api("PATCH", `/api/environments/${project.id}/dashboards/${dashboard.body.id}/sharing`, {
      key,
      body: { enabled: true },
    });
    const capture = capturedLines();
    failingStatements(/last_accessed_at|"view_count"/);
    const requests = [
      ["access", `/api/environments/${project.id}/dashboards/${dashboard.body.id}`, key, "record dashboard access"],
      ["view", `/shared/${sharing.body.access_token}.json`, undefined, "record share view"],
    ] as const;
    for (const [id, path, caller, task] of requests) {
      expect((await api("GET", path, { key: caller, headers: { "X-Request-Id": id } })).status).toBe(200);
      expect(await capture.failuresOf(id)).toEqual([
        expect.objectContaining({ level: "warn", task, error: expect.objectContaining({ name: "DrizzleQueryError" }) }),
      ]);
    }
    expect(capture.lines.join("\n")).not.toContain("params:");
  });

  it("logs a KV write refused after the response: @current's guess, a key's used-up hour", async () => {
    const { key } = await setupOrganization();
    const capture = capturedLines();
    refusedKvWrites(["current_environment:", "api_key_hour:"]);
    const current = await api("GET", "/api/projects/@current/dashboards", {
      key,
      headers: { "X-Request-Id": "guess" },
    });
    expect(current.status).toBe(200);
    expect(await capture.failuresOf("guess")).toEqual([
      expect.objectContaining({ level: "warn", task: "remember current environment" }),
    ]);

    const limitAtStart = env.RATE_LIMIT_PER_HOUR;
    env.RATE_LIMIT_PER_HOUR = "2";
    try {
      const other = await setupOrganization();
      for (const id of ["hour-1", "hour-2"]) {
        expect((await api("GET", "/api/users/@me", { key: other.key, headers: { "X-Request-Id": id } })).status).toBe(
          200,
        );
      }
      const failures = [...(await capture.failuresOf("hour-2")), ...(await capture.failuresOf("hour-1"))];
      expect(failures).toEqual([expect.objectContaining({ level: "warn", task: "publish an exhausted hour" })]);
    } finally {
      env.RATE_LIMIT_PER_HOUR = limitAtStart;
    }
  });
});

describe("PUBLIC_BASE_URL", () => {
  it("is the origin of pagination links and of the OpenAPI servers", async () => {
    const { organization, key } = await setupOrganization();
    await addMember(organization.id, MembershipLevel.member);
    const members = `/api/organizations/${organization.id}/members`;

    const page = await behindProxy(`${members}?limit=1`, key);
    const [last] = page.results as { joined_at: string; id: string }[];
    expect(page.next).toBe(nextLink(members, 1, 1, [last!.joined_at, last!.id], "https://api.example.test"));
    const document = await behindProxy("/api/schema", key);
    expect(document.servers).toEqual([{ url: "https://api.example.test", description: "This server" }]);
  });
});

describe("documentation", () => {
  it("sends people who look for it to /docs", async () => {
    // The last two are where PostHog serves its reference.
    for (const path of ["/", "/api", "/api/docs", "/swagger", "/api/schema/swagger-ui", "/api/schema/redoc/"]) {
      const response = await exports.default.fetch(new Request(`http://localhost${path}`), { redirect: "manual" });
      expect(response.status, path).toBe(302);
      expect(response.headers.get("Location"), path).toBe("/docs/");
    }
  });
});
