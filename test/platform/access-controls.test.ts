import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { MembershipLevel } from "../../src/platform/levels";
import {
  addMember,
  api,
  createApiKey,
  createProject,
  db,
  errorBody,
  grantProjectAccess,
  ISO_TIMESTAMP,
  setupOrganization,
  userBasic,
  UUID,
} from "../support/harness";
import { createDashboard, dashboardsPath } from "../environments/dashboard-fixtures";
import { beforeWrites } from "../support/races";
import { changedMeanwhile, expectError } from "../support/error-bodies";

const NOT_FOUND = errorBody("invalid_request", "not_found", "Not found.");
const denied = (detail: string) => errorBody("authentication_error", "permission_denied", detail);

async function setupTeam() {
  const team = await setupOrganization();
  const member = await addMember(team.organization.id, MembershipLevel.member);
  const dashboard = await createDashboard(team.key, team.project.id, { name: "Board" });
  const dashboardPath = `${dashboardsPath(team.project.id)}/${dashboard.id}`;
  return { ...team, member, dashboard, dashboardPath, rulesPath: `${dashboardPath}/access_controls` };
}

const rule = (fields: Record<string, unknown>) => ({
  id: expect.stringMatching(UUID),
  created_at: expect.stringMatching(ISO_TIMESTAMP),
  updated_at: expect.stringMatching(ISO_TIMESTAMP),
  role: null,
  ...fields,
});

describe("dashboard access controls", () => {
  it("reads the rules, levels, default and the caller's level in one round trip with the key warm", async () => {
    const { key, rulesPath } = await setupTeam();
    await api("GET", rulesPath, { key });
    const response = await api("GET", rulesPath, { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      access_controls: [],
      available_access_levels: ["none", "viewer", "editor", "manager"],
      default_access_level: "editor",
      user_access_level: "manager",
      user_can_edit_access_levels: true,
    });
    expect(response.cost.queries).toBe(1);
  });

  it("upserts a member's rule (200), lists it, and removes it with access_level null (204)", async () => {
    const { key, owner, project, dashboard, member, rulesPath } = await setupTeam();
    const put = await api("PUT", rulesPath, {
      key,
      body: { access_level: "viewer", organization_member: member.membership.id },
    });
    expect(put.status).toBe(200);
    const expected = rule({
      access_level: "viewer",
      organization_member: member.membership.id,
      resource: "dashboard",
      resource_id: String(dashboard.id),
      created_by: null,
    });
    expect(put.body).toEqual(expected);
    // `created_by` is null as PostHog returns it; who made the rule is in the activity log.
    const log = await api("GET", `/api/environments/${project.id}/activity_log?scope=AccessControl`, { key });
    expect(log.body.results[0]).toMatchObject({ scope: "AccessControl", activity: "created", user: userBasic(owner) });
    const changed = await api("PUT", rulesPath, {
      key,
      body: { access_level: "editor", organization_member: member.membership.id },
    });
    expect(changed.body).toEqual({
      ...expected,
      id: put.body.id,
      created_at: put.body.created_at,
      access_level: "editor",
    });
    // The project with the dashboard, the member and the rule the body names, then the upsert.
    expect([put.cost.queries, changed.cost.queries]).toEqual([2, 2]);
    const everyone = await api("PUT", rulesPath, { key, body: { access_level: "viewer" } });
    expect(everyone.body).toEqual(
      rule({ ...expected, access_level: "viewer", organization_member: null, id: expect.stringMatching(UUID) }),
    );
    await api("PUT", rulesPath, { key, body: { access_level: "none", organization_member: null } });

    const listed = (await api("GET", rulesPath, { key })).body.access_controls;
    expect(listed).toEqual([
      changed.body,
      { ...everyone.body, access_level: "none", updated_at: expect.stringMatching(ISO_TIMESTAMP) },
    ]);

    const removed = await api("PUT", rulesPath, {
      key,
      body: { access_level: null, organization_member: member.membership.id },
    });
    expect(removed.status).toBe(204);
    expect(removed.text).toBe("");
    expect((await api("GET", rulesPath, { key })).body.access_controls).toHaveLength(1);
  });

  it("none hides the dashboard from that member (404, unlisted, same list cost); viewer: read-only", async () => {
    const { key, organization, project, member, dashboard, dashboardPath, rulesPath } = await setupTeam();
    await createDashboard(key, project.id, { name: "Other" });
    const names = async (callerKey: string) => {
      const response = await api("GET", dashboardsPath(project.id), { key: callerKey });
      return {
        names: response.body.results.map((item: { name: string }) => item.name),
        count: response.body.count,
        queries: response.cost.queries,
      };
    };
    await names(member.key);
    const before = await names(member.key);
    expect(before.names).toEqual(["Board", "Other"]);

    await api("PUT", rulesPath, { key, body: { access_level: "none", organization_member: member.membership.id } });
    const hidden = await names(member.key);
    expect(hidden).toEqual({ names: ["Other"], count: 1, queries: before.queries });
    expect((await api("GET", dashboardPath, { key: member.key })).body).toEqual(NOT_FOUND);
    expect((await api("PATCH", dashboardPath, { key: member.key, body: { name: "x" } })).status).toBe(404);
    expect((await api("GET", rulesPath, { key: member.key })).status).toBe(404);
    expect((await api("GET", `${dashboardPath}/sharing`, { key: member.key })).status).toBe(404);
    const copy = await api("POST", dashboardsPath(project.id), {
      key: member.key,
      body: { use_dashboard: dashboard.id },
    });
    expect(copy.body).toEqual(
      errorBody("validation_error", "invalid_input", "Invalid value provided", "use_dashboard"),
    );
    // Organization admins and owners are never restricted.
    const admin = await addMember(organization.id, MembershipLevel.admin);
    await api("PUT", rulesPath, { key, body: { access_level: "none", organization_member: admin.membership.id } });
    expect((await api("GET", dashboardPath, { key: admin.key })).body.user_access_level).toBe("manager");
    expect((await names(key)).names).toEqual(["Board", "Other"]);

    await api("PUT", rulesPath, { key, body: { access_level: "viewer", organization_member: member.membership.id } });
    const asViewer = await api("GET", dashboardPath, { key: member.key });
    expect(asViewer.body).toMatchObject({ user_access_level: "viewer", effective_privilege_level: 21 });
    const write = await api("PATCH", dashboardPath, { key: member.key, body: { name: "x" } });
    expect(write.status).toBe(403);
    expect(write.body).toEqual(denied("You don't have edit permissions for this dashboard."));
  });

  it("lets only managers change rules (403), a member ruled manager included", async () => {
    const { key, member, rulesPath } = await setupTeam();
    const body = { access_level: "viewer" };
    const refused = await api("PUT", rulesPath, { key: member.key, body });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(denied("Must be manager to modify dashboard permissions."));
    expect((await api("GET", rulesPath, { key: member.key })).body).toMatchObject({
      user_access_level: "editor",
      user_can_edit_access_levels: false,
    });
    await api("PUT", rulesPath, { key, body: { access_level: "manager", organization_member: member.membership.id } });
    expect((await api("PUT", rulesPath, { key: member.key, body })).status).toBe(200);
  });

  it("answers 400 for an invalid level or a member of another organization, changing nothing", async () => {
    const { key, rulesPath } = await setupTeam();
    const badLevel = await api("PUT", rulesPath, { key, body: { access_level: "admin" } });
    expect(badLevel.status).toBe(400);
    expect(badLevel.body).toEqual(
      errorBody(
        "validation_error",
        "invalid_choice",
        "Invalid access level. Must be one of: none, viewer, editor, manager",
        "access_level",
      ),
    );
    const stranger = await setupTeam();
    const foreign = await api("PUT", rulesPath, {
      key,
      body: { access_level: "viewer", organization_member: stranger.member.membership.id },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body).toEqual(
      errorBody(
        "validation_error",
        "invalid_input",
        "This user is not a member of the organization.",
        "organization_member",
      ),
    );
    const missing = await api("PUT", rulesPath, { key, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.attr).toBe("access_level");
    expect((await api("GET", rulesPath, { key })).body.access_controls).toEqual([]);
  });

  it("needs access_control:read and :write; 404 for unknown and foreign dashboards", async () => {
    const { key, owner, project, rulesPath } = await setupTeam();
    const reader = await createApiKey(owner, { scopes: ["access_control:read"] });
    expect((await api("GET", rulesPath, { key: reader.value })).status).toBe(200);
    const write = await api("PUT", rulesPath, { key: reader.value, body: { access_level: "viewer" } });
    expect(write.body).toEqual(denied("API key missing required scope 'access_control:write'"));
    const other = await setupTeam();
    for (const path of [
      `${dashboardsPath(project.id)}/999999/access_controls`,
      `${dashboardsPath(project.id)}/${other.dashboard.id}/access_controls`,
      other.rulesPath,
    ]) {
      expect((await api("GET", path, { key })).body).toEqual(NOT_FOUND);
      expect((await api("PUT", path, { key, body: { access_level: "viewer" } })).status).toBe(404);
    }
  });

  it("leaves with the member: removing them from the organization removes their rules", async () => {
    const { key, organization, member, rulesPath } = await setupTeam();
    await api("PUT", rulesPath, { key, body: { access_level: "viewer", organization_member: member.membership.id } });
    await api("DELETE", `/api/organizations/${organization.id}/members/${member.user.uuid}`, { key });
    expect((await api("GET", rulesPath, { key })).body.access_controls).toEqual([]);
  });
});

describe("a `manager` rule on a dashboard only collaborators edit (restriction level 37)", () => {
  it("manages the dashboard's rules but edits it only as a collaborator, as PostHog's can_edit", async () => {
    const { key, project, member } = await setupTeam();
    const locked = await createDashboard(key, project.id, { name: "Locked", restriction_level: 37 });
    const path = `${dashboardsPath(project.id)}/${locked.id}`;
    const granted = await api("PUT", `${path}/access_controls`, {
      key,
      body: { access_level: "manager", organization_member: member.membership.id },
    });
    expect(granted.status).toBe(200);

    const read = await api("GET", path, { key: member.key });
    expect(read.body).toMatchObject({ user_access_level: "manager", effective_privilege_level: 21 });
    const refused = await api("PATCH", path, { key: member.key, body: { name: "Edited by a manager" } });
    expectError(refused, 403, denied("You don't have edit permissions for this dashboard."));
    // The rules are still theirs to manage.
    const rules = await api("GET", `${path}/access_controls`, { key: member.key });
    expect(rules.body.user_can_edit_access_levels).toBe(true);

    // As a collaborator, they edit.
    const added = await api("POST", `${path}/collaborators`, { key, body: { user_uuid: member.user.uuid, level: 37 } });
    expect(added.status).toBe(201);
    expect((await api("GET", path, { key: member.key })).body.effective_privilege_level).toBe(37);
    const edited = await api("PATCH", path, { key: member.key, body: { name: "Edited by a collaborator" } });
    expect(edited.status).toBe(200);
    expect(edited.body.name).toBe("Edited by a collaborator");
  });
});

describe("project access controls", () => {
  it("keeps the default rule in step when a project PATCH makes it private, then open again", async () => {
    const { key, organization, member } = await setupTeam();
    const project = await createProject(organization.id, { name: "Soon private" });
    const asMember = () => api("GET", `/api/projects/${project.id}`, { key: member.key });
    const defaultRules = async () =>
      (await api("GET", `/api/projects/${project.id}/access_controls`, { key })).body.access_controls.map(
        (item: { organization_member: string | null; access_level: string }) => [
          item.organization_member,
          item.access_level,
        ],
      );
    expect((await asMember()).status).toBe(200);

    const closed = await api("PATCH", `/api/projects/${project.id}`, { key, body: { access_control: true } });
    expect(closed.body.access_control).toBe(true);
    expect((await asMember()).status).toBe(404);
    expect(await defaultRules()).toEqual([[null, "none"]]);
    await api("PATCH", `/api/projects/${project.id}`, { key, body: { access_control: true } });
    expect(await defaultRules()).toEqual([[null, "none"]]);

    const opened = await api("PATCH", `/api/projects/${project.id}`, { key, body: { access_control: false } });
    expect(opened.body.access_control).toBe(false);
    expect((await asMember()).status).toBe(200);
    expect(await defaultRules()).toEqual([]);
  });

  it("turns an invite's private project access into the new member's rule when they join", async () => {
    const { key, organization } = await setupTeam();
    const secret = await createProject(organization.id, { name: "Secret", access_control: true });
    const invite = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key,
      body: { target_email: "joiner@example.com", private_project_access: [{ id: secret.id, level: "admin" }] },
    });
    const joined = await api("POST", `/api/signup/${invite.body.token}`, { body: {} });
    const members = await api("GET", `/api/organizations/${organization.id}/members`, { key });
    const membership = members.body.results.find(
      (item: { user: { email: string } }) => item.user.email === "joiner@example.com",
    );

    const rules = (await api("GET", `/api/projects/${secret.id}/access_controls`, { key })).body.access_controls;
    expect(rules).toEqual([
      rule({
        access_level: "none",
        organization_member: null,
        resource: "project",
        resource_id: String(secret.id),
        created_by: null,
      }),
      rule({
        access_level: "admin",
        organization_member: membership.id,
        resource: "project",
        resource_id: String(secret.id),
        created_by: null,
      }),
    ]);
    const asJoiner = await api("GET", `/api/projects/${secret.id}`, { key: joined.body.personal_api_key.value });
    expect(asJoiner.body.effective_membership_level).toBe(8);
  });

  it("serves both trees with project levels, and makes a project private by its default rule", async () => {
    const { key, organization, project, member } = await setupTeam();
    const rulesPath = `/api/projects/${project.id}/access_controls`;
    const initial = await api("GET", `/api/environments/${project.id}/access_controls`, { key });
    expect(initial.body).toEqual({
      access_controls: [],
      available_access_levels: ["none", "member", "admin"],
      default_access_level: "member",
      user_access_level: "admin",
      user_can_edit_access_levels: true,
    });
    const projectPath = `/api/projects/${project.id}`;
    expect((await api("GET", projectPath, { key: member.key })).body.access_control).toBe(false);

    const privateRule = await api("PUT", rulesPath, { key, body: { access_level: "none" } });
    expect(privateRule.body).toMatchObject({
      access_level: "none",
      organization_member: null,
      resource: "project",
      resource_id: String(project.id),
    });
    expect((await api("GET", projectPath, { key: member.key })).body).toEqual(NOT_FOUND);
    expect((await api("GET", dashboardsPath(project.id), { key: member.key })).status).toBe(404);
    expect((await api("GET", projectPath, { key })).body.access_control).toBe(true);
    const listed = await api("GET", `/api/organizations/${organization.id}/projects`, { key: member.key });
    expect(listed.body.results).toEqual([]);

    // Organization admins and owners are never restricted, even by a rule of their own.
    const admin = await addMember(organization.id, MembershipLevel.admin);
    await api("PUT", rulesPath, { key, body: { access_level: "none", organization_member: admin.membership.id } });
    expect((await api("GET", projectPath, { key: admin.key })).status).toBe(200);

    await api("PUT", rulesPath, { key, body: { access_level: "member", organization_member: member.membership.id } });
    expect((await api("GET", projectPath, { key: member.key })).status).toBe(200);
    await api("PUT", rulesPath, { key, body: { access_level: null } });
    expect((await api("GET", projectPath, { key })).body.access_control).toBe(false);
  });

  it("logs a privacy change through the default rule as a PATCH of the project logs it: Project.updated", async () => {
    const { key, organization, project } = await setupTeam();
    const rulesPath = `/api/projects/${project.id}/access_controls`;
    const projectEntries = async () => {
      const log = await api("GET", `/api/organizations/${organization.id}/activity_log?scope=Project`, { key });
      return (log.body.results as { activity: string; item_id: string; detail: { changes: unknown[] } }[])
        .filter((entry) => entry.activity === "updated")
        .map((entry) => [entry.item_id, entry.detail.changes]);
    };
    const privacy = (before: boolean, after: boolean) => [
      String(project.id),
      [{ type: "Project", action: "changed", field: "access_control", before, after }],
    ];
    expect((await api("PUT", rulesPath, { key, body: { access_level: "none" } })).status).toBe(200);
    expect(await projectEntries()).toEqual([privacy(false, true)]);
    // The same rule again changes nothing, and logs nothing.
    expect((await api("PUT", rulesPath, { key, body: { access_level: "none" } })).status).toBe(200);
    expect(await projectEntries()).toEqual([privacy(false, true)]);
    expect((await api("PUT", rulesPath, { key, body: { access_level: null } })).status).toBe(204);
    expect(await projectEntries()).toEqual([privacy(true, false), privacy(false, true)]);
  });

  it("treats a project created with access_control: true as default none, admin rules as project admins", async () => {
    const { key, organization, member } = await setupTeam();
    const secret = await createProject(organization.id, { name: "Secret", access_control: true });
    const rulesPath = `/api/projects/${secret.id}/access_controls`;
    expect((await api("GET", rulesPath, { key })).body.access_controls).toEqual([
      rule({
        access_level: "none",
        organization_member: null,
        resource: "project",
        resource_id: String(secret.id),
        created_by: null,
      }),
    ]);
    expect((await api("GET", rulesPath, { key: member.key })).status).toBe(404);

    await api("PUT", rulesPath, { key, body: { access_level: "admin", organization_member: member.membership.id } });
    const asProjectAdmin = await api("GET", rulesPath, { key: member.key });
    expect(asProjectAdmin.body).toMatchObject({ user_access_level: "admin", user_can_edit_access_levels: true });
    expect((await api("GET", `/api/projects/${secret.id}`, { key: member.key })).body.effective_membership_level).toBe(
      8,
    );
  });

  it("lets only project admins change rules", async () => {
    const { project, member } = await setupTeam();
    const refused = await api("PUT", `/api/projects/${project.id}/access_controls`, {
      key: member.key,
      body: { access_level: "none" },
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(denied("Must be admin to modify project permissions."));
    const asMember = await api("GET", `/api/projects/${project.id}/access_controls`, { key: member.key });
    expect(asMember.body).toMatchObject({ user_access_level: "member", user_can_edit_access_levels: false });
    const stored = await db
      .select()
      .from(schema.accessControls)
      .where(eq(schema.accessControls.resourceId, String(project.id)));
    expect(stored).toEqual([]);
  });
});

describe("access rules racing the deletion of whom they name", () => {
  it("answer the rule or 400/404, never a 500, when the role or the member goes at once", async () => {
    for (let round = 0; round < 6; round += 1) {
      const { organization, project, key } = await setupOrganization();
      const role = await api("POST", `/api/organizations/${organization.id}/roles`, { key, body: { name: "R" } });
      const member = await addMember(organization.id, MembershipLevel.member);
      expect(role.status).toBe(201);
      const rules = `/api/projects/${project.id}/access_controls`;
      const [forRole, , forMember] = await Promise.all([
        api("PUT", rules, { key, body: { role: role.body.id, access_level: "admin" } }),
        api("DELETE", `/api/organizations/${organization.id}/roles/${role.body.id}`, { key }),
        api("PUT", rules, { key, body: { organization_member: member.membership.id, access_level: "admin" } }),
        api("DELETE", `/api/organizations/${organization.id}/members/${member.user.uuid}`, { key }),
      ]);
      for (const response of [forRole, forMember]) expect([200, 400, 404]).toContain(response.status);
      // Whichever landed first, no rule names a role or a member that is gone.
      const left = await api("GET", rules, { key });
      expect(left.body.access_controls).toEqual([]);
    }
  });
});

describe("access rules written by a caller demoted meanwhile", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("refuses the rule a project admin writes after a demotion landed between their read and their write", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    // A project admin by their own rule, only a member of the organization.
    await grantProjectAccess(project.id, member.membership.id, "admin");
    const rules = `/api/projects/${project.id}/access_controls`;
    const mine = { organization_member: member.membership.id };
    // The member's PUT reads their level (admin) first; the owner's demotion lands before its write.
    const ran = beforeWrites([
      [
        /^insert into "access_controls"/,
        async () => (await api("PUT", rules, { key, body: { ...mine, access_level: "member" } })).status,
      ],
    ]);
    const regrant = await api("PUT", rules, { key: member.key, body: { ...mine, access_level: "admin" } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    // The demotion answered 200 before the member's write ran: that write was no longer an admin's.
    const left = await api("GET", rules, { key });
    expect(left.body.access_controls).toEqual([
      expect.objectContaining({ organization_member: member.membership.id, access_level: "member" }),
    ]);
    const seen = await api("GET", rules, { key: member.key });
    expect(seen.body).toMatchObject({ user_access_level: "member", user_can_edit_access_levels: false });
    expectError(
      regrant,
      403,
      errorBody("authentication_error", "permission_denied", "Must be admin to modify project permissions."),
    );
  });

  it("refuses the dashboard rule a manager writes after their manager rule was lowered in between", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await createDashboard(key, project.id, { name: "Board" });
    const rules = `${dashboardsPath(project.id)}/${dashboard.id}/access_controls`;
    const theirs = { organization_member: member.membership.id };
    expect((await api("PUT", rules, { key, body: { ...theirs, access_level: "manager" } })).status).toBe(200);
    const ran = beforeWrites([
      [
        /^insert into "access_controls"/,
        async () => (await api("PUT", rules, { key, body: { ...theirs, access_level: "viewer" } })).status,
      ],
    ]);
    const written = await api("PUT", rules, { key: member.key, body: { access_level: "none" } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(
      written,
      403,
      errorBody("authentication_error", "permission_denied", "Must be manager to modify dashboard permissions."),
    );
    const left = await api("GET", rules, { key });
    expect(left.body.access_controls).toEqual([expect.objectContaining({ ...theirs, access_level: "viewer" })]);
  });

  it("refuses a kind-wide rule written after a demotion landed between the read and the write", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    await grantProjectAccess(project.id, member.membership.id, "admin");
    const kindRules = `/api/projects/${project.id}/resource_access_controls`;
    const ran = beforeWrites([
      [
        /^insert into "resource_access_controls"/,
        async () =>
          (
            await api("PUT", `/api/projects/${project.id}/access_controls`, {
              key,
              body: { organization_member: member.membership.id, access_level: "member" },
            })
          ).status,
      ],
    ]);
    const written = await api("PUT", kindRules, {
      key: member.key,
      body: { resource: "dashboard", access_level: "none" },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(
      written,
      403,
      errorBody(
        "authentication_error",
        "permission_denied",
        "Must be an Organization admin to modify project-wide permissions.",
      ),
    );
    expect((await api("GET", kindRules, { key })).body.access_controls).toEqual([]);
  });
});

describe("access rules for roles", () => {
  /** A role of the organization with `members` in it, made through the API. */
  async function roleWith(organizationId: string, key: string, name: string, members: { user: { uuid: string } }[]) {
    const role = await api("POST", `/api/organizations/${organizationId}/roles`, { key, body: { name } });
    expect(role.status).toBe(201);
    const memberships: string[] = [];
    for (const member of members) {
      const added = await api("POST", `/api/organizations/${organizationId}/roles/${role.body.id}/role_memberships`, {
        key,
        body: { user_uuid: member.user.uuid },
      });
      expect(added.status).toBe(201);
      memberships.push(added.body.id);
    }
    return { id: role.body.id as string, memberships };
  }

  it("a role's rule raises its members on a dashboard, and leaving the role lowers them again", async () => {
    const { key, organization, project, member, dashboardPath, rulesPath } = await setupTeam();
    const listed = async () => {
      const response = await api("GET", dashboardsPath(project.id), { key: member.key });
      return { names: response.body.results.map((item: { name: string }) => item.name), count: response.body.count };
    };
    await api("PUT", rulesPath, { key, body: { access_level: "none" } });
    expect((await api("GET", dashboardPath, { key: member.key })).status).toBe(404);
    expect(await listed()).toEqual({ names: [], count: 0 });

    const role = await roleWith(organization.id, key, "Analysts", [member]);
    const put = await api("PUT", rulesPath, { key, body: { access_level: "editor", role: role.id } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual(
      rule({
        access_level: "editor",
        organization_member: null,
        role: role.id,
        resource: "dashboard",
        resource_id: put.body.resource_id,
        created_by: null,
      }),
    );
    const seen = await api("GET", dashboardPath, { key: member.key });
    expect(seen.status).toBe(200);
    expect(seen.body.user_access_level).toBe("editor");
    expect(await listed()).toEqual({ names: ["Board"], count: 1 });
    // A member's own lower rule does not undo their role's grant: the highest of the two wins, and
    // the organization says so (PostHog's most-specific-first resolution is off).
    await api("PUT", rulesPath, { key, body: { access_level: "none", organization_member: member.membership.id } });
    expect((await api("GET", dashboardPath, { key: member.key })).body.user_access_level).toBe("editor");
    expect(await listed()).toEqual({ names: ["Board"], count: 1 });
    const advertised = await api("GET", `/api/organizations/${organization.id}`, { key: member.key });
    expect(advertised.body.uses_most_specific_access_resolution).toBe(false);

    const leave = await api(
      "DELETE",
      `/api/organizations/${organization.id}/roles/${role.id}/role_memberships/${role.memberships[0]}`,
      { key },
    );
    expect(leave.status).toBe(204);
    expect((await api("GET", dashboardPath, { key: member.key })).body).toEqual(NOT_FOUND);
    expect(await listed()).toEqual({ names: [], count: 0 });

    const entries = (await api("GET", `/api/environments/${project.id}/activity_log?scope=AccessControl`, { key })).body
      .results;
    const ofRole = entries.find((entry: { detail: { context: { role: string | null } } }) => entry.detail.context.role);
    expect(ofRole).toMatchObject({
      activity: "created",
      detail: { name: "Analysts", context: { role: role.id, organization_member: null, access_level: "editor" } },
    });
  });

  it("a role's admin rule makes its members project admins; removing the rule lowers them again", async () => {
    const { key, organization, member } = await setupTeam();
    const secret = await createProject(organization.id, { name: "Secret", access_control: true });
    const projectPath = `/api/projects/${secret.id}`;
    const rulesPath = `${projectPath}/access_controls`;
    expect((await api("GET", projectPath, { key: member.key })).status).toBe(404);
    const projects = async () => (await api("GET", "/api/projects", { key: member.key })).body;
    const before = await projects();

    const role = await roleWith(organization.id, key, "Project leads", [member]);
    expect((await api("PUT", rulesPath, { key, body: { access_level: "admin", role: role.id } })).status).toBe(200);
    const raised = await api("GET", projectPath, { key: member.key });
    expect(raised.body.effective_membership_level).toBe(MembershipLevel.admin);
    const listed = await projects();
    expect(listed.count).toBe(before.count + 1);
    expect(listed.results.map((item: { id: number }) => item.id)).toContain(secret.id);
    // As a project admin, the member may now manage the project's rules.
    expect((await api("GET", rulesPath, { key: member.key })).body.user_can_edit_access_levels).toBe(true);

    const removed = await api("PUT", rulesPath, { key, body: { access_level: null, role: role.id } });
    expect(removed.status).toBe(204);
    expect((await api("GET", projectPath, { key: member.key })).body).toEqual(NOT_FOUND);
    expect(await projects()).toEqual(before);
  });

  it("refuses a rule for both a member and a role, or for a role of another organization (400)", async () => {
    const { key, organization, member, rulesPath } = await setupTeam();
    const role = await roleWith(organization.id, key, "Mine", []);
    const other = await setupOrganization();
    const foreign = await roleWith(other.organization.id, other.key, "Theirs", []);
    expect(
      (
        await api("PUT", rulesPath, {
          key,
          body: { access_level: "viewer", role: role.id, organization_member: member.membership.id },
        })
      ).body,
    ).toEqual(
      errorBody(
        "validation_error",
        "invalid_input",
        "You can not scope an access control to both a member and a role.",
      ),
    );
    for (const roleId of [foreign.id, "0192a000-0000-7000-8000-000000000000"]) {
      expect((await api("PUT", rulesPath, { key, body: { access_level: "viewer", role: roleId } })).body).toEqual(
        errorBody("validation_error", "does_not_exist", `Invalid pk "${roleId}" - object does not exist.`, "role"),
      );
    }
    // Nor may another organization's admin name this organization's role in their own rules.
    const theirs = await createDashboard(other.key, other.project.id, { name: "B" });
    const theirRules = `${dashboardsPath(other.project.id)}/${theirs.id}/access_controls`;
    expect(
      (await api("PUT", theirRules, { key: other.key, body: { access_level: "manager", role: role.id } })).status,
    ).toBe(400);
    expect((await api("GET", rulesPath, { key })).body.access_controls).toEqual([]);
  });
});

describe("a dashboard rule's removal", () => {
  it("is refused to a manager lowered to viewer between its read and its write: a none rule stays", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await createDashboard(key, project.id, { name: "Board" });
    const rules = `${dashboardsPath(project.id)}/${dashboard.id}/access_controls`;
    const theirs = { organization_member: member.membership.id };
    const hidden = await addMember(organization.id, MembershipLevel.member);
    const hiddenRule = { organization_member: hidden.membership.id };
    expect((await api("PUT", rules, { key, body: { ...theirs, access_level: "manager" } })).status).toBe(200);
    expect((await api("PUT", rules, { key, body: { ...hiddenRule, access_level: "none" } })).status).toBe(200);
    const ran = beforeWrites([
      [
        /^delete from "access_controls"/,
        async () => (await api("PUT", rules, { key, body: { ...theirs, access_level: "viewer" } })).status,
      ],
    ]);
    // Removing the `none` rule would give the hidden member the default, editor.
    const removed = await api("PUT", rules, { key: member.key, body: { ...hiddenRule, access_level: null } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(
      removed,
      403,
      errorBody("authentication_error", "permission_denied", "Must be manager to modify dashboard permissions."),
    );
    const left = await api("GET", rules, { key });
    expect(left.body.access_controls).toEqual(
      expect.arrayContaining([expect.objectContaining({ ...hiddenRule, access_level: "none" })]),
    );
  });
});

describe("a rule written while another write of it lands", () => {
  afterEach(() => vi.restoreAllMocks());

  type Entry = { activity: string; item_id: string; detail: { context: { access_level: string | null } } };

  /** A project, a member, the project's rules' path, and a PUT body for the member's rule. */
  async function projectWithMember() {
    const team = await setupOrganization();
    const member = await addMember(team.organization.id, MembershipLevel.member);
    const rulesPath = `/api/projects/${team.project.id}/access_controls`;
    const body = (level: string | null) => ({ access_level: level, organization_member: member.membership.id });
    const entries = async () =>
      (
        (await api("GET", `/api/projects/${team.project.id}/activity_log?scope=AccessControl`, { key: team.key })).body
          .results as Entry[]
      )
        .map((entry) => [entry.activity, entry.item_id, entry.detail.context.access_level])
        .reverse();
    const rules = async () =>
      ((await api("GET", rulesPath, { key: team.key })).body.access_controls as { id: string; access_level: string }[])
        .filter((rule) => rule.access_level !== undefined)
        .map((rule) => [rule.id, rule.access_level]);
    return { ...team, rulesPath, body, entries, rules };
  }

  it("is refused (409) when the rule it read as missing was created meanwhile: one created entry", async () => {
    const { key, rulesPath, body, entries } = await projectWithMember();
    const ran = beforeWrites([
      [/insert into "access_controls"/, async () => (await api("PUT", rulesPath, { key, body: body("member") })).body],
    ]);
    const raced = await api("PUT", rulesPath, { key, body: body("admin") });
    vi.restoreAllMocks();
    const created = ran[0] as { id: string };
    expectError(raced, 409, changedMeanwhile("access control"));
    expect(await entries()).toEqual([["created", created.id, "member"]]);
    // Sent again, it is an update of the rule as it now is.
    expect((await api("PUT", rulesPath, { key, body: body("admin") })).status).toBe(200);
    expect((await entries()).at(-1)).toEqual(["updated", created.id, "admin"]);
  });

  it("removes no rule created meanwhile (409), and updates none removed meanwhile (409)", async () => {
    const { key, rulesPath, body, entries } = await projectWithMember();
    const created = beforeWrites([
      [/delete from "access_controls"/, async () => (await api("PUT", rulesPath, { key, body: body("admin") })).body],
    ]);
    const removal = await api("PUT", rulesPath, { key, body: body(null) });
    vi.restoreAllMocks();
    const rule = created[0] as { id: string };
    expectError(removal, 409, changedMeanwhile("access control"));
    expect(await entries()).toEqual([["created", rule.id, "admin"]]);

    const removed = beforeWrites([
      [/insert into "access_controls"/, async () => (await api("PUT", rulesPath, { key, body: body(null) })).status],
    ]);
    const update = await api("PUT", rulesPath, { key, body: body("member") });
    vi.restoreAllMocks();
    expect(removed).toEqual([204]);
    expectError(update, 409, changedMeanwhile("access control"));
    expect(await entries()).toEqual([
      ["created", rule.id, "admin"],
      ["deleted", rule.id, "admin"],
    ]);
  });

  it("names a role deleted meanwhile as the body's 400, not a 404 for the project", async () => {
    const { organization, key, rulesPath } = await projectWithMember();
    const role = await api("POST", `/api/organizations/${organization.id}/roles`, { key, body: { name: "Doomed" } });
    expect(role.status).toBe(201);
    const deletion = beforeWrites([
      [
        /insert into "access_controls"/,
        async () =>
          (await api("DELETE", `/api/organizations/${organization.id}/roles/${role.body.id}`, { key })).status,
      ],
    ]);
    const put = await api("PUT", rulesPath, { key, body: { access_level: "admin", role: role.body.id } });
    vi.restoreAllMocks();
    expect(deletion).toEqual([204]);
    expectError(
      put,
      400,
      errorBody("validation_error", "does_not_exist", `Invalid pk "${role.body.id}" - object does not exist.`, "role"),
    );
  });
});
