import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../../src/db/schema";
import { MembershipLevel } from "../../../src/platform/levels";
import { api, createApiKey, createProject, createUser, db, setupOrganization } from "../../support/harness";
import { activityEntry, keyIdOf, type ExpectedActivity } from "../../support/activity-log";
import { insertInvite } from "../../support/people";

/**
 * Every write to an organization's own resources (the organization, its invites, domains and
 * projects, and the keys of its members) appends its entries to the organization's activity
 * log in the batch of the write: each entry is checked whole, a write that fails appends
 * nothing, and no token, key value or secret is ever in the log.
 */

type Organization = Awaited<ReturnType<typeof setupOrganization>>;
type Entry = Record<string, unknown> & { seq: number };
type Response = Awaited<ReturnType<typeof api>>;

const MASKED = "masked";

afterEach(() => {
  vi.restoreAllMocks();
});

async function organizationLog(organizationId: string, key: string): Promise<Entry[]> {
  const response = await api("GET", `/api/organizations/${organizationId}/activity_log`, { key });
  expect(response.status).toBe(200);
  return response.body.results;
}

const logOf = (team: Organization) => organizationLog(team.organization.id, team.key);

type Expected = Omit<ExpectedActivity, "projectId"> & { projectId?: number | null };

/** An entry as the log shows it; about no project unless `projectId` says. */
const expectedEntry = (response: Response, expected: Expected) =>
  activityEntry(response, { ...expected, projectId: expected.projectId ?? null });

/** The entries `write` appended to the log `read` reads, oldest first. */
async function entriesAppendedBy(read: () => Promise<Entry[]>, write: () => Promise<Response>) {
  const before = await read();
  const lastSeq = before[0]?.seq ?? 0;
  const response = await write();
  const entries = (await read()).filter((entry) => entry.seq > lastSeq).reverse();
  return { response, entries };
}

/** The owner's entry by the owner's key. */
async function byOwner(
  team: Organization,
  response: Response,
  expected: Omit<Expected, "organizationId" | "user" | "apiKeyId">,
) {
  return expectedEntry(response, {
    organizationId: team.organization.id,
    user: team.owner,
    apiKeyId: await keyIdOf(team.owner),
    ...expected,
  });
}

async function expectNothingAppended(team: Organization, write: () => Promise<Response>, status: number) {
  const { response, entries } = await entriesAppendedBy(() => logOf(team), write);
  expect(response.status).toBe(status);
  expect(entries).toEqual([]);
}

const organizationPath = (team: Organization) => `/api/organizations/${team.organization.id}`;

describe("organizations", () => {
  it("an update records the settings that changed", async () => {
    const team = await setupOrganization();
    const { response, entries } = await entriesAppendedBy(
      () => logOf(team),
      () =>
        api("PATCH", organizationPath(team), {
          key: team.key,
          body: { name: "Renamed", members_can_invite: false, enforce_2fa: true },
        }),
    );
    expect(response.status).toBe(200);
    expect(entries).toEqual([
      await byOwner(team, response, {
        scope: "Organization",
        activity: "updated",
        itemId: team.organization.id,
        name: "Renamed",
        changes: [
          { type: "Organization", action: "changed", field: "name", before: team.organization.name, after: "Renamed" },
          { type: "Organization", action: "changed", field: "enforce_2fa", before: null, after: true },
          { type: "Organization", action: "changed", field: "members_can_invite", before: true, after: false },
        ],
      }),
    ]);
  });

  it("an update that changes nothing, or fails, records nothing", async () => {
    const team = await setupOrganization();
    await expectNothingAppended(
      team,
      () => api("PATCH", organizationPath(team), { key: team.key, body: { name: team.organization.name } }),
      200,
    );
    await expectNothingAppended(
      team,
      () => api("PATCH", organizationPath(team), { key: team.key, body: { name: "" } }),
      400,
    );
  });

  it("a creation records the organization created and its owner joined, in the new organization's log", async () => {
    const team = await setupOrganization();
    const response = await api("POST", "/api/organizations", { key: team.key, body: { name: "Brand new" } });
    expect(response.status).toBe(201);
    const [membership] = await db
      .select()
      .from(schema.organizationMemberships)
      .where(eq(schema.organizationMemberships.organizationId, response.body.id));
    const log = await organizationLog(response.body.id, team.key);
    const common = { organizationId: response.body.id, user: team.owner, apiKeyId: await keyIdOf(team.owner) };
    expect(log.reverse()).toEqual([
      expectedEntry(response, {
        ...common,
        scope: "Organization",
        activity: "created",
        itemId: response.body.id,
        name: "Brand new",
      }),
      expectedEntry(response, {
        ...common,
        scope: "OrganizationMembership",
        activity: "joined",
        itemId: membership!.id,
        name: team.owner.email,
        context: { user_uuid: team.owner.uuid },
      }),
    ]);
    expect(await logOf(team)).toEqual([]);
  });
});

const invitesPath = (team: Organization) => `${organizationPath(team)}/invites`;

describe("invites", () => {
  it("a creation records one entry per invite, named by e-mail, never with its token", async () => {
    const team = await setupOrganization();
    const single = await entriesAppendedBy(
      () => logOf(team),
      () => api("POST", invitesPath(team), { key: team.key, body: { target_email: "ann@example.com" } }),
    );
    expect(single.response.status).toBe(201);
    expect(single.entries).toEqual([
      await byOwner(team, single.response, {
        scope: "OrganizationInvite",
        activity: "created",
        itemId: single.response.body.id,
        name: "ann@example.com",
        context: { level: MembershipLevel.member, private_project_access: null },
      }),
    ]);

    const bulk = await entriesAppendedBy(
      () => logOf(team),
      () =>
        api("POST", `${invitesPath(team)}/bulk`, {
          key: team.key,
          body: [{ target_email: "bob@example.com" }, { target_email: "cat@example.com" }],
        }),
    );
    expect(bulk.response.status).toBe(201);
    expect(bulk.entries).toEqual(
      await Promise.all(
        (bulk.response.body as { id: string; target_email: string }[]).map((invite) =>
          byOwner(team, bulk.response, {
            scope: "OrganizationInvite",
            activity: "created",
            itemId: invite.id,
            name: invite.target_email,
            context: { level: MembershipLevel.member, private_project_access: null },
          }),
        ),
      ),
    );
    const log = JSON.stringify(await logOf(team));
    for (const token of [
      single.response.body.token,
      ...bulk.response.body.map((invite: { token: string }) => invite.token),
    ]) {
      expect(typeof token).toBe("string");
      expect(log).not.toContain(token);
    }
  });

  it("a cancel records the invite cancelled; an unknown invite or an invalid one records nothing", async () => {
    const team = await setupOrganization();
    const invite = await insertInvite(team.organization.id, team.owner, { targetEmail: "dan@example.com" });
    const { response, entries } = await entriesAppendedBy(
      () => logOf(team),
      () => api("DELETE", `${invitesPath(team)}/${invite.id}`, { key: team.key }),
    );
    expect(response.status).toBe(204);
    expect(entries).toEqual([
      await byOwner(team, response, {
        scope: "OrganizationInvite",
        activity: "cancelled",
        itemId: invite.id,
        name: "dan@example.com",
      }),
    ]);
    await expectNothingAppended(team, () => api("DELETE", `${invitesPath(team)}/${invite.id}`, { key: team.key }), 404);
    await expectNothingAppended(
      team,
      () => api("POST", invitesPath(team), { key: team.key, body: { target_email: "not an e-mail" } }),
      400,
    );
    expect(JSON.stringify(await logOf(team))).not.toContain(invite.token);
  });
});

describe("signup by invite", () => {
  it("a new user's signup records their first key, their joining and the invite accepted, by them", async () => {
    const team = await setupOrganization();
    const invite = await insertInvite(team.organization.id, team.owner, { targetEmail: "eve@example.com" });
    const { response, entries } = await entriesAppendedBy(
      () => logOf(team),
      () => api("POST", `/api/signup/${invite.token}`, { body: { first_name: "Eve" } }),
    );
    expect(response.status).toBe(201);
    const [user] = await db.select().from(schema.users).where(eq(schema.users.uuid, response.body.user.uuid));
    const [membership] = await db
      .select()
      .from(schema.organizationMemberships)
      .where(eq(schema.organizationMemberships.userId, user!.id));
    const common = { organizationId: team.organization.id, user: user!, apiKeyId: null };
    const firstKey = response.body.personal_api_key;
    expect(entries).toEqual([
      // The first key it is given, which reaches this organization: its revocation is recorded here too.
      expectedEntry(response, {
        ...common,
        scope: "PersonalAPIKey",
        activity: "created",
        itemId: firstKey.id,
        name: firstKey.label,
        context: { scopes: ["*"], scoped_organizations: [], scoped_teams: [] },
      }),
      expectedEntry(response, {
        ...common,
        scope: "OrganizationMembership",
        activity: "joined",
        itemId: membership!.id,
        name: "eve@example.com",
        context: { user_uuid: user!.uuid },
      }),
      expectedEntry(response, {
        ...common,
        scope: "OrganizationInvite",
        activity: "accepted",
        itemId: invite.id,
        name: "eve@example.com",
        // What the joining granted: the invite's level, no project access.
        context: { level: MembershipLevel.member, private_project_access: [] },
      }),
    ]);
    const log = JSON.stringify(await logOf(team));
    expect(log).not.toContain(invite.token);
    expect(log).not.toContain(response.body.personal_api_key.value);
  });

  it("what a joining grants is traced to its invite's entry: the level and the private project access", async () => {
    const team = await setupOrganization();
    const secret = await createProject(team.organization.id, { name: "Secret", access_control: true });
    const access = [{ id: secret.id, level: "admin" }];
    const { response, entries } = await entriesAppendedBy(
      () => logOf(team),
      () =>
        api("POST", invitesPath(team), {
          key: team.key,
          body: { target_email: "fay@example.com", level: MembershipLevel.admin, private_project_access: access },
        }),
    );
    expect(response.status).toBe(201);
    expect(entries).toEqual([
      await byOwner(team, response, {
        scope: "OrganizationInvite",
        activity: "created",
        itemId: response.body.id,
        name: "fay@example.com",
        context: { level: MembershipLevel.admin, private_project_access: access },
      }),
    ]);
  });

  it("an existing user's acceptance is made by them and their key; a used token records nothing", async () => {
    const team = await setupOrganization();
    const joiner = await setupOrganization();
    const invite = await insertInvite(team.organization.id, team.owner, { targetEmail: joiner.owner.email });
    const { response, entries } = await entriesAppendedBy(
      () => logOf(team),
      () => api("POST", `/api/signup/${invite.token}`, { key: joiner.key, body: {} }),
    );
    expect(response.status).toBe(201);
    const joined = (
      await db
        .select()
        .from(schema.organizationMemberships)
        .where(eq(schema.organizationMemberships.userId, joiner.owner.id))
    ).find((row) => row.organizationId === team.organization.id);
    const common = { organizationId: team.organization.id, user: joiner.owner, apiKeyId: await keyIdOf(joiner.owner) };
    expect(entries).toEqual([
      expectedEntry(response, {
        ...common,
        scope: "OrganizationMembership",
        activity: "joined",
        itemId: joined!.id,
        name: joiner.owner.email,
        context: { user_uuid: joiner.owner.uuid },
      }),
      expectedEntry(response, {
        ...common,
        scope: "OrganizationInvite",
        activity: "accepted",
        itemId: invite.id,
        name: joiner.owner.email,
        // What the joining granted: the invite's level, no project access.
        context: { level: MembershipLevel.member, private_project_access: [] },
      }),
    ]);
    await expectNothingAppended(
      team,
      () => api("POST", `/api/signup/${invite.token}`, { key: joiner.key, body: {} }),
      404,
    );
  });
});

const domainsPath = (team: Organization) => `${organizationPath(team)}/domains`;

describe("domains", () => {
  it("records a domain created, updated (its SAML certificate masked), verified and deleted", async () => {
    const team = await setupOrganization();
    const domain = `${crypto.randomUUID().slice(0, 8)}.example.com`;
    const created = await entriesAppendedBy(
      () => logOf(team),
      () => api("POST", domainsPath(team), { key: team.key, body: { domain } }),
    );
    expect(created.response.status).toBe(201);
    const id: string = created.response.body.id;
    const item = { scope: "OrganizationDomain", itemId: id, name: domain };
    expect(created.entries).toEqual([await byOwner(team, created.response, { ...item, activity: "created" })]);

    const certificate = "-----BEGIN CERTIFICATE-----secret-cert-body-----END CERTIFICATE-----";
    const updated = await entriesAppendedBy(
      () => logOf(team),
      () =>
        api("PATCH", `${domainsPath(team)}/${id}`, {
          key: team.key,
          body: { saml_entity_id: "entity", saml_x509_cert: certificate },
        }),
    );
    expect(updated.response.status).toBe(200);
    expect(updated.entries).toEqual([
      await byOwner(team, updated.response, {
        ...item,
        activity: "updated",
        changes: [
          { type: "OrganizationDomain", action: "changed", field: "saml_entity_id", before: null, after: "entity" },
          { type: "OrganizationDomain", action: "changed", field: "saml_x509_cert", before: MASKED, after: MASKED },
        ],
      }),
    ]);

    // Before verification, JIT provisioning is refused (400).
    const jit = { key: team.key, body: { jit_provisioning_enabled: true } };
    await expectNothingAppended(team, () => api("PATCH", `${domainsPath(team)}/${id}`, jit), 400);

    const challenge: string = created.response.body.verification_challenge;
    vi.spyOn(globalThis, "fetch").mockImplementation(
      async () => new Response(JSON.stringify({ Status: 0, Answer: [] }), { status: 200 }),
    );
    await expectNothingAppended(team, () => api("POST", `${domainsPath(team)}/${id}/verify/`, { key: team.key }), 200);
    vi.restoreAllMocks();
    vi.spyOn(globalThis, "fetch").mockImplementation(
      async () =>
        new Response(
          JSON.stringify({
            Status: 0,
            Answer: [{ name: `_posthog-challenge.${domain}`, type: 16, TTL: 300, data: `"${challenge}"` }],
          }),
          {
            status: 200,
          },
        ),
    );
    const verified = await entriesAppendedBy(
      () => logOf(team),
      () => api("POST", `${domainsPath(team)}/${id}/verify/`, { key: team.key }),
    );
    expect(verified.response.status).toBe(200);
    expect(verified.response.body.is_verified).toBe(true);
    expect(verified.entries).toEqual([await byOwner(team, verified.response, { ...item, activity: "verified" })]);
    vi.restoreAllMocks();

    const enabled = await entriesAppendedBy(
      () => logOf(team),
      () => api("PATCH", `${domainsPath(team)}/${id}`, jit),
    );
    expect(enabled.response.status).toBe(200);
    expect(enabled.entries).toEqual([
      await byOwner(team, enabled.response, {
        ...item,
        activity: "updated",
        changes: [
          {
            type: "OrganizationDomain",
            action: "changed",
            field: "jit_provisioning_enabled",
            before: false,
            after: true,
          },
        ],
      }),
    ]);

    const deleted = await entriesAppendedBy(
      () => logOf(team),
      () => api("DELETE", `${domainsPath(team)}/${id}`, { key: team.key }),
    );
    expect(deleted.response.status).toBe(204);
    expect(deleted.entries).toEqual([await byOwner(team, deleted.response, { ...item, activity: "deleted" })]);

    await expectNothingAppended(team, () => api("DELETE", `${domainsPath(team)}/${id}`, { key: team.key }), 404);
    await expectNothingAppended(
      team,
      () => api("POST", domainsPath(team), { key: team.key, body: { domain: "" } }),
      400,
    );
    const log = JSON.stringify(await logOf(team));
    expect(log).not.toContain(certificate);
    expect(log).not.toContain(challenge);
  });
});

describe("projects", () => {
  it("records a project created, and updated from each of its PATCH routes with what changed", async () => {
    const team = await setupOrganization();
    const created = await entriesAppendedBy(
      () => logOf(team),
      () => api("POST", `${organizationPath(team)}/projects`, { key: team.key, body: { name: "Analytics" } }),
    );
    expect(created.response.status).toBe(201);
    const projectId: number = created.response.body.id;
    const item = { scope: "Project", itemId: String(projectId), projectId };
    expect(created.entries).toEqual([
      await byOwner(team, created.response, { ...item, activity: "created", name: "Analytics" }),
    ]);

    const paths = [
      `${organizationPath(team)}/projects/${projectId}`,
      `/api/projects/${projectId}`,
      `/api/environments/${projectId}`,
    ];
    const names = ["Analytics 2", "Analytics 3", "Analytics 4"];
    let previous = "Analytics";
    for (const [index, path] of paths.entries()) {
      const updated = await entriesAppendedBy(
        () => logOf(team),
        () => api("PATCH", path, { key: team.key, body: { name: names[index] } }),
      );
      expect(updated.response.status).toBe(200);
      expect(updated.entries).toEqual([
        await byOwner(team, updated.response, {
          ...item,
          activity: "updated",
          name: names[index]!,
          changes: [{ type: "Project", action: "changed", field: "name", before: previous, after: names[index] }],
        }),
      ]);
      previous = names[index]!;
    }

    const privacy = await entriesAppendedBy(
      () => logOf(team),
      () => api("PATCH", `/api/projects/${projectId}`, { key: team.key, body: { access_control: true } }),
    );
    expect(privacy.entries).toEqual([
      await byOwner(team, privacy.response, {
        ...item,
        activity: "updated",
        name: previous,
        changes: [{ type: "Project", action: "changed", field: "access_control", before: false, after: true }],
      }),
    ]);
    const log = JSON.stringify(await logOf(team));
    expect(log).not.toContain(created.response.body.api_token);
  });

  it("records a Slack incoming-webhook URL (its holder posts to the channel) as changed, never its value", async () => {
    const team = await setupOrganization();
    const url = "https://hooks.slack.com/services/T0000/B0000/posts-to-the-channel";
    const item = { scope: "Project", itemId: String(team.project.id), projectId: team.project.id };
    for (const value of [url, null]) {
      const updated = await entriesAppendedBy(
        () => logOf(team),
        () =>
          api("PATCH", `/api/environments/${team.project.id}`, {
            key: team.key,
            body: { slack_incoming_webhook: value },
          }),
      );
      expect(updated.response.status).toBe(200);
      expect(updated.entries).toEqual([
        await byOwner(team, updated.response, {
          ...item,
          activity: "updated",
          name: team.project.name,
          changes: [
            { type: "Project", action: "changed", field: "slack_incoming_webhook", before: MASKED, after: MASKED },
          ],
        }),
      ]);
    }
    const feed = await api("GET", `${organizationPath(team)}/events`, { key: team.key });
    expect(feed.status).toBe(200);
    expect(JSON.stringify([await logOf(team), feed.body])).not.toContain("posts-to-the-channel");
  });

  it("a duplicate name (409), an invalid body (400) or an unknown project (404) records nothing", async () => {
    const team = await setupOrganization();
    const projects = `${organizationPath(team)}/projects`;
    await expectNothingAppended(
      team,
      () => api("POST", projects, { key: team.key, body: { name: "default PROJECT" } }),
      409,
    );
    await expectNothingAppended(team, () => api("POST", projects, { key: team.key, body: { name: "" } }), 400);
    const other = await createProject(team.organization.id, { name: "Other" });
    // The rename's entry is in the batch the unique name refuses: it is rolled back with it.
    const rename = { key: team.key, body: { name: "DEFAULT project" } };
    await expectNothingAppended(team, () => api("PATCH", `/api/projects/${other.id}`, rename), 409);
    await expectNothingAppended(
      team,
      () => api("PATCH", `/api/projects/${team.project.id + 100000}`, { key: team.key, body: { name: "x" } }),
      404,
    );
    await expectNothingAppended(
      team,
      () => api("PATCH", `/api/projects/${team.project.id}`, { key: team.key, body: { name: team.project.name } }),
      200,
    );
  });
});

describe("personal API keys", () => {
  it("a key is recorded, created and revoked, in each organization it reaches, never with its value", async () => {
    const first = await setupOrganization();
    const second = await setupOrganization();
    await db.insert(schema.organizationMemberships).values({
      id: crypto.randomUUID(),
      organizationId: second.organization.id,
      userId: first.owner.id,
      level: MembershipLevel.admin,
      joinedAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    });
    const bothLogs = async () => [
      ...(await logOf(first)),
      ...(await organizationLog(second.organization.id, first.key)),
    ];
    const body = { label: "CI key", scopes: ["project:read"] };
    const created = await entriesAppendedBy(bothLogs, () =>
      api("POST", "/api/personal_api_keys", { key: first.key, body }),
    );
    expect(created.response.status).toBe(201);
    const keyId: string = created.response.body.id;
    const context = { scopes: ["project:read"], scoped_organizations: [], scoped_teams: [] };
    const entry = (organizationId: string, activity: string, response: Response) =>
      keyIdOf(first.owner).then((apiKeyId) =>
        expectedEntry(response, {
          organizationId,
          user: first.owner,
          apiKeyId,
          scope: "PersonalAPIKey",
          activity,
          itemId: keyId,
          name: "CI key",
          context,
        }),
      );
    expect(await logOf(first)).toEqual([await entry(first.organization.id, "created", created.response)]);
    expect(await organizationLog(second.organization.id, first.key)).toContainEqual(
      await entry(second.organization.id, "created", created.response),
    );

    const revoked = await entriesAppendedBy(
      () => logOf(first),
      () => api("DELETE", `/api/personal_api_keys/${keyId}`, { key: first.key }),
    );
    expect(revoked.response.status).toBe(204);
    expect(revoked.entries).toEqual([await entry(first.organization.id, "revoked", revoked.response)]);
    expect(await organizationLog(second.organization.id, first.key)).toContainEqual(
      await entry(second.organization.id, "revoked", revoked.response),
    );

    await expectNothingAppended(first, () => api("DELETE", `/api/personal_api_keys/${keyId}`, { key: first.key }), 404);
    await expectNothingAppended(
      first,
      () => api("POST", "/api/personal_api_keys", { key: first.key, body: { label: "", scopes: [] } }),
      400,
    );
    const log = JSON.stringify(await bothLogs());
    expect(log).not.toContain(created.response.body.value);
    const [row] = await db
      .select()
      .from(schema.personalApiKeys)
      .where(eq(schema.personalApiKeys.userId, first.owner.id));
    expect(log).not.toContain(row!.secureValue);
  });

  it("a key scoped to one organization is recorded there only", async () => {
    const first = await setupOrganization();
    const other = await setupOrganization();
    const body = { label: "Scoped", scopes: ["*"], scoped_organizations: [first.organization.id] };
    const created = await entriesAppendedBy(
      () => logOf(first),
      () => api("POST", "/api/personal_api_keys", { key: first.key, body }),
    );
    expect(created.response.status).toBe(201);
    expect(created.entries).toHaveLength(1);
    expect(created.entries[0]).toMatchObject({
      scope: "PersonalAPIKey",
      activity: "created",
      item_id: created.response.body.id,
    });
    expect(await logOf(other)).toEqual([]);
  });

  it("a key of a user in no organization is created with no entry anywhere", async () => {
    const loner = await createApiKey(await createUser(), { scopes: ["*"] });
    const response = await api("POST", "/api/personal_api_keys", {
      key: loner.value,
      body: { label: "Alone", scopes: ["*"] },
    });
    expect(response.status).toBe(201);
    expect(await db.select().from(schema.activityLog).where(eq(schema.activityLog.itemId, response.body.id))).toEqual(
      [],
    );
  });
});
