import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { MembershipLevel } from "../../src/platform/levels";
import { KEY_BLOCKED } from "../../src/platform/auth/key-policy";
import { SERVICE_KEY_REFUSED } from "../../src/platform/route";
import {
  addMember,
  api,
  createApiKey,
  createProject,
  db,
  deleteProjectRow,
  errorBody,
  setupOrganization,
  UUID,
} from "../support/harness";
import {
  changedMeanwhile,
  INSUFFICIENT_LEVEL,
  NOT_FOUND,
  expectCreatedUpTo,
  expectError,
} from "../support/error-bodies";
import { beforeWrites } from "../support/races";

const keysPath = (organizationId: string) => `/api/organizations/${organizationId}/service_keys`;
const denied = (detail: string) => errorBody("authentication_error", "permission_denied", detail);
const EXPIRED = errorBody("authentication_error", "api_key_expired", "Personal API key has expired.");
const INVALID = errorBody("authentication_error", "authentication_failed", "Personal API key is invalid.");

async function createServiceKey(organizationId: string, key: string, body: Record<string, unknown> = {}) {
  const created = await api("POST", keysPath(organizationId), {
    key,
    body: { label: "Nightly sync", scopes: ["*"], ...body },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created;
}

describe("service keys", () => {
  it("are created by an admin, returned once with no-store, stored as a hash and listed masked", async () => {
    const { organization, key } = await setupOrganization();
    const created = await createServiceKey(organization.id, key, { scopes: ["organization:write"] });
    expect(created.headers.get("Cache-Control")).toContain("no-store");
    expect(created.body.value).toMatch(/^pho_[0-9A-Za-z]{44}$/);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(UUID),
      organization_id: organization.id,
      label: "Nightly sync",
      scopes: ["organization:write"],
      scoped_teams: [],
      expires_at: null,
      mask_value: `pho_...${created.body.value.slice(-4)}`,
    });
    const [stored] = await db.select().from(schema.serviceApiKeys).where(eq(schema.serviceApiKeys.id, created.body.id));
    expect(JSON.stringify(stored)).not.toContain(created.body.value);
    const { value: _value, ...masked } = created.body;
    const listed = await api("GET", keysPath(organization.id), { key });
    expect(listed.body).toEqual([masked]);
    const retrieved = await api("GET", `${keysPath(organization.id)}/${created.body.id}`, { key });
    expect(retrieved.body).toEqual(masked);
  });

  it("are refused to a plain member, and projects of another organization are refused", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const refused = await api("POST", keysPath(organization.id), {
      key: member.key,
      body: { label: "x", scopes: ["*"] },
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(INSUFFICIENT_LEVEL);
    const other = await setupOrganization();
    const outside = await api("POST", keysPath(organization.id), {
      key,
      body: { label: "x", scopes: ["*"], scoped_teams: [other.project.id] },
    });
    expect(outside.status).toBe(400);
    expect(outside.body.attr).toBe("scoped_teams");
  });

  it("act as the organization, survive their creator leaving, and are logged as the key", async () => {
    const { organization, key: ownerKey } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const serviceKey = (await createServiceKey(organization.id, admin.key)).body;
    const removed = await api("DELETE", `/api/organizations/${organization.id}/members/${admin.user.uuid}`, {
      key: ownerKey,
    });
    expect(removed.status).toBe(204);

    const members = await api("GET", `/api/organizations/${organization.id}/members`, { key: serviceKey.value });
    expect(members.status).toBe(200);
    const domain = await api("POST", `/api/organizations/${organization.id}/domains`, {
      key: serviceKey.value,
      body: { domain: `sync-${serviceKey.id.slice(-8)}.example.com` },
    });
    expect(domain.status, JSON.stringify(domain.body)).toBe(201);
    // PUT, PostHog's full update that Terraform sends, as PATCH.
    const domainPath = `/api/organizations/${organization.id}/domains/${domain.body.id}`;
    for (const [method, body] of [
      ["PATCH", {}],
      ["PUT", { domain: domain.body.domain }],
    ] as const) {
      const updated = await api(method, domainPath, { key: serviceKey.value, body });
      expect(updated.status, method).toBe(200);
      expect(updated.body).toMatchObject({ id: domain.body.id, domain: domain.body.domain });
    }
    const log = await api("GET", `/api/organizations/${organization.id}/activity_log?scope=OrganizationDomain`, {
      key: ownerKey,
    });
    expect(log.body.results[0]).toMatchObject({
      activity: "created",
      user: null,
      api_key_id: serviceKey.id,
      service_key: { id: serviceKey.id, label: serviceKey.label },
    });
    const current = await api("GET", `/api/organizations/@current/members`, { key: serviceKey.value });
    expect(current.status).toBe(200);
  });

  it("reach their own organization alone: another one answers 404", async () => {
    const { organization, key } = await setupOrganization();
    const other = await setupOrganization();
    const serviceKey = (await createServiceKey(organization.id, key)).body.value;
    for (const path of [`/api/organizations/${other.organization.id}/members`, keysPath(other.organization.id)]) {
      const response = await api("GET", path, { key: serviceKey });
      expect(response.status, path).toBe(404);
      expect(response.body, path).toEqual(NOT_FOUND);
    }
  });

  it("are refused every human-only action with 403, whatever their scopes", async () => {
    const { organization, owner, key } = await setupOrganization();
    const created = (await createServiceKey(organization.id, key, { scopes: ["*"] })).body;
    const members = `/api/organizations/${organization.id}/members/${owner.uuid}`;
    const humanOnly: [string, string, unknown?][] = [
      ["GET", "/api/users/@me"],
      ["PATCH", members, { level: MembershipLevel.member }],
      ["DELETE", members],
      ["DELETE", `/api/organizations/${organization.id}`],
      ["POST", keysPath(organization.id), { label: "more", scopes: ["*"] }],
      ["PATCH", `${keysPath(organization.id)}/${created.id}`, { scopes: ["*"] }],
      ["POST", `${keysPath(organization.id)}/${created.id}/roll`, {}],
      ["DELETE", `${keysPath(organization.id)}/${created.id}`],
      ["POST", "/api/personal_api_keys", { label: "mine", scopes: ["*"] }],
      ["GET", "/api/personal_api_keys/@current"],
      // Joining by invite makes a person a member, whatever the token.
      ["POST", "/api/signup", { token: "phi_unknown", first_name: "Bot" }],
      // Inviting adds a member, at a level the invite names: an action on membership.
      ["POST", `/api/organizations/${organization.id}/invites`, { target_email: "bot@example.com", level: 8 }],
      ["POST", `/api/organizations/${organization.id}/invites/bulk`, [{ target_email: "bot@example.com" }]],
      ["DELETE", `/api/organizations/${organization.id}/invites/${created.id}`],
      // The organization's settings hold its key policy; the keys of its members are theirs and its admins'.
      ["PATCH", `/api/organizations/${organization.id}`, { personal_api_key_max_scopes: null }],
      ["PUT", `/api/organizations/${organization.id}`, { name: "Renamed" }],
      ["DELETE", `/api/organizations/${organization.id}/api_keys/${created.id}`],
      ["GET", "/api/projects"],
    ];
    for (const [method, path, body] of humanOnly) {
      const response = await api(method, path, { key: created.value, body });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body, `${method} ${path}`).toEqual(denied(SERVICE_KEY_REFUSED));
    }
  });

  it("manage projects, environments, dashboards, webhooks and exports as an admin, naming no person", async () => {
    const { organization, project, key: ownerKey } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const serviceKey = (await createServiceKey(organization.id, admin.key)).body;
    // Its creator leaves: the key keeps working, and what it creates names no one.
    await api("DELETE", `/api/organizations/${organization.id}/members/${admin.user.uuid}`, { key: ownerKey });
    const asKey = { key: serviceKey.value };
    const created = await api("POST", `/api/organizations/${organization.id}/projects`, {
      ...asKey,
      body: { name: "Made by a key" },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const renamed = await api("PATCH", `/api/environments/${created.body.id}`, { ...asKey, body: { name: "Renamed" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe("Renamed");
    const dashboard = await api("POST", `/api/environments/${project.id}/dashboards`, {
      ...asKey,
      body: { name: "Nightly", tiles: [] },
    });
    expect(dashboard.status, JSON.stringify(dashboard.body)).toBe(201);
    expect(dashboard.body).toMatchObject({ name: "Nightly", created_by: null });
    const versions = await api(
      "GET",
      `/api/environments/${project.id}/dashboards/${dashboard.body.id}/versions`,
      asKey,
    );
    expect(versions.body.results[0]).toMatchObject({ created_by: null });
    const webhook = await api("POST", `/api/organizations/${organization.id}/webhooks`, {
      ...asKey,
      body: { url: "http://127.0.0.1:9/hook", events: ["Dashboard.updated"] },
    });
    expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);
    expect(webhook.body.created_by).toBeNull();
    const exported = await api("POST", `/api/organizations/${organization.id}/activity_log/exports`, {
      ...asKey,
      body: { from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z" },
    });
    expect(exported.status, JSON.stringify(exported.body)).toBe(202);
    expect(exported.body.created_by).toBeNull();
    const deleted = await api("DELETE", `/api/projects/${created.body.id}`, asKey);
    expect(deleted.status).toBe(204);
    // Every entry it made names the key, never a person (user 0 is no one).
    const log = await api("GET", `/api/organizations/${organization.id}/activity_log?limit=20`, asKey);
    expect(log.status).toBe(200);
    const byKey = log.body.results.filter((entry: { api_key_id: string }) => entry.api_key_id === serviceKey.id);
    expect(byKey.map((entry: { scope: string; activity: string }) => `${entry.scope}.${entry.activity}`)).toEqual([
      "Project.deleted",
      "ActivityLogExport.created",
      "Webhook.created",
      "Dashboard.created",
      "Project.updated",
      "Project.created",
    ]);
    const namedKey = { id: serviceKey.id, label: "Nightly sync" };
    for (const entry of byKey) expect(entry).toMatchObject({ user: null, is_system: false, service_key: namedKey });
    const projectLog = await api("GET", `/api/environments/${project.id}/activity_log`, asKey);
    expect(projectLog.body.results[0]).toMatchObject({ scope: "Dashboard", user: null, api_key_id: serviceKey.id });
    // Its webhook outlives its creator's departure: nothing disabled it.
    const hook = await api("GET", `/api/organizations/${organization.id}/webhooks/${webhook.body.id}`, asKey);
    expect(hook.body.enabled).toBe(true);
  });

  it("send an Idempotency-Key like a personal key: a retry answers the first answer", async () => {
    const { organization, key } = await setupOrganization();
    const serviceKey = (await createServiceKey(organization.id, key)).body.value;
    const send = () =>
      api("POST", `/api/organizations/${organization.id}/projects`, {
        key: serviceKey,
        body: { name: "Once" },
        headers: { "Idempotency-Key": "sync-1" },
      });
    const first = await send();
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const retry = await send();
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
  });

  it("describe themselves at /api/service_keys/@current, and a personal key is no service key (404)", async () => {
    const { organization, key } = await setupOrganization();
    const project = await createProject(organization.id);
    const created = (
      await createServiceKey(organization.id, key, { scopes: ["dashboard:read"], scoped_teams: [project.id] })
    ).body;
    const current = await api("GET", "/api/service_keys/@current", { key: created.value });
    expect(current.status).toBe(200);
    expect(current.body).toMatchObject({
      id: created.id,
      organization_id: organization.id,
      owner_kind: "organization",
      level: MembershipLevel.admin,
      scopes: ["dashboard:read"],
      scoped_teams: [project.id],
      expires_at: null,
      rate_limits: { per_minute: expect.any(Number), per_hour: expect.any(Number) },
    });
    expect(current.body.last_used_at).toEqual(expect.any(String));
    const personal = await api("GET", "/api/service_keys/@current", { key });
    expect(personal.status).toBe(404);
    expect(personal.body).toEqual(NOT_FOUND);
  });

  it("are at most 20 an organization, however many are created at once; the others get 400 max_keys", async () => {
    const { organization, key } = await setupOrganization();
    const creates = await Promise.all(
      Array.from({ length: 24 }, (_, index) =>
        api("POST", keysPath(organization.id), { key, body: { label: `parallel ${index}`, scopes: ["project:read"] } }),
      ),
    );
    expectCreatedUpTo(
      creates,
      20,
      errorBody(
        "validation_error",
        "max_keys",
        "An organization can only have 20 service keys. Revoke one before creating another.",
      ),
    );
    expect((await api("GET", keysPath(organization.id), { key })).body).toHaveLength(20);
    const again = await api("POST", keysPath(organization.id), { key, body: { label: "one more", scopes: ["*"] } });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe("max_keys");
  });

  it("are rolled only by a key that may do what they do: the new value goes to the caller", async () => {
    const { organization, key, project } = await setupOrganization();
    const broad = (await createServiceKey(organization.id, key)).body;
    const admin = await addMember(organization.id, MembershipLevel.admin, ["organization:write"]);
    const rolled = await api("POST", `${keysPath(organization.id)}/${broad.id}/roll`, { key: admin.key, body: {} });
    expect(rolled.status).toBe(403);
    expect(rolled.body).toEqual(denied("API key cannot grant scope '*' that it does not have itself"));
    const dashboards = await api("GET", `/api/projects/${project.id}/dashboards`, { key: broad.value });
    expect(dashboards.status).toBe(200);
  });

  it("expire, roll with an overlap and are revoked like personal keys", async () => {
    const { organization, key } = await setupOrganization();
    const created = (await createServiceKey(organization.id, key)).body;
    const keyPath = `${keysPath(organization.id)}/${created.id}`;
    const expiresAt = new Date(Date.now() + 60_000).toISOString();
    const updated = await api("PATCH", keyPath, { key, body: { label: "Renamed", expires_at: expiresAt } });
    expect(updated.body).toMatchObject({ label: "Renamed", expires_at: expiresAt });

    const rolled = await api("POST", `${keyPath}/roll`, { key, body: { overlap_seconds: 600 } });
    expect(rolled.status).toBe(200);
    expect(rolled.headers.get("Cache-Control")).toContain("no-store");
    expect(rolled.body.value).toMatch(/^pho_/);
    for (const value of [created.value, rolled.body.value]) {
      expect((await api("GET", "/api/service_keys/@current", { key: value })).status).toBe(200);
    }
    const again = await api("POST", `${keyPath}/roll`, { key, body: { overlap_seconds: 0 } });
    expect((await api("GET", "/api/service_keys/@current", { key: rolled.body.value })).body).toEqual(INVALID);

    await db
      .update(schema.serviceApiKeys)
      .set({ expiresAt: new Date(Date.now() - 1000).toISOString() })
      .where(eq(schema.serviceApiKeys.id, created.id));
    await api("PATCH", keyPath, { key, body: { label: "Expired" } });
    const expired = await api("GET", "/api/service_keys/@current", { key: again.body.value });
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual(EXPIRED);

    expect((await api("DELETE", keyPath, { key })).status).toBe(204);
    expect((await api("GET", "/api/service_keys/@current", { key: again.body.value })).body).toEqual(INVALID);
    const log = await api("GET", `/api/organizations/${organization.id}/activity_log?scope=ServiceKey`, { key });
    expect(log.body.results.map((entry: { activity: string }) => entry.activity)).toEqual([
      "revoked",
      "updated",
      "rolled",
      "rolled",
      "updated",
      "created",
    ]);
  });
});

describe("service key writes by an admin demoted between the request's read and its write", () => {
  afterEach(() => vi.restoreAllMocks());

  it("make, widen or roll no key (403): none would outlive the demotion", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const owners = await createServiceKey(organization.id, key, { scopes: ["organization:read"] });
    const keyPath = `${keysPath(organization.id)}/${owners.body.id}`;
    const memberPath = `/api/organizations/${organization.id}/members/${admin.user.uuid}`;
    const writes: [RegExp, string, string, unknown][] = [
      [/^insert into "service_api_keys"/, "POST", keysPath(organization.id), { label: "Mine", scopes: ["*"] }],
      [/^update "service_api_keys"/, "PATCH", keyPath, { scopes: ["*"] }],
      [/^update "service_api_keys"/, "POST", `${keyPath}/roll`, {}],
    ];
    for (const [write, method, path, body] of writes) {
      const demote = () => api("PATCH", memberPath, { key, body: { level: MembershipLevel.member } });
      const ran = beforeWrites([[write, async () => (await demote()).status]]);
      const refused = await api(method, path, { key: admin.key, body });
      vi.restoreAllMocks();
      expect(ran, `${method} ${path}`).toEqual([200]);
      expect([refused.status, refused.body], `${method} ${path}`).toEqual([403, INSUFFICIENT_LEVEL]);
      await api("PATCH", memberPath, { key, body: { level: MembershipLevel.admin } });
    }
    const listed = await api("GET", keysPath(organization.id), { key });
    // Neither widened nor rolled: as created, its value masked.
    const { value, ...masked } = owners.body;
    expect(listed.body).toEqual([masked]);
    expect(masked.mask_value).toBe(`${value.slice(0, 4)}...${value.slice(-4)}`);
  });
});

describe("service key writes by a personal key revoked or rolled between the request's read and its write", () => {
  afterEach(() => vi.restoreAllMocks());

  it("make, widen or roll no key (401), rolled meanwhile too: none outlives the value that asked", async () => {
    const { organization, owner, key } = await setupOrganization();
    const existing = await createServiceKey(organization.id, key, { scopes: ["organization:read"] });
    const keyPath = `${keysPath(organization.id)}/${existing.body.id}`;
    const writes: [RegExp, string, string, unknown][] = [
      [/^insert into "service_api_keys"/, "POST", keysPath(organization.id), { label: "Mine", scopes: ["*"] }],
      [/^update "service_api_keys"/, "PATCH", keyPath, { scopes: ["*"] }],
      [/^update "service_api_keys"/, "POST", `${keyPath}/roll`, {}],
    ];
    for (const [write, method, path, body] of writes) {
      for (const lose of ["revoke", "roll with an overlap"]) {
        const calling = await createApiKey(owner);
        const callingPath = `/api/personal_api_keys/${calling.id}`;
        const loseValue = () =>
          lose === "revoke"
            ? api("DELETE", callingPath, { key })
            : api("POST", `${callingPath}/roll`, { key, body: { overlap_seconds: 3600 } });
        const ran = beforeWrites([[write, async () => (await loseValue()).status]]);
        const refused = await api(method, path, { key: calling.value, body });
        vi.restoreAllMocks();
        expect(ran, `${method} ${path} (${lose})`).toEqual([lose === "revoke" ? 204 : 200]);
        expect([refused.status, refused.body], `${method} ${path} (${lose})`).toEqual([401, INVALID]);
        if (lose !== "revoke") await api("DELETE", callingPath, { key });
      }
    }
    const { value, ...masked } = existing.body;
    expect((await api("GET", keysPath(organization.id), { key })).body).toEqual([masked]);
    expect(masked.mask_value).toBe(`${value.slice(0, 4)}...${value.slice(-4)}`);
  });
});

const BLOCKED = errorBody("authentication_error", "permission_denied", KEY_BLOCKED);

/** An organization, an admin whose personal key the owner will block, and that block, to run meanwhile. */
async function adminKeyToBlock() {
  const team = await setupOrganization();
  const admin = await addMember(team.organization.id, MembershipLevel.admin);
  const keys = await api("GET", "/api/personal_api_keys", { key: admin.key });
  const [calling] = keys.body as { id: string }[];
  const blockPath = `/api/organizations/${team.organization.id}/api_keys/${calling!.id}`;
  const block = async () => (await api("DELETE", blockPath, { key: team.key })).status;
  return { ...team, admin, block };
}

/** A service key the owner made, with its value. */
async function ownersServiceKey(organizationId: string, ownerKey: string, scopes: string[]) {
  const created = await api("POST", keysPath(organizationId), { key: ownerKey, body: { label: "nightly", scopes } });
  expect(created.status).toBe(201);
  return created.body as { id: string; value: string };
}

// A key an organization's admins blocked makes, changes, rolls or revokes no key that reaches it,
// also when the block lands while the request runs: the write holds it (docs/keys.md).
describe("service key writes by an admin whose key is blocked between the request's read and its write", () => {
  afterEach(() => vi.restoreAllMocks());

  it("makes, widens, rolls or revokes no service key: 403 as the organization's routes then answer", async () => {
    const outcomes: Record<string, unknown> = {};

    // Minting: the blocked key would leave with a fresh admin-level credential the block does not reach.
    const mint = await adminKeyToBlock();
    let blocking = beforeWrites([[/^insert into "service_api_keys"/, mint.block]]);
    const minted = await api("POST", keysPath(mint.organization.id), {
      key: mint.admin.key,
      body: { label: "escape hatch", scopes: ["*"] },
    });
    vi.restoreAllMocks();
    expect(blocking).toEqual([204]);
    const listed = await api("GET", keysPath(mint.organization.id), { key: mint.key });
    outcomes.create = [minted.status, minted.body, listed.body.map((key: { label: string }) => key.label)];

    // Rolling: the new value of the organization's key would go to the blocked key.
    const roll = await adminKeyToBlock();
    const toRoll = await ownersServiceKey(roll.organization.id, roll.key, ["*"]);
    blocking = beforeWrites([[/^update "service_api_keys"/, roll.block]]);
    const rolled = await api("POST", `${keysPath(roll.organization.id)}/${toRoll.id}/roll`, {
      key: roll.admin.key,
      body: {},
    });
    vi.restoreAllMocks();
    expect(blocking).toEqual([204]);
    const stillWorks = await api("GET", "/api/service_keys/@current", { key: toRoll.value });
    outcomes.roll = [rolled.status, rolled.body, typeof rolled.body?.value, stillWorks.status];

    // Widening an existing key's scopes.
    const widen = await adminKeyToBlock();
    const toWiden = await ownersServiceKey(widen.organization.id, widen.key, ["project:read"]);
    blocking = beforeWrites([[/^update "service_api_keys"/, widen.block]]);
    const widened = await api("PATCH", `${keysPath(widen.organization.id)}/${toWiden.id}`, {
      key: widen.admin.key,
      body: { scopes: ["*"] },
    });
    vi.restoreAllMocks();
    expect(blocking).toEqual([204]);
    const [stored] = await db.select().from(schema.serviceApiKeys).where(eq(schema.serviceApiKeys.id, toWiden.id));
    outcomes.update = [widened.status, widened.body, stored!.scopes];

    // Revoking: the organization's automation would stop at the hand of the blocked key.
    const revoke = await adminKeyToBlock();
    const toRevoke = await ownersServiceKey(revoke.organization.id, revoke.key, ["*"]);
    blocking = beforeWrites([[/^delete from "service_api_keys"/, revoke.block]]);
    const revoked = await api("DELETE", `${keysPath(revoke.organization.id)}/${toRevoke.id}`, {
      key: revoke.admin.key,
    });
    vi.restoreAllMocks();
    expect(blocking).toEqual([204]);
    const alive = await api("GET", "/api/service_keys/@current", { key: toRevoke.value });
    outcomes.delete = [revoked.status, revoked.body, alive.status];

    expect(outcomes).toEqual({
      create: [403, BLOCKED, []],
      roll: [403, BLOCKED, "undefined", 200],
      update: [403, BLOCKED, ["project:read"]],
      delete: [403, BLOCKED, 200],
    });
  });
});

describe("a service key whose project was deleted", () => {
  it("still takes a new label or narrower scopes: only a reach sent is checked", async () => {
    const { organization, key } = await setupOrganization();
    const doomed = await createProject(organization.id, { name: "Doomed" });
    const path = `/api/organizations/${organization.id}/service_keys`;
    const created = await api("POST", path, { key, body: { label: "sync", scopes: ["*"], scoped_teams: [doomed.id] } });
    expect(created.status).toBe(201);
    await deleteProjectRow(doomed.id);

    for (const body of [{ label: "sync (old)" }, { scopes: ["dashboard:read"] }]) {
      const patched = await api("PATCH", `${path}/${created.body.id}`, { key, body });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      expect(patched.body).toMatchObject(body);
    }
    const resent = await api("PATCH", `${path}/${created.body.id}`, { key, body: { scoped_teams: [doomed.id] } });
    expect(resent.status).toBe(400);
    expect(resent.body.attr).toBe("scoped_teams");
  });
});

describe("a PATCH landing while another changes the key", () => {
  it("does not bring back the scopes narrowed meanwhile: both hold, or it is refused", async () => {
    const { organization, key } = await setupOrganization();
    const path = `/api/organizations/${organization.id}/service_keys`;
    const created = await api("POST", path, { key, body: { label: "Nightly sync", scopes: ["*"] } });
    expect(created.status).toBe(201);
    const keyPath = `${path}/${created.body.id}`;

    const narrow = async () => {
      const r = await api("PATCH", keyPath, { key, body: { scopes: ["organization:read"] } });
      return r.status;
    };
    const ran = beforeWrites([[/^update "service_api_keys"/, narrow]]);
    const relabel = await api("PATCH", keyPath, { key, body: { label: "renamed" } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);

    const listed = await api("GET", path, { key });
    const after = (listed.body as { id: string; label: string; scopes: string[] }[]).find(
      (k) => k.id === created.body.id,
    )!;
    if (relabel.status === 200) {
      // Both changes must hold: the narrowing is not silently undone back to "*".
      expect({ label: after.label, scopes: after.scopes }).toEqual({ label: "renamed", scopes: ["organization:read"] });
    } else {
      expect([409, 412]).toContain(relabel.status);
      expect(after.scopes).toEqual(["organization:read"]);
    }
  });
});

describe("a service key's creation holds the organization's key policy as read", () => {
  // An owner tightens the policy between an admin's checks and the write: a scope ceiling the
  // admin's key would be held to, or a lifetime the key would outlive.
  const tightenings = [
    { policy: { personal_api_key_max_scopes: ["dashboard:read"] }, key: { label: "every scope", scopes: ["*"] } },
    { policy: { api_key_max_lifetime_days: 30 }, key: { label: "forever", scopes: ["dashboard:read"] } },
  ];

  it.each(tightenings)("makes no key the policy set meanwhile refuses: 409, none made ($key.label)", async (tight) => {
    const { organization, key: ownerKey } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const tighten = async () =>
      (await api("PATCH", `/api/organizations/${organization.id}`, { key: ownerKey, body: tight.policy })).status;
    const ran = beforeWrites([[/^insert into "service_api_keys"/, tighten]]);
    const created = await api("POST", `/api/organizations/${organization.id}/service_keys`, {
      key: admin.key,
      body: tight.key,
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(created, 409, changedMeanwhile("organization's key policy"));
    const keys = await db
      .select({ id: schema.serviceApiKeys.id })
      .from(schema.serviceApiKeys)
      .where(eq(schema.serviceApiKeys.organizationId, organization.id));
    expect(keys).toEqual([]);
  });
});

describe("a key changes no service key that does more than itself", () => {
  it("refuses a narrower admin key's PATCH of a broader service key (403), as it refuses its roll", async () => {
    const { organization, key, project } = await setupOrganization();
    const keysPath = `/api/organizations/${organization.id}/service_keys`;
    const created = await api("POST", keysPath, { key, body: { label: "automation", scopes: ["*"] } });
    expect(created.status).toBe(201);
    const admin = await addMember(organization.id, MembershipLevel.admin, ["organization:write"]);
    const changed = await api("PATCH", `${keysPath}/${created.body.id}`, {
      key: admin.key,
      body: { scopes: ["organization:read"] },
    });
    expectError(changed, 403, denied("API key cannot grant scope '*' that it does not have itself"));
    // The automation keeps what its owner gave it.
    const dashboards = await api("GET", `/api/projects/${project.id}/dashboards`, { key: created.body.value });
    expect(dashboards.status).toBe(200);
  });
});

describe("a roll by a narrower key while a broader key widens the service key", () => {
  it("refuses the roll (409): the narrower key gets no value of a key that now does more", async () => {
    const { organization, key } = await setupOrganization();
    const keysPath = `/api/organizations/${organization.id}/service_keys`;
    const created = await createServiceKey(organization.id, key, { scopes: ["organization:read"] });
    const admin = await addMember(organization.id, MembershipLevel.admin, ["organization:write", "organization:read"]);
    const widen = async () =>
      (await api("PATCH", `${keysPath}/${created.body.id}`, { key, body: { scopes: ["*"] } })).status;
    const ran = beforeWrites([[/^update "service_api_keys" set [^]*"previous_secure_value"/, widen]]);
    const rolled = await api("POST", `${keysPath}/${created.body.id}/roll`, { key: admin.key, body: {} });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(rolled, 409, changedMeanwhile("key"));
    const stored = await api("GET", `${keysPath}/${created.body.id}`, { key });
    expect([stored.body.scopes, stored.body.last_rolled_at]).toEqual([["*"], null]);
  });
});

/** A producer's answer, for a send the test keeps from the queue (the deletion job has not run yet). */
const NOT_SENT = { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } };

/** An organization with a project ("Doomed") its owner deleted: marked, its row still there. */
async function withDoomedProject() {
  const a = await setupOrganization();
  const doomed = await createProject(a.organization.id, { name: "Doomed" });
  vi.spyOn(env.BACKGROUND_JOBS, "send").mockResolvedValue(NOT_SENT as never);
  expect((await api("DELETE", `/api/projects/${doomed.id}`, { key: a.key })).status).toBe(204);
  return { a, doomed };
}

describe("a service key's scoped_teams naming a project marked for deletion", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is refused on create (400 scoped_teams), as a personal key's is", async () => {
    const { a, doomed } = await withDoomedProject();
    const created = await api("POST", keysPath(a.organization.id), {
      key: a.key,
      body: { label: "x", scopes: ["*"], scoped_teams: [doomed.id] },
    });
    expect([created.status, created.body.attr]).toEqual([400, "scoped_teams"]);
  });

  it("is refused on PATCH (400 scoped_teams), as a personal key's is", async () => {
    const { a, doomed } = await withDoomedProject();
    const created = await api("POST", keysPath(a.organization.id), {
      key: a.key,
      body: { label: "x", scopes: ["*"], scoped_teams: [a.project.id] },
    });
    expect(created.status).toBe(201);
    const patched = await api("PATCH", `${keysPath(a.organization.id)}/${created.body.id}`, {
      key: a.key,
      body: { scoped_teams: [a.project.id, doomed.id] },
    });
    expect([patched.status, patched.body.attr]).toEqual([400, "scoped_teams"]);
  });
});
