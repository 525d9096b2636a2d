import { listDurableObjectIds } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { nowIso, randomBase62, sha256Hex, uuid7 } from "../../src/platform/ids";
import { apiKeyCacheKey, mintApiKey } from "../../src/platform/auth/api-keys";
import { UNKNOWN_KEY_MEMORY_MS } from "../../src/platform/auth/refused-keys";
import { onBoundStatements } from "../support/races";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  createProject,
  createUser,
  db,
  errorBody,
  setupOrganization,
} from "../support/harness";

const notAuthenticated = errorBody(
  "authentication_error",
  "not_authenticated",
  "Authentication credentials were not provided.",
);
const authenticationFailed = errorBody("authentication_error", "authentication_failed", "Personal API key is invalid.");
const denied = (detail: string) => errorBody("authentication_error", "permission_denied", detail);

describe("authentication", () => {
  it("answers 401 without a key", async () => {
    const { organization } = await setupOrganization();
    const response = await api("GET", `/api/organizations/${organization.id}/projects`);
    expect(response.status).toBe(401);
    expect(response.body).toEqual(notAuthenticated);
  });

  it("answers 401 to another scheme, even with a key in the query string (the header decides)", async () => {
    const { organization, key } = await setupOrganization();
    const basic = await api("GET", `/api/organizations/${organization.id}?personal_api_key=${key}`, {
      headers: { Authorization: `Basic ${key}` },
    });
    expect(basic.status).toBe(401);
    expect(basic.body).toEqual(notAuthenticated);
  });

  it("answers 401 to a malformed key and to an unknown one", async () => {
    const { organization } = await setupOrganization();
    for (const key of ["not-a-key", "phx_short", `phx_${"a".repeat(44)}`]) {
      const response = await api("GET", `/api/organizations/${organization.id}`, { key });
      expect(response.status, key).toBe(401);
      expect(response.body).toEqual(authenticationFailed);
    }
  });

  it("stops accepting a revoked key at once, though it was cached", async () => {
    const { key } = await setupOrganization();
    const created = await api("POST", "/api/personal_api_keys", {
      key,
      body: { label: "short-lived", scopes: ["organization:read"] },
    });
    const shortLived = created.body.value as string;
    expect((await api("GET", "/api/organizations", { key: shortLived })).status).toBe(200);
    expect(await env.API_KEY_CACHE.get(apiKeyCacheKey(await sha256Hex(shortLived)))).not.toBeNull();

    const revoked = await api("DELETE", `/api/personal_api_keys/${created.body.id}`, { key });
    expect(revoked.status).toBe(204);
    const response = await api("GET", "/api/organizations", { key: shortLived });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(authenticationFailed);
  });

  it("costs no D1 query once the key is cached", async () => {
    const { organization, key } = await setupOrganization();
    const cold = await api("GET", `/api/organizations/${organization.id}`, { key });
    const warm = await api("GET", `/api/organizations/${organization.id}`, { key });
    expect(cold.cost.queries).toBe(2);
    expect(warm.cost.queries).toBe(1);
  });

  it("records when a key was last used, after the response", async () => {
    const { key } = await setupOrganization();
    const [own] = (await api("GET", "/api/personal_api_keys", { key })).body;
    await vi.waitFor(async () => {
      const reread = await api("GET", `/api/personal_api_keys/${own.id}`, { key });
      expect(reread.body.last_used_at).toMatch(/^\d{4}-/);
    });
  });
});

const randomKey = () => `phx_${randomBase62(44)}`;

/** The ids of the hourly counters (Durable Objects) created so far. */
async function hourCounterObjects() {
  return new Set((await listDurableObjectIds(env.API_KEY_HOUR_COUNTER)).map((id) => id.toString()));
}
const hourCounterObjectOf = async (key: string) => env.API_KEY_HOUR_COUNTER.idFromName(await sha256Hex(key)).toString();

describe("unknown keys", () => {
  it("are looked up in D1 once, then answered from memory for a few seconds", async () => {
    const key = randomKey();
    const first = await api("GET", "/api/users/@me", { key });
    const again = await api("GET", "/api/users/@me", { key });

    expect([first.status, again.status]).toEqual([401, 401]);
    expect(again.body).toEqual(authenticationFailed);
    expect(first.cost.queries).toBe(1);
    expect(again.cost.queries).toBe(0);
  });

  it("never create an hourly counter (a Durable Object)", async () => {
    const keys = Array.from({ length: 30 }, randomKey);
    for (const key of keys) expect((await api("GET", "/api/organizations", { key })).status).toBe(401);

    const objects = await hourCounterObjects();
    for (const key of keys) expect(objects.has(await hourCounterObjectOf(key))).toBe(false);
  });

  it("counts a known key in its hourly counter", async () => {
    const { key } = await setupOrganization();
    expect((await api("GET", "/api/organizations", { key })).status).toBe(200);
    await vi.waitFor(async () => expect((await hourCounterObjects()).has(await hourCounterObjectOf(key))).toBe(true));
  });

  it("work once stored, after the few seconds an isolate remembers them as unknown", async () => {
    const user = await createUser();
    const minted = await mintApiKey();
    expect((await api("GET", "/api/users/@me", { key: minted.value })).status).toBe(401);
    await db.insert(schema.personalApiKeys).values({
      id: uuid7(),
      userId: user.id,
      label: "stored after a lookup",
      secureValue: minted.secureValue,
      maskValue: minted.maskValue,
      scopes: ["*"],
      scopedOrganizations: [],
      scopedTeams: [],
      createdAt: nowIso(),
    });

    expect((await api("GET", "/api/users/@me", { key: minted.value })).status).toBe(401);
    const later = Date.now() + UNKNOWN_KEY_MEMORY_MS + 1;
    vi.spyOn(Date, "now").mockImplementation(() => later);
    try {
      const response = await api("GET", "/api/users/@me", { key: minted.value });
      expect(response.status).toBe(200);
      expect(response.body.email).toBe(user.email);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it("leave a key made through the API usable at once", async () => {
    const { key } = await setupOrganization();
    const created = await api("POST", "/api/personal_api_keys", { key, body: { label: "new", scopes: ["user:read"] } });
    expect((await api("GET", "/api/users/@me", { key: created.body.value })).status).toBe(200);
  });
});

describe("scopes", () => {
  it("answers 403 naming the missing scope", async () => {
    const { organization, key } = await setupOrganization({ scopes: ["organization:read"] });
    const response = await api("GET", `/api/organizations/${organization.id}/projects`, { key });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(denied("API key missing required scope 'project:read'"));
  });

  it("lets a write scope read, but not a read scope write", async () => {
    const { organization, key } = await setupOrganization({ scopes: ["project:write"] });
    expect((await api("GET", `/api/organizations/${organization.id}/projects`, { key })).status).toBe(200);
    const { key: readOnly } = await addMember(organization.id, 15, ["project:read"]);
    const response = await api("POST", `/api/organizations/${organization.id}/projects`, { key: readOnly, body: {} });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(denied("API key missing required scope 'project:write'"));
  });

  it("lets `*` do everything", async () => {
    const { organization, key } = await setupOrganization({ scopes: ["*"] });
    expect((await api("POST", `/api/organizations/${organization.id}/projects`, { key, body: {} })).status).toBe(201);
  });

  it("keeps a key scoped to one organization out of the others (403), and hides non-members' (404)", async () => {
    const first = await setupOrganization();
    const second = await setupOrganization();
    const scoped = await createApiKey(first.owner, { scopedOrganizations: [first.organization.id] });
    await addMembership(second.organization.id, first.owner, 1);

    const outside = await api("GET", `/api/organizations/${second.organization.id}`, { key: scoped.value });
    expect(outside.status).toBe(403);
    expect(outside.body).toEqual(denied("API key does not have access to the requested organization"));
    expect((await api("GET", `/api/organizations/${first.organization.id}`, { key: scoped.value })).status).toBe(200);

    const third = await setupOrganization();
    const notMember = await api("GET", `/api/organizations/${third.organization.id}`, { key: first.key });
    expect(notMember.status).toBe(404);
    expect(notMember.body).toEqual(errorBody("invalid_request", "not_found", "Not found."));
  });

  it("keeps a key scoped to one project out of the others", async () => {
    const { organization, owner, project } = await setupOrganization();
    const other = await createProject(organization.id);
    const scoped = await createApiKey(owner, { scopedTeams: [project.id] });
    const response = await api("GET", `/api/projects/${other.id}`, { key: scoped.value });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(denied("API key does not have access to the requested project"));
    expect((await api("GET", `/api/projects/${project.id}`, { key: scoped.value })).status).toBe(200);
    const listed = await api("GET", "/api/projects", { key: scoped.value });
    expect(listed.body.results.map((item: { id: number }) => item.id)).toEqual([project.id]);
  });

  it("keeps a key scoped to one project off every organization route; it cannot raise itself by inviting", async () => {
    const { organization, owner, project } = await setupOrganization();
    const projectKey = await createApiKey(owner, { scopedTeams: [project.id] });
    const projectDenied = denied("API key with scoped projects are only supported on project-based views.");

    const invite = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key: projectKey.value,
      body: { target_email: "accomplice@example.com", level: 15 },
    });
    const listOrganizations = await api("GET", "/api/organizations", { key: projectKey.value });
    const createOrganization = await api("POST", "/api/organizations", {
      key: projectKey.value,
      body: { name: "Mine" },
    });
    const createProjectThere = await api("POST", `/api/organizations/${organization.id}/projects`, {
      key: projectKey.value,
      body: { name: "Mine" },
    });

    for (const response of [invite, listOrganizations, createOrganization, createProjectThere]) {
      expect(response.status).toBe(403);
      expect(response.body).toEqual(projectDenied);
    }
    expect((await api("GET", "/api/users/@me", { key: projectKey.value })).status).toBe(200);
    expect((await api("GET", `/api/environments/${project.id}/dashboards`, { key: projectKey.value })).status).toBe(
      200,
    );
    const invites = await api("GET", `/api/organizations/${organization.id}/invites`, {
      key: (await createApiKey(owner)).value,
    });
    expect(invites.body.count).toBe(0);
  });

  it("keeps a key scoped to organizations from creating one", async () => {
    const { organization, owner } = await setupOrganization();
    const scoped = await createApiKey(owner, { scopedOrganizations: [organization.id] });

    const response = await api("POST", "/api/organizations", { key: scoped.value, body: { name: "Elsewhere" } });

    expect(response.status).toBe(403);
    expect(response.body).toEqual(denied("API key with scoped organizations cannot create organizations."));
    expect((await api("GET", "/api/organizations", { key: scoped.value })).body.count).toBe(1);
  });

  it("serves keys scoped to more ids than D1 binds in one statement", async () => {
    const { organization, owner, project } = await setupOrganization();
    const unknownIds = Array.from({ length: 150 }, (_, index) => 60_000_000 + index);
    const manyTeams = await createApiKey(owner, { scopedTeams: [...unknownIds, project.id] });
    const manyOrganizations = await createApiKey(owner, {
      scopedOrganizations: [...unknownIds.map(() => crypto.randomUUID()), organization.id],
    });

    const current = await api("GET", "/api/environments/@current/dashboards", { key: manyTeams.value });
    const projects = await api("GET", "/api/projects", { key: manyTeams.value });
    const organizations = await api("GET", "/api/organizations", { key: manyOrganizations.value });
    const me = await api("GET", "/api/users/@me", { key: manyOrganizations.value });
    const currentOrganization = await api("GET", "/api/organizations/@current", { key: manyOrganizations.value });

    expect([current.status, projects.status, organizations.status, me.status, currentOrganization.status]).toEqual([
      200, 200, 200, 200, 200,
    ]);
    expect(projects.body.results.map((item: { id: number }) => item.id)).toEqual([project.id]);
    expect(currentOrganization.body.id).toBe(organization.id);
  });
});

/**
 * Runs `meanwhile` (another request, to its end) right after the request authenticating with
 * `secureValue` has read its key from D1, and before it writes the key into KV: what a
 * revocation landing in that moment (or a read replica lagging behind it) does.
 */
function betweenKeyReadAndCache(secureValue: string, meanwhile: () => Promise<unknown>) {
  const hook = { ran: false };
  onBoundStatements((query, values, bound) => {
    if (!query.includes("previous_secure_value") || !values.includes(secureValue)) return bound;
    const all = bound.all.bind(bound);
    bound.all = (async () => {
      const result = await all();
      if (!hook.ran) {
        hook.ran = true;
        await meanwhile();
      }
      return result;
    }) as typeof bound.all;
    return bound;
  });
  return hook;
}

describe("a key cached from a read that a change overtook", () => {
  /** A key in steady use: used within the hour (so no `last_used_at` write follows), not in KV now. */
  async function keyInUse(owner: Parameters<typeof createApiKey>[0]) {
    const key = await createApiKey(owner);
    const lastUsedAt = new Date(Date.now() - 60_000).toISOString();
    await db.update(schema.personalApiKeys).set({ lastUsedAt }).where(eq(schema.personalApiKeys.id, key.id));
    return key;
  }

  /** Once the request in flight is done, after its response too: the entry it cached is gone. */
  const uncached = async (value: string) => {
    const entry = apiKeyCacheKey(await sha256Hex(value));
    await vi.waitFor(async () => expect(await env.API_KEY_CACHE.get(entry)).toBeNull());
  };

  it("is forgotten when it was revoked meanwhile: the request in flight passes, the next is 401", async () => {
    const { owner, key: ownerKey } = await setupOrganization();
    const leaked = await keyInUse(owner);
    const hook = betweenKeyReadAndCache(await sha256Hex(leaked.value), async () => {
      expect((await api("DELETE", `/api/personal_api_keys/${leaked.id}`, { key: ownerKey })).status).toBe(204);
    });
    expect((await api("GET", "/api/users/@me", { key: leaked.value })).status).toBe(200);
    vi.restoreAllMocks();
    expect(hook.ran).toBe(true);
    await uncached(leaked.value);
    const response = await api("GET", "/api/users/@me", { key: leaked.value });
    expect([response.status, response.body]).toEqual([401, authenticationFailed]);
  });

  it("is forgotten when it was narrowed meanwhile: the next request has the new scopes", async () => {
    const { organization, owner, key: ownerKey } = await setupOrganization();
    const leaked = await keyInUse(owner);
    const hook = betweenKeyReadAndCache(await sha256Hex(leaked.value), async () => {
      const narrowed = await api("PATCH", `/api/personal_api_keys/${leaked.id}`, {
        key: ownerKey,
        body: { scopes: ["user:read"] },
      });
      expect(narrowed.status).toBe(200);
    });
    await api("GET", "/api/users/@me", { key: leaked.value });
    vi.restoreAllMocks();
    expect(hook.ran).toBe(true);
    await uncached(leaked.value);
    const members = await api("GET", `/api/organizations/${organization.id}/members`, { key: leaked.value });
    expect(members.status).toBe(403);
  });
});

/**
 * Runs `meanwhile` right after the write of `last_used_at` to the key `keyId` (the pass after a
 * response that records a key's use), before that pass caches the key and reads it again.
 */
function afterLastUsedWrite(keyId: string, meanwhile: () => Promise<unknown>) {
  const hook = { ran: false, reread: false };
  const prepare = env.DB.prepare.bind(env.DB);
  vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
    const statement = prepare(query);
    const isUseWrite = query.includes('set "last_used_at"');
    const isLookup = query.includes("previous_secure_value") && query.startsWith("select");
    if (!isUseWrite && !isLookup) return statement;
    const bind = statement.bind.bind(statement);
    statement.bind = (...values: unknown[]) => {
      const bound = bind(...values);
      const all = bound.all.bind(bound);
      const raw = bound.raw.bind(bound);
      const after = async <T>(result: T) => {
        if (isUseWrite && values.includes(keyId) && !hook.ran) {
          await meanwhile();
          hook.ran = true;
        } else if (isLookup && hook.ran) hook.reread = true;
        return result;
      };
      bound.all = (async () => after(await all())) as typeof bound.all;
      bound.raw = (async (options?: { columnNames?: boolean }) =>
        after(await (options?.columnNames ? raw({ columnNames: true }) : raw()))) as typeof bound.raw;
      return bound;
    };
    return statement;
  });
  return hook;
}

describe("recording a key's use, racing a roll with an overlap", () => {
  it("does not leave the replaced value cached as the key's current one, though the key expires first", async () => {
    const { key: ownerKey } = await setupOrganization();
    const created = await api("POST", "/api/personal_api_keys", {
      key: ownerKey,
      body: { label: "deploys", scopes: ["*"], expires_at: new Date(Date.now() + 5 * 60_000).toISOString() },
    });
    expect(created.status).toBe(201);
    const deploy = created.body as { id: string; value: string };
    const hook = afterLastUsedWrite(deploy.id, async () => {
      const rolled = await api("POST", `/api/personal_api_keys/${deploy.id}/roll`, {
        key: ownerKey,
        body: { overlap_seconds: 600 },
      });
      expect(rolled.status).toBe(200);
    });
    // The key's first use: its use is recorded after the response, while the owner rolls it.
    expect((await api("GET", "/api/personal_api_keys/@current", { key: deploy.value })).status).toBe(200);
    await vi.waitFor(() => expect(hook.reread).toBe(true));
    // Cached again as D1 holds it after the roll: a replaced value, never the key's current one.
    const entry = apiKeyCacheKey(await sha256Hex(deploy.value));
    await vi.waitFor(async () =>
      expect(await env.API_KEY_CACHE.get(entry, "json")).toMatchObject({ replacedValue: true }),
    );
    vi.restoreAllMocks();
    // The value the roll replaced works through its overlap, but manages no key.
    const again = await api("POST", `/api/personal_api_keys/${deploy.id}/roll`, { key: deploy.value, body: {} });
    expect([again.status, again.body]).toEqual([
      403,
      denied("A key's replaced value cannot manage keys: use the key's current value"),
    ]);
  });
});
