import { describe, expect, it } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { addMember, api, createApiKey, errorBody, ISO_TIMESTAMP, setupOrganization, UUID } from "../support/harness";
import { expectError, missingScope, NOT_AUTHENTICATED, NOT_FOUND } from "../support/error-bodies";

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

  it("refuses dashboards, projects, unknown kinds, levels out of bounds: 400 with attr, nothing stored", async () => {
    const { key, project, member, roleId } = await setup();
    const rulesPath = path("projects", project.id);
    const refused = async (body: Record<string, unknown>) => (await api("PUT", rulesPath, { key, body })).body;
    expect(await refused({ resource: "dashboard", access_level: "viewer" })).toEqual(
      errorBody(
        "validation_error",
        "invalid_input",
        "Rules on every dashboard are not supported here: set each dashboard's rules with its access_controls.",
        "resource",
      ),
    );
    expect(await refused({ resource: "project", access_level: "none" })).toMatchObject({ attr: "resource" });
    expect(await refused({ resource: "spaceships", access_level: "none" })).toMatchObject({
      code: "invalid_choice",
      attr: "resource",
    });
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
