import { eq, sql } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import * as schema from "../../../src/db/schema";
import { REPLACED_VALUE_REFUSED, reachesOrganization, scopingReaches } from "../../../src/platform/auth/key-policy";
import { MembershipLevel } from "../../../src/platform/levels";
import { activityEntry, keyIdOf } from "../../support/activity-log";
import {
  AUTHENTICATION_FAILED,
  expectError,
  INSUFFICIENT_LEVEL,
  NOT_FOUND,
  missingScope,
} from "../../support/error-bodies";
import { insertInvite } from "../../support/people";
import { beforeWrites } from "../../support/races";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  createProject,
  db,
  errorBody,
  ISO_TIMESTAMP,
  setupOrganization,
} from "../../support/harness";

const denied = (detail: string) => errorBody("authentication_error", "permission_denied", detail);
const beyondCeiling = (scope: string) =>
  denied(
    "This organization's key policy (personal_api_key_max_scopes) does not allow personal API keys " +
      `the scope '${scope}'.`,
  );
const REPLACED_VALUE = denied(REPLACED_VALUE_REFUSED);
const BLOCKED = denied("An admin of this organization revoked this personal API key's access to it.");
const inDays = (days: number) => new Date(Date.now() + days * 24 * 60 * 60 * 1000).toISOString();

const organizationPath = (id: string) => `/api/organizations/${id}`;
const keysPath = (id: string) => `/api/organizations/${id}/api_keys`;

/** The organization's last activity-log entry, read by its owner. */
async function lastEntry(organizationId: string, key: string) {
  const log = await api("GET", `/api/organizations/${organizationId}/activity_log?limit=1`, { key });
  expect(log.status).toBe(200);
  return log.body.results[0];
}

describe("an organization's key policy", () => {
  it("is set by an admin with PATCH and PUT, shown on the organization and logged", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const patched = await api("PATCH", organizationPath(organization.id), {
      key: admin.key,
      body: { personal_api_key_max_scopes: ["dashboard:read", "project:read"], api_key_max_lifetime_days: 30 },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({
      personal_api_key_max_scopes: ["dashboard:read", "project:read"],
      api_key_max_lifetime_days: 30,
      members_can_use_personal_api_keys: true,
    });
    expect(await lastEntry(organization.id, key)).toEqual(
      activityEntry(patched, {
        organizationId: organization.id,
        projectId: null,
        user: admin.user,
        apiKeyId: await keyIdOf(admin.user),
        scope: "Organization",
        activity: "updated",
        itemId: organization.id,
        name: organization.name,
        changes: [
          {
            type: "Organization",
            action: "changed",
            field: "personal_api_key_max_scopes",
            before: null,
            after: ["dashboard:read", "project:read"],
          },
          { type: "Organization", action: "changed", field: "api_key_max_lifetime_days", before: null, after: 30 },
        ],
      }),
    );
    const put = await api("PUT", organizationPath(organization.id), {
      key,
      body: { name: organization.name, personal_api_key_max_scopes: null, api_key_max_lifetime_days: null },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ personal_api_key_max_scopes: null, api_key_max_lifetime_days: null });
    const read = await api("GET", organizationPath(organization.id), { key });
    expect(read.body.personal_api_key_max_scopes).toBeNull();
  });

  it("refuses invalid settings with 400 naming the field, and a plain member with 403", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    for (const [body, attr] of [
      [{ personal_api_key_max_scopes: ["dashboard:fly"] }, "personal_api_key_max_scopes.0"],
      [{ personal_api_key_max_scopes: "dashboard:read" }, "personal_api_key_max_scopes"],
      [{ api_key_max_lifetime_days: 0 }, "api_key_max_lifetime_days"],
      [{ api_key_max_lifetime_days: 3651 }, "api_key_max_lifetime_days"],
      [{ api_key_max_lifetime_days: 1.5 }, "api_key_max_lifetime_days"],
    ] as const) {
      const response = await api("PATCH", organizationPath(organization.id), { key, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.attr, JSON.stringify(body)).toBe(attr);
    }
    const read = await api("GET", organizationPath(organization.id), { key });
    expect(read.body).toMatchObject({ personal_api_key_max_scopes: null, api_key_max_lifetime_days: null });
    const refused = await api("PATCH", organizationPath(organization.id), {
      key: member.key,
      body: { personal_api_key_max_scopes: ["*"] },
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(INSUFFICIENT_LEVEL);
  });

  it("holds members' and admins' personal keys to the scope ceiling on reads and writes, owners excepted", async () => {
    const { organization, project, key: ownerKey } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const set = await api("PATCH", organizationPath(organization.id), {
      key: ownerKey,
      body: { personal_api_key_max_scopes: ["dashboard:read", "organization_member:read"] },
    });
    expect(set.status).toBe(200);
    const dashboards = `/api/environments/${project.id}/dashboards`;
    // Within the ceiling: reads answer.
    expect((await api("GET", dashboards, { key: member.key })).status).toBe(200);
    expect((await api("GET", `${organizationPath(organization.id)}/members`, { key: admin.key })).status).toBe(200);
    // Beyond it: a write, and a read of another resource, are refused naming the policy.
    const write = await api("POST", dashboards, { key: member.key, body: { name: "Nope" } });
    expect(write.status).toBe(403);
    expect(write.body).toEqual(beyondCeiling("dashboard:write"));
    const adminWrite = await api("POST", `${organizationPath(organization.id)}/projects`, {
      key: admin.key,
      body: { name: "Nope" },
    });
    expect(adminWrite.body).toEqual(beyondCeiling("project:write"));
    const otherRead = await api("GET", `${organizationPath(organization.id)}/webhooks`, { key: admin.key });
    expect(otherRead.body).toEqual(beyondCeiling("webhook:read"));
    // A route requiring two scopes is held to the ceiling on each: the one beyond it is named.
    const webhookCeiling = await api("PATCH", organizationPath(organization.id), {
      key: ownerKey,
      body: { personal_api_key_max_scopes: ["dashboard:read", "organization_member:read", "webhook:write"] },
    });
    expect(webhookCeiling.status).toBe(200);
    const subscribe = await api("POST", `${organizationPath(organization.id)}/webhooks`, {
      key: admin.key,
      body: { url: "https://receiver.example.com/hook", events: ["*"] },
    });
    expect(subscribe.body).toEqual(beyondCeiling("activity_log:read"));
    const restored = await api("PATCH", organizationPath(organization.id), {
      key: ownerKey,
      body: { personal_api_key_max_scopes: ["dashboard:read", "organization_member:read"] },
    });
    expect(restored.status).toBe(200);
    const projectRead = await api("GET", `/api/projects/${project.id}`, { key: member.key });
    expect(projectRead.body).toEqual(beyondCeiling("project:read"));
    // The key's own scope is checked first: a key without the scope is told so, not about the policy.
    const narrow = await createApiKey(member.user, { scopes: ["dashboard:read"] });
    expect((await api("GET", `${organizationPath(organization.id)}/members`, { key: narrow.value })).body).toEqual(
      missingScope("organization_member:read"),
    );
    // The owner may always change it back.
    const owner = await api("POST", dashboards, { key: ownerKey, body: { name: "Owner's" } });
    expect(owner.status).toBe(201);
    // The same keys keep their full scopes in another organization without a policy.
    const other = await setupOrganization();
    await addMembership(other.organization.id, member.user, MembershipLevel.member);
    const elsewhere = await api("POST", `/api/environments/${other.project.id}/dashboards`, {
      key: member.key,
      body: { name: "Elsewhere" },
    });
    expect(elsewhere.status).toBe(201);
  });

  it("does not hold service keys, and members_can_use_personal_api_keys keeps its meaning", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const service = await api("POST", `${organizationPath(organization.id)}/service_keys`, {
      key,
      body: { label: "Sync", scopes: ["dashboard:write"] },
    });
    await api("PATCH", organizationPath(organization.id), {
      key,
      body: { personal_api_key_max_scopes: ["dashboard:read"], members_can_use_personal_api_keys: false },
    });
    const created = await api("POST", `/api/environments/${project.id}/dashboards`, {
      key: service.body.value,
      body: { name: "By the service key" },
    });
    expect(created.status).toBe(201);
    const refused = await api("GET", `/api/environments/${project.id}/dashboards`, { key: member.key });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(denied("Your organization does not allow members using personal API keys."));
  });

  it("holds service keys to the maximum lifetime when made, given an expiry or reach, or rolled", async () => {
    const { organization, project, key } = await setupOrganization();
    const serviceKeys = `${organizationPath(organization.id)}/service_keys`;
    const before = await api("POST", serviceKeys, { key, body: { label: "old", scopes: ["*"] } });
    expect(before.status).toBe(201);
    await api("PATCH", organizationPath(organization.id), { key, body: { api_key_max_lifetime_days: 7 } });
    const tooLong = errorBody(
      "validation_error",
      "invalid_input",
      "An organization this key reaches (api_key_max_lifetime_days) requires it to expire within 7 days.",
      "expires_at",
    );
    const refused = [
      await api("POST", serviceKeys, { key, body: { label: "forever", scopes: ["*"] } }),
      await api("POST", serviceKeys, { key, body: { label: "long", scopes: ["*"], expires_at: inDays(8) } }),
      await api("PATCH", `${serviceKeys}/${before.body.id}`, { key, body: { expires_at: inDays(8) } }),
      await api("PATCH", `${serviceKeys}/${before.body.id}`, { key, body: { scoped_teams: [project.id] } }),
      await api("POST", `${serviceKeys}/${before.body.id}/roll`, { key, body: {} }),
    ];
    expect(refused.map((response) => [response.status, response.body])).toEqual(refused.map(() => [400, tooLong]));
    // Made before the limit, the key keeps working; given an expiry within it, it rolls again.
    expect((await api("GET", `${organizationPath(organization.id)}/members`, { key: before.body.value })).status).toBe(
      200,
    );
    const within = await api("PATCH", `${serviceKeys}/${before.body.id}`, { key, body: { expires_at: inDays(6) } });
    expect(within.status).toBe(200);
    expect((await api("POST", `${serviceKeys}/${before.body.id}/roll`, { key, body: {} })).status).toBe(200);
  });

  it("makes personal keys created, rolled or given a new reach expire within the maximum lifetime", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    // Made before the limit: it keeps working, until it is rolled.
    const before = await api("POST", "/api/personal_api_keys", {
      key: member.key,
      body: { label: "old", scopes: ["*"] },
    });
    await api("PATCH", organizationPath(organization.id), { key, body: { api_key_max_lifetime_days: 30 } });
    expect((await api("GET", `${organizationPath(organization.id)}/members`, { key: before.body.value })).status).toBe(
      200,
    );
    const tooLong =
      "An organization this key reaches (api_key_max_lifetime_days) requires it to expire within 30 days.";
    for (const body of [
      { label: "forever", scopes: ["*"] },
      { label: "long", scopes: ["*"], expires_at: inDays(31) },
    ]) {
      const refused = await api("POST", "/api/personal_api_keys", { key: member.key, body });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual(errorBody("validation_error", "invalid_input", tooLong, "expires_at"));
    }
    const roll = await api("POST", `/api/personal_api_keys/${before.body.id}/roll`, { key: member.key, body: {} });
    expect(roll.status).toBe(400);
    expect(roll.body.attr).toBe("expires_at");
    const patched = await api("PATCH", `/api/personal_api_keys/${before.body.id}`, {
      key: member.key,
      body: { expires_at: inDays(29) },
    });
    expect(patched.status).toBe(200);
    expect(
      (await api("POST", `/api/personal_api_keys/${before.body.id}/roll`, { key: member.key, body: {} })).status,
    ).toBe(200);
    const within = await api("POST", "/api/personal_api_keys", {
      key: member.key,
      body: { label: "short", scopes: ["*"], expires_at: inDays(29) },
    });
    expect(within.status).toBe(201);
    // A key scoped to another organization of the member is not held to this one's limit.
    const other = await setupOrganization();
    await addMembership(other.organization.id, member.user, MembershipLevel.member);
    const elsewhere = await api("POST", "/api/personal_api_keys", {
      key: member.key,
      body: { label: "elsewhere", scopes: ["*"], scoped_organizations: [other.organization.id] },
    });
    expect(elsewhere.status).toBe(201);
    // ...until it is made to reach this one.
    const widened = await api("PATCH", `/api/personal_api_keys/${elsewhere.body.id}`, {
      key: member.key,
      body: { scoped_organizations: [other.organization.id, organization.id] },
    });
    expect(widened.status).toBe(400);
    expect(widened.body.attr).toBe("expires_at");
    // One scoped to the other organization's project alone is not held to this one's limit either...
    // ...until it is given this one's project, or no scoping (every organization of its user).
    const projectScoped = async () => {
      const made = await api("POST", "/api/personal_api_keys", {
        key: member.key,
        body: { label: "their project", scopes: ["*"], scoped_teams: [other.project.id] },
      });
      expect(made.status).toBe(201);
      return made.body.id as string;
    };
    const rolled = await api("POST", `/api/personal_api_keys/${await projectScoped()}/roll`, {
      key: member.key,
      body: {},
    });
    expect(rolled.status).toBe(200);
    for (const scopedTeams of [[project.id], []]) {
      const id = await projectScoped();
      const moved = await api("PATCH", `/api/personal_api_keys/${id}`, {
        key: member.key,
        body: { scoped_teams: scopedTeams },
      });
      expect({ scopedTeams, status: moved.status, attr: moved.body.attr }).toEqual({
        scopedTeams,
        status: 400,
        attr: "expires_at",
      });
    }
  });
});

describe("a key written while its owner joins an organization with a lifetime limit", () => {
  /**
   * Bob, of another organization, invited to one whose keys must expire within 30 days; and what
   * lands between a write of his and its batch: his calling key given an expiry within the limit
   * (which lets him join), then his joining.
   */
  async function invitedBob() {
    const acme = await setupOrganization();
    await api("PATCH", organizationPath(acme.organization.id), {
      key: acme.key,
      body: { api_key_max_lifetime_days: 30 },
    });
    const bob = await setupOrganization();
    const invite = await insertInvite(acme.organization.id, acme.owner, { targetEmail: bob.owner.email });
    const calling = (await api("GET", "/api/personal_api_keys/@current", { key: bob.key })).body.id as string;
    const boundAndJoin = async () => [
      (await api("PATCH", `/api/personal_api_keys/${calling}`, { key: bob.key, body: { expires_at: inDays(10) } }))
        .status,
      (await api("POST", "/api/signup", { key: bob.key, body: { token: invite.token } })).status,
    ];
    return { acme, bob, boundAndJoin, acmeProjects: `${organizationPath(acme.organization.id)}/projects` };
  }

  it("makes no key that would reach it beyond the limit (409), and makes it once retried within it", async () => {
    const { bob, boundAndJoin, acmeProjects } = await invitedBob();
    const meanwhile = beforeWrites([[/^insert into "personal_api_keys"/, boundAndJoin]]);
    const made = await api("POST", "/api/personal_api_keys", { key: bob.key, body: { label: "late", scopes: ["*"] } });
    vi.restoreAllMocks();
    expect(meanwhile).toEqual([[200, 201]]);
    expect(made.body).toEqual(
      errorBody(
        "conflict",
        "conflict",
        "The organizations you belong to changed meanwhile (one limits key lifetimes). Try again.",
      ),
    );
    const labels = (await api("GET", "/api/personal_api_keys", { key: bob.key })).body.map(
      (listed: { label: string }) => listed.label,
    );
    expect(labels).not.toContain("late");
    const retried = await api("POST", "/api/personal_api_keys", {
      key: bob.key,
      body: { label: "late", scopes: ["*"], expires_at: inDays(5) },
    });
    expect(retried.status).toBe(201);
    expect((await api("GET", acmeProjects, { key: retried.body.value })).status).toBe(200);
  });

  it("takes no expiry off a key that would reach it (409)", async () => {
    const { bob, boundAndJoin } = await invitedBob();
    const other = await api("POST", "/api/personal_api_keys", {
      key: bob.key,
      body: { label: "other", scopes: ["*"], expires_at: inDays(5) },
    });
    const meanwhile = beforeWrites([[/^update "personal_api_keys" set "label"/, boundAndJoin]]);
    const unbounded = await api("PATCH", `/api/personal_api_keys/${other.body.id}`, {
      key: bob.key,
      body: { expires_at: null },
    });
    vi.restoreAllMocks();
    expect(meanwhile).toEqual([[200, 201]]);
    expect(unbounded.status).toBe(409);
    const kept = await api("GET", `/api/personal_api_keys/${other.body.id}`, { key: bob.key });
    expect(kept.body.expires_at).toBe(other.body.expires_at);
  });
});

/** An organization whose owner held its admins' personal keys to `organization:write` alone. */
async function organizationWithCeiling() {
  const tenant = await setupOrganization();
  const admin = await addMember(tenant.organization.id, MembershipLevel.admin);
  const ceiling = await api("PATCH", organizationPath(tenant.organization.id), {
    key: tenant.key,
    body: { personal_api_key_max_scopes: ["organization:write"], api_key_max_lifetime_days: 30 },
  });
  expect(ceiling.status).toBe(200);
  expect((await api("GET", `/api/environments/${tenant.project.id}/dashboards`, { key: admin.key })).status).toBe(403);
  return { ...tenant, admin, serviceKeys: `${organizationPath(tenant.organization.id)}/service_keys` };
}

const LOOSENING = denied("Only an owner can loosen this organization's key policy.");

describe("a key held to the ceiling stays within it", () => {
  it("makes, widens or rolls no service key beyond the ceiling; within it, it does", async () => {
    const { key, admin, serviceKeys } = await organizationWithCeiling();
    const minted = await api("POST", serviceKeys, {
      key: admin.key,
      body: { label: "escape", scopes: ["*"], expires_at: inDays(7) },
    });
    expect(minted.status).toBe(403);
    expect(minted.body).toEqual(beyondCeiling("*"));
    const narrow = await api("POST", serviceKeys, {
      key: admin.key,
      body: { label: "narrow", scopes: ["organization:read"], expires_at: inDays(7) },
    });
    expect(narrow.status).toBe(201);
    const widened = await api("PATCH", `${serviceKeys}/${narrow.body.id}`, {
      key: admin.key,
      body: { scopes: ["dashboard:write"] },
    });
    expect(widened.body).toEqual(beyondCeiling("dashboard:write"));
    expect((await api("GET", `${serviceKeys}/${narrow.body.id}`, { key })).body.scopes).toEqual(["organization:read"]);
    expect((await api("POST", `${serviceKeys}/${narrow.body.id}/roll`, { key: admin.key, body: {} })).status).toBe(200);

    // An owner's wider key: rolling it would hand the admin a value that does more than their own.
    const wide = await api("POST", serviceKeys, { key, body: { label: "sync", scopes: ["*"], expires_at: inDays(7) } });
    expect(wide.status).toBe(201);
    const rolled = await api("POST", `${serviceKeys}/${wide.body.id}/roll`, { key: admin.key, body: {} });
    expect(rolled.body).toEqual(beyondCeiling("*"));
    expect((await api("GET", "/api/service_keys/@current", { key: wide.body.value })).status).toBe(200);
  });

  it("tightens the policy but loosens it only with an owner's key", async () => {
    const { organization, key, admin } = await organizationWithCeiling();
    const path = organizationPath(organization.id);
    for (const body of [
      { personal_api_key_max_scopes: null },
      { personal_api_key_max_scopes: ["organization:write", "dashboard:read"] },
      { api_key_max_lifetime_days: null },
      { api_key_max_lifetime_days: 31 },
    ]) {
      const loosened = await api("PATCH", path, { key: admin.key, body });
      expect(loosened.body, JSON.stringify(body)).toEqual(LOOSENING);
    }
    const policy = await api("GET", path, { key });
    expect(policy.body).toMatchObject({
      personal_api_key_max_scopes: ["organization:write"],
      api_key_max_lifetime_days: 30,
    });
    // Members' keys turned off by an owner are turned on again by an owner alone.
    expect((await api("PATCH", path, { key, body: { members_can_use_personal_api_keys: false } })).status).toBe(200);
    const reopened = await api("PATCH", path, { key: admin.key, body: { members_can_use_personal_api_keys: true } });
    expect(reopened.body).toEqual(LOOSENING);

    const tightened = await api("PATCH", path, {
      key: admin.key,
      body: { personal_api_key_max_scopes: ["organization:read"], api_key_max_lifetime_days: 10 },
    });
    expect(tightened.status).toBe(200);
    const lifted = await api("PATCH", path, {
      key,
      body: {
        personal_api_key_max_scopes: null,
        api_key_max_lifetime_days: null,
        members_can_use_personal_api_keys: true,
      },
    });
    expect(lifted.body).toMatchObject({
      personal_api_key_max_scopes: null,
      api_key_max_lifetime_days: null,
      members_can_use_personal_api_keys: true,
    });
  });
});

describe("a key policy change below owner", () => {
  it("is written over the policy it was judged on: an owner's tightening meanwhile stands (412)", async () => {
    const { organization, key, admin } = await organizationWithCeiling();
    const path = organizationPath(organization.id);
    const ran = beforeWrites([
      [
        /^update "organizations"/,
        async () =>
          (await api("PATCH", path, { key, body: { personal_api_key_max_scopes: ["organization:read"] } })).status,
      ],
    ]);
    // Not a loosening of the policy the admin's request read; it would be of the one written meanwhile.
    const stale = await api("PATCH", path, {
      key: admin.key,
      body: { personal_api_key_max_scopes: ["organization:write"] },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expect(stale.status).toBe(412);
    expect((await api("GET", path, { key })).body.personal_api_key_max_scopes).toEqual(["organization:read"]);
  });
});

describe("a value a roll replaced", () => {
  it("changes no key policy (403), which would cut the organization's keys off; re-sending it works", async () => {
    const { organization, key: ownerKey } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const created = await api("POST", "/api/personal_api_keys", {
      key: ownerKey,
      body: { label: "ops", scopes: ["*"] },
    });
    const replaced = created.body.value as string;
    const rolled = await api("POST", `/api/personal_api_keys/${created.body.id}/roll`, {
      key: ownerKey,
      body: { overlap_seconds: 3600 },
    });
    expect(rolled.status).toBe(200);
    const path = organizationPath(organization.id);
    const before = (await api("GET", path, { key: ownerKey })).body;
    for (const body of [
      { members_can_use_personal_api_keys: false },
      { personal_api_key_max_scopes: ["user:read"] },
      { api_key_max_lifetime_days: 30 },
    ]) {
      expectError(await api("PATCH", path, { key: replaced, body }), 403, REPLACED_VALUE);
    }
    expect((await api("GET", path, { key: ownerKey })).body).toEqual(before);
    const projects = `${path}/projects`;
    expect((await api("GET", projects, { key: member.key })).status).toBe(200);
    expect((await api("GET", projects, { key: admin.key })).status).toBe(200);
    // The policy as it is, sent again with another change (as a client's PUT sends every field): no change to it.
    const renamed = await api("PATCH", path, {
      key: replaced,
      body: {
        name: "Renamed",
        members_can_use_personal_api_keys: before.members_can_use_personal_api_keys,
        personal_api_key_max_scopes: before.personal_api_key_max_scopes,
        api_key_max_lifetime_days: before.api_key_max_lifetime_days,
      },
    });
    expect([renamed.status, renamed.body.name]).toEqual([200, "Renamed"]);
  });
});

describe("an owner demoted to admin between a service key write's read and its write", () => {
  it("makes, widens or rolls no service key beyond the ceiling it was exempt from only as an owner", async () => {
    const { organization, key: firstOwnerKey } = await setupOrganization();
    const owner = await addMember(organization.id, MembershipLevel.owner);
    const serviceKeysPath = `/api/organizations/${organization.id}/service_keys`;
    const within = await api("POST", serviceKeysPath, {
      key: firstOwnerKey,
      body: { label: "within", scopes: ["organization:read"] },
    });
    const beyond = await api("POST", serviceKeysPath, {
      key: firstOwnerKey,
      body: { label: "beyond", scopes: ["dashboard:write"] },
    });
    expect([within.status, beyond.status]).toEqual([201, 201]);
    const ceiling = await api("PATCH", organizationPath(organization.id), {
      key: firstOwnerKey,
      body: { personal_api_key_max_scopes: ["organization:write"] },
    });
    expect(ceiling.status).toBe(200);
    const memberPath = `/api/organizations/${organization.id}/members/${owner.user.uuid}`;
    const setLevel = async (level: MembershipLevel) =>
      (await api("PATCH", memberPath, { key: firstOwnerKey, body: { level } })).status;
    const writes: [RegExp, string, string, unknown][] = [
      [/^insert into "service_api_keys"/, "POST", serviceKeysPath, { label: "minted", scopes: ["dashboard:write"] }],
      [/^update "service_api_keys"/, "PATCH", `${serviceKeysPath}/${within.body.id}`, { scopes: ["dashboard:write"] }],
      [/^update "service_api_keys"/, "POST", `${serviceKeysPath}/${beyond.body.id}/roll`, {}],
    ];
    for (const [write, method, path, body] of writes) {
      const ran = beforeWrites([[write, () => setLevel(MembershipLevel.admin)]]);
      const response = await api(method, path, { key: owner.key, body });
      vi.restoreAllMocks();
      expect(ran, `${method} ${path}`).toEqual([200]);
      // Judged as an owner (not held to the ceiling), written as an admin (held to it): refused.
      expectError(response, 403, INSUFFICIENT_LEVEL);
      expect(await setLevel(MembershipLevel.owner)).toBe(200);
    }
    const listed = (await api("GET", serviceKeysPath, { key: firstOwnerKey })).body as {
      label: string;
      scopes: string[];
      mask_value: string;
    }[];
    expect(listed.map(({ label, scopes, mask_value }) => [label, scopes, mask_value]).sort()).toEqual(
      [
        ["beyond", ["dashboard:write"], beyond.body.mask_value],
        ["within", ["organization:read"], within.body.mask_value],
      ].sort(),
    );
  });
});

describe("the keys that reach an organization", () => {
  it("are listed to its admins: members' personal keys and service keys, newest first", async () => {
    const { organization, owner, key } = await setupOrganization();
    const project = await createProject(organization.id, { name: "Scoped" });
    const member = await addMember(organization.id, MembershipLevel.member);
    const memberKeyId = await keyIdOf(member.user);
    const scoped = await createApiKey(member.user, { scopes: ["dashboard:read"], scopedTeams: [project.id] });
    const toThis = await createApiKey(owner, { scopedOrganizations: [organization.id] });
    // Keys that do not reach it: scoped to another organization, to another's project, of a non-member.
    const other = await setupOrganization();
    await addMembership(other.organization.id, member.user, MembershipLevel.member);
    await createApiKey(member.user, { scopedOrganizations: [other.organization.id] });
    await createApiKey(member.user, { scopedTeams: [other.project.id] });
    const service = await api("POST", `${organizationPath(organization.id)}/service_keys`, {
      key,
      body: { label: "Sync", scopes: ["organization:read"] },
    });
    const listed = await api("GET", keysPath(organization.id), { key });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const ownerKeyId = await keyIdOf(owner);
    const ownerFields = { first_name: owner.firstName, last_name: owner.lastName, email: owner.email };
    const memberFields = {
      first_name: member.user.firstName,
      last_name: member.user.lastName,
      email: member.user.email,
    };
    const personal = (id: string, fields: typeof ownerFields, rest: Record<string, unknown>) => ({
      id,
      kind: "personal",
      label: "test key",
      owner: fields,
      mask_value: expect.stringMatching(/^phx_\.\.\..{4}$/),
      last_used_at: null,
      created_at: expect.any(String),
      expires_at: null,
      ...rest,
    });
    expect(listed.body).toEqual({
      count: 5,
      next: null,
      previous: null,
      results: [
        {
          id: service.body.id,
          kind: "service",
          label: "Sync",
          owner: null,
          mask_value: service.body.mask_value,
          scopes: ["organization:read"],
          access_scope: { type: "organization" },
          last_used_at: null,
          created_at: service.body.created_at,
          expires_at: null,
        },
        personal(toThis.id, ownerFields, { scopes: ["*"], access_scope: { type: "organization" } }),
        personal(scoped.id, memberFields, {
          scopes: ["dashboard:read"],
          access_scope: { type: "projects", projects: [{ id: project.id, name: "Scoped" }] },
        }),
        personal(memberKeyId, memberFields, { scopes: ["*"], access_scope: { type: "all" } }),
        // The key these requests are made with: its use is recorded after the response.
        personal(ownerKeyId, ownerFields, {
          scopes: ["*"],
          access_scope: { type: "all" },
          last_used_at: expect.toBeOneOf([null, expect.stringMatching(ISO_TIMESTAMP)]),
        }),
      ],
    });
    // Newest first: the service key was made last; personal keys by creation.
    const page = await api("GET", `${keysPath(organization.id)}?limit=2`, { key });
    expect(page.body.results.map((row: { id: string }) => row.id)).toEqual(
      listed.body.results.slice(0, 2).map((row: { id: string }) => row.id),
    );
    expect(page.body.count).toBe(5);
    expect(page.body.next).toContain("offset=2");
    // A service key with organization:read may read the list; a plain member may not.
    expect((await api("GET", keysPath(organization.id), { key: service.body.value })).status).toBe(200);
    const refused = await api("GET", keysPath(organization.id), { key: member.key });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(INSUFFICIENT_LEVEL);
    expect((await api("GET", keysPath(other.organization.id), { key })).body).toEqual(NOT_FOUND);
  });

  it("are paged by cursor: a key made meanwhile neither repeats nor hides one, and previous walks back", async () => {
    const { organization, owner, key } = await setupOrganization();
    for (let made = 0; made < 4; made += 1) await createApiKey(owner);
    const idsOf = (page: { body: { results: { id: string }[] } }) => page.body.results.map((row) => row.id);
    const follow = (link: string) => api("GET", new URL(link).pathname + new URL(link).search, { key });
    const all = idsOf(await api("GET", keysPath(organization.id), { key }));
    expect(all).toHaveLength(5);

    const first = await api("GET", `${keysPath(organization.id)}?limit=2`, { key });
    expect(idsOf(first)).toEqual(all.slice(0, 2));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const newest = await createApiKey(owner);
    const second = await follow(first.body.next);
    expect(second.status).toBe(200);
    // By offset alone, the page would start with the first page's last key again.
    expect(idsOf(second)).toEqual(all.slice(2, 4));
    expect(second.body.count).toBe(6);
    const third = await follow(second.body.next);
    expect(idsOf(third)).toEqual(all.slice(4));
    expect(third.body.next).toBeNull();

    const back = await follow(second.body.previous);
    expect(idsOf(back)).toEqual(all.slice(0, 2));
    // The key made meanwhile lies before that page: previous still leads to it.
    const start = await follow(back.body.previous);
    expect(idsOf(start)).toEqual([newest.id, all[0]]);
  });

  it("leave out a project scheduled for deletion, and a key reaching the organization only through it", async () => {
    const { organization, key } = await setupOrganization();
    const doomed = await api("POST", `/api/organizations/${organization.id}/projects`, {
      key,
      body: { name: "Doomed" },
    });
    const kept = await api("POST", `/api/organizations/${organization.id}/projects`, { key, body: { name: "Kept" } });
    const scopedTo = async (ids: number[]) =>
      (
        await api("POST", "/api/personal_api_keys", {
          key,
          body: { label: "scoped", scopes: ["*"], scoped_teams: ids },
        })
      ).body.id as string;
    const [onlyDoomed, both] = [await scopedTo([doomed.body.id]), await scopedTo([doomed.body.id, kept.body.id])];
    expect((await api("DELETE", `/api/projects/${doomed.body.id}`, { key })).status).toBe(204);

    const listed = (await api("GET", keysPath(organization.id), { key })).body.results;
    const scopeOf = (id: string) => listed.find((row: { id: string }) => row.id === id)?.access_scope;
    expect(scopeOf(onlyDoomed)).toBeUndefined();
    expect(scopeOf(both)).toEqual({ type: "projects", projects: [{ id: kept.body.id, name: "Kept" }] });
  });

  it("can have a member's key taken out by an admin: 403 there at once, working elsewhere", async () => {
    const { organization, project, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const member = await addMember(organization.id, MembershipLevel.member);
    const memberKeyId = await keyIdOf(member.user);
    const other = await setupOrganization();
    await addMembership(other.organization.id, member.user, MembershipLevel.member);
    // Used first, so that the key's cache entry is warm: the block does not wait for it.
    expect((await api("GET", `/api/environments/${project.id}/dashboards`, { key: member.key })).status).toBe(200);

    const blocked = await api("DELETE", `${keysPath(organization.id)}/${memberKeyId}`, { key: admin.key });
    expect(blocked.status, JSON.stringify(blocked.body)).toBe(204);
    for (const path of [
      `/api/environments/${project.id}/dashboards`,
      `${organizationPath(organization.id)}/members`,
      organizationPath(organization.id),
      `/api/projects/${project.id}`,
    ]) {
      const refused = await api("GET", path, { key: member.key });
      expect(refused.status, path).toBe(403);
      expect(refused.body, path).toEqual(BLOCKED);
    }
    expect((await api("GET", `/api/environments/${other.project.id}/dashboards`, { key: member.key })).status).toBe(
      200,
    );
    expect((await api("GET", "/api/users/@me", { key: member.key })).status).toBe(200);
    // It is no longer listed, and blocking it again finds nothing.
    const listed = await api("GET", keysPath(organization.id), { key });
    expect(listed.body.results.map((row: { id: string }) => row.id)).not.toContain(memberKeyId);
    expect((await api("DELETE", `${keysPath(organization.id)}/${memberKeyId}`, { key })).body).toEqual(NOT_FOUND);
    expect(await lastEntry(organization.id, key)).toEqual(
      activityEntry(blocked, {
        organizationId: organization.id,
        projectId: null,
        user: admin.user,
        apiKeyId: await keyIdOf(admin.user),
        scope: "PersonalAPIKey",
        activity: "blocked",
        itemId: memberKeyId,
        name: "test key",
        context: { owner_email: member.user.email },
      }),
    );
  });

  it("leaves a blocked key able to revoke itself, and to roll or change neither itself nor another", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const memberKeyId = await keyIdOf(member.user);
    expect((await api("DELETE", `${keysPath(organization.id)}/${memberKeyId}`, { key })).status).toBe(204);
    const cannotAct = denied("API key cannot act on keys that reach an organization whose admins revoked its access");
    const ownPath = `/api/personal_api_keys/${memberKeyId}`;
    expectError(await api("POST", `${ownPath}/roll`, { key: member.key, body: {} }), 403, cannotAct);
    expectError(await api("PATCH", ownPath, { key: member.key, body: { label: "still mine" } }), 403, cannotAct);

    // Its user's only key: ending it gives no one anything, and nothing else could.
    const revoked = await api("DELETE", ownPath, { key: member.key });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(204);
    expectError(await api("GET", "/api/users/@me", { key: member.key }), 401, AUTHENTICATION_FAILED);
  });

  it("writes a block only while the caller is still an admin and the key's owner not above them", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const member = await addMember(organization.id, MembershipLevel.member);
    const memberPath = (uuid: string) => `${organizationPath(organization.id)}/members/${uuid}`;
    const meanwhile = (level: number, uuid: string) =>
      beforeWrites([
        [
          /^insert into "personal_api_key_blocks"/,
          async () => (await api("PATCH", memberPath(uuid), { key, body: { level } })).status,
        ],
      ]);
    // The admin is demoted between the read that judged the block and its write.
    let ran = meanwhile(MembershipLevel.member, admin.user.uuid);
    const byDemoted = await api("DELETE", `${keysPath(organization.id)}/${await keyIdOf(member.user)}`, {
      key: admin.key,
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expect(byDemoted.status).toBe(403);
    expect(byDemoted.body).toEqual(INSUFFICIENT_LEVEL);
    expect((await api("GET", `${organizationPath(organization.id)}/members`, { key: member.key })).status).toBe(200);
    // The key's owner is made an owner meanwhile: an admin may not block an owner's key.
    const secondAdmin = await addMember(organization.id, MembershipLevel.admin);
    ran = meanwhile(MembershipLevel.owner, member.user.uuid);
    const onOwner = await api("DELETE", `${keysPath(organization.id)}/${await keyIdOf(member.user)}`, {
      key: secondAdmin.key,
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expect(onOwner.status).toBe(403);
    expect(onOwner.body).toEqual(INSUFFICIENT_LEVEL);
    expect((await api("GET", `${organizationPath(organization.id)}/members`, { key: member.key })).status).toBe(200);
  });

  it("refuses a block to a member, an admin on an owner's key, a service key, unknown or foreign ids", async () => {
    const { organization, owner, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const member = await addMember(organization.id, MembershipLevel.member);
    const ownerKeyId = await keyIdOf(owner);
    const byMember = await api("DELETE", `${keysPath(organization.id)}/${ownerKeyId}`, { key: member.key });
    expect(byMember.body).toEqual(INSUFFICIENT_LEVEL);
    const byAdmin = await api("DELETE", `${keysPath(organization.id)}/${ownerKeyId}`, { key: admin.key });
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.body).toEqual(INSUFFICIENT_LEVEL);
    const service = await api("POST", `${organizationPath(organization.id)}/service_keys`, {
      key,
      body: { label: "Sync", scopes: ["*"] },
    });
    const byService = await api("DELETE", `${keysPath(organization.id)}/${await keyIdOf(member.user)}`, {
      key: service.body.value,
    });
    expect(byService.status).toBe(403);
    // A service key's id, an unknown id, and the key of another organization's member: 404.
    const other = await setupOrganization();
    for (const id of [service.body.id, "nope", await keyIdOf(other.owner)]) {
      const response = await api("DELETE", `${keysPath(organization.id)}/${id}`, { key });
      expect(response.status, id).toBe(404);
      expect(response.body, id).toEqual(NOT_FOUND);
    }
    expect((await api("GET", "/api/users/@me", { key: other.key })).status).toBe(200);
  });
});

describe("the lifetime a key is held to, by the organizations it reaches", () => {
  it("counts those it names and, of them, its projects' own: a project of another names nothing there", async () => {
    const a = await setupOrganization();
    const b = await setupOrganization();
    await addMembership(b.organization.id, a.owner, MembershipLevel.member);
    await api("PATCH", organizationPath(b.organization.id), { key: b.key, body: { api_key_max_lifetime_days: 30 } });
    const body = { label: "mixed", scopes: ["*"], scoped_organizations: [a.organization.id] };

    // Scoped to A, naming a project of B: it reaches nothing of B, whose limit does not hold it.
    const made = await api("POST", "/api/personal_api_keys", {
      key: a.key,
      body: { ...body, scoped_teams: [b.project.id] },
    });
    expect(made.status).toBe(201);
    expect(made.body.expires_at).toBeNull();
    // Naming B too, it reaches B's project: held to B's limit.
    const held = await api("POST", "/api/personal_api_keys", {
      key: a.key,
      body: { ...body, scoped_organizations: [a.organization.id, b.organization.id], scoped_teams: [b.project.id] },
    });
    expect(held.status).toBe(400);
    expect(held.body.attr).toBe("expires_at");
  });
});

describe("a key's reach, in JS and in SQL", () => {
  it("agrees on every shape of scoping: organizations, projects, both, none, a project being deleted", async () => {
    const [first, second] = [await setupOrganization(), await setupOrganization()];
    const doomed = await createProject(first.organization.id, { name: "Doomed" });
    await db
      .update(schema.projects)
      .set({ deletionScheduledAt: new Date().toISOString() })
      .where(eq(schema.projects.id, doomed.id));
    const organizationOf = new Map<number, string>([
      [first.project.id, first.organization.id],
      [second.project.id, second.organization.id],
    ]);
    const organizationLists = [
      [],
      [first.organization.id],
      [second.organization.id],
      [first.organization.id, second.organization.id],
    ];
    const projectLists = [
      [],
      [first.project.id],
      [second.project.id],
      [doomed.id],
      [first.project.id, second.project.id],
      [999_999_999],
    ];
    const disagreements = [];
    for (const scopedOrganizations of organizationLists) {
      for (const scopedTeams of projectLists) {
        const live = scopedTeams.flatMap((id) => organizationOf.get(id) ?? []);
        const inJs = scopingReaches(scopedOrganizations, scopedTeams.length === 0 ? null : live);
        for (const organizationId of [first.organization.id, second.organization.id]) {
          const reach = {
            scopedOrganizations: JSON.stringify(scopedOrganizations),
            scopedTeams: JSON.stringify(scopedTeams),
          };
          const [row] = await db.all<{ reached: number }>(
            sql`select (${reachesOrganization(reach, sql`${organizationId}`)}) as reached`,
          );
          if (Boolean(row!.reached) !== inJs(organizationId))
            disagreements.push({ scopedOrganizations, scopedTeams, organizationId });
        }
      }
    }
    expect(disagreements).toEqual([]);
  });
});
