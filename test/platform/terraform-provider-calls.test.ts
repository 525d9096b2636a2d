import { describe, expect, it } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { decodeErrors, expectDecoded, maybe, type Shape } from "../support/client-shapes";
import { addMember, api, setupOrganization } from "../support/harness";

/*
 * Every call PostHog's Terraform provider (github.com/PostHog/terraform-provider-posthog) makes on
 * the resources this API serves, sent as its HTTP client sends them (`internal/httpclient/client.go`:
 * a JSON body marshalled from a Go struct, `Content-Type: application/json` and its User-Agent on
 * every request, GET and DELETE included; paths with a trailing slash), and each answer checked
 * against the Go struct the provider unmarshals it into. Go's `encoding/json` fails the whole
 * resource on a field of the wrong JSON type (a string field given a number or an object, an
 * int64 given a fraction); a field it needs and does not get leaves a zero value behind, so the
 * fields the provider reads are required here.
 */

// The shapes below are copied from the provider's Go structs, one per file of `internal/httpclient/`.

/** `organization.go`: Organization. */
const ORGANIZATION: Shape = { id: "string", slug: "string", name: "string" };
/** `client.go`: PaginatedResponse[T]. */
const page = (item: Shape): Shape => ({ results: [item], next: "string?" });
/** `organization_member.go`: OrganizationMember (User, Level, JoinedAt, Is2FAEnabled are pointers). */
const ORGANIZATION_MEMBER: Shape = {
  id: "string",
  user: {
    uuid: "string",
    email: "string?",
    first_name: "string?",
    last_name: "string?",
    is_email_verified: "boolean?",
  },
  level: "integer",
  joined_at: "string?",
  is_2fa_enabled: "boolean?",
};
/** `project.go`: Project (`organization` is a *string, the organization's id). */
const PROJECT: Shape = {
  id: "integer",
  name: "string",
  organization: "string",
  api_token: "string",
  timezone: "string",
};
/** `environment.go`: Environment. */
const ENVIRONMENT: Shape = {
  id: "integer",
  heatmaps_opt_in: "boolean?",
  autocapture_exceptions_opt_in: "boolean?",
  session_recording_opt_in: "boolean?",
  surveys_opt_in: "boolean?",
  cookieless_server_hash_mode: "integer?",
  autocapture_web_vitals_opt_in: "boolean?",
  app_urls: maybe(["string?"]),
  recording_domains: maybe(["string?"]),
};
/** `dashboard.go`: Dashboard. */
const DASHBOARD: Shape = {
  id: "integer",
  name: "string",
  description: "string",
  pinned: "boolean",
  tags: ["string"],
  deleted: "boolean",
};
/** `dashboard_layout.go`: DashboardLayoutResponse and DashboardTile (`layouts` is a map[string]interface{}). */
const DASHBOARD_LAYOUT: Shape = {
  id: "integer",
  tiles: [
    {
      id: "integer",
      insight: maybe({ id: "integer" }),
      text: maybe({ id: "integer", body: "string" }),
      layouts: "object",
      color: "string?",
      show_description: "boolean?",
      deleted: "boolean?",
    },
  ],
};
/** `access_control.go` and `project_access.go`: AccessControl / ProjectAccessControl (all but `resource` pointers). */
const ACCESS_CONTROL: Shape = {
  access_level: "string?",
  resource: "string",
  resource_id: "string?",
  organization_member: "string?",
  role: "string?",
  created_by: "string?",
  created_at: "string?",
  updated_at: "string?",
};
/** `access_control.go`: AccessControlListResponse. */
const ACCESS_CONTROLS: Shape = {
  access_controls: [ACCESS_CONTROL],
  available_access_levels: ["string"],
  default_access_level: "string",
};
/** `project_access.go`: ProjectAccessControlListResponse. */
const PROJECT_ACCESS_CONTROLS: Shape = {
  access_controls: [ACCESS_CONTROL],
  available_access_levels: ["string"],
  default_access_level: "string",
  user_access_level: "string",
  user_can_edit_access_levels: "boolean",
};

/** `role.go`: Role. */
const ROLE: Shape = { id: "string", name: "string", created_at: "string?", created_by: "string?" };
/** `role_membership.go`: RoleMembership (User and JoinedAt are pointers). */
const ROLE_MEMBERSHIP: Shape = {
  id: "string",
  role_id: "string",
  user: maybe({ uuid: "string", email: "string?" }),
  joined_at: "string?",
};

/** A request as `PosthogClient.doRequest` sends it: the body marshalled by Go, its headers on every method. */
function terraform(method: string, path: string, key: string, body?: unknown) {
  return api(method, path, {
    key,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: { "Content-Type": "application/json", "User-Agent": "posthog/terraform-provider; version: 1.0.0" },
  });
}

/** The answer of a call the provider unmarshals: 2xx, and decodable into the struct's shape. */
async function decoded(method: string, path: string, key: string, shape: Shape, body?: unknown) {
  return expectDecoded(await terraform(method, path, key, body), shape, `${method} ${path}`);
}

describe("PostHog's Terraform provider", () => {
  it("resolves an organization by slug and by @current (organization.go)", async () => {
    const { organization, key } = await setupOrganization();
    const list = await decoded("GET", "/api/organizations/", key, page(ORGANIZATION));
    const bySlug = list.results.find((item: { slug: string }) => item.slug === organization.slug);
    expect(bySlug?.id).toBe(organization.id);
    const current = await decoded("GET", "/api/organizations/@current/", key, ORGANIZATION);
    expect(current.id).toBe(organization.id);
  });

  it("manages a member by user uuid: list, read, update, delete (organization_member.go)", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const path = `/api/organizations/${organization.id}/members/`;
    const members = await decoded("GET", path, key, page(ORGANIZATION_MEMBER));
    // posthog_user looks a member up by e-mail; posthog_organization_member by user uuid.
    const found = members.results.find((item: { user: { uuid: string } }) => item.user.uuid === member.user.uuid);
    expect(found).toMatchObject({ id: member.membership.id, level: MembershipLevel.member });
    expect(found.user.email).toBe(member.user.email);
    const updated = await decoded("PATCH", `${path}${member.user.uuid}/`, key, ORGANIZATION_MEMBER, {
      level: MembershipLevel.admin,
    });
    expect(updated).toMatchObject({ id: member.membership.id, level: MembershipLevel.admin });
    const removed = await terraform("DELETE", `${path}${member.user.uuid}/`, key);
    expect(removed.status).toBe(204);
    const after = await decoded("GET", path, key, page(ORGANIZATION_MEMBER));
    expect(after.results.map((item: { user: { uuid: string } }) => item.user.uuid)).not.toContain(member.user.uuid);
  });

  it("creates, reads, renames and destroys a project (project.go)", async () => {
    const { organization, key } = await setupOrganization();
    const collection = `/api/organizations/${organization.id}/projects/`;
    const created = await decoded("POST", collection, key, PROJECT, { name: "Terraformed", timezone: "Europe/Paris" });
    expect(created).toMatchObject({ name: "Terraformed", timezone: "Europe/Paris", organization: organization.id });
    const item = `${collection}${created.id}/`;
    expect(await decoded("GET", item, key, PROJECT)).toMatchObject({ id: created.id, name: "Terraformed" });
    const renamed = await decoded("PATCH", item, key, PROJECT, { name: "Renamed", timezone: "UTC" });
    expect(renamed).toMatchObject({ id: created.id, name: "Renamed", timezone: "UTC" });
    expect((await terraform("DELETE", item, key)).status).toBe(204);
    // The next refresh reads 404 and drops the project from the state.
    expect((await terraform("GET", item, key)).status).toBe(404);
  });

  it("reads and sets an environment's settings, which read back as set (environment.go)", async () => {
    const { project, key } = await setupOrganization();
    const path = `/api/environments/${project.id}/`;
    await decoded("GET", path, key, ENVIRONMENT);
    const settings = {
      heatmaps_opt_in: true,
      autocapture_exceptions_opt_in: true,
      session_recording_opt_in: true,
      surveys_opt_in: false,
      cookieless_server_hash_mode: 1,
      autocapture_web_vitals_opt_in: true,
      app_urls: ["https://app.example.com"],
      recording_domains: ["https://app.example.com"],
    };
    // A setting that came back otherwise would show as a perpetual diff in every plan.
    expect(await decoded("PATCH", path, key, ENVIRONMENT, settings)).toMatchObject({ id: project.id, ...settings });
    expect(await decoded("GET", path, key, ENVIRONMENT)).toMatchObject(settings);
  });

  it("creates, reads, updates and soft-deletes a dashboard (dashboard.go)", async () => {
    const { project, key } = await setupOrganization();
    const collection = `/api/projects/${project.id}/dashboards/`;
    const body = { name: "Ops", description: "From Terraform", pinned: true, tags: ["infra"] };
    const created = await decoded("POST", collection, key, DASHBOARD, body);
    expect(created).toMatchObject(body);
    const item = `${collection}${created.id}/`;
    expect(await decoded("GET", item, key, DASHBOARD)).toMatchObject(body);
    const updated = await decoded("PATCH", item, key, DASHBOARD, { name: "Ops 2", pinned: false, tags: ["a", "b"] });
    expect(updated).toMatchObject({ name: "Ops 2", pinned: false, tags: ["a", "b"], description: "From Terraform" });
    // DeleteDashboard is a PATCH of `deleted`; its answer is unmarshalled too.
    expect(await decoded("PATCH", item, key, DASHBOARD, { deleted: true })).toMatchObject({ deleted: true });
    expect((await terraform("GET", item, key)).status).toBe(404);
  });

  it("reads and patches a dashboard's tile layout (dashboard_layout.go)", async () => {
    const { project, key } = await setupOrganization();
    const collection = `/api/projects/${project.id}/dashboards/`;
    const created = await decoded("POST", collection, key, DASHBOARD, { name: "Layout" });
    const item = `${collection}${created.id}/`;
    // A new text tile: the provider omits `id` (omitempty) and sends the text's body.
    const layouts = { sm: { x: 0, y: 0, w: 6, h: 5 } };
    const added = await decoded("PATCH", item, key, DASHBOARD_LAYOUT, {
      tiles: [{ text: { body: "Runbook" }, layouts, color: "blue" }],
    });
    expect(added.tiles).toHaveLength(1);
    const tile = added.tiles[0];
    expect(tile).toMatchObject({ text: { body: "Runbook" }, layouts, color: "blue" });
    // An existing tile moved, its description flag cleared with an explicit null (ClearShowDescription).
    const moved = { sm: { x: 6, y: 0, w: 6, h: 5 } };
    const patched = await decoded("PATCH", item, key, DASHBOARD_LAYOUT, {
      tiles: [{ id: tile.id, layouts: moved, show_description: null }],
    });
    expect(patched.tiles[0]).toMatchObject({ id: tile.id, layouts: moved, show_description: null });
    expect((await decoded("GET", item, key, DASHBOARD_LAYOUT)).tiles[0].layouts).toEqual(moved);
    const removed = await decoded("PATCH", item, key, DASHBOARD_LAYOUT, { tiles: [{ id: tile.id, deleted: true }] });
    expect(removed.tiles).toEqual([]);
  });

  it("grants, reads back by composite id and revokes a dashboard's access control (access_control.go)", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await decoded("POST", `/api/projects/${project.id}/dashboards/`, key, DASHBOARD, { name: "ACL" });
    const path = `/api/projects/${project.id}/dashboards/${dashboard.id}/access_controls/`;
    const resourceId = String(dashboard.id);
    const grant = { resource: "dashboard", resource_id: resourceId, organization_member: member.membership.id };
    const granted = await decoded("PUT", path, key, ACCESS_CONTROL, { access_level: "editor", ...grant });
    expect(granted).toMatchObject({ access_level: "editor", ...grant, created_by: null });
    // Absent and null both leave Go's *string nil: the rule is a member's, not a role's.
    expect(granted.role ?? null).toBeNull();
    // Read finds its rule by the composite id project/resource/resource_id/member/member_id.
    const list = await decoded("GET", path, key, ACCESS_CONTROLS);
    const compositeIds = list.access_controls.map(
      (rule: { resource: string; resource_id: string; organization_member: string | null }) =>
        `${project.id}/${rule.resource}/${rule.resource_id}/member/${rule.organization_member}`,
    );
    expect(compositeIds).toContain(`${project.id}/dashboard/${resourceId}/member/${member.membership.id}`);
    // The default for everyone: neither member nor role.
    const everyone = await decoded("PUT", path, key, ACCESS_CONTROL, {
      access_level: "viewer",
      resource: "dashboard",
      resource_id: resourceId,
    });
    expect(everyone).toMatchObject({ access_level: "viewer", organization_member: null, resource_id: resourceId });
    // DeleteAccessControl: the same PUT with `access_level: null`; the answer's body is not read.
    const revoked = await terraform("PUT", path, key, { access_level: null, ...grant });
    expect(revoked.status).toBeLessThan(300);
    const after = await decoded("GET", path, key, ACCESS_CONTROLS);
    expect(
      after.access_controls.map((rule: { organization_member: string | null }) => rule.organization_member),
    ).toEqual([null]);
  });

  it("sets a project's default and a member's access (project_default_access.go, project_member.go)", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const path = `/api/projects/${project.id}/access_controls/`;
    await decoded("GET", path, key, PROJECT_ACCESS_CONTROLS);
    // posthog_project_member: the member's rule, read back by project/member/member_id.
    const granted = await decoded("PUT", path, key, ACCESS_CONTROL, {
      access_level: "admin",
      organization_member: member.membership.id,
    });
    expect(granted).toMatchObject({ access_level: "admin", organization_member: member.membership.id });
    expect(granted.role ?? null).toBeNull();
    // posthog_project_default_access: the rule with neither member nor role; destroying it sets "none".
    await decoded("PUT", path, key, ACCESS_CONTROL, { access_level: "member" });
    const list = await decoded("GET", path, key, PROJECT_ACCESS_CONTROLS);
    const everyone = list.access_controls.find(
      (rule: { role: string | null; organization_member: string | null }) => !rule.role && !rule.organization_member,
    );
    expect(everyone?.access_level).toBe("member");
    await decoded("PUT", path, key, ACCESS_CONTROL, { access_level: "none" });
    const revoked = await terraform("PUT", path, key, {
      access_level: null,
      organization_member: member.membership.id,
    });
    expect(revoked.status).toBeLessThan(300);
    const after = await decoded("GET", path, key, PROJECT_ACCESS_CONTROLS);
    expect(
      after.access_controls.map((rule: { organization_member: string | null; access_level: string }) => [
        rule.organization_member,
        rule.access_level,
      ]),
    ).toEqual([[null, "none"]]);
  });
});

describe("PostHog's Terraform provider on roles", () => {
  it("makes a role with a member and gives it a level on every dashboard (role*.go, access_control.go)", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const roles = `/api/organizations/${organization.id}/roles/`;
    const role = await decoded("POST", roles, key, ROLE, { name: "Readers" });
    expect(await decoded("GET", `${roles}${role.id}/`, key, ROLE)).toMatchObject({ id: role.id, name: "Readers" });
    expect(await decoded("PATCH", `${roles}${role.id}/`, key, ROLE, { name: "Viewers" })).toMatchObject({
      name: "Viewers",
    });
    expect(await decoded("GET", roles, key, page(ROLE))).toMatchObject({ results: [{ id: role.id }] });
    const memberships = `${roles}${role.id}/role_memberships/`;
    const joined = await decoded("POST", memberships, key, ROLE_MEMBERSHIP, { user_uuid: member.user.uuid });
    expect(joined).toMatchObject({ role_id: role.id, user: { uuid: member.user.uuid } });
    expect(await decoded("GET", `${memberships}${joined.id}/`, key, ROLE_MEMBERSHIP)).toMatchObject({
      id: joined.id,
    });

    // posthog_access_control without resource_id: the rule on every dashboard, read back by
    // project/dashboard/role/role_id.
    const dashboard = await decoded("POST", `/api/projects/${project.id}/dashboards/`, key, DASHBOARD, { name: "D" });
    const path = `/api/projects/${project.id}/resource_access_controls/`;
    const rule = { resource: "dashboard", role: role.id };
    const granted = await decoded("PUT", path, key, ACCESS_CONTROL, { access_level: "viewer", ...rule });
    expect(granted).toMatchObject({ access_level: "viewer", resource_id: null, ...rule });
    const list = await decoded("GET", path, key, ACCESS_CONTROLS);
    expect(list.access_controls.map((each: { resource: string; role: string }) => each.role)).toEqual([role.id]);
    // It acts: the role's member reads the dashboard as a viewer, and may not change it.
    const dashboardPath = `/api/projects/${project.id}/dashboards/${dashboard.id}/`;
    expect((await terraform("GET", dashboardPath, member.key)).body.user_access_level).toBe("viewer");
    expect((await terraform("PATCH", dashboardPath, member.key, { name: "Mine now" })).status).toBe(403);
    const revoked = await terraform("PUT", path, key, { access_level: null, ...rule });
    expect(revoked.status).toBeLessThan(300);
    expect((await terraform("GET", dashboardPath, member.key)).body.user_access_level).toBe("editor");
    // With resource_id: the role's rule on the one dashboard.
    const onDashboard = { resource: "dashboard", resource_id: String(dashboard.id), role: role.id };
    const own = await decoded("PUT", `${dashboardPath}access_controls/`, key, ACCESS_CONTROL, {
      access_level: "manager",
      ...onDashboard,
    });
    expect(own).toMatchObject({ access_level: "manager", ...onDashboard });
    expect((await terraform("GET", dashboardPath, member.key)).body.user_access_level).toBe("manager");

    expect((await terraform("DELETE", `${memberships}${joined.id}/`, key)).status).toBe(204);
    expect((await terraform("DELETE", `${roles}${role.id}/`, key)).status).toBe(204);
    expect((await terraform("GET", `${roles}${role.id}/`, key)).status).toBe(404);
  });
});

describe("PostHog's Terraform provider on kinds of resources", () => {
  it("sets everyone's level on every workflow and heatmap, kinds PostHog added (access_control.go)", async () => {
    // `resource` is free text in the provider; Read finds the rule by project/resource/default.
    const { project, key } = await setupOrganization();
    const path = `/api/projects/${project.id}/resource_access_controls/`;
    for (const resource of ["hog_flow", "heatmap", "llm_playground"]) {
      const granted = await decoded("PUT", path, key, ACCESS_CONTROL, { access_level: "viewer", resource });
      expect(granted).toMatchObject({ access_level: "viewer", resource, resource_id: null, role: null });
    }
    const list = await decoded("GET", path, key, ACCESS_CONTROLS);
    expect(list.access_controls.map((rule: { resource: string }) => `${project.id}/${rule.resource}/default`)).toEqual([
      `${project.id}/hog_flow/default`,
      `${project.id}/heatmap/default`,
      `${project.id}/llm_playground/default`,
    ]);
  });
});

describe("the shape check itself", () => {
  it("fails what Go would refuse: a number for a string, an object for a string, a fraction for an int64", () => {
    expect(decodeErrors({ id: 1, slug: "s", name: "n" }, ORGANIZATION)).toEqual(["$.id: string, got integer"]);
    expect(decodeErrors({ id: "i", slug: {}, name: "n" }, ORGANIZATION)).toEqual(["$.slug: string, got object"]);
    expect(decodeErrors({ id: 1.5, tiles: [] }, DASHBOARD_LAYOUT)).toEqual(["$.id: integer, got number"]);
    expect(decodeErrors({ id: 1, tiles: [{ id: 2, layouts: [] }] }, DASHBOARD_LAYOUT)).toEqual([
      "$.tiles[0].layouts: object, got array",
    ]);
  });
});
