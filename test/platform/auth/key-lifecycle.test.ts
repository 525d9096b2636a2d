import { env } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../../src/db/schema";
import { MembershipLevel } from "../../../src/platform/levels";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  createProject,
  createUser,
  db,
  deleteProjectRow,
  grantProjectAccess,
  errorBody,
  ISO_TIMESTAMP,
  setupOrganization,
} from "../../support/harness";
import { changedMeanwhile, expectError } from "../../support/error-bodies";
import { apiKeyCacheKey } from "../../../src/platform/auth/api-keys";
import { sha256Hex } from "../../../src/platform/ids";
import { beforeWrites, onBoundStatements } from "../../support/races";

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const EXPIRED = errorBody("authentication_error", "api_key_expired", "Personal API key has expired.");
const INVALID = errorBody("authentication_error", "authentication_failed", "Personal API key is invalid.");
const HOUR_MS = 3_600_000;

/** A key made through the API by the organization's owner, and used once, so that KV holds it. */
async function cachedKey(ownerKey: string, body: Record<string, unknown> = {}) {
  const created = await api("POST", "/api/personal_api_keys", {
    key: ownerKey,
    body: { label: "CI", scopes: ["*"], ...body },
  });
  expect(created.status).toBe(201);
  expect((await api("GET", "/api/personal_api_keys/@current", { key: created.body.value })).status).toBe(200);
  return created.body as { id: string; value: string; mask_value: string };
}

/** The organization's entries about one key, oldest first. */
async function keyEntries(organizationId: string, ownerKey: string, keyId: string) {
  const log = await api("GET", `/api/organizations/${organizationId}/activity_log`, { key: ownerKey });
  expect(log.status).toBe(200);
  return (log.body.results as { item_id: string; activity: string; detail: Record<string, unknown> }[])
    .filter((entry) => entry.item_id === keyId)
    .reverse();
}

describe("PATCH /api/personal_api_keys/:id", () => {
  it("changes label, scopes, scoping and expiry, at once everywhere (the cached key too), and logs it", async () => {
    const { organization, project, key } = await setupOrganization();
    const target = await cachedKey(key);
    const expiresAt = new Date(Date.now() + HOUR_MS).toISOString();

    const response = await api("PATCH", `/api/personal_api_keys/${target.id}/`, {
      key,
      body: {
        label: "deploys",
        scopes: ["user:read"],
        scoped_organizations: [organization.id],
        scoped_teams: [String(project.id)],
        expires_at: expiresAt,
      },
    });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: target.id,
      label: "deploys",
      mask_value: target.mask_value,
      scopes: ["user:read"],
      scoped_organizations: [organization.id],
      scoped_teams: [project.id],
      expires_at: expiresAt,
      last_rolled_at: null,
      previous_value_expires_at: null,
    });
    expect(response.text).not.toContain(target.value);
    expect((await api("GET", `/api/personal_api_keys/${target.id}`, { key })).body).toEqual(response.body);
    const refused = await api("GET", `/api/projects/${project.id}`, { key: target.value });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe("API key missing required scope 'project:read'");
    const [, updated] = await keyEntries(organization.id, key, target.id);
    expect(updated).toMatchObject({
      activity: "updated",
      detail: {
        name: "deploys",
        changes: [
          { field: "label", before: "CI", after: "deploys" },
          { field: "scopes", before: ["*"], after: ["user:read"] },
          { field: "scoped_organizations", before: [], after: [organization.id] },
          { field: "scoped_teams", before: [], after: [project.id] },
          { field: "expires_at", before: null, after: expiresAt },
        ],
      },
    });
  });

  it("logs a narrowing in the organizations the key leaves too", async () => {
    const first = await setupOrganization();
    const second = await setupOrganization();
    await addMembership(second.organization.id, first.owner, MembershipLevel.admin);
    const target = await cachedKey(first.key);

    const narrowed = await api("PATCH", `/api/personal_api_keys/${target.id}`, {
      key: first.key,
      body: { scoped_organizations: [first.organization.id] },
    });

    expect(narrowed.status).toBe(200);
    for (const organization of [first.organization, second.organization]) {
      const entries = await keyEntries(organization.id, first.key, target.id);
      expect(entries.map((entry) => entry.activity)).toEqual(["created", "updated"]);
    }
  });

  it("keeps what is not sent, and clears the expiry with null", async () => {
    const { key } = await setupOrganization();
    const target = await cachedKey(key, { expires_at: new Date(Date.now() + HOUR_MS).toISOString() });

    const cleared = await api("PATCH", `/api/personal_api_keys/${target.id}`, { key, body: { expires_at: null } });
    const untouched = await api("PATCH", `/api/personal_api_keys/${target.id}`, { key, body: {} });

    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ label: "CI", scopes: ["*"], expires_at: null });
    expect(untouched.body).toEqual(cleared.body);
  });

  it("refuses a reach beyond the owner's (400 with attr) and scopes beyond the calling key (403)", async () => {
    const { organization, key } = await setupOrganization();
    const other = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const hidden = await createProject(organization.id, { access_control: true });
    const target = await cachedKey(member.key);
    const past = new Date(Date.now() - 1000).toISOString();
    const cases: [Record<string, unknown>, string, string, string][] = [
      [
        { scoped_organizations: [other.organization.id] },
        "scoped_organizations",
        "invalid_input",
        "You must be a member of all organizations that you are scoping the key to.",
      ],
      [
        { scoped_teams: [hidden.id] },
        "scoped_teams",
        "invalid_input",
        "You must be a member of all projects that you are scoping the key to.",
      ],
      [{ expires_at: past }, "expires_at", "invalid_input", "The expiry must be in the future."],
      [
        { expires_at: "tomorrow" },
        "expires_at",
        "invalid_input",
        "Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].",
      ],
      [{ label: "" }, "label", "blank", "This field may not be blank."],
      [{ scopes: ["everything"] }, "scopes.0", "invalid_choice", '"everything" is not a valid choice.'],
    ];
    for (const [body, attr, code, detail] of cases) {
      const response = await api("PATCH", `/api/personal_api_keys/${target.id}`, { key: member.key, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body).toEqual(errorBody("validation_error", code, detail, attr));
    }

    const narrow = await cachedKey(key, { scopes: ["personal_api_key:write"] });
    const wider = await api("PATCH", `/api/personal_api_keys/${narrow.id}`, {
      key: narrow.value,
      body: { scopes: ["*"] },
    });
    expect(wider.status).toBe(403);
    expect(wider.body.detail).toBe("API key cannot grant scope '*' that it does not have itself");
    expect((await api("GET", `/api/personal_api_keys/${target.id}`, { key: member.key })).body.scopes).toEqual(["*"]);
  });
});

describe("POST /api/personal_api_keys/:id/roll", () => {
  it("returns a new value once; the old one is dead at once, cached or not, and the roll is logged", async () => {
    const { organization, key } = await setupOrganization();
    const target = await cachedKey(key);

    const rolled = await api("POST", `/api/personal_api_keys/${target.id}/roll/`, { key });

    expect(rolled.status).toBe(200);
    expect(rolled.headers.get("Cache-Control")).toBe("no-store");
    expect(rolled.body).toMatchObject({
      id: target.id,
      label: "CI",
      value: expect.stringMatching(/^phx_[0-9A-Za-z]{44}$/),
      last_rolled_at: expect.stringMatching(ISO_TIMESTAMP),
      previous_value_expires_at: null,
    });
    expect(rolled.body.value).not.toBe(target.value);
    expect(rolled.body.mask_value).toBe(`phx_...${rolled.body.value.slice(-4)}`);
    const old = await api("GET", "/api/users/@me", { key: target.value });
    expect(old.status).toBe(401);
    expect(old.body).toEqual(INVALID);
    expect((await api("GET", "/api/users/@me", { key: rolled.body.value })).status).toBe(200);
    const read = await api("GET", `/api/personal_api_keys/${target.id}`, { key });
    expect(read.body).not.toHaveProperty("value");
    expect(read.body.last_rolled_at).toBe(rolled.body.last_rolled_at);
    expect((await keyEntries(organization.id, key, target.id)).map((entry) => entry.activity)).toEqual([
      "created",
      "rolled",
    ]);
  });

  it("with overlap_seconds, keeps the old value working until then, then answers api_key_expired", async () => {
    const { organization, key } = await setupOrganization();
    const target = await cachedKey(key);
    vi.useFakeTimers({ toFake: ["Date"] });
    const rolledAt = Date.now();

    const rolled = await api("POST", `/api/personal_api_keys/${target.id}/roll`, {
      key,
      body: { overlap_seconds: 600 },
    });

    const overlapEnds = new Date(rolledAt + 600_000).toISOString();
    expect(rolled.body.previous_value_expires_at).toBe(overlapEnds);
    expect((await api("GET", "/api/users/@me", { key: target.value })).status).toBe(200);
    expect((await api("GET", `/api/personal_api_keys/${target.id}`, { key })).body.previous_value_expires_at).toBe(
      overlapEnds,
    );
    const [, entry] = await keyEntries(organization.id, key, target.id);
    expect(entry?.detail.context).toEqual({ overlap_seconds: 600, previous_value_expires_at: overlapEnds });

    vi.setSystemTime(rolledAt + 600_001);
    const old = await api("GET", "/api/users/@me", { key: target.value });
    expect(old.status).toBe(401);
    expect(old.body).toEqual(EXPIRED);
    expect((await api("GET", "/api/users/@me", { key: rolled.body.value })).status).toBe(200);
    expect((await api("GET", `/api/personal_api_keys/${target.id}`, { key })).body.previous_value_expires_at).toBe(
      null,
    );
  });

  it("a second roll stops the value the first one kept", async () => {
    const { key } = await setupOrganization();
    const target = await cachedKey(key);
    const first = await api("POST", `/api/personal_api_keys/${target.id}/roll`, {
      key,
      body: { overlap_seconds: 3600 },
    });
    expect((await api("GET", "/api/users/@me", { key: target.value })).status).toBe(200);

    const second = await api("POST", `/api/personal_api_keys/${target.id}/roll`, {
      key,
      body: { overlap_seconds: 60 },
    });

    expect((await api("GET", "/api/users/@me", { key: target.value })).body).toEqual(INVALID);
    expect((await api("GET", "/api/users/@me", { key: first.body.value })).status).toBe(200);
    expect((await api("GET", "/api/users/@me", { key: second.body.value })).status).toBe(200);
  });

  it("during an overlap, a change or a revocation applies to both values at once, cached or not", async () => {
    const { key } = await setupOrganization();
    const target = await cachedKey(key);
    const rolled = await api("POST", `/api/personal_api_keys/${target.id}/roll`, {
      key,
      body: { overlap_seconds: 3600 },
    });
    for (const value of [target.value, rolled.body.value]) {
      expect((await api("GET", "/api/users/@me", { key: value })).status).toBe(200);
    }

    await api("PATCH", `/api/personal_api_keys/${target.id}`, { key, body: { scopes: ["project:read"] } });
    for (const value of [target.value, rolled.body.value]) {
      expect((await api("GET", "/api/users/@me", { key: value })).status).toBe(403);
    }
    await api("DELETE", `/api/personal_api_keys/${target.id}`, { key });
    for (const value of [target.value, rolled.body.value]) {
      expect((await api("GET", "/api/personal_api_keys/@current", { key: value })).body).toEqual(INVALID);
    }
  });

  it("validates overlap_seconds: a whole number of seconds from 0 to 86400", async () => {
    const { key } = await setupOrganization();
    const target = await cachedKey(key);
    const cases: [unknown, string, string][] = [
      [-1, "min_value", "Ensure this value is greater than or equal to 0."],
      [86_401, "max_value", "Ensure this value is less than or equal to 86400."],
      [1.5, "invalid_input", "Expected int, received number."],
    ];
    for (const [overlap, code, detail] of cases) {
      const response = await api("POST", `/api/personal_api_keys/${target.id}/roll`, {
        key,
        body: { overlap_seconds: overlap },
      });
      expect(response.status, String(overlap)).toBe(400);
      expect(response.body).toEqual(errorBody("validation_error", code, detail, "overlap_seconds"));
    }
    expect((await api("GET", "/api/users/@me", { key: target.value })).status).toBe(200);
  });
});

const BEYOND_CALLER = errorBody(
  "authentication_error",
  "permission_denied",
  "API key cannot grant scope '*' that it does not have itself",
);
const BLOCKED_REACH = errorBody(
  "authentication_error",
  "permission_denied",
  "API key cannot act on keys that reach an organization whose admins revoked its access",
);

/** An owner of two organizations, a key reaching both, and a key to manage keys in the first only. */
async function broadAndNarrow() {
  const first = await setupOrganization();
  const second = await setupOrganization();
  await addMembership(second.organization.id, first.owner, MembershipLevel.owner);
  const broad = await createApiKey(first.owner, { scopes: ["*"] });
  const narrow = await createApiKey(first.owner, {
    scopes: ["personal_api_key:write", "personal_api_key:read"],
    scopedOrganizations: [first.organization.id],
  });
  return { first, second, broad, narrow };
}

describe("a key acts on its owner's keys only within itself", () => {
  it("a narrow key neither rolls, changes nor revokes a broader one (403); the broader key stays", async () => {
    const { second, broad, narrow } = await broadAndNarrow();
    const calls: [string, string, Record<string, unknown> | undefined][] = [
      ["POST", `/api/personal_api_keys/${broad.id}/roll`, {}],
      ["PATCH", `/api/personal_api_keys/${broad.id}`, { label: "Renamed" }],
      ["DELETE", `/api/personal_api_keys/${broad.id}`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const response = await api(method, path, { key: narrow.value, body });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body).toEqual(BEYOND_CALLER);
    }
    const untouched = await api("GET", `/api/organizations/${second.organization.id}/members`, { key: broad.value });
    expect(untouched.status).toBe(200);
    const stored = await api("GET", `/api/personal_api_keys/${broad.id}`, { key: broad.value });
    expect(stored.body).toMatchObject({ label: "test key", scopes: ["*"], scoped_organizations: [] });
  });

  it("a narrow key still rolls and revokes itself", async () => {
    const { narrow } = await broadAndNarrow();
    const rolled = await api("POST", `/api/personal_api_keys/${narrow.id}/roll`, { key: narrow.value, body: {} });
    expect(rolled.status).toBe(200);
    const revoked = await api("DELETE", `/api/personal_api_keys/${narrow.id}`, { key: rolled.body.value });
    expect(revoked.status).toBe(204);
  });

  it("a key an admin blocked makes, widens, rolls or revokes no key that reaches that organization", async () => {
    const { organization, key: ownerKey } = await setupOrganization();
    const elsewhere = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    await addMembership(elsewhere.organization.id, member.user, MembershipLevel.member);
    const another = await createApiKey(member.user, {
      scopes: ["*"],
      scopedOrganizations: [elsewhere.organization.id],
    });
    const reaching = await createApiKey(member.user, { scopes: ["*"] });
    const listed = await api("GET", `/api/organizations/${organization.id}/api_keys?limit=100`, { key: ownerKey });
    const memberKey = listed.body.results.find((item: { owner: { email: string } | null; mask_value: string }) => {
      return item.owner?.email === member.user.email && member.key.endsWith(item.mask_value.slice(-4));
    });
    const blocked = await api("DELETE", `/api/organizations/${organization.id}/api_keys/${memberKey.id}`, {
      key: ownerKey,
    });
    expect(blocked.status).toBe(204);

    const calls: [string, string, Record<string, unknown> | undefined][] = [
      ["POST", "/api/personal_api_keys", { label: "fresh", scopes: ["*"] }],
      ["POST", "/api/personal_api_keys", { label: "fresh", scopes: ["*"], scoped_organizations: [organization.id] }],
      ["PATCH", `/api/personal_api_keys/${another.id}`, { scoped_organizations: [] }],
      ["POST", `/api/personal_api_keys/${reaching.id}/roll`, {}],
      ["DELETE", `/api/personal_api_keys/${reaching.id}`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const response = await api(method, path, { key: member.key, body });
      expect(response.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(403);
      expect(response.body).toEqual(BLOCKED_REACH);
    }
    // What the block does not cover stays the member's: a key for the other organization.
    const outside = await api("POST", "/api/personal_api_keys", {
      key: member.key,
      body: { label: "elsewhere", scopes: ["*"], scoped_organizations: [elsewhere.organization.id] },
    });
    expect(outside.status).toBe(201);
    const members = `/api/organizations/${organization.id}/members`;
    expect((await api("GET", members, { key: outside.body.value })).status).toBe(403);
    expect((await api("GET", members, { key: reaching.value })).status).toBe(200);
  });

  it("each organization's log shows the key's reach within it, never another organization's ids", async () => {
    const first = await setupOrganization();
    const second = await setupOrganization();
    const member = await addMember(first.organization.id, MembershipLevel.member);
    await addMembership(second.organization.id, member.user, MembershipLevel.member);
    const created = await api("POST", "/api/personal_api_keys", {
      key: member.key,
      body: {
        label: "both",
        scopes: ["*"],
        scoped_organizations: [first.organization.id, second.organization.id],
        scoped_teams: [first.project.id, second.project.id],
      },
    });
    expect(created.status).toBe(201);
    const narrowed = await api("PATCH", `/api/personal_api_keys/${created.body.id}`, {
      key: member.key,
      body: { scoped_teams: [second.project.id] },
    });
    expect(narrowed.status).toBe(200);
    // Another organization's ids are written as null: the lists keep their length and meaning.
    for (const [own, organizations, teamsBefore, teamsAfter] of [
      [first, [first.organization.id, null], [first.project.id, null], [null]],
      [second, [null, second.organization.id], [null, second.project.id], [second.project.id]],
    ] as const) {
      const entries = await keyEntries(own.organization.id, own.key, created.body.id);
      expect(entries.map((entry) => entry.activity)).toEqual(["created", "updated"]);
      expect(entries[0]!.detail.context).toEqual({
        scopes: ["*"],
        scoped_organizations: organizations,
        scoped_teams: teamsBefore,
      });
      expect(entries[1]!.detail.changes).toEqual([
        { type: "PersonalAPIKey", action: "changed", field: "scoped_teams", before: teamsBefore, after: teamsAfter },
      ]);
      const log = await api("GET", `/api/organizations/${own.organization.id}/activity_log`, { key: own.key });
      const other = own === first ? second : first;
      expect(log.text).not.toContain(other.organization.id);
    }
  });
});

const REPLACED_VALUE = errorBody(
  "authentication_error",
  "permission_denied",
  "A key's replaced value cannot manage keys: use the key's current value",
);
const BEYOND_EXPIRY = errorBody(
  "authentication_error",
  "permission_denied",
  "API key cannot grant access beyond its own expiry",
);

describe("a key's expiry and a replaced value bound what it does to keys", () => {
  it("a value a roll replaced works in its overlap, but neither rolls, changes, revokes nor makes keys", async () => {
    const { organization, key: ownerKey } = await setupOrganization();
    const service = await api("POST", `/api/organizations/${organization.id}/service_keys`, {
      key: ownerKey,
      body: { label: "nightly sync", scopes: ["organization:read"] },
    });
    expect(service.status).toBe(201);
    const servicePath = `/api/organizations/${organization.id}/service_keys/${service.body.id}`;
    const leaked = await cachedKey(ownerKey);
    const rolled = await api("POST", `/api/personal_api_keys/${leaked.id}/roll`, {
      key: ownerKey,
      body: { overlap_seconds: 600 },
    });
    expect(rolled.status).toBe(200);
    // Still a working value, for the deployments the overlap is for.
    expect((await api("GET", `/api/organizations/${organization.id}`, { key: leaked.value })).status).toBe(200);
    const path = `/api/personal_api_keys/${leaked.id}`;
    for (const [method, route, body] of [
      ["POST", `${path}/roll`, { overlap_seconds: 0 }],
      ["PATCH", path, { expires_at: null }],
      ["DELETE", path, undefined],
      ["POST", "/api/personal_api_keys", { label: "escape", scopes: ["*"] }],
      ["POST", `/api/organizations/${organization.id}/service_keys`, { label: "escape", scopes: ["*"] }],
      // Revoking the organization's automation too.
      ["DELETE", servicePath, undefined],
    ] as const) {
      expectError(await api(method, route, { key: leaked.value, body }), 403, REPLACED_VALUE);
    }
    expect((await api("GET", servicePath, { key: ownerKey })).status).toBe(200);
    // The owner's new value is the key's only current one, and works.
    expect((await api("GET", "/api/personal_api_keys/@current", { key: rolled.body.value })).status).toBe(200);
    const keys = await api("GET", "/api/personal_api_keys", { key: ownerKey });
    expect(keys.body.map((key: { id: string }) => key.id)).toContain(leaked.id);
  });

  it("an expiring key makes, changes and rolls no key that outlives it", async () => {
    const { organization, key: ownerKey } = await setupOrganization();
    const longLived = await cachedKey(ownerKey, { label: "long-lived" });
    const inAnHour = new Date(Date.now() + HOUR_MS).toISOString();
    const shortLived = await cachedKey(ownerKey, { label: "one hour", expires_at: inAnHour });
    const later = new Date(Date.now() + 2 * HOUR_MS).toISOString();
    for (const [method, route, body] of [
      ["POST", "/api/personal_api_keys", { label: "forever", scopes: ["*"] }],
      ["POST", "/api/personal_api_keys", { label: "later", scopes: ["*"], expires_at: later }],
      ["POST", `/api/personal_api_keys/${longLived.id}/roll`, {}],
      ["PATCH", `/api/personal_api_keys/${longLived.id}`, { label: "renamed" }],
      ["PATCH", `/api/personal_api_keys/${shortLived.id}`, { expires_at: null }],
      ["POST", `/api/organizations/${organization.id}/service_keys`, { label: "forever", scopes: ["*"] }],
    ] as const) {
      expectError(await api(method, route, { key: shortLived.value, body }), 403, BEYOND_EXPIRY);
    }
    // Within its expiry, it does what it may.
    const within = await api("POST", "/api/personal_api_keys", {
      key: shortLived.value,
      body: { label: "sooner", scopes: ["*"], expires_at: inAnHour },
    });
    expect(within.status).toBe(201);
    expect((await api("POST", `/api/personal_api_keys/${shortLived.id}/roll`, { key: shortLived.value })).status).toBe(
      200,
    );
  });
});

describe("expires_at", () => {
  it("answers 401 api_key_expired once past, from the cached key too, and @current tells it beforehand", async () => {
    const { key } = await setupOrganization();
    vi.useFakeTimers({ toFake: ["Date"] });
    const expiresAt = new Date(Date.now() + HOUR_MS).toISOString();
    const target = await cachedKey(key, { expires_at: expiresAt });

    const current = await api("GET", "/api/personal_api_keys/@current", { key: target.value });
    expect(current.body).toMatchObject({ expires_at: expiresAt, owner_kind: "user" });

    vi.setSystemTime(Date.parse(expiresAt) + 1);
    for (const path of ["/api/users/@me", "/api/personal_api_keys/@current", "/api/organizations"]) {
      const response = await api("GET", path, { key: target.value });
      expect(response.status, path).toBe(401);
      expect(response.body, path).toEqual(EXPIRED);
      expect(response.headers.get("WWW-Authenticate")).toBe('Bearer realm="api"');
    }
    const listed = await api("GET", "/api/personal_api_keys", { key });
    expect(listed.body.find((item: { id: string }) => item.id === target.id).expires_at).toBe(expiresAt);
  });

  it("is refused in the past at creation", async () => {
    const { key } = await setupOrganization();
    const response = await api("POST", "/api/personal_api_keys", {
      key,
      body: { label: "late", scopes: ["*"], expires_at: "2020-01-01T00:00:00Z" },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(
      errorBody("validation_error", "invalid_input", "The expiry must be in the future.", "expires_at"),
    );
  });
});

describe("where a key is found", () => {
  it("takes it, as PostHog does, from the header, else the JSON body's personal_api_key, else the query", async () => {
    const { key } = await setupOrganization();
    const other = await setupOrganization();

    const fromQuery = await api("GET", `/api/users/@me?personal_api_key=${key}`);
    const fromBody = await api("POST", "/api/personal_api_keys", {
      body: { personal_api_key: key, label: "from the body", scopes: ["user:read"] },
    });
    const headerFirst = await api("GET", `/api/users/@me?personal_api_key=${other.key}`, { key });
    const badQuery = await api("GET", `/api/users/@me?personal_api_key=phx_${"x".repeat(44)}`);

    expect(fromQuery.status).toBe(200);
    expect(fromBody.status).toBe(201);
    expect(fromBody.body).not.toHaveProperty("personal_api_key");
    expect(headerFirst.body.uuid).toBe(fromQuery.body.uuid);
    expect(badQuery.status).toBe(401);
    expect(badQuery.body).toEqual(INVALID);
  });

  it("never writes a query-string key into a log line nor into a list's links", async () => {
    const { organization, key } = await setupOrganization();
    await createProject(organization.id);
    for (const label of ["one", "two"]) {
      await api("POST", "/api/personal_api_keys", { key, body: { label, scopes: ["user:read"] } });
    }
    const lines: string[] = [];
    for (const method of ["log", "info", "warn", "error"] as const) {
      vi.spyOn(console, method).mockImplementation((...items: unknown[]) => {
        lines.push(items.map(String).join(" "));
      });
    }

    const projects = await api("GET", `/api/projects?limit=1&personal_api_key=${key}`);
    const log = await api("GET", `/api/organizations/${organization.id}/activity_log?limit=1&personal_api_key=${key}`);

    for (const response of [projects, log]) {
      expect(response.status).toBe(200);
      expect(response.body.next).toEqual(expect.any(String));
      expect(response.body.next).not.toContain("personal_api_key");
    }
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join("\n")).not.toContain(key);
  });
});

describe("an admin's block landing while a key writes a key", () => {
  const BLOCKED = errorBody(
    "authentication_error",
    "permission_denied",
    "API key cannot act on keys that reach an organization whose admins revoked its access",
  );

  /** A member, their key, and the owner's block of that key in the organization, to run meanwhile. */
  async function memberKeyToBlock() {
    const team = await setupOrganization();
    const member = await addMember(team.organization.id, MembershipLevel.member);
    const keys = await api("GET", "/api/personal_api_keys", { key: member.key });
    const [calling] = keys.body as { id: string }[];
    const blockPath = `/api/organizations/${team.organization.id}/api_keys/${calling!.id}`;
    const block = async () => (await api("DELETE", blockPath, { key: team.key })).status;
    return { ...team, member, block, membersPath: `/api/organizations/${team.organization.id}/members` };
  }

  it("mints no key that reaches the organization (403)", async () => {
    const { organization, member, block } = await memberKeyToBlock();
    const blocking = beforeWrites([[/^insert into "personal_api_keys"/, block]]);
    const minted = await api("POST", "/api/personal_api_keys", {
      key: member.key,
      body: { label: "fresh", scopes: ["*"], scoped_organizations: [organization.id] },
    });
    vi.restoreAllMocks();
    expect(blocking).toEqual([204]);
    expectError(minted, 403, BLOCKED);
    const keys = await api("GET", "/api/personal_api_keys", { key: member.key });
    expect(keys.body.map((listed: { label: string }) => listed.label)).not.toContain("fresh");
  });

  it("widens no other key into the organization, and rolls none that reaches it (403)", async () => {
    const { organization, member, block, membersPath } = await memberKeyToBlock();
    const elsewhere = await setupOrganization();
    await addMembership(elsewhere.organization.id, member.user, MembershipLevel.member);
    const narrow = await createApiKey(member.user, { scopedOrganizations: [elsewhere.organization.id] });
    const blocking = beforeWrites([[/^update "personal_api_keys"/, block]]);
    const widened = await api("PATCH", `/api/personal_api_keys/${narrow.id}`, {
      key: member.key,
      body: { scoped_organizations: [] },
    });
    vi.restoreAllMocks();
    expect(blocking).toEqual([204]);
    expectError(widened, 403, BLOCKED);
    expect((await api("GET", membersPath, { key: narrow.value })).status).toBe(403);

    const other = await memberKeyToBlock();
    const reaching = await createApiKey(other.member.user);
    const rolling = beforeWrites([[/^update "personal_api_keys"/, other.block]]);
    const rolled = await api("POST", `/api/personal_api_keys/${reaching.id}/roll`, {
      key: other.member.key,
      body: {},
    });
    vi.restoreAllMocks();
    expect(rolling).toEqual([204]);
    expectError(rolled, 403, BLOCKED);
    expect((await api("GET", other.membersPath, { key: reaching.value })).status).toBe(200);
    expect(organization.id).not.toBe(other.organization.id);
  });
});

describe("a roll sent again with its Idempotency-Key", () => {
  it("a personal key roll whose cache purge failed is not rolled again by a retry with the same key", async () => {
    const team = await setupOrganization();
    const created = await api("POST", "/api/personal_api_keys", {
      key: team.key,
      body: { label: "deployed", scopes: ["dashboard:read"] },
    });
    expect(created.status).toBe(201);
    const deployed = created.body.value as string;
    const request = {
      key: team.key,
      body: { overlap_seconds: 3600 },
      headers: { "Idempotency-Key": "roll-once" },
    };
    const path = `/api/personal_api_keys/${created.body.id}/roll`;
    const purge = vi.spyOn(env.API_KEY_CACHE, "delete").mockRejectedValueOnce(new Error("KV unavailable"));
    const first = await api("POST", path, request);
    purge.mockRestore();

    const retry = await api("POST", path, request);

    // One roll for one key: the value in use keeps working through the overlap the roll asked for
    // (a second roll would end it at once), and the first attempt does not answer 500 after rolling.
    const stillWorks = await api("GET", "/api/personal_api_keys/@current", { key: deployed });
    expect({ first: first.status, deployedValue: stillWorks.status }).toEqual({ first: 200, deployedValue: 200 });
    expect(retry.status).toBe(409);
  });

  it("a revocation whose cache purge failed answers 204, logs the failure, and the key is gone", async () => {
    const team = await setupOrganization();
    const created = await api("POST", "/api/personal_api_keys", { key: team.key, body: { label: "x", scopes: ["*"] } });
    vi.spyOn(env.API_KEY_CACHE, "delete").mockRejectedValue(new Error("KV unavailable"));
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const revoked = await api("DELETE", `/api/personal_api_keys/${created.body.id}`, { key: team.key });
    vi.restoreAllMocks();
    expect(revoked.status).toBe(204);
    const lines = errors.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(lines.filter((line) => line.task === "forget cached key").length).toBeGreaterThan(0);
    expect(JSON.stringify(lines)).not.toContain(created.body.value);
    const listed = await api("GET", "/api/personal_api_keys", { key: team.key });
    expect(listed.body.map((key: { id: string }) => key.id)).not.toContain(created.body.id);
  });
});

describe("a key whose reach was deleted", () => {
  it("still takes a new label or narrower scopes: only a reach sent is checked", async () => {
    const { organization, owner, key } = await setupOrganization();
    const doomed = await createProject(organization.id, { name: "Doomed" });
    const byProject = await api("POST", "/api/personal_api_keys", {
      key,
      body: { label: "ci", scopes: ["*"], scoped_teams: [doomed.id] },
    });
    const other = await setupOrganization();
    await addMembership(other.organization.id, owner, MembershipLevel.owner);
    const byOrganization = await api("POST", "/api/personal_api_keys", {
      key,
      body: { label: "two", scopes: ["*"], scoped_organizations: [organization.id, other.organization.id] },
    });
    await deleteProjectRow(doomed.id);
    expect((await api("DELETE", `/api/organizations/${other.organization.id}`, { key })).status).toBe(204);

    for (const [id, body] of [
      [byProject.body.id, { label: "ci (old)" }],
      [byProject.body.id, { scopes: ["dashboard:read"] }],
      [byOrganization.body.id, { label: "two (one left)" }],
    ] as const) {
      const patched = await api("PATCH", `/api/personal_api_keys/${id}`, { key, body });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      expect(patched.body).toMatchObject(body);
    }
    // A reach sent is checked as at creation: the deleted project is refused there.
    const resent = await api("PATCH", `/api/personal_api_keys/${byProject.body.id}`, {
      key,
      body: { scoped_teams: [doomed.id] },
    });
    expect(resent.status).toBe(400);
    expect(resent.body.attr).toBe("scoped_teams");
  });

  it("still checks a stored reach that is there: a project hidden from its owner refuses a new expiry", async () => {
    const { organization, key: ownerKey } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const hidden = await createProject(organization.id, { name: "Payroll" });
    const policy = { api_key_max_lifetime_days: 30 };
    expect((await api("PATCH", `/api/organizations/${organization.id}`, { key: ownerKey, body: policy })).status).toBe(
      200,
    );
    const inDays = (days: number) => new Date(Date.now() + days * 24 * 60 * 60 * 1000).toISOString();
    const made = await api("POST", "/api/personal_api_keys", {
      key: member.key,
      body: { label: "payroll", scopes: ["*"], scoped_teams: [hidden.id], expires_at: inDays(29) },
    });
    expect(made.status).toBe(201);
    // Hidden for a while: a key naming it may not escape its organization's lifetime meanwhile.
    await grantProjectAccess(hidden.id, member.membership.id, "none");
    const forever = await api("PATCH", `/api/personal_api_keys/${made.body.id}`, {
      key: member.key,
      body: { expires_at: null },
    });
    expect({ status: forever.status, attr: forever.body.attr }).toEqual({ status: 400, attr: "scoped_teams" });
    const current = await api("GET", `/api/personal_api_keys/${made.body.id}`, { key: member.key });
    expect(current.body.expires_at).toBe(made.body.expires_at);
  });

  it("still checks a stored organization that is there: one its owner left refuses a change", async () => {
    const { organization, owner, key } = await setupOrganization();
    const other = await setupOrganization();
    const membership = await addMembership(other.organization.id, owner, MembershipLevel.member);
    const made = await api("POST", "/api/personal_api_keys", {
      key,
      body: { label: "two", scopes: ["*"], scoped_organizations: [organization.id, other.organization.id] },
    });
    expect(made.status).toBe(201);
    await db.delete(schema.organizationMemberships).where(eq(schema.organizationMemberships.id, membership.id));
    const patched = await api("PATCH", `/api/personal_api_keys/${made.body.id}`, { key, body: { expires_at: null } });
    expect({ status: patched.status, attr: patched.body.attr }).toEqual({ status: 400, attr: "scoped_organizations" });
  });
});

describe("a PATCH landing while another changes the key", () => {
  it("does not bring back the scopes narrowed meanwhile: both hold, or it is refused", async () => {
    const { key } = await setupOrganization();
    const created = await api("POST", "/api/personal_api_keys", { key, body: { label: "CI", scopes: ["*"] } });
    expect(created.status).toBe(201);
    const keyPath = `/api/personal_api_keys/${created.body.id}`;

    const narrow = async () => (await api("PATCH", keyPath, { key, body: { scopes: ["project:read"] } })).status;
    const ran = beforeWrites([[/^update "personal_api_keys"/, narrow]]);
    const relabel = await api("PATCH", keyPath, { key, body: { label: "deploys" } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);

    const after = (await api("GET", keyPath, { key })).body as { label: string; scopes: string[] };
    if (relabel.status === 200) {
      expect({ label: after.label, scopes: after.scopes }).toEqual({ label: "deploys", scopes: ["project:read"] });
    } else {
      expect([409, 412]).toContain(relabel.status);
      expect(after.scopes).toEqual(["project:read"]);
    }
  });
});

describe("a roll or revocation by a scoped key while a broader key widens the key", () => {
  const CHANGED = changedMeanwhile("key");

  /** `broadAndNarrow`, and a key within the narrow one to act on, which the broad one widens. */
  async function narrowAndTarget() {
    const { first, second, broad, narrow } = await broadAndNarrow();
    const target = await createApiKey(first.owner, {
      scopes: ["personal_api_key:read"],
      scopedOrganizations: [first.organization.id],
    });
    const widen = async () =>
      (
        await api("PATCH", `/api/personal_api_keys/${target.id}`, {
          key: broad.value,
          body: { scoped_organizations: [first.organization.id, second.organization.id] },
        })
      ).status;
    return { second, broad, narrow, target, widen };
  }

  it("refuses the roll (409): the scoped key gets no value of a key that now reaches further", async () => {
    const { second, broad, narrow, target, widen } = await narrowAndTarget();
    const ran = beforeWrites([[/^update "personal_api_keys" set [^]*"previous_secure_value"/, widen]]);
    const rolled = await api("POST", `/api/personal_api_keys/${target.id}/roll`, { key: narrow.value, body: {} });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(rolled, 409, CHANGED);
    const current = await api("GET", "/api/personal_api_keys/@current", { key: target.value });
    expect(current.body.scoped_organizations).toContain(second.organization.id);
    const stored = await api("GET", `/api/personal_api_keys/${target.id}`, { key: broad.value });
    expect(stored.body.last_rolled_at).toBeNull();
  });

  it("refuses the revocation (409): the widened key stays", async () => {
    const { broad, narrow, target, widen } = await narrowAndTarget();
    const ran = beforeWrites([[/^delete from "personal_api_keys"/, widen]]);
    const revoked = await api("DELETE", `/api/personal_api_keys/${target.id}`, { key: narrow.value });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(revoked, 409, CHANGED);
    expect((await api("GET", `/api/personal_api_keys/${target.id}`, { key: broad.value })).status).toBe(200);
  });
});

describe("a personal key's roll while an admin sets the organization's key lifetime limit", () => {
  it("is refused (409): the new value does not outlive the limit set meanwhile", async () => {
    const { organization, owner, key } = await setupOrganization();
    const target = await createApiKey(owner, { scopes: ["*"] });
    const setLimit = async () =>
      (await api("PATCH", `/api/organizations/${organization.id}`, { key, body: { api_key_max_lifetime_days: 30 } }))
        .status;
    const ran = beforeWrites([[/^update "personal_api_keys" set [^]*"previous_secure_value"/, setLimit]]);
    const rolled = await api("POST", `/api/personal_api_keys/${target.id}/roll`, { key, body: {} });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(rolled, 409, changedMeanwhile("key"));
    expect((await api("GET", `/api/personal_api_keys/${target.id}`, { key })).body.last_rolled_at).toBeNull();
  });
});

describe("a personal key's revocation holds the calling key not blocked", () => {
  it("a key blocked meanwhile in an organization the revoked key reaches revokes nothing (403)", async () => {
    const { organization, key: ownerKey } = await setupOrganization();
    const user = await createUser();
    await addMembership(organization.id, user, MembershipLevel.member);
    const calling = await createApiKey(user);
    const member = { user, key: calling.value, keyId: calling.id };
    const other = await createApiKey(member.user);
    const ran = beforeWrites([
      [
        /^delete from "personal_api_keys"/,
        async () =>
          (await api("DELETE", `/api/organizations/${organization.id}/api_keys/${member.keyId}`, { key: ownerKey }))
            .status,
      ],
    ]);
    const revoked = await api("DELETE", `/api/personal_api_keys/${other.id}`, { key: member.key });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    const still = await db
      .select({ id: schema.personalApiKeys.id })
      .from(schema.personalApiKeys)
      .where(and(eq(schema.personalApiKeys.id, other.id), eq(schema.personalApiKeys.userId, member.user.id)));
    expectError(revoked, 403, BLOCKED_REACH);
    expect(still).toHaveLength(1);
  });
});

describe("the key cache failing", () => {
  it("a KV write that fails (KV takes one write a second per key) does not refuse a valid key", async () => {
    const { key } = await setupOrganization();
    const put = env.API_KEY_CACHE.put.bind(env.API_KEY_CACHE);
    vi.spyOn(env.API_KEY_CACHE, "put").mockImplementation(async (name, ...rest) => {
      if (String(name).startsWith("api_key:")) throw new Error("KV PUT failed: 429 Too Many Requests");
      return put(name, ...(rest as [string]));
    });
    expect((await api("GET", "/api/users/@me", { key })).status).toBe(200);
    expect((await api("GET", "/api/users/@me", { key })).status).toBe(200);
  });

  it("a key revoked while it is cached is not left cached when the re-read after the put fails", async () => {
    const { owner, key: ownerKey } = await setupOrganization();
    // A key in steady use: used within the hour (no `last_used_at` write follows), not in KV now.
    const leaked = await createApiKey(owner);
    await db
      .update(schema.personalApiKeys)
      .set({ lastUsedAt: new Date(Date.now() - 60_000).toISOString() })
      .where(eq(schema.personalApiKeys.id, leaked.id));
    const secureValue = await sha256Hex(leaked.value);
    const armed = { on: false, failed: 0, revoked: false };
    // The revocation lands between the request's D1 read of the key and its KV put.
    onBoundStatements((query, values, bound) => {
      if (armed.revoked || !query.includes("previous_secure_value") || !values.includes(secureValue)) return bound;
      const all = bound.all.bind(bound);
      bound.all = (async () => {
        const result = await all();
        if (!armed.revoked) {
          armed.revoked = true;
          expect((await api("DELETE", `/api/personal_api_keys/${leaked.id}`, { key: ownerKey })).status).toBe(204);
          armed.on = true;
        }
        return result;
      }) as typeof bound.all;
      return bound;
    });
    // ... and the re-read after the put fails this once.
    const prepare = env.DB.prepare.bind(env.DB);
    vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
      const statement = prepare(query);
      if (!/^select/i.test(query) || !query.includes("previous_secure_value")) return statement;
      const bind = statement.bind.bind(statement);
      statement.bind = (...values: unknown[]) => {
        if (armed.on && armed.failed === 0 && values.includes(secureValue)) {
          armed.failed += 1;
          throw new Error("D1_ERROR: Network connection lost.");
        }
        return bind(...values);
      };
      return statement;
    });
    // The request in flight is answered as it was read.
    expect((await api("GET", "/api/users/@me", { key: leaked.value })).status).toBe(200);
    await vi.waitFor(() => expect(armed.failed).toBe(1));
    await new Promise((resolve) => setTimeout(resolve, 300));
    vi.restoreAllMocks();
    expect(await env.API_KEY_CACHE.get(apiKeyCacheKey(secureValue))).toBeNull();
    const after = await api("GET", "/api/users/@me", { key: leaked.value });
    expect([after.status, after.body]).toEqual([
      401,
      errorBody("authentication_error", "authentication_failed", "Personal API key is invalid."),
    ]);
  }, 30_000);

  it("recording a use never caches again a copy of the key read before a roll, even when D1 fails then", async () => {
    const { key } = await setupOrganization();
    const oldHash = await sha256Hex(key);
    const entryName = apiKeyCacheKey(oldHash);
    expect((await api("GET", "/api/users/@me", { key })).status).toBe(200);
    const cached = await vi.waitFor(async () => {
      const entry = await env.API_KEY_CACHE.get<Record<string, unknown>>(entryName, "json");
      expect(entry?.lastUsedAt).toEqual(expect.any(String));
      return entry!;
    });
    const [row] = await db.select().from(schema.personalApiKeys).where(eq(schema.personalApiKeys.secureValue, oldHash));
    const rolled = await api("POST", `/api/personal_api_keys/${row!.id}/roll`, { key, body: { overlap_seconds: 0 } });
    expect(rolled.status).toBe(200);
    // Another location's copy read before the roll (KV may keep it up to 60 s), last used over an hour ago.
    await env.API_KEY_CACHE.put(
      entryName,
      JSON.stringify({ ...cached, lastUsedAt: new Date(Date.now() - 2 * 3_600_000).toISOString() }),
      { expirationTtl: 60 },
    );
    const expirationOf = async () =>
      (await env.API_KEY_CACHE.list({ prefix: entryName })).keys.find((entry) => entry.name === entryName)?.expiration;
    const before = await expirationOf();
    expect(before).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    // Every read of the key after its use is recorded fails, this once.
    const prepare = env.DB.prepare.bind(env.DB);
    let failed = 0;
    vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
      if (failed === 0 && /^select/i.test(query) && query.includes('"personal_api_keys"')) {
        failed += 1;
        throw new Error("D1_ERROR: Network connection lost.");
      }
      return prepare(query);
    });
    // Served from that copy, within its minute; its use recorded after the response.
    expect((await api("GET", "/api/users/@me", { key })).status).toBe(200);
    await vi.waitFor(() => expect(failed).toBe(1));
    await new Promise((resolve) => setTimeout(resolve, 300));
    vi.restoreAllMocks();
    // The copy keeps the minute it had, no more (docs/keys.md), if it is there at all.
    const after = await expirationOf();
    expect(after === undefined || after <= before!).toBe(true);
  });
});
