import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { MembershipLevel } from "../../src/platform/levels";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  db,
  errorBody,
  ISO_TIMESTAMP,
  memberBody,
  nextLink,
  setupOrganization,
  userBasic,
  UUID,
  type TestUser,
} from "../support/harness";
import {
  AUTHENTICATION_FAILED,
  changedMeanwhile,
  expectError,
  INSUFFICIENT_LEVEL,
  missingScope,
  NOT_AUTHENTICATED,
  NOT_FOUND,
} from "../support/error-bodies";
import { beforeWrites } from "../support/races";
import { createDashboard, dashboardsPath } from "../environments/dashboard-fixtures";

const rolesPath = (organizationId: string) => `/api/organizations/${organizationId}/roles`;
const membershipsPath = (organizationId: string, roleId: string) =>
  `${rolesPath(organizationId)}/${roleId}/role_memberships`;

async function createRole(organizationId: string, key: string, name: string) {
  const response = await api("POST", rolesPath(organizationId), { key, body: { name } });
  expect(response.status).toBe(201);
  return response.body as { id: string; name: string; created_at: string };
}

async function addToRole(organizationId: string, key: string, roleId: string, user: TestUser) {
  const response = await api("POST", membershipsPath(organizationId, roleId), { key, body: { user_uuid: user.uuid } });
  expect(response.status).toBe(201);
  return response.body as { id: string; joined_at: string };
}

type Membership = typeof schema.organizationMemberships.$inferSelect;

/** A role membership's whole body, as PostHog's RoleMembershipSerializer. */
const roleMembershipBody = (id: string, roleId: string, user: TestUser, membership: Membership, joinedAt: string) => ({
  id,
  role_id: roleId,
  organization_member: memberBody(membership, user),
  user: userBasic(user),
  joined_at: joinedAt,
  updated_at: joinedAt,
});

const roleBody = (role: { id: string; name: string; created_at: string }, members: unknown[] = []) => ({
  id: role.id,
  name: role.name,
  created_at: role.created_at,
  created_by: null,
  members,
  is_default: false,
});

const activity = async (organizationId: string, key: string, scope: string) =>
  (await api("GET", `/api/organizations/${organizationId}/activity_log?scope=${scope}`, { key })).body.results as {
    activity: string;
    item_id: string;
    detail: { name: string | null; changes: unknown; context: unknown };
  }[];

describe("roles", () => {
  it("creates, lists, retrieves, renames and deletes a role (admin writes, member reads), each logged", async () => {
    const { organization, key, owner } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const created = await api("POST", `${rolesPath(organization.id)}/`, { key, body: { name: "  Engineering " } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      name: "Engineering",
      created_at: expect.stringMatching(ISO_TIMESTAMP),
      created_by: null,
      members: [],
      is_default: false,
    });
    const role = created.body as { id: string; name: string; created_at: string };
    const second = await createRole(organization.id, key, "Support");

    const listed = await api("GET", rolesPath(organization.id), { key: member.key });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      count: 2,
      next: null,
      previous: null,
      results: [roleBody(role), roleBody(second)],
    });
    const retrieved = await api("GET", `${rolesPath(organization.id)}/${role.id}`, { key: member.key });
    expect(retrieved.body).toEqual(roleBody(role));

    const renamed = await api("PATCH", `${rolesPath(organization.id)}/${role.id}`, { key, body: { name: "Platform" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual(roleBody({ ...role, name: "Platform" }));
    const unchanged = await api("PATCH", `${rolesPath(organization.id)}/${role.id}`, { key, body: {} });
    expect(unchanged.body).toEqual(roleBody({ ...role, name: "Platform" }));

    const deleted = await api("DELETE", `${rolesPath(organization.id)}/${role.id}`, { key });
    expect(deleted.status).toBe(204);
    expectError(await api("GET", `${rolesPath(organization.id)}/${role.id}`, { key }), 404, NOT_FOUND);
    expectError(await api("DELETE", `${rolesPath(organization.id)}/${role.id}`, { key }), 404, NOT_FOUND);
    expect((await api("GET", rolesPath(organization.id), { key })).body.count).toBe(1);

    const entries = await activity(organization.id, key, "Role");
    expect(entries.map((entry) => [entry.activity, entry.item_id, entry.detail.name])).toEqual([
      ["deleted", role.id, "Platform"],
      ["updated", role.id, "Platform"],
      ["created", second.id, "Support"],
      ["created", role.id, "Engineering"],
    ]);
    expect(entries[1]!.detail.changes).toEqual([
      { type: "Role", action: "changed", field: "name", before: "Engineering", after: "Platform" },
    ]);
    const log = await api("GET", `/api/organizations/${organization.id}/activity_log?scope=Role`, { key });
    expect(log.body.results[0].user).toEqual(userBasic(owner));
  });

  it("pages the list, earliest first, with cursor links", async () => {
    const { organization, key } = await setupOrganization();
    const roles = [];
    for (const name of ["A", "B", "C"]) roles.push(await createRole(organization.id, key, name));
    const first = await api("GET", `${rolesPath(organization.id)}?limit=2`, { key });
    expect(first.body.count).toBe(3);
    expect(first.body.results.map((role: { id: string }) => role.id)).toEqual([roles[0]!.id, roles[1]!.id]);
    expect(first.body.next).toBe(nextLink(rolesPath(organization.id), 2, 2, [roles[1]!.created_at, roles[1]!.id]));
    const second = await api("GET", first.body.next.replace("http://localhost", ""), { key });
    expect(second.body.results.map((role: { id: string }) => role.id)).toEqual([roles[2]!.id]);
    expect(second.body.next).toBeNull();
  });

  it("refuses a taken name (whatever its case), a blank, long or invisible one: 400 with attr", async () => {
    const { organization, key } = await setupOrganization();
    const role = await createRole(organization.id, key, "Engineering");
    const other = await createRole(organization.id, key, "Support");
    const taken = errorBody("validation_error", "unique", "There is already a role with this name.", "name");
    expectError(await api("POST", rolesPath(organization.id), { key, body: { name: "ENGINEERING" } }), 400, taken);
    // A character rendered as nothing neither makes another name nor is allowed in one.
    const invisible = await api("POST", rolesPath(organization.id), { key, body: { name: "Engineering\u034f" } });
    expect(invisible.body).toMatchObject({ code: "invalid_input", attr: "name" });
    const path = `${rolesPath(organization.id)}/${other.id}`;
    expectError(await api("PATCH", path, { key, body: { name: "engineering" } }), 400, taken);
    for (const [name, code] of [
      ["", "blank"],
      ["   ", "blank"],
      ["\u3164", "blank"],
      ["\u2800", "blank"],
      ["x".repeat(201), "max_length"],
      ["Eng\u200bineering", "invalid_input"],
      [null, "null"],
    ] as const) {
      const response = await api("POST", rolesPath(organization.id), { key, body: { name } });
      expect(response.status, String(name)).toBe(400);
      expect(response.body).toMatchObject({ type: "validation_error", code, attr: "name" });
    }
    expect((await api("POST", rolesPath(organization.id), { key, body: {} })).body).toMatchObject({
      code: "required",
      attr: "name",
    });
    // Another organization may use the same name.
    const elsewhere = await setupOrganization();
    await createRole(elsewhere.organization.id, elsewhere.key, "Engineering");
    const names = (await api("GET", rolesPath(organization.id), { key })).body.results.map(
      (item: { name: string }) => item.name,
    );
    expect(names).toEqual([role.name, other.name]);
  });

  it("is for admins to write (403 for a member), needs the scopes (403) and a key (401)", async () => {
    const { organization, key, owner } = await setupOrganization();
    const role = await createRole(organization.id, key, "Engineering");
    const member = await addMember(organization.id, MembershipLevel.member);
    const path = `${rolesPath(organization.id)}/${role.id}`;
    expectError(
      await api("POST", rolesPath(organization.id), { key: member.key, body: { name: "X" } }),
      403,
      INSUFFICIENT_LEVEL,
    );
    expectError(await api("PATCH", path, { key: member.key, body: { name: "X" } }), 403, INSUFFICIENT_LEVEL);
    expectError(await api("DELETE", path, { key: member.key }), 403, INSUFFICIENT_LEVEL);
    const admin = await addMember(organization.id, MembershipLevel.admin);
    expect((await api("PATCH", path, { key: admin.key, body: { name: "Renamed" } })).status).toBe(200);

    const readOnly = await createApiKey(owner, { scopes: ["organization:read"] });
    expectError(
      await api("POST", rolesPath(organization.id), { key: readOnly.value, body: { name: "X" } }),
      403,
      missingScope("organization:write"),
    );
    expectError(await api("DELETE", path, { key: readOnly.value }), 403, missingScope("organization:write"));
    const noRead = await createApiKey(owner, { scopes: ["project:read"] });
    expectError(
      await api("GET", rolesPath(organization.id), { key: noRead.value }),
      403,
      missingScope("organization:read"),
    );
    expectError(await api("GET", path, { key: noRead.value }), 403, missingScope("organization:read"));
    const scopedElsewhere = await createApiKey(owner, {
      scopedOrganizations: ["0192a000-0000-7000-8000-000000000000"],
    });
    expectError(
      await api("GET", rolesPath(organization.id), { key: scopedElsewhere.value }),
      403,
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key does not have access to the requested organization",
      ),
    );
    expectError(await api("GET", rolesPath(organization.id)), 401, NOT_AUTHENTICATED);
    expectError(
      await api("GET", rolesPath(organization.id), { key: `phx_${"x".repeat(44)}` }),
      401,
      AUTHENTICATION_FAILED,
    );
    expect((await api("GET", path, { key })).body.name).toBe("Renamed");
  });

  it("never reaches another organization's role (404), nor lets a stranger see the list (404)", async () => {
    const { organization, key } = await setupOrganization();
    const other = await setupOrganization();
    const foreign = await createRole(other.organization.id, other.key, "Theirs");
    const viaMine = `${rolesPath(organization.id)}/${foreign.id}`;
    expectError(await api("GET", viaMine, { key }), 404, NOT_FOUND);
    expectError(await api("PATCH", viaMine, { key, body: { name: "Mine" } }), 404, NOT_FOUND);
    expectError(await api("DELETE", viaMine, { key }), 404, NOT_FOUND);
    expectError(await api("GET", membershipsPath(organization.id, foreign.id), { key }), 404, NOT_FOUND);
    const stranger = await addMember(other.organization.id, MembershipLevel.member);
    expectError(
      await api("POST", membershipsPath(organization.id, foreign.id), { key, body: { user_uuid: stranger.user.uuid } }),
      404,
      NOT_FOUND,
    );
    expectError(await api("GET", rolesPath(other.organization.id), { key }), 404, NOT_FOUND);
    expectError(await api("GET", `${rolesPath(organization.id)}/not-a-uuid`, { key }), 404, NOT_FOUND);
    expect((await api("GET", `${rolesPath(other.organization.id)}/${foreign.id}`, { key: other.key })).body.name).toBe(
      "Theirs",
    );
  });
});

describe("role memberships", () => {
  it("adds a member by user uuid, lists, retrieves and removes them, each logged", async () => {
    const { organization, key } = await setupOrganization();
    const role = await createRole(organization.id, key, "Engineering");
    const ada = await addMember(organization.id, MembershipLevel.member);
    const bob = await addMember(organization.id, MembershipLevel.admin);
    const path = membershipsPath(organization.id, role.id);
    const added = await api("POST", `${path}/`, { key, body: { user_uuid: ada.user.uuid } });
    expect(added.status).toBe(201);
    const adaBody = roleMembershipBody(added.body.id, role.id, ada.user, ada.membership, added.body.joined_at);
    expect(added.body).toEqual(adaBody);
    expect(added.body.id).toMatch(UUID);
    expect(added.body.joined_at).toMatch(ISO_TIMESTAMP);
    const bobAdded = await addToRole(organization.id, key, role.id, bob.user);
    const bobBody = roleMembershipBody(bobAdded.id, role.id, bob.user, bob.membership, bobAdded.joined_at);

    const listed = await api("GET", path, { key: ada.key });
    expect(listed.body).toEqual({ count: 2, next: null, previous: null, results: [adaBody, bobBody] });
    const paged = await api("GET", `${path}?limit=1`, { key });
    expect(paged.body.results).toEqual([adaBody]);
    expect(paged.body.next).toBe(nextLink(path, 1, 1, [adaBody.joined_at, adaBody.id]));
    expect((await api("GET", `${path}/${bobAdded.id}`, { key: ada.key })).body).toEqual(bobBody);
    const withMembers = await api("GET", `${rolesPath(organization.id)}/${role.id}`, { key });
    expect(withMembers.body).toEqual(roleBody(role, [adaBody, bobBody]));
    expect((await api("GET", rolesPath(organization.id), { key })).body.results).toEqual([
      roleBody(role, [adaBody, bobBody]),
    ]);

    expect((await api("DELETE", `${path}/${added.body.id}`, { key })).status).toBe(204);
    expectError(await api("GET", `${path}/${added.body.id}`, { key }), 404, NOT_FOUND);
    expectError(await api("DELETE", `${path}/${added.body.id}`, { key }), 404, NOT_FOUND);
    expect((await api("GET", path, { key })).body).toEqual({
      count: 1,
      next: null,
      previous: null,
      results: [bobBody],
    });

    const entries = await activity(organization.id, key, "RoleMembership");
    expect(entries.map((entry) => [entry.activity, entry.item_id, entry.detail.name])).toEqual([
      ["deleted", added.body.id, ada.user.email],
      ["created", bobAdded.id, bob.user.email],
      ["created", added.body.id, ada.user.email],
    ]);
    expect(entries[0]!.detail.context).toEqual({ role_id: role.id, role_name: role.name, user_uuid: ada.user.uuid });
  });

  it("refuses a user who is no member (400 user_uuid), one already in the role (400), a bad uuid (400)", async () => {
    const { organization, key } = await setupOrganization();
    const role = await createRole(organization.id, key, "Engineering");
    const ada = await addMember(organization.id, MembershipLevel.member);
    const other = await setupOrganization();
    const path = membershipsPath(organization.id, role.id);
    const notMember = errorBody("validation_error", "does_not_exist", "User does not exist.", "user_uuid");
    expectError(await api("POST", path, { key, body: { user_uuid: other.owner.uuid } }), 400, notMember);
    expectError(
      await api("POST", path, { key, body: { user_uuid: "0192a000-0000-7000-8000-000000000000" } }),
      400,
      notMember,
    );
    expect((await api("POST", path, { key, body: { user_uuid: "nope" } })).body).toMatchObject({
      code: "invalid_input",
      attr: "user_uuid",
    });
    expect((await api("POST", path, { key, body: {} })).body).toMatchObject({ code: "required", attr: "user_uuid" });
    await addToRole(organization.id, key, role.id, ada.user);
    expectError(
      await api("POST", path, { key, body: { user_uuid: ada.user.uuid } }),
      400,
      errorBody("validation_error", "invalid_input", "User is already part of the role."),
    );
    expect((await api("GET", path, { key })).body.count).toBe(1);
  });

  it("lets no member add themselves or others (403), and keeps memberships inside their role (404)", async () => {
    const { organization, key, owner } = await setupOrganization();
    const role = await createRole(organization.id, key, "Admins in all but name");
    const other = await createRole(organization.id, key, "Other");
    const member = await addMember(organization.id, MembershipLevel.member);
    const path = membershipsPath(organization.id, role.id);
    expectError(
      await api("POST", path, { key: member.key, body: { user_uuid: member.user.uuid } }),
      403,
      INSUFFICIENT_LEVEL,
    );
    const added = await addToRole(organization.id, key, role.id, member.user);
    expectError(await api("DELETE", `${path}/${added.id}`, { key: member.key }), 403, INSUFFICIENT_LEVEL);
    // The membership under another role's path, or another organization's path, is not found.
    const wrongRole = `${membershipsPath(organization.id, other.id)}/${added.id}`;
    expectError(await api("GET", wrongRole, { key }), 404, NOT_FOUND);
    expectError(await api("DELETE", wrongRole, { key }), 404, NOT_FOUND);
    const stranger = await setupOrganization();
    expectError(
      await api("GET", `${membershipsPath(stranger.organization.id, role.id)}/${added.id}`, { key }),
      404,
      NOT_FOUND,
    );
    expectError(await api("GET", `${path}/${added.id}`, { key: stranger.key }), 404, NOT_FOUND);
    const readOnly = await createApiKey(owner, { scopes: ["organization:read"] });
    expectError(
      await api("POST", path, { key: readOnly.value, body: { user_uuid: owner.uuid } }),
      403,
      missingScope("organization:write"),
    );
    expectError(await api("GET", path), 401, NOT_AUTHENTICATED);
    expect((await api("GET", path, { key })).body.count).toBe(1);
  });

  it("go with the role: deleting it removes its memberships and its rules in one write", async () => {
    const { organization, key, project } = await setupOrganization();
    const role = await createRole(organization.id, key, "Engineering");
    const ada = await addMember(organization.id, MembershipLevel.member);
    await addToRole(organization.id, key, role.id, ada.user);
    const rule = await api("PUT", `/api/projects/${project.id}/access_controls`, {
      key,
      body: { access_level: "admin", role: role.id },
    });
    expect(rule.status).toBe(200);
    const typeRule = await api("PUT", `/api/projects/${project.id}/resource_access_controls`, {
      key,
      body: { resource: "survey", access_level: "viewer", role: role.id },
    });
    expect(typeRule.status).toBe(200);
    const projectPath = `/api/projects/${project.id}`;
    expect((await api("GET", projectPath, { key: ada.key })).body.effective_membership_level).toBe(8);
    expect((await api("DELETE", `${rolesPath(organization.id)}/${role.id}`, { key })).status).toBe(204);
    const ofRole = async () => [
      await db.select().from(schema.roleMemberships).where(eq(schema.roleMemberships.roleId, role.id)),
      await db.select().from(schema.accessControls).where(eq(schema.accessControls.roleId, role.id)),
      await db.select().from(schema.resourceAccessControls).where(eq(schema.resourceAccessControls.roleId, role.id)),
    ];
    expect(await ofRole()).toEqual([[], [], []]);
    expect((await api("GET", projectPath, { key: ada.key })).body.effective_membership_level).toBe(1);
    const deleted = (await activity(organization.id, key, "Role"))[0]!;
    expect([deleted.activity, deleted.item_id, deleted.detail.name]).toEqual(["deleted", role.id, "Engineering"]);
  });

  it("go with the member: removing them from the organization removes their role memberships, logged", async () => {
    const { organization, key } = await setupOrganization();
    const role = await createRole(organization.id, key, "Engineering");
    const ada = await addMember(organization.id, MembershipLevel.member);
    const added = await addToRole(organization.id, key, role.id, ada.user);
    const removed = await api("DELETE", `/api/organizations/${organization.id}/members/${ada.user.uuid}`, { key });
    expect(removed.status).toBe(204);
    const path = membershipsPath(organization.id, role.id);
    expect((await api("GET", path, { key })).body).toEqual({ count: 0, next: null, previous: null, results: [] });
    expect((await api("GET", `${rolesPath(organization.id)}/${role.id}`, { key })).body.members).toEqual([]);
    const entries = await activity(organization.id, key, "RoleMembership");
    expect(entries.map((entry) => [entry.activity, entry.item_id, entry.detail.name])).toEqual([
      ["deleted", added.id, ada.user.email],
      ["created", added.id, ada.user.email],
    ]);
  });
});

describe("a member removed while their roles change", () => {
  const CHANGED = changedMeanwhile("member");
  const removal = (organizationId: string, uuid: string, key: string) =>
    api("DELETE", `/api/organizations/${organizationId}/members/${uuid}`, { key });
  const log = async (organizationId: string, key: string) =>
    (await activity(organizationId, key, "RoleMembership")).map((entry) => [entry.activity, entry.item_id]);

  it("is not removed when a role joined meanwhile would go unlogged (409); the retry logs its end", async () => {
    const { organization, key } = await setupOrganization();
    const role = await createRole(organization.id, key, "Engineering");
    const ada = await addMember(organization.id, MembershipLevel.member);
    let added: { id: string } | undefined;
    const ran = beforeWrites([
      [
        /^delete from "organization_memberships"/,
        async () => {
          const response = await api("POST", membershipsPath(organization.id, role.id), {
            key,
            body: { user_uuid: ada.user.uuid },
          });
          added = response.body;
          return response.status;
        },
      ],
    ]);
    const refused = await removal(organization.id, ada.user.uuid, key);
    vi.restoreAllMocks();
    expect(ran).toEqual([201]);
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual(CHANGED);
    expect((await removal(organization.id, ada.user.uuid, key)).status).toBe(204);
    expect(await log(organization.id, key)).toEqual([
      ["deleted", added!.id],
      ["created", added!.id],
    ]);
  });

  it("is not removed when a role left meanwhile would be logged twice (409); the retry logs nothing more", async () => {
    const { organization, key } = await setupOrganization();
    const role = await createRole(organization.id, key, "Engineering");
    const ada = await addMember(organization.id, MembershipLevel.member);
    const joined = await addToRole(organization.id, key, role.id, ada.user);
    const ran = beforeWrites([
      [
        /^delete from "organization_memberships"/,
        async () => (await api("DELETE", `${rolesPath(organization.id)}/${role.id}`, { key })).status,
      ],
    ]);
    const refused = await removal(organization.id, ada.user.uuid, key);
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    expect(refused.body).toEqual(CHANGED);
    expect((await removal(organization.id, ada.user.uuid, key)).status).toBe(204);
    // Role.deleted stands for the membership; no RoleMembership.deleted follows it.
    expect(await log(organization.id, key)).toEqual([["created", joined.id]]);
  });

  it("is not added to a role under a membership it left meanwhile, and back under a new one: 409", async () => {
    const { organization, key } = await setupOrganization();
    const role = await createRole(organization.id, key, "Engineering");
    const ada = await addMember(organization.id, MembershipLevel.member);
    const add = () =>
      api("POST", membershipsPath(organization.id, role.id), { key, body: { user_uuid: ada.user.uuid } });
    const ran = beforeWrites([
      [
        /^insert into "role_memberships"/,
        async () => {
          const left = await removal(organization.id, ada.user.uuid, key);
          await addMembership(organization.id, ada.user, MembershipLevel.member);
          return left.status;
        },
      ],
    ]);
    const raced = await add();
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    expect([raced.status, raced.body]).toEqual([409, CHANGED]);
    expect((await add()).status).toBe(201);
  });

  it("is not added to a role once removed meanwhile: 400 on user_uuid as later; role gone 404", async () => {
    const { organization, key } = await setupOrganization();
    const role = await createRole(organization.id, key, "Engineering");
    const ada = await addMember(organization.id, MembershipLevel.member);
    const add = (roleId: string) =>
      api("POST", membershipsPath(organization.id, roleId), { key, body: { user_uuid: ada.user.uuid } });
    const ran = beforeWrites([
      [/^insert into "role_memberships"/, async () => (await removal(organization.id, ada.user.uuid, key)).status],
    ]);
    const refused = await add(role.id);
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    const userGone = errorBody("validation_error", "does_not_exist", "User does not exist.", "user_uuid");
    expect([refused.status, refused.body]).toEqual([400, userGone]);
    expect((await add(role.id)).body).toEqual(userGone);

    const other = await createRole(organization.id, key, "Design");
    const bob = await addMember(organization.id, MembershipLevel.member);
    const roleDeleted = beforeWrites([
      [
        /^insert into "role_memberships"/,
        async () => (await api("DELETE", `${rolesPath(organization.id)}/${other.id}`, { key })).status,
      ],
    ]);
    const gone = await api("POST", membershipsPath(organization.id, other.id), {
      key,
      body: { user_uuid: bob.user.uuid },
    });
    vi.restoreAllMocks();
    expect(roleDeleted).toEqual([204]);
    expect([gone.status, gone.body]).toEqual([404, NOT_FOUND]);
    expect(await log(organization.id, key)).toEqual([]);
  });
});

describe("a role membership added by an admin demoted meanwhile", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("is refused (403) when the demotion lands between the request's read and its write", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const role = await createRole(organization.id, key, "Platform admins");
    const memberPath = `/api/organizations/${organization.id}/members/${admin.user.uuid}`;
    const ran = beforeWrites([
      [
        /^insert into "role_memberships"/,
        async () => (await api("PATCH", memberPath, { key, body: { level: MembershipLevel.member } })).status,
      ],
    ]);
    const joined = await api("POST", membershipsPath(organization.id, role.id), {
      key: admin.key,
      body: { user_uuid: admin.user.uuid },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(joined, 403, INSUFFICIENT_LEVEL);
    expect((await api("GET", membershipsPath(organization.id, role.id), { key })).body.results).toEqual([]);
  });
});

describe("role writes by an admin demoted between the request's read and its write", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** An organization with an admin who is in a role that has `none` on a dashboard of its project. */
  async function adminInRestrictingRole() {
    const team = await setupOrganization();
    const { organization, key, project } = team;
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const role = await createRole(organization.id, key, "Contractors");
    const joined = await addToRole(organization.id, key, role.id, admin.user);
    const dashboard = await createDashboard(key, project.id, { name: "Board pack" });
    const dashboardPath = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const rule = await api("PUT", `${dashboardPath}/access_controls`, {
      key,
      body: { access_level: "none", role: role.id },
    });
    expect(rule.status).toBe(200);
    const demoteMeanwhile = (write: RegExp) =>
      beforeWrites([
        [
          write,
          async () =>
            (
              await api("PATCH", `/api/organizations/${organization.id}/members/${admin.user.uuid}`, {
                key,
                body: { level: MembershipLevel.member },
              })
            ).status,
        ],
      ]);
    return { ...team, admin, role, roleMembershipId: joined.id, dashboardPath, demoteMeanwhile };
  }

  it("remove no one from a role: a demoted admin does not lift a role's `none` off themselves (403)", async () => {
    const { organization, key, admin, role, roleMembershipId, dashboardPath, demoteMeanwhile } =
      await adminInRestrictingRole();
    // As an admin they are never restricted; as a member in the role the dashboard is hidden.
    expect((await api("GET", dashboardPath, { key: admin.key })).status).toBe(200);
    const ran = demoteMeanwhile(/^update "role_memberships"/);
    const removed = await api("DELETE", `${membershipsPath(organization.id, role.id)}/${roleMembershipId}`, {
      key: admin.key,
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(removed, 403, INSUFFICIENT_LEVEL);
    const members = await api("GET", membershipsPath(organization.id, role.id), { key });
    expect(members.body.results.map((row: { id: string }) => row.id)).toEqual([roleMembershipId]);
    expectError(await api("GET", dashboardPath, { key: admin.key }), 404, NOT_FOUND);
  });

  it("delete no role, nor the rules that name it (403)", async () => {
    const { organization, key, admin, role, dashboardPath, demoteMeanwhile } = await adminInRestrictingRole();
    const ran = demoteMeanwhile(/^update "roles"/);
    const deleted = await api("DELETE", `${rolesPath(organization.id)}/${role.id}`, { key: admin.key });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(deleted, 403, INSUFFICIENT_LEVEL);
    expect((await api("GET", `${rolesPath(organization.id)}/${role.id}`, { key })).status).toBe(200);
    expectError(await api("GET", dashboardPath, { key: admin.key }), 404, NOT_FOUND);
  });

  it("rename and create no role (403)", async () => {
    const { organization, key, admin, role, demoteMeanwhile } = await adminInRestrictingRole();
    const renaming = demoteMeanwhile(/^update "roles"/);
    const renamed = await api("PATCH", `${rolesPath(organization.id)}/${role.id}`, {
      key: admin.key,
      body: { name: "Everyone" },
    });
    vi.restoreAllMocks();
    expect(renaming).toEqual([200]);
    expectError(renamed, 403, INSUFFICIENT_LEVEL);
    await api("PATCH", `/api/organizations/${organization.id}/members/${admin.user.uuid}`, {
      key,
      body: { level: MembershipLevel.admin },
    });
    const creating = demoteMeanwhile(/^insert into "roles"/);
    const created = await api("POST", rolesPath(organization.id), { key: admin.key, body: { name: "Mine" } });
    vi.restoreAllMocks();
    expect(creating).toEqual([200]);
    expectError(created, 403, INSUFFICIENT_LEVEL);
    const names = (await api("GET", rolesPath(organization.id), { key })).body.results.map(
      (listed: { name: string }) => listed.name,
    );
    expect(names).toEqual(["Contractors"]);
  });
});

describe("a role renamed while another rename lands", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is refused (409): the log never says it renamed a name the role no longer had", async () => {
    const { organization, key } = await setupOrganization();
    const role = await api("POST", rolesPath(organization.id), { key, body: { name: "Alpha" } });
    expect(role.status).toBe(201);
    const rolePath = `${rolesPath(organization.id)}/${role.body.id}`;
    const ran = beforeWrites([
      [/^update "roles"/, async () => (await api("PATCH", rolePath, { key, body: { name: "Beta" } })).status],
    ]);
    const raced = await api("PATCH", rolePath, { key, body: { name: "Gamma" } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(raced, 409, changedMeanwhile("role"));
    const again = await api("PATCH", rolePath, { key, body: { name: "Gamma" } });
    expect([again.status, again.body.name]).toEqual([200, "Gamma"]);
    const renames = (await activity(organization.id, key, "Role"))
      .filter((entry) => entry.activity === "updated")
      .map((entry) => entry.detail.changes)
      .reverse();
    expect(renames).toEqual([
      [expect.objectContaining({ field: "name", before: "Alpha", after: "Beta" })],
      [expect.objectContaining({ field: "name", before: "Beta", after: "Gamma" })],
    ]);
  });
});
