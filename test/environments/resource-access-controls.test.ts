import { afterEach, describe, expect, it, vi } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { addMember, api, createApiKey, errorBody, ISO_TIMESTAMP, setupOrganization, UUID } from "../support/harness";
import {
  changedMeanwhile,
  expectError,
  missingScope,
  NO_EDIT_RIGHT,
  NOT_AUTHENTICATED,
  NOT_FOUND,
} from "../support/error-bodies";
import { createDashboard, dashboardsPath } from "./dashboard-fixtures";
import { beforeWrites } from "../support/races";

const path = (tree: string, projectId: number) => `/api/${tree}/${projectId}/resource_access_controls`;

const typeRule = (fields: Record<string, unknown>) => ({
  id: expect.stringMatching(UUID),
  organization_member: null,
  role: null,
  resource_id: null,
  created_at: expect.stringMatching(ISO_TIMESTAMP),
  updated_at: expect.stringMatching(ISO_TIMESTAMP),
  created_by: null,
  ...fields,
});

async function setup() {
  const team = await setupOrganization();
  const member = await addMember(team.organization.id, MembershipLevel.member);
  const role = await api("POST", `/api/organizations/${team.organization.id}/roles`, {
    key: team.key,
    body: { name: "Support" },
  });
  return { ...team, member, roleId: role.body.id as string };
}

describe("resource access controls", () => {
  it("are read and written by the organization's service key, as an admin, naming no person", async () => {
    const { organization, key, project } = await setup();
    const service = await api("POST", `/api/organizations/${organization.id}/service_keys`, {
      key,
      body: { label: "Terraform", scopes: ["access_control:read", "access_control:write"] },
    });
    expect(service.status).toBe(201);
    const asService = { key: service.body.value as string };
    const written = await api("PUT", path("environments", project.id), {
      ...asService,
      body: { resource: "feature_flag", access_level: "editor" },
    });
    expect(written.status).toBe(200);
    expect(written.body).toEqual(typeRule({ resource: "feature_flag", access_level: "editor" }));
    const read = await api("GET", path("projects", project.id), asService);
    expect(read.status).toBe(200);
    expect(read.body.access_controls).toEqual([written.body]);
    expect(read.body.user_access_level).toBe("admin");
    const other = await setupOrganization();
    expect((await api("GET", path("projects", other.project.id), asService)).status).toBe(404);
  });

  it("stores and returns rules on kinds of resources for everyone, a role and a member, in both trees", async () => {
    const { key, project, member, roleId } = await setup();
    const rulesPath = path("projects", project.id);
    expect((await api("GET", rulesPath, { key })).body).toEqual({
      access_controls: [],
      available_access_levels: ["none", "viewer", "editor", "manager"],
      default_access_level: "editor",
      user_access_level: "admin",
      user_can_edit_access_levels: true,
    });
    const everyone = await api("PUT", `${rulesPath}/`, { key, body: { resource: "survey", access_level: "viewer" } });
    expect(everyone.status).toBe(200);
    expect(everyone.body).toEqual(typeRule({ resource: "survey", access_level: "viewer" }));
    const ofRole = await api("PUT", rulesPath, {
      key,
      body: { resource: "feature_flag", access_level: "editor", role: roleId },
    });
    expect(ofRole.body).toEqual(typeRule({ resource: "feature_flag", access_level: "editor", role: roleId }));
    const ofMember = await api("PUT", rulesPath, {
      key,
      body: { resource: "survey", access_level: "none", organization_member: member.membership.id },
    });
    expect(ofMember.body).toEqual(
      typeRule({ resource: "survey", access_level: "none", organization_member: member.membership.id }),
    );
    // The same subject and kind again changes the rule in place.
    const changed = await api("PUT", rulesPath, { key, body: { resource: "survey", access_level: "editor" } });
    expect(changed.body).toEqual({ ...everyone.body, access_level: "editor", updated_at: changed.body.updated_at });

    const read = await api("GET", path("environments", project.id), { key: member.key });
    expect(read.body).toEqual({
      access_controls: [changed.body, ofRole.body, ofMember.body],
      available_access_levels: ["none", "viewer", "editor", "manager"],
      default_access_level: "editor",
      user_access_level: "member",
      user_can_edit_access_levels: false,
    });

    const removed = await api("PUT", rulesPath, {
      key,
      body: { resource: "feature_flag", access_level: null, role: roleId },
    });
    expect(removed.status).toBe(204);
    expect((await api("GET", rulesPath, { key })).body.access_controls).toEqual([changed.body, ofMember.body]);

    const entries = (await api("GET", `/api/projects/${project.id}/activity_log?scope=AccessControl`, { key })).body
      .results as { activity: string; detail: { name: string | null; context: Record<string, unknown> } }[];
    expect(entries.map((entry) => [entry.activity, entry.detail.context.resource, entry.detail.name])).toEqual([
      ["deleted", "feature_flag", "Support"],
      ["updated", "survey", null],
      ["created", "survey", member.user.email],
      ["created", "feature_flag", "Support"],
      ["created", "survey", null],
    ]);
    expect(entries[0]!.detail.context).toEqual({
      resource: "feature_flag",
      resource_id: null,
      organization_member: null,
      role: roleId,
      access_level: "editor",
    });
  });

  it("refuses unknown kinds, levels out of bounds or of another kind: 400 with attr, nothing stored", async () => {
    const { key, project, member, roleId } = await setup();
    const rulesPath = path("projects", project.id);
    const refused = async (body: Record<string, unknown>) => (await api("PUT", rulesPath, { key, body })).body;
    expect(await refused({ resource: "project", access_level: "viewer" })).toEqual(
      errorBody(
        "validation_error",
        "invalid_choice",
        "Invalid access level. Must be one of: none, member, admin",
        "access_level",
      ),
    );
    expect(await refused({ resource: "dashboard", access_level: "admin" })).toMatchObject({ attr: "access_level" });
    expect(await refused({ resource: "spaceships", access_level: "none" })).toEqual(
      errorBody(
        "validation_error",
        "invalid_choice",
        expect.stringMatching(/^Invalid resource\. Must be one of: action, .*dashboard, .*project, /),
        "resource",
      ),
    );
    expect(await refused({ resource: "survey", access_level: "admin" })).toEqual(
      errorBody(
        "validation_error",
        "invalid_choice",
        "Invalid access level. Must be one of: none, viewer, editor, manager",
        "access_level",
      ),
    );
    expect(await refused({ resource: "action", access_level: "none" })).toEqual(
      errorBody(
        "validation_error",
        "invalid_input",
        "Access level cannot be set below the minimum 'viewer' for action.",
        "access_level",
      ),
    );
    expect(await refused({ resource: "activity_log", access_level: "editor" })).toMatchObject({
      attr: "access_level",
      detail: "Access level cannot be set above the maximum 'viewer' for activity_log.",
    });
    expect(await refused({ resource: "toolbar", access_level: "editor" })).toEqual(
      errorBody(
        "validation_error",
        "invalid_input",
        "Access level cannot be set above the maximum 'viewer' for toolbar.",
        "access_level",
      ),
    );
    expect(
      await refused({
        resource: "survey",
        access_level: "viewer",
        role: roleId,
        organization_member: member.membership.id,
      }),
    ).toMatchObject({ code: "invalid_input", attr: null });
    const other = await setupOrganization();
    const foreignRole = await api("POST", `/api/organizations/${other.organization.id}/roles`, {
      key: other.key,
      body: { name: "Theirs" },
    });
    expect(await refused({ resource: "survey", access_level: "viewer", role: foreignRole.body.id })).toMatchObject({
      code: "does_not_exist",
      attr: "role",
    });
    expect(
      await refused({ resource: "survey", access_level: "viewer", organization_member: other.owner.uuid }),
    ).toMatchObject({ attr: "organization_member" });
    expect(await refused({ access_level: "viewer" })).toMatchObject({ code: "required", attr: "resource" });
    expect((await api("GET", rulesPath, { key })).body.access_controls).toEqual([]);
  });

  it("is for project admins to write (403), needs the scopes (403), a key (401), and the project (404)", async () => {
    const { key, project, member, owner } = await setup();
    const rulesPath = path("projects", project.id);
    const body = { resource: "survey", access_level: "none" };
    expectError(
      await api("PUT", rulesPath, { key: member.key, body }),
      403,
      errorBody(
        "authentication_error",
        "permission_denied",
        "Must be an Organization admin to modify project-wide permissions.",
      ),
    );
    const readOnly = await createApiKey(owner, { scopes: ["access_control:read"] });
    expectError(await api("PUT", rulesPath, { key: readOnly.value, body }), 403, missingScope("access_control:write"));
    const noRead = await createApiKey(owner, { scopes: ["project:read"] });
    expectError(await api("GET", rulesPath, { key: noRead.value }), 403, missingScope("access_control:read"));
    expectError(await api("GET", rulesPath), 401, NOT_AUTHENTICATED);
    const stranger = await setupOrganization();
    expectError(await api("GET", rulesPath, { key: stranger.key }), 404, NOT_FOUND);
    expectError(await api("PUT", rulesPath, { key: stranger.key, body }), 404, NOT_FOUND);
    expect((await api("GET", rulesPath, { key })).body.access_controls).toEqual([]);
  });
});

/**
 * An organization whose owner made "Board", "Chart" and "Plan", and whose member made "Mine", with
 * a role the member holds and a second, admin member; helpers to read as the member.
 */
async function setupDashboards() {
  const team = await setup();
  const { organization, key, project, member, roleId } = team;
  const admin = await addMember(organization.id, MembershipLevel.admin);
  const joined = await api("POST", `/api/organizations/${organization.id}/roles/${roleId}/role_memberships`, {
    key,
    body: { user_uuid: member.user.uuid },
  });
  expect(joined.status).toBe(201);
  const ids: Record<string, number> = {};
  for (const name of ["Board", "Chart", "Plan"]) ids[name] = (await createDashboard(key, project.id, { name })).id;
  ids.Mine = (await createDashboard(member.key, project.id, { name: "Mine" })).id;
  const dashboardPath = (name: string) => `${dashboardsPath(project.id, "projects")}/${ids[name]}`;
  const rulesPath = path("projects", project.id);
  /** Sets a rule on every dashboard (null removes it), as an admin. */
  const onEveryDashboard = async (access_level: string | null, subject: Record<string, string> = {}) => {
    const response = await api("PUT", rulesPath, { key, body: { resource: "dashboard", access_level, ...subject } });
    expect(response.status).toBe(access_level === null ? 204 : 200);
    return response;
  };
  /** Sets a rule on one dashboard, as an admin. */
  const onDashboard = async (name: string, access_level: string | null, subject: Record<string, string> = {}) => {
    const response = await api("PUT", `${dashboardPath(name)}/access_controls`, {
      key,
      body: { access_level, ...subject },
    });
    expect(response.status).toBe(access_level === null ? 204 : 200);
  };
  /** The names a caller lists (with a query string) and the list's count. */
  const listed = async (callerKey: string, query = "") => {
    const response = await api("GET", `${dashboardsPath(project.id)}${query}`, { key: callerKey });
    expect(response.status).toBe(200);
    return { names: response.body.results.map((item: { name: string }) => item.name), count: response.body.count };
  };
  /** The caller's level on a dashboard, or the status that refused it. */
  const levelOn = async (callerKey: string, name: string) => {
    const response = await api("GET", dashboardPath(name), { key: callerKey });
    return response.status === 200 ? response.body.user_access_level : response.status;
  };
  const rename = (callerKey: string, name: string) =>
    api("PATCH", dashboardPath(name), { key: callerKey, body: { description: `edited by ${callerKey.length}` } });
  return { ...team, admin, ids, dashboardPath, onEveryDashboard, onDashboard, listed, levelOn, rename };
}

const ALL = ["Board", "Chart", "Mine", "Plan"];
const forMember = (of: { membership: { id: string } }) => ({ organization_member: of.membership.id });

describe("rules on every dashboard", () => {
  it("`none` hides every dashboard from a member but their own: 404, out of the list and its count", async () => {
    const {
      key,
      member: colleague,
      admin,
      project,
      onEveryDashboard,
      listed,
      levelOn,
      rename,
    } = await setupDashboards();
    const put = await onEveryDashboard("none");
    expect(put.body).toEqual(typeRule({ resource: "dashboard", access_level: "none" }));

    expect(await listed(colleague.key)).toEqual({ names: ["Mine"], count: 1 });
    expect(await levelOn(colleague.key, "Board")).toBe(404);
    expect((await api("GET", `${dashboardsPath(project.id)}/999999`, { key: colleague.key })).body).toEqual(NOT_FOUND);
    expectError(await rename(colleague.key, "Board"), 404, NOT_FOUND);
    // Each way the list counts: by the counter, along the search and tag indexes, row by row (pinned).
    expect(await listed(colleague.key, "?search=Boa")).toEqual({ names: [], count: 0 });
    expect(await listed(colleague.key, "?search=Min")).toEqual({ names: ["Mine"], count: 1 });
    expect(await listed(colleague.key, "?pinned=false")).toEqual({ names: ["Mine"], count: 1 });
    // Its creator manages their own; the organization's admins and owner see everything.
    expect(await levelOn(colleague.key, "Mine")).toBe("manager");
    expect((await rename(colleague.key, "Mine")).status).toBe(200);
    for (const unrestricted of [key, admin.key]) {
      expect(await listed(unrestricted)).toEqual({ names: ALL, count: 4 });
      expect(await levelOn(unrestricted, "Board")).toBe("manager");
    }
    // Entries about a hidden dashboard are hidden with it.
    const entriesSeen = async () => {
      const entries = await api("GET", `/api/projects/${project.id}/activity_log?scope=Dashboard`, {
        key: colleague.key,
      });
      return new Set(entries.body.results.map((entry: { detail: { name: string } }) => entry.detail.name));
    };
    expect(await entriesSeen()).toEqual(new Set(["Mine"]));

    expect((await onEveryDashboard(null)).body).toBeNull();
    expect(await listed(colleague.key)).toEqual({ names: ALL, count: 4 });
    expect(await levelOn(colleague.key, "Board")).toBe("editor");
    expect(await entriesSeen()).toEqual(new Set(ALL));
  });

  it("a member's own `none` on every dashboard, or their role's, hides them; the highest such rule wins", async () => {
    const { member: colleague, roleId, onEveryDashboard, listed, levelOn } = await setupDashboards();
    await onEveryDashboard("none", forMember(colleague));
    expect(await listed(colleague.key)).toEqual({ names: ["Mine"], count: 1 });
    // A default for everyone on the kind is weighed with the member's own: `viewer` outranks their `none`.
    await onEveryDashboard("viewer");
    expect(await listed(colleague.key)).toEqual({ names: ALL, count: 4 });
    expect(await levelOn(colleague.key, "Chart")).toBe("viewer");
    await onEveryDashboard("manager", { role: roleId });
    expect(await levelOn(colleague.key, "Chart")).toBe("manager");
    await onEveryDashboard(null);
    await onEveryDashboard(null, { role: roleId });
    await onEveryDashboard("none", { role: roleId });
    await onEveryDashboard(null, forMember(colleague));
    expect(await listed(colleague.key)).toEqual({ names: ["Mine"], count: 1 });
    await onEveryDashboard(null, { role: roleId });
    expect(await listed(colleague.key)).toEqual({ names: ALL, count: 4 });
  });

  it("a role given `viewer` on every dashboard reads them but cannot change them (403)", async () => {
    const { member: colleague, roleId, onEveryDashboard, listed, levelOn, rename } = await setupDashboards();
    await onEveryDashboard("viewer", { role: roleId });
    expect(await listed(colleague.key)).toEqual({ names: ALL, count: 4 });
    expect(await levelOn(colleague.key, "Board")).toBe("viewer");
    expectError(await rename(colleague.key, "Board"), 403, NO_EDIT_RIGHT);
    expect(await levelOn(colleague.key, "Mine")).toBe("manager");
    expect((await rename(colleague.key, "Mine")).status).toBe(200);
    // The role's `editor` on every dashboard lets them edit.
    await onEveryDashboard("editor", { role: roleId });
    expect((await rename(colleague.key, "Board")).status).toBe(200);
  });

  it("a dashboard's rules for the member or their roles, then those on every dashboard, then its default", async () => {
    const {
      member: colleague,
      roleId,
      onEveryDashboard,
      onDashboard,
      listed,
      levelOn,
      rename,
    } = await setupDashboards();
    await onEveryDashboard("none");
    // Up: the member's own rule on Board, their role's on Chart, beat `none` on every dashboard.
    await onDashboard("Board", "editor", forMember(colleague));
    await onDashboard("Chart", "viewer", { role: roleId });
    // The dashboard's default for everyone comes after the rules on every dashboard: Plan stays hidden.
    await onDashboard("Plan", "manager");
    expect(await listed(colleague.key)).toEqual({ names: ["Board", "Chart", "Mine"], count: 3 });
    expect(await listed(colleague.key, "?search=a")).toEqual({ names: ["Board", "Chart"], count: 2 });
    expect(await listed(colleague.key, "?search=Pla")).toEqual({ names: [], count: 0 });
    expect(await levelOn(colleague.key, "Board")).toBe("editor");
    expect((await rename(colleague.key, "Board")).status).toBe(200);
    expect(await levelOn(colleague.key, "Chart")).toBe("viewer");
    expectError(await rename(colleague.key, "Chart"), 403, NO_EDIT_RIGHT);
    expect(await levelOn(colleague.key, "Plan")).toBe(404);

    // Down: a rule on the dashboard for the member hides it despite `editor` on every dashboard,
    // and `editor` on every dashboard outranks a dashboard's default of `none`.
    await onEveryDashboard("editor");
    await onDashboard("Board", "none", forMember(colleague));
    await onDashboard("Plan", "none");
    expect(await listed(colleague.key)).toEqual({ names: ["Chart", "Mine", "Plan"], count: 3 });
    expect(await levelOn(colleague.key, "Board")).toBe(404);
    expect(await levelOn(colleague.key, "Plan")).toBe("editor");
    expect(await levelOn(colleague.key, "Chart")).toBe("viewer");
    // Without any rule on every dashboard, the dashboard's default decides again.
    await onEveryDashboard(null);
    expect(await listed(colleague.key)).toEqual({ names: ["Chart", "Mine"], count: 2 });
  });

  it("decides copies too: hidden from every dashboard, a member copies none (403); an editor may", async () => {
    const { member: colleague, ids, project, onEveryDashboard } = await setupDashboards();
    await onEveryDashboard("none", forMember(colleague));
    const copy = await api("POST", dashboardsPath(project.id), {
      key: colleague.key,
      body: { name: "Copy", use_dashboard: ids.Board },
    });
    expectError(
      copy,
      403,
      errorBody("authentication_error", "permission_denied", "You do not have editor access to this resource."),
    );
    await onEveryDashboard("editor", forMember(colleague));
    const allowed = await api("POST", dashboardsPath(project.id), {
      key: colleague.key,
      body: { name: "Copy", use_dashboard: ids.Board },
    });
    expect(allowed.status).toBe(201);
    expect(allowed.body.user_access_level).toBe("manager");
  });

  it("decides who creates dashboards: editor on every dashboard, as PostHog; admins always", async () => {
    const { key, admin, member: colleague, project, roleId, onEveryDashboard, listed } = await setupDashboards();
    const create = (as: string) => api("POST", dashboardsPath(project.id), { key: as, body: { name: "New" } });
    const before = (await listed(key)).count;
    for (const level of ["none", "viewer"] as const) {
      await onEveryDashboard(level, forMember(colleague));
      expectError(
        await create(colleague.key),
        403,
        errorBody("authentication_error", "permission_denied", "You do not have editor access to this resource."),
      );
    }
    expect((await listed(key)).count).toBe(before);
    expect((await create(admin.key)).status).toBe(201);
    // The highest of the member's and their roles' rules: a role's editor lifts their viewer.
    await onEveryDashboard("editor", { role: roleId });
    expect((await create(colleague.key)).status).toBe(201);
    await onEveryDashboard(null, { role: roleId });
    await onEveryDashboard("editor", forMember(colleague));
    expect((await create(colleague.key)).status).toBe(201);
    await onEveryDashboard(null, forMember(colleague));
    expect((await create(colleague.key)).status).toBe(201);
  });

  it("holds a creation to the rule on every dashboard as it is when the dashboard is written", async () => {
    const { key, member: colleague, project, onEveryDashboard, listed } = await setupDashboards();
    const before = (await listed(key)).count;
    const ran = beforeWrites([
      [/^insert into "dashboards"/, async () => onEveryDashboard("viewer", forMember(colleague))],
    ]);
    const created = await api("POST", dashboardsPath(project.id), { key: colleague.key, body: { name: "Late" } });
    vi.restoreAllMocks();
    expect(ran).toHaveLength(1);
    expectError(
      created,
      403,
      errorBody("authentication_error", "permission_denied", "You do not have editor access to this resource."),
    );
    expect((await listed(key)).count).toBe(before);
  });

  it("is for project admins to set (403); a role or member of another organization is 400", async () => {
    const { key, project, member: colleague } = await setupDashboards();
    const rulesPath = path("projects", project.id);
    expectError(
      await api("PUT", rulesPath, { key: colleague.key, body: { resource: "dashboard", access_level: "manager" } }),
      403,
      errorBody(
        "authentication_error",
        "permission_denied",
        "Must be an Organization admin to modify project-wide permissions.",
      ),
    );
    const other = await setupOrganization();
    const foreignRole = await api("POST", `/api/organizations/${other.organization.id}/roles`, {
      key: other.key,
      body: { name: "Theirs" },
    });
    const foreign = await api("PUT", rulesPath, {
      key,
      body: { resource: "dashboard", access_level: "none", role: foreignRole.body.id },
    });
    expect(foreign.body).toMatchObject({ type: "validation_error", code: "does_not_exist", attr: "role" });
    const stranger = await api("PUT", rulesPath, {
      key,
      body: { resource: "dashboard", access_level: "none", organization_member: other.owner.uuid },
    });
    expect(stranger.body).toMatchObject({ type: "validation_error", attr: "organization_member" });
    expect((await api("GET", rulesPath, { key })).body.access_controls).toEqual([]);
  });

  it("stores a rule on `project` at this level, as PostHog does, and it acts on nothing", async () => {
    const { key, project, member: colleague, listed } = await setupDashboards();
    const put = await api("PUT", path("environments", project.id), {
      key,
      body: { resource: "project", access_level: "none", ...forMember(colleague) },
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual(
      typeRule({ resource: "project", access_level: "none", organization_member: colleague.membership.id }),
    );
    expect((await api("GET", `/api/projects/${project.id}`, { key: colleague.key })).status).toBe(200);
    expect(await listed(colleague.key)).toEqual({ names: ALL, count: 4 });
    expect((await api("GET", path("projects", project.id), { key })).body.access_controls).toEqual([put.body]);
  });
});

describe("a rule on every dashboard: its removal", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is refused to an admin demoted between its read and its write: a none rule stays", async () => {
    const { organization, key, project, member } = await setup();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const rulesPath = path("environments", project.id);
    const hideFromMember = { resource: "dashboard", organization_member: member.membership.id };
    const hidden = await api("PUT", rulesPath, { key, body: { ...hideFromMember, access_level: "none" } });
    expect(hidden.status).toBe(200);
    const ran = beforeWrites([
      [
        /^delete from "resource_access_controls"/,
        async () =>
          (
            await api("PATCH", `/api/organizations/${organization.id}/members/${admin.user.uuid}`, {
              key,
              body: { level: MembershipLevel.member },
            })
          ).status,
      ],
    ]);
    // Removing the `none` rule would give the member the default, editor, on every dashboard.
    const removed = await api("PUT", rulesPath, { key: admin.key, body: { ...hideFromMember, access_level: null } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(
      removed,
      403,
      errorBody(
        "authentication_error",
        "permission_denied",
        "Must be an Organization admin to modify project-wide permissions.",
      ),
    );
    expect((await api("GET", rulesPath, { key })).body.access_controls).toEqual([hidden.body]);
  });
});

describe("a rule on the activity log", () => {
  /** A project with an entry, and a member whom a rule on the kind `activity_log` gives `none`. */
  async function memberWithoutActivityLog() {
    const team = await setup();
    const { organization, key, project, member } = team;
    await createDashboard(key, project.id, { name: "Revenue" });
    const hide = { resource: "activity_log", access_level: "none", organization_member: member.membership.id };
    expect((await api("PUT", path("projects", project.id), { key, body: hide })).status).toBe(200);
    // Sealed, so that the feed lists the entries.
    expect((await api("GET", `/api/organizations/${organization.id}/activity_log/verify`, { key })).status).toBe(200);
    const feed = async (feedKey: string) => {
      const read = await api("GET", `/api/organizations/${organization.id}/events`, { key: feedKey });
      expect(read.status).toBe(200);
      return read.body.results.map((event: { type: string }) => event.type);
    };
    return { ...team, feed };
  }

  const NO_VIEWER_ACCESS = errorBody(
    "authentication_error",
    "permission_denied",
    "You do not have viewer access to this resource.",
  );

  it("keeps the member it names out of the project's log, its entries and their events (403), as PostHog", async () => {
    const { organization, key, project, member, feed } = await memberWithoutActivityLog();
    const [entry] = (await api("GET", `/api/projects/${project.id}/activity_log`, { key })).body.results;
    for (const refused of [
      `/api/projects/${project.id}/activity_log`,
      `/api/environments/${project.id}/activity_log?include_organization_scoped=1`,
      `/api/projects/${project.id}/activity_log/${entry.id}`,
    ]) {
      expectError(await api("GET", refused, { key: member.key }), 403, NO_VIEWER_ACCESS);
    }
    expect(await feed(member.key)).toEqual([]);
    // The organization's admins are never restricted.
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const hideAdmin = { resource: "activity_log", access_level: "none", organization_member: admin.membership.id };
    expect((await api("PUT", path("projects", project.id), { key, body: hideAdmin })).status).toBe(200);
    expect((await api("GET", `/api/projects/${project.id}/activity_log`, { key: admin.key })).status).toBe(200);
    expect(await feed(admin.key)).toContain("Dashboard.created");
  });

  it("loses to a higher rule of the member's role, and lifted, lets them read again", async () => {
    const { organization, key, project, member, roleId, feed } = await memberWithoutActivityLog();
    const logPath = `/api/projects/${project.id}/activity_log`;
    await api("POST", `/api/organizations/${organization.id}/roles/${roleId}/role_memberships`, {
      key,
      body: { user_uuid: member.user.uuid },
    });
    const roleViewer = { resource: "activity_log", access_level: "viewer", role: roleId };
    expect((await api("PUT", path("projects", project.id), { key, body: roleViewer })).status).toBe(200);
    expect((await api("GET", logPath, { key: member.key })).status).toBe(200);
    expect(
      (await api("PUT", path("projects", project.id), { key, body: { ...roleViewer, access_level: null } })).status,
    ).toBe(204);
    expect((await api("GET", logPath, { key: member.key })).status).toBe(403);
    const lift = { resource: "activity_log", access_level: null, organization_member: member.membership.id };
    expect((await api("PUT", path("projects", project.id), { key, body: lift })).status).toBe(204);
    const read = await api("GET", logPath, { key: member.key });
    expect(read.body.results.map((entry: { scope: string }) => entry.scope)).toContain("Dashboard");
    expect(await feed(member.key)).toContain("Dashboard.created");
  });
});

describe("a rule on a kind written while another write of it lands", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is refused (409) when the rule it read as missing was created meanwhile", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const rulesPath = path("projects", project.id);
    const body = (level: string) => ({
      resource: "dashboard",
      access_level: level,
      organization_member: member.membership.id,
    });
    const ran = beforeWrites([
      [
        /insert into "resource_access_controls"/,
        async () => (await api("PUT", rulesPath, { key, body: body("viewer") })).status,
      ],
    ]);
    const raced = await api("PUT", rulesPath, { key, body: body("editor") });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(raced, 409, changedMeanwhile("access control"));
    const rules = (await api("GET", rulesPath, { key })).body.access_controls;
    expect(rules.map((rule: { access_level: string }) => rule.access_level)).toEqual(["viewer"]);
  });
});
