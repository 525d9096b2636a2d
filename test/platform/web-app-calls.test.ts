import { describe, expect, it } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { expectDecoded, type Shape } from "../support/client-shapes";
import { addMember, addMembership, api, createApiKey, setupOrganization } from "../support/harness";

/*
 * The calls PostHog's web app (github.com/PostHog/posthog, `frontend/src`) makes on the resources
 * this API serves, sent as `frontend/src/lib/api.ts` sends them: `normalizeUrl` adds a trailing
 * slash to a path without a query string, and none before one; GET sends no body; POST, PATCH and
 * PUT send `Content-Type: application/json`, a POST without data (an action: pause, roll) with no
 * body at all; DELETE sends `Content-Type: application/x-www-form-urlencoded` and no body. Paths
 * come from `ApiRequest` in api.ts and from the scenes' logics that call `api.get(...)` directly
 * (userLogic, organizationLogic, invitesLogic, verifiedDomainsLogic, accessControlLogic,
 * dashboardCollaboratorsLogic). The app authenticates with its session; here the key stands in.
 * The shapes are the fields the app reads, from the types of `frontend/src/types.ts`.
 */

/** `types.ts`: UserBasicType. */
const USER_BASIC: Shape = {
  id: "integer",
  uuid: "string",
  distinct_id: "string",
  first_name: "string",
  email: "string",
};
/** `types.ts`: OrganizationBasicType. */
const ORGANIZATION_BASIC: Shape = { id: "string", name: "string", slug: "string", membership_level: "integer?" };
/** `types.ts`: TeamBasicType. */
const TEAM_BASIC: Shape = {
  id: "integer",
  uuid: "string",
  name: "string",
  organization: "string",
  api_token: "string",
};
/** `types.ts`: UserType (what the app reads on load). */
const USER: Shape = {
  ...USER_BASIC,
  organization: { ...ORGANIZATION_BASIC, teams: [TEAM_BASIC], created_at: "string" },
  team: TEAM_BASIC,
  organizations: [ORGANIZATION_BASIC],
};
/** `types.ts`: OrganizationMemberType. */
const MEMBER: Shape = { id: "string", user: USER_BASIC, level: "integer", joined_at: "string", updated_at: "string" };
/** `types.ts`: OrganizationInviteType. */
const INVITE: Shape = { id: "string", target_email: "string", created_at: "string", is_expired: "boolean" };
/** `types.ts`: OrganizationDomainType. */
const DOMAIN: Shape = {
  id: "string",
  domain: "string",
  is_verified: "boolean",
  verified_at: "string?",
  verification_challenge: "string",
  jit_provisioning_enabled: "boolean",
  sso_enforcement: "string",
  has_saml: "boolean",
};
/** `types.ts`: DashboardType, the fields of a list item. */
const DASHBOARD: Shape = { id: "integer", name: "string", pinned: "boolean", tags: ["string"], created_by: "object?" };
/** `types.ts`: SharingConfigurationType. */
const SHARING: Shape = { enabled: "boolean", access_token: "string", created_at: "string?" };
/** api.ts, `sharing.createPassword`'s return type. */
const SHARE_PASSWORD: Shape = {
  id: "string",
  password: "string",
  note: "string",
  created_at: "string",
  created_by_email: "string?",
};
/** `types.ts`: AccessControlResponseType, as accessControlLogic reads it. */
const ACCESS_CONTROLS: Shape = {
  access_controls: [{ access_level: "string", organization_member: "string?" }],
  available_access_levels: ["string"],
  default_access_level: "string",
  user_access_level: "string",
  user_can_edit_access_levels: "boolean",
};
/** `types.ts`: BatchExportConfiguration. */
const BATCH_EXPORT: Shape = {
  id: "string",
  name: "string",
  destination: { type: "string", config: "object" },
  interval: "string",
  created_at: "string",
  start_at: "string?",
  end_at: "string?",
  paused: "boolean",
};
/** `types.ts`: PersonalAPIKeyType. */
const PERSONAL_API_KEY: Shape = {
  id: "string",
  label: "string",
  mask_value: "string?",
  created_at: "string",
  last_used_at: "string?",
  last_rolled_at: "string?",
  scopes: ["string"],
  scoped_organizations: ["string"],
  scoped_teams: ["integer"],
};
/** api.ts: ActivityLogPaginatedResponse<ActivityLogItem>. */
const ACTIVITY_PAGE: Shape = {
  count: "integer",
  next: "string?",
  results: [{ activity: "string", scope: "string", item_id: "string?", created_at: "string", user: "object?" }],
};

/** `normalizeUrl`: a leading slash, and a trailing one unless a query string follows. */
function normalize(path: string) {
  const absolute = path.startsWith("/") ? path : `/${path}`;
  return absolute.includes("?") || absolute.endsWith("/") ? absolute : `${absolute}/`;
}

/** A request as api.ts's `get`, `create`, `update`, `put` and `delete` send it. */
function webApp(method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE", path: string, key: string, data?: unknown) {
  const url = normalize(path);
  if (method === "GET") return api("GET", url, { key });
  if (method === "DELETE") {
    return api("DELETE", url, { key, headers: { "Content-Type": "application/x-www-form-urlencoded" } });
  }
  // `createResponse` sends the JSON type whether or not there is data, and a body only with data.
  const body = data === undefined ? undefined : JSON.stringify(data);
  return api(method, url, { key, body, headers: { "Content-Type": "application/json" } });
}

async function decoded(
  method: "GET" | "POST" | "PATCH" | "PUT",
  path: string,
  key: string,
  shape: Shape,
  data?: unknown,
) {
  return expectDecoded(await webApp(method, path, key, data), shape, `${method} ${path}`);
}

async function expectDeleted(path: string, key: string) {
  const response = await webApp("DELETE", path, key);
  expect(response.status, `DELETE ${path}: ${response.text}`).toBe(204);
}

describe("PostHog's web app", () => {
  it("loads the user, the current organization, project and environment (userLogic, organizationLogic)", async () => {
    const { organization, project, key } = await setupOrganization();
    const user = await decoded("GET", "api/users/@me", key, USER);
    expect(user.organization.id).toBe(organization.id);
    await decoded("GET", "api/organizations/@current", key, ORGANIZATION_BASIC);
    const renamed = await decoded("PATCH", "api/organizations/@current", key, ORGANIZATION_BASIC, { name: "Acme" });
    expect(renamed.name).toBe("Acme");
    expect(await decoded("GET", "api/projects/@current", key, TEAM_BASIC)).toMatchObject({ id: project.id });
    expect(await decoded("GET", `api/environments/${project.id}`, key, TEAM_BASIC)).toMatchObject({ id: project.id });
  });

  it("lists every member page by page, changes a level and removes a member (organizationMembers)", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    // `listAll` follows `next` through `loadPaginatedResults`.
    let url: string | null = "api/organizations/@current/members?limit=1";
    const seen: string[] = [];
    while (url) {
      const page = await decoded("GET", url, key, { results: [MEMBER], next: "string?" });
      seen.push(...page.results.map((item: { user: { uuid: string } }) => item.user.uuid));
      url = page.next ? new URL(page.next).pathname + new URL(page.next).search : null;
    }
    expect(seen).toContain(member.user.uuid);
    expect(seen).toHaveLength(2);
    const path = `api/organizations/@current/members/${member.user.uuid}`;
    const updated = await decoded("PATCH", path, key, MEMBER, { level: MembershipLevel.admin });
    expect(updated.level).toBe(MembershipLevel.admin);
    await expectDeleted(path, key);
  });

  it("invites in bulk, lists and cancels invites (invitesLogic)", async () => {
    const { key } = await setupOrganization();
    const invites = [
      { target_email: "ada@example.com", first_name: "Ada", level: 1 },
      { target_email: "bo@example.com" },
    ];
    const created = await decoded("POST", "api/organizations/@current/invites/bulk", key, [INVITE], invites);
    expect(created.map((invite: { target_email: string }) => invite.target_email)).toEqual([
      "ada@example.com",
      "bo@example.com",
    ]);
    const list = await decoded("GET", "api/organizations/@current/invites", key, { results: [INVITE] });
    expect(list.results).toHaveLength(2);
    await expectDeleted(`api/organizations/@current/invites/${created[0].id}`, key);
  });

  it("adds, lists, edits and removes an authentication domain (verifiedDomainsLogic)", async () => {
    const { key } = await setupOrganization();
    const domain = `web-${crypto.randomUUID().slice(0, 8)}.example.com`;
    const created = await decoded("POST", "api/organizations/@current/domains", key, DOMAIN, { domain });
    const list = await decoded("GET", "api/organizations/@current/domains", key, { results: [DOMAIN] });
    expect(list.results.map((item: { domain: string }) => item.domain)).toEqual([domain]);
    const path = `api/organizations/@current/domains/${created.id}`;
    const edited = await decoded("PATCH", path, key, DOMAIN, { jit_provisioning_enabled: false });
    expect(edited.jit_provisioning_enabled).toBe(false);
    await expectDeleted(path, key);
  });

  it("lists and reads dashboards, shares one with a password, adds a collaborator (dashboards, sharing)", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const dashboards = `api/environments/${project.id}/dashboards`;
    const created = await decoded("POST", dashboards, key, DASHBOARD, { name: "Shared", restriction_level: 37 });
    const list = await decoded("GET", dashboards, key, { results: [DASHBOARD] });
    expect(list.results.map((item: { id: number }) => item.id)).toContain(created.id);
    const item = `${dashboards}/${created.id}`;
    await decoded("GET", item, key, DASHBOARD);
    await decoded("GET", `${item}/sharing`, key, SHARING);
    expect(await decoded("PATCH", `${item}/sharing`, key, SHARING, { enabled: true })).toMatchObject({ enabled: true });
    // The sharing modal turns password protection on before it adds a password.
    await decoded("PATCH", `${item}/sharing`, key, SHARING, { password_required: true });
    const password = await decoded("POST", `${item}/sharing/passwords`, key, SHARE_PASSWORD, { note: "for Ada" });
    expect(password.note).toBe("for Ada");
    await expectDeleted(`${item}/sharing/passwords/${password.id}`, key);
    // Collaborators live under the project, not the environment (`dashboardCollaborators` in api.ts).
    const collaborators = `api/projects/${project.id}/dashboards/${created.id}/collaborators`;
    const collaborator: Shape = { user: USER_BASIC, level: "integer", added_at: "string" };
    const added = await decoded("POST", collaborators, key, collaborator, { user_uuid: member.user.uuid, level: 37 });
    expect(added.user.uuid).toBe(member.user.uuid);
    expect(await decoded("GET", collaborators, key, [collaborator])).toHaveLength(1);
    await expectDeleted(`${collaborators}/${member.user.uuid}`, key);
  });

  it("moves a tile to another dashboard with the body it sends now, `to_dashboard` (dashboardLogic)", async () => {
    const { project, key } = await setupOrganization();
    const dashboards = `api/environments/${project.id}/dashboards`;
    const from = await webApp("POST", dashboards, key, { name: "From" });
    const to = await webApp("POST", dashboards, key, { name: "To" });
    const withTile = await webApp("PATCH", `${dashboards}/${from.body.id}`, key, {
      tiles: [{ text: { body: "Notes" }, layouts: { sm: { x: 0, y: 0, w: 6, h: 2 } } }],
    });
    const tile = withTile.body.tiles[0];
    // moveToDashboard: api.update(`…/move_tile`, { tile, to_dashboard }), the whole tile as read.
    const moved = await webApp("PATCH", `${dashboards}/${from.body.id}/move_tile`, key, {
      tile,
      to_dashboard: to.body.id,
    });
    expect(moved.status, moved.text.slice(0, 300)).toBe(200);
    expect(moved.body.tiles).toEqual([]);
    const target = await webApp("GET", `${dashboards}/${to.body.id}`, key);
    expect(target.body.tiles.map((each: { id: number }) => each.id)).toEqual([tile.id]);
    // Back again, where the tile is already shown: the error names the field as sent.
    const again = await webApp("PATCH", `${dashboards}/${to.body.id}/move_tile`, key, {
      tile,
      to_dashboard: to.body.id,
    });
    expect([again.status, again.body.attr]).toEqual([400, "to_dashboard"]);
    const neither = await webApp("PATCH", `${dashboards}/${to.body.id}/move_tile`, key, { tile });
    expect(neither.body).toMatchObject({ code: "required", attr: "to_dashboard" });
  });

  it("copies a tile to another dashboard as it sends it, no slash (dashboardLogic.copyToDashboard)", async () => {
    const { project, key } = await setupOrganization();
    const dashboards = `api/environments/${project.id}/dashboards`;
    const from = await webApp("POST", dashboards, key, { name: "From" });
    const to = await webApp("POST", dashboards, key, { name: "To" });
    const withTile = await webApp("PATCH", `${dashboards}/${from.body.id}`, key, {
      tiles: [{ text: { body: "Notes" } }],
    });
    const tile = withTile.body.tiles[0];
    // api.create(`api/environments/${teamId}/dashboards/${toDashboard}/copy_tile`, { fromDashboardId, tileId }).
    const copied = await webApp("POST", `${dashboards}/${to.body.id}/copy_tile`, key, {
      fromDashboardId: from.body.id,
      tileId: tile.id,
    });
    expect(copied.status, copied.text.slice(0, 300)).toBe(200);
    expect(copied.body.tiles).toEqual([expect.objectContaining({ text: expect.objectContaining({ body: "Notes" }) })]);
    // The source keeps its tile.
    expect((await webApp("GET", `${dashboards}/${from.body.id}`, key)).body.tiles).toEqual([tile]);
  });

  it("duplicates a tile as it sends it, moving the tiles below down (dashboardLogic.duplicateTile)", async () => {
    const { project, key } = await setupOrganization();
    const dashboards = `api/environments/${project.id}/dashboards`;
    const created = await webApp("POST", dashboards, key, { name: "Notes" });
    const item = `${dashboards}/${created.body.id}`;
    const withTiles = await webApp("PATCH", item, key, {
      tiles: [
        { text: { body: "Top" }, layouts: { sm: { x: 0, y: 0, w: 12, h: 2 } } },
        { text: { body: "Below" }, layouts: { sm: { x: 0, y: 2, w: 12, h: 2 } } },
      ],
    });
    const [top, below] = withTiles.body.tiles;
    // The whole tile, its text reduced to its body, placed under it; the tile under it moved down.
    const duplicated = await webApp("PATCH", item, key, {
      duplicate_tiles: [{ ...top, text: { body: top.text.body }, layouts: { sm: { x: 0, y: 2, w: 12, h: 2 } } }],
      tiles: [{ id: below.id, layouts: { sm: { x: 0, y: 4, w: 12, h: 2 } } }],
    });
    expect(duplicated.status, duplicated.text.slice(0, 300)).toBe(200);
    expect(
      duplicated.body.tiles.map((tile: { text: { body: string }; layouts: { sm: { y: number } } }) => [
        tile.text.body,
        tile.layouts.sm.y,
      ]),
    ).toEqual([
      ["Top", 0],
      ["Top", 2],
      ["Below", 4],
    ]);
    expect(duplicated.body.tiles[1].id).not.toBe(top.id);
  });

  it("filters the activity side panel by a member, by the user's numeric id (sidePanelActivityLogic)", async () => {
    const { organization, owner, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.admin);
    const dashboards = `api/environments/${project.id}/dashboards`;
    const mine = await webApp("POST", dashboards, key, { name: "Owner's" });
    await webApp("POST", dashboards, member.key, { name: "Member's" });
    // SidePanelActivity.tsx: MemberSelect sets `user: user?.id`, a number.
    for (const user of [String(owner.id), owner.uuid]) {
      const filtered = await webApp("GET", `api/projects/${project.id}/activity_log?scope=Dashboard&user=${user}`, key);
      expect(filtered.body.results.map((entry: { item_id: string }) => entry.item_id)).toEqual([String(mine.body.id)]);
    }
    const nobody = await webApp("GET", `api/projects/${project.id}/activity_log?scope=Dashboard&user=999999`, key);
    expect(nobody.body.results).toEqual([]);
  });

  it("creates a project in the current organization with POST api/projects/ (projectLogic.createProject)", async () => {
    const { organization, owner, key } = await setupOrganization();
    const created = await webApp("POST", "api/projects/", key, { name: "Second project" });
    expect(created.status, created.text.slice(0, 300)).toBe(201);
    expect(created.body).toMatchObject({ name: "Second project", organization: organization.id });
    expect(created.headers.get("ETag")).toBe(`W/"${created.body.id}.1"`);
    // The app then switches to it: a project of the organization.
    const listed = await webApp("GET", `api/organizations/${organization.id}/projects`, key);
    expect(listed.body.results.map((project: { id: number }) => project.id)).toContain(created.body.id);
    // A member may not (admins and owners create projects); a key scoped to projects neither.
    const member = await addMember(organization.id, MembershipLevel.member);
    expect((await webApp("POST", "api/projects/", member.key, { name: "Mine" })).status).toBe(403);
    const scoped = await createApiKey(owner, { scopes: ["*"], scopedTeams: [created.body.id] });
    expect((await webApp("POST", "api/projects/", scoped.value, { name: "Scoped" })).body).toMatchObject({
      detail: "API key with scoped projects are only supported on project-based views.",
    });
    expect((await webApp("POST", "api/projects/", key, { name: "" })).body).toMatchObject({ attr: "name" });
    // A key scoped to another organization of the owner's creates there, never in one outside its scope.
    const elsewhere = await setupOrganization();
    await addMembership(elsewhere.organization.id, owner, MembershipLevel.owner);
    const narrow = await createApiKey(owner, { scopes: ["*"], scopedOrganizations: [elsewhere.organization.id] });
    const there = await webApp("POST", "api/projects/", narrow.value, { name: "There" });
    expect([there.status, there.body.organization]).toEqual([201, elsewhere.organization.id]);
  });

  it("moves a project to another organization, then switches to it (projectLogic.moveProject)", async () => {
    const { organization, owner, key } = await setupOrganization();
    const created = await webApp("POST", "api/projects/", key, { name: "To move" });
    const target = await setupOrganization();
    await addMembership(target.organization.id, owner, MembershipLevel.admin);
    // api.create(`api/projects/${project.id}/change_organization`, { organization_id }): no slash.
    const moved = await webApp("POST", `api/projects/${created.body.id}/change_organization`, key, {
      organization_id: target.organization.id,
    });
    expect(moved.status, moved.text.slice(0, 300)).toBe(200);
    expect(moved.body).toMatchObject({ id: created.body.id, name: "To move", organization: target.organization.id });
    const switched = await webApp("PATCH", "api/users/@me/", key, { set_current_organization: target.organization.id });
    expect(switched.status).toBe(200);
    expect(switched.body.organization.id).toBe(target.organization.id);
    const left = await webApp("GET", `api/organizations/${organization.id}/projects`, key);
    expect(left.body.results.map((project: { id: number }) => project.id)).not.toContain(created.body.id);
  });

  it("creates personal API keys from the app's presets, with PostHog's scopes (personalAPIKeysLogic)", async () => {
    const { key } = await setupOrganization();
    // API_KEY_SCOPE_PRESETS, posted with the form's other values: `local_evaluation`, and
    // `mcp_server` (every kind the app knows, `:write` on feature flags and insights).
    const local = await webApp("POST", "api/personal_api_keys", key, {
      label: "Local evaluation",
      scopes: ["feature_flag:read"],
      scoped_organizations: [],
      scoped_teams: [],
      preset: "local_evaluation",
      access_type: "all",
    });
    expect([local.status, local.body.scopes]).toEqual([201, ["feature_flag:read"]]);
    // A scope no route here requires opens none: only the caller's own reads.
    expect((await webApp("GET", "api/organizations/@current/members", local.body.value)).status).toBe(403);
    const kinds = ["action", "annotation", "cohort", "dashboard", "insight", "organization_member", "warehouse_view"];
    const scopes = kinds.map((kind) => (kind === "insight" ? `${kind}:write` : `${kind}:read`));
    const mcp = await webApp("POST", "api/personal_api_keys", key, {
      label: "MCP Server",
      scopes,
      preset: "mcp_server",
    });
    expect([mcp.status, mcp.body.scopes]).toEqual([201, scopes]);
    expect((await webApp("GET", "api/organizations/@current/members", mcp.body.value)).status).toBe(200);
    const unknown = await webApp("POST", "api/personal_api_keys", key, { label: "x", scopes: ["spaceship:read"] });
    expect(unknown.body).toMatchObject({ code: "invalid_choice", attr: "scopes.0" });
  });

  it("reads and sets access controls on a dashboard and a project (accessControlLogic)", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await decoded("POST", `api/environments/${project.id}/dashboards`, key, DASHBOARD, { name: "A" });
    for (const [path, level] of [
      [`api/projects/${project.id}/dashboards/${dashboard.id}/access_controls`, "viewer"],
      [`api/projects/${project.id}/access_controls`, "admin"],
    ] as const) {
      await decoded("GET", path, key, ACCESS_CONTROLS);
      const rule: Shape = { access_level: "string", organization_member: "string?" };
      await decoded("PUT", path, key, rule, { organization_member: member.membership.id, access_level: level });
      const after = await decoded("GET", path, key, ACCESS_CONTROLS);
      expect(after.access_controls).toEqual([
        expect.objectContaining({ organization_member: member.membership.id, access_level: level }),
      ]);
    }
  });

  it("makes a role with a member, hides every dashboard from it (rolesLogic, resourceAccessControls)", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const role: Shape = { id: "string", name: "string", members: [{ id: "string", user: USER_BASIC }] };
    const created = await decoded("POST", "api/organizations/@current/roles", key, role, { name: "Analysts" });
    const membership: Shape = { id: "string", role_id: "string", user: USER_BASIC };
    const memberships = `api/organizations/@current/roles/${created.id}/role_memberships`;
    const joined = await decoded("POST", memberships, key, membership, { user_uuid: member.user.uuid });
    const listed = await decoded("GET", "api/organizations/@current/roles", key, { results: [role] });
    expect(listed.results[0].members.map((each: { id: string }) => each.id)).toEqual([joined.id]);

    const rules = `api/projects/${project.id}/resource_access_controls`;
    await decoded("GET", rules, key, ACCESS_CONTROLS);
    const rule: Shape = { access_level: "string", resource: "string", role: "string?" };
    await decoded("PUT", rules, key, rule, { resource: "dashboard", role: created.id, access_level: "none" });
    const dashboards = `api/environments/${project.id}/dashboards`;
    await decoded("POST", dashboards, key, DASHBOARD, { name: "Hidden" });
    expect((await decoded("GET", dashboards, member.key, { count: "integer", results: [DASHBOARD] })).count).toBe(0);
    await expectDeleted(`${memberships}/${joined.id}`, key);
    expect((await decoded("GET", dashboards, member.key, { count: "integer", results: [DASHBOARD] })).count).toBe(1);
  });

  it("creates, lists, pauses, resumes, edits and deletes a batch export (batchExports)", async () => {
    const { project, key } = await setupOrganization();
    const collection = `api/environments/${project.id}/batch_exports`;
    const destination = { type: "S3", config: { bucket_name: "b", region: "us-east-1", prefix: "p/" } };
    const created = await decoded("POST", collection, key, BATCH_EXPORT, { name: "S3", interval: "hour", destination });
    expect((await decoded("GET", collection, key, { results: [BATCH_EXPORT] })).results).toHaveLength(1);
    const item = `${collection}/${created.id}`;
    await decoded("GET", item, key, BATCH_EXPORT);
    // Actions without data: a POST of the JSON type with no body.
    const paused = await webApp("POST", `${item}/pause`, key);
    expect(paused.status).toBeLessThan(300);
    expect((await decoded("GET", item, key, BATCH_EXPORT)).paused).toBe(true);
    expect((await webApp("POST", `${item}/unpause`, key)).status).toBeLessThan(300);
    expect(await decoded("PATCH", item, key, BATCH_EXPORT, { name: "Daily" })).toMatchObject({ name: "Daily" });
    await expectDeleted(item, key);
  });

  it("lists, creates, edits, rolls and deletes personal API keys (personalApiKeys)", async () => {
    const { organization, key } = await setupOrganization();
    // The list is a bare array, not a page.
    const listed = await decoded("GET", "api/personal_api_keys", key, [PERSONAL_API_KEY]);
    expect(listed).toHaveLength(1);
    const created = await decoded(
      "POST",
      "api/personal_api_keys",
      key,
      { ...PERSONAL_API_KEY, value: "string" },
      {
        label: "CI",
        scopes: ["dashboard:read"],
        scoped_organizations: [organization.id],
        scoped_teams: [],
      },
    );
    const path = `api/personal_api_keys/${created.id}`;
    expect(await decoded("PATCH", path, key, PERSONAL_API_KEY, { label: "CI 2" })).toMatchObject({ label: "CI 2" });
    const rolled = await decoded("POST", `${path}/roll`, key, { ...PERSONAL_API_KEY, value: "string" });
    expect(rolled.value).not.toBe(created.value);
    await expectDeleted(path, key);
  });

  it("pages the project's activity log by page number and scope (activity.listRequest)", async () => {
    const { project, key } = await setupOrganization();
    for (const name of ["One", "Two", "Three"]) {
      await decoded("POST", `api/environments/${project.id}/dashboards`, key, DASHBOARD, { name });
    }
    const base = `api/projects/${project.id}/activity_log?scopes=Dashboard&page_size=2`;
    const first = await decoded("GET", `${base}&page=1`, key, ACTIVITY_PAGE);
    expect({ count: first.count, size: first.results.length, next: typeof first.next }).toEqual({
      count: 3,
      size: 2,
      next: "string",
    });
    const second = await decoded("GET", `${base}&page=2`, key, ACTIVITY_PAGE);
    expect(second.results).toHaveLength(1);
  });
  it("creates batch exports of the types its picker offers now: AwsS3 and S3Compatible (destinations/)", async () => {
    const { project, key } = await setupOrganization();
    const collection = `api/environments/${project.id}/batch_exports`;
    const s3 = {
      bucket_name: "b",
      region: "us-east-1",
      prefix: "p/",
      aws_access_key_id: "k",
      aws_secret_access_key: "s",
    };
    const onAws = {
      type: "AwsS3",
      config: { ...s3, file_format: "Parquet", compression: "zstd", encryption: "AES256" },
    };
    const aws = await decoded("POST", collection, key, BATCH_EXPORT, {
      name: "AWS",
      interval: "hour",
      destination: onAws,
    });
    expect(aws.destination).toEqual({
      type: "AwsS3",
      config: {
        bucket_name: "b",
        region: "us-east-1",
        prefix: "p/",
        file_format: "Parquet",
        compression: "zstd",
        encryption: "AES256",
      },
    });
    const endpoint = "https://account.r2.cloudflarestorage.com";
    const onR2 = { type: "S3Compatible", config: { ...s3, region: "auto", endpoint_url: endpoint } };
    const r2 = await decoded("POST", collection, key, BATCH_EXPORT, { name: "R2", interval: "day", destination: onR2 });
    expect(r2.destination).toEqual({
      type: "S3Compatible",
      config: { bucket_name: "b", region: "auto", prefix: "p/", endpoint_url: endpoint },
    });
    // An S3-compatible storage needs its endpoint; AWS takes none.
    const noEndpoint = await webApp("POST", collection, key, {
      name: "R2",
      interval: "day",
      destination: { type: "S3Compatible", config: s3 },
    });
    expect({ status: noEndpoint.status, attr: noEndpoint.body.attr }).toEqual({
      status: 400,
      attr: "destination.config.endpoint_url",
    });
    const awsEndpoint = await webApp("POST", collection, key, {
      name: "AWS",
      interval: "day",
      destination: { type: "AwsS3", config: { ...s3, endpoint_url: endpoint } },
    });
    expect({ status: awsEndpoint.status, attr: awsEndpoint.body.attr }).toEqual({
      status: 400,
      attr: "destination.config.endpoint_url",
    });
  });

  it("refreshes members changed since its last load with updated_after (membersLogic)", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const quiet = await addMember(organization.id, MembershipLevel.member);
    const before = await webApp("GET", "api/organizations/@current/members?limit=200", key);
    const newest = (before.body.results as { updated_at: string }[])
      .map((each) => each.updated_at)
      .sort()
      .at(-1)!;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const path = `api/organizations/@current/members/${member.user.uuid}`;
    expect((await webApp("PATCH", path, key, { level: MembershipLevel.admin })).status).toBe(200);
    const updates = await webApp(
      "GET",
      `api/organizations/@current/members?updated_after=${encodeURIComponent(newest)}`,
      key,
    );
    expect(updates.status).toBe(200);
    expect(updates.body.count).toBe(1);
    expect(updates.body.results.map((each: { user: { uuid: string } }) => each.user.uuid)).toEqual([member.user.uuid]);
    expect(quiet.user.uuid).not.toBe(member.user.uuid);
    const unreadable = await webApp("GET", "api/organizations/@current/members?updated_after=yesterday", key);
    expect({ status: unreadable.status, attr: unreadable.body.attr }).toEqual({ status: 400, attr: "updated_after" });
  });
});
