import { afterEach, describe, expect, it, vi } from "vitest";
import { MembershipLevel } from "../../../src/platform/levels";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  errorBody,
  grantProjectAccess,
  ISO_TIMESTAMP,
  setupOrganization,
  userBasic,
  UUID,
} from "../../support/harness";
import { createDashboard, dashboardsPath } from "../dashboard-fixtures";
import { beforeWrites } from "../../support/races";
import { expectError } from "../../support/error-bodies";

const collaboratorsPath = (projectId: number | string, dashboardId: number, tree = "environments") =>
  `${dashboardsPath(projectId, tree)}/${dashboardId}/collaborators`;
const invalid = (detail: string, attr: string | null) => errorBody("validation_error", "invalid_input", detail, attr);
const NOT_FOUND = errorBody("invalid_request", "not_found", "Not found.");
const NO_EDIT_RIGHT = errorBody(
  "authentication_error",
  "permission_denied",
  "You don't have edit permissions for this dashboard.",
);

/** An organization with a level-37 dashboard of its owner, and a plain member. */
async function setupRestrictedDashboard() {
  const team = await setupOrganization();
  const member = await addMember(team.organization.id, MembershipLevel.member);
  const dashboard = await createDashboard(team.key, team.project.id, { name: "Board", restriction_level: 37 });
  return { ...team, member, dashboard, path: collaboratorsPath(team.project.id, dashboard.id) };
}

describe("dashboard collaborators", () => {
  it("adds a collaborator (201), lists them oldest first, and removes them (204)", async () => {
    const { key, organization, project, member, dashboard, path } = await setupRestrictedDashboard();
    const second = await addMember(organization.id, MembershipLevel.member);

    const added = await api("POST", path, { key, body: { user_uuid: member.user.uuid, level: 37 } });
    expect(added.status).toBe(201);
    const expected = {
      id: expect.stringMatching(UUID),
      dashboard_id: dashboard.id,
      user: userBasic(member.user),
      level: 37,
      added_at: expect.stringMatching(ISO_TIMESTAMP),
      updated_at: expect.stringMatching(ISO_TIMESTAMP),
    };
    expect(added.body).toEqual(expected);
    // The project with the dashboard and the user the body names, then the insert.
    expect(added.cost.queries).toBe(2);
    await api("POST", path, { key, body: { user_uuid: second.user.uuid, level: 37 } });

    const listed = await api("GET", collaboratorsPath(project.id, dashboard.id, "projects"), { key });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      { ...expected, id: added.body.id },
      { ...expected, user: userBasic(second.user) },
    ]);

    const removed = await api("DELETE", `${path}/${member.user.uuid}`, { key });
    expect(removed.status).toBe(204);
    expect(removed.text).toBe("");
    // The project with the dashboard and the collaboration, then the delete.
    expect(removed.cost.queries).toBe(2);
    expect((await api("GET", path, { key })).body.map((item: { user: { uuid: string } }) => item.user.uuid)).toEqual([
      second.user.uuid,
    ]);
  });

  it("gives a collaborator the edit right on a level-37 dashboard, and takes it away at once on removal", async () => {
    const { key, project, member, dashboard, path } = await setupRestrictedDashboard();
    const dashboardPath = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const rename = () => api("PATCH", dashboardPath, { key: member.key, body: { name: "Renamed" } });

    expect((await rename()).body).toEqual(NO_EDIT_RIGHT);
    await api("POST", path, { key, body: { user_uuid: member.user.uuid, level: 37 } });
    const asCollaborator = await rename();
    expect(asCollaborator.status).toBe(200);
    expect(asCollaborator.body).toMatchObject({
      name: "Renamed",
      effective_privilege_level: 37,
      user_access_level: "editor",
    });

    await api("DELETE", `${path}/${member.user.uuid}`, { key });
    expect((await rename()).status).toBe(403);
    expect((await api("GET", dashboardPath, { key: member.key })).body.effective_privilege_level).toBe(21);
  });

  it("lists in one D1 round trip with the key warm, whatever the number of collaborators", async () => {
    const { key, organization, path } = await setupRestrictedDashboard();
    await api("GET", path, { key });
    expect((await api("GET", path, { key })).cost.queries).toBe(1);
    for (let index = 0; index < 5; index += 1) {
      const colleague = await addMember(organization.id, MembershipLevel.member);
      await api("POST", path, { key, body: { user_uuid: colleague.user.uuid, level: 37 } });
    }
    const listed = await api("GET", path, { key });
    expect(listed.body).toHaveLength(5);
    expect(listed.cost.queries).toBe(1);
    // The key's first `@current` read chooses the project first; the next ones check the choice in their round trip.
    const current = collaboratorsPath("@current", Number(path.split("/")[5]));
    expect((await api("GET", current, { key })).cost.queries).toBe(2);
    expect((await api("GET", current, { key })).cost.queries).toBe(1);
  });

  it("checks a new collaborator in PostHog's order, each with its own 400", async () => {
    const { key, organization, owner, project, member, path } = await setupRestrictedDashboard();
    const add = (body: unknown, dashboardPath = path) => api("POST", dashboardPath, { key, body });
    const open = await createDashboard(key, project.id, { name: "Open" });

    expect(
      (await add({ user_uuid: member.user.uuid, level: 37 }, collaboratorsPath(project.id, open.id))).body,
    ).toEqual(invalid("Cannot add collaborators to a dashboard on the lowest restriction level.", null));
    expect((await add({ user_uuid: member.user.uuid, level: 21 })).body).toEqual(
      invalid("Only edit access can be explicitly specified currently.", "level"),
    );
    expect((await add({ user_uuid: "0190a0a0-0000-7000-8000-000000000000", level: 37 })).body).toEqual(
      invalid("User does not exist.", "user_uuid"),
    );
    // Another organization's user is answered as no one: whether a uuid exists elsewhere is not told.
    const stranger = await setupOrganization();
    expect((await add({ user_uuid: stranger.owner.uuid, level: 37 })).body).toEqual(
      invalid("User does not exist.", "user_uuid"),
    );
    const shutOut = await addMember(organization.id, MembershipLevel.member);
    await grantProjectAccess(project.id, shutOut.membership.id, "none");
    expect((await add({ user_uuid: shutOut.user.uuid, level: 37 })).body).toEqual(
      invalid("Cannot add collaborators that have no access to the project.", "user_uuid"),
    );
    const inherent = invalid(
      "Cannot add collaborators that already have inherent access (the dashboard owner or a project admins).",
      "user_uuid",
    );
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const projectAdmin = await addMember(organization.id, MembershipLevel.member);
    await grantProjectAccess(project.id, projectAdmin.membership.id, "admin");
    for (const user of [owner, admin.user, projectAdmin.user]) {
      expect((await add({ user_uuid: user.uuid, level: 37 })).body).toEqual(inherent);
    }
    expect((await add({ user_uuid: member.user.uuid, level: 37 })).status).toBe(201);
    const again = await add({ user_uuid: member.user.uuid, level: 37 });
    expect(again.status).toBe(400);
    expect(again.body).toEqual(invalid("User already is a collaborator.", "user_uuid"));
    expect((await api("GET", path, { key })).body).toHaveLength(1);
  });

  it("answers 400 naming the field for a missing or malformed field", async () => {
    const { key, path } = await setupRestrictedDashboard();
    const missingUser = await api("POST", path, { key, body: { level: 37 } });
    expect(missingUser.status).toBe(400);
    expect(missingUser.body).toMatchObject({ type: "validation_error", code: "required", attr: "user_uuid" });
    const badUuid = await api("POST", path, { key, body: { user_uuid: "nope", level: 37 } });
    expect(badUuid.body).toMatchObject({ type: "validation_error", attr: "user_uuid" });
    const badLevel = await api("POST", path, {
      key,
      body: { user_uuid: "0190a0a0-0000-7000-8000-000000000000", level: 99 },
    });
    expect(badLevel.body).toMatchObject({ type: "validation_error", attr: "level" });
    expect((await api("GET", path, { key })).body).toEqual([]);
  });

  it("refuses writes without edit rights (403), removal on a level-21 dashboard or of a non-collaborator", async () => {
    const { key, organization, project, member, dashboard, path } = await setupRestrictedDashboard();
    const other = await addMember(organization.id, MembershipLevel.member);
    const byMember = await api("POST", path, { key: member.key, body: { user_uuid: other.user.uuid, level: 37 } });
    expect(byMember.status).toBe(403);
    expect(byMember.body).toEqual(NO_EDIT_RIGHT);
    expect((await api("DELETE", `${path}/${other.user.uuid}`, { key: member.key })).body).toEqual(NO_EDIT_RIGHT);
    // Reading is open to every member who sees the dashboard.
    expect((await api("GET", path, { key: member.key })).status).toBe(200);

    const notCollaborator = await api("DELETE", `${path}/${other.user.uuid}`, { key });
    expect(notCollaborator.status).toBe(404);
    expect(notCollaborator.body).toEqual(NOT_FOUND);

    await api("POST", path, { key, body: { user_uuid: member.user.uuid, level: 37 } });
    await api("PATCH", `${dashboardsPath(project.id)}/${dashboard.id}`, { key, body: { restriction_level: 21 } });
    const onOpen = await api("DELETE", `${path}/${member.user.uuid}`, { key });
    expect(onOpen.status).toBe(400);
    expect(onOpen.body).toEqual(
      invalid("Cannot remove collaborators from a dashboard on the lowest restriction level.", null),
    );
  });

  it("answers 405 to PATCH and PUT", async () => {
    const { key, member, path } = await setupRestrictedDashboard();
    for (const method of ["PATCH", "PUT"]) {
      const onList = await api(method, path, { key, body: {} });
      expect(onList.status).toBe(405);
      expect(onList.headers.get("Allow")).toBe("GET, POST");
      expect((await api(method, `${path}/${member.user.uuid}`, { key, body: {} })).status).toBe(405);
    }
  });

  it("answers 404 for an unknown dashboard, another organization's, and one that a none rule hides", async () => {
    const { key, project, path } = await setupRestrictedDashboard();
    const other = await setupRestrictedDashboard();
    for (const foreign of [
      collaboratorsPath(project.id, 999999),
      collaboratorsPath(project.id, other.dashboard.id),
      other.path,
    ]) {
      const response = await api("GET", foreign, { key });
      expect(response.status).toBe(404);
      expect(response.body).toEqual(NOT_FOUND);
      expect((await api("POST", foreign, { key, body: { user_uuid: other.member.user.uuid, level: 37 } })).status).toBe(
        404,
      );
    }
    expect((await api("GET", path, { key })).status).toBe(200);
  });

  it("needs dashboard:read to list, dashboard:write to change; a key scoped to another project gets 403", async () => {
    const { owner, project, member, path } = await setupRestrictedDashboard();
    const reader = await createApiKey(owner, { scopes: ["dashboard:read"] });
    expect((await api("GET", path, { key: reader.value })).status).toBe(200);
    const write = await api("POST", path, { key: reader.value, body: { user_uuid: member.user.uuid, level: 37 } });
    expect(write.status).toBe(403);
    expect(write.body).toEqual(
      errorBody("authentication_error", "permission_denied", "API key missing required scope 'dashboard:write'"),
    );
    const scoped = await createApiKey(owner, { scopedTeams: [project.id + 100000] });
    expect((await api("GET", path, { key: scoped.value })).status).toBe(403);
  });

  it("goes when the member leaves or is removed from the organization, in the same batch", async () => {
    const { key, organization, member, path } = await setupRestrictedDashboard();
    const leaving = await addMember(organization.id, MembershipLevel.member);
    await api("POST", path, { key, body: { user_uuid: member.user.uuid, level: 37 } });
    await api("POST", path, { key, body: { user_uuid: leaving.user.uuid, level: 37 } });

    await api("DELETE", `/api/organizations/${organization.id}/members/${member.user.uuid}`, { key });
    await api("DELETE", `/api/organizations/${organization.id}/members/@me`, { key: leaving.key });

    expect((await api("GET", path, { key })).body).toEqual([]);
  });
});

describe("a collaborator added as the user leaves", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("adds no collaboration for a user removed from the organization meanwhile, to grant again on return", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await createDashboard(key, project.id, { name: "Board", restriction_level: 37 });
    const dashboardPath = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const memberPath = `/api/organizations/${organization.id}/members/${member.user.uuid}`;
    // The POST reads the candidate (a member) first; the removal lands before its insert.
    const ran = beforeWrites([
      [/^insert into "dashboard_collaborators"/, async () => (await api("DELETE", memberPath, { key })).status],
    ]);
    const added = await api("POST", `${dashboardPath}/collaborators`, {
      key,
      body: { user_uuid: member.user.uuid, level: 37 },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    // The user is no member any more: no collaboration may be left naming them.
    expect((await api("GET", `${dashboardPath}/collaborators`, { key })).body).toEqual([]);
    expect(added.status).toBe(400);
    expect(added.body).toMatchObject({
      detail: "Cannot add collaborators that have no access to the project.",
      attr: "user_uuid",
    });
    // Back as a plain member, no one having made them a collaborator again: they may not edit.
    await addMembership(organization.id, member.user, MembershipLevel.member);
    const edit = await api("PATCH", dashboardPath, { key: member.key, body: { name: "Taken over" } });
    expect(edit.status).toBe(403);
  });
});

/**
 * An owner's dashboard restricted to collaborators (37), a plain member who is its collaborator,
 * and two more members: one the collaborator will try to add, one already a collaborator.
 */
async function lockedDashboardWithCollaborator() {
  const { organization, project, key } = await setupOrganization();
  const collaborator = await addMember(organization.id, MembershipLevel.member);
  const friend = await addMember(organization.id, MembershipLevel.member);
  const colleague = await addMember(organization.id, MembershipLevel.member);
  const dashboard = await createDashboard(key, project.id, { name: "Board", restriction_level: 37 });
  const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
  for (const member of [collaborator, colleague]) {
    const added = await api("POST", `${path}/collaborators`, { key, body: { user_uuid: member.user.uuid, level: 37 } });
    expect(added.status).toBe(201);
  }
  const takeaways = {
    "the collaborator's removal": () => api("DELETE", `${path}/collaborators/${collaborator.user.uuid}`, { key }),
    "a viewer rule": () =>
      api("PUT", `${path}/access_controls`, {
        key,
        body: { organization_member: collaborator.membership.id, access_level: "viewer" },
      }),
  };
  return { key, path, collaborator, friend, colleague, takeaways };
}

const collaboratorUuids = async (path: string, key: string) =>
  ((await api("GET", `${path}/collaborators`, { key })).body as { user: { uuid: string } }[]).map(
    (row) => row.user.uuid,
  );

describe("collaborator writes, judged on the row they read", () => {
  it("adds no collaborator to a dashboard unlocked meanwhile: 400, as a moment later", async () => {
    const { key, path, friend } = await lockedDashboardWithCollaborator();
    const ran = beforeWrites([
      [
        /^insert into "dashboard_collaborators"/,
        async () => (await api("PATCH", path, { key, body: { restriction_level: 21 } })).status,
      ],
    ]);
    const added = await api("POST", `${path}/collaborators`, { key, body: { user_uuid: friend.user.uuid, level: 37 } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(
      added,
      400,
      errorBody(
        "validation_error",
        "invalid_input",
        "Cannot add collaborators to a dashboard on the lowest restriction level.",
      ),
    );
    expect(await collaboratorUuids(path, key)).not.toContain(friend.user.uuid);
  });

  it.each(["the collaborator's removal", "a viewer rule"] as const)(
    "adds no collaborator once the caller lost the edit right: after %s meanwhile, 403",
    async (takeaway) => {
      const { key, path, collaborator, friend, colleague, takeaways } = await lockedDashboardWithCollaborator();
      // The collaborator's POST has read the dashboard (and their right) when the owner takes it away.
      const ran = beforeWrites([
        [/^insert into "dashboard_collaborators"/, async () => (await takeaways[takeaway]()).status],
      ]);
      const added = await api("POST", `${path}/collaborators`, {
        key: collaborator.key,
        body: { user_uuid: friend.user.uuid, level: 37 },
      });
      vi.restoreAllMocks();
      expect(ran).toEqual([takeaway === "a viewer rule" ? 200 : 204]);
      expectError(added, 403, NO_EDIT_RIGHT);
      // The friend must not have become an editor through a caller who no longer was one.
      expect(await collaboratorUuids(path, key)).not.toContain(friend.user.uuid);
      const edit = await api("PATCH", path, { key: friend.key, body: { name: "Taken over" } });
      expect(edit.status).toBe(403);
      expect(await collaboratorUuids(path, key)).toContain(colleague.user.uuid);
    },
  );

  it.each(["the collaborator's removal", "a viewer rule"] as const)(
    "removes no collaborator once the caller lost the edit right: after %s meanwhile, 403",
    async (takeaway) => {
      const { key, path, collaborator, colleague, takeaways } = await lockedDashboardWithCollaborator();
      const ran = beforeWrites([
        [/^delete from "dashboard_collaborators"/, async () => (await takeaways[takeaway]()).status],
      ]);
      const removed = await api("DELETE", `${path}/collaborators/${colleague.user.uuid}`, { key: collaborator.key });
      vi.restoreAllMocks();
      expect(ran).toEqual([takeaway === "a viewer rule" ? 200 : 204]);
      expectError(removed, 403, NO_EDIT_RIGHT);
      expect(await collaboratorUuids(path, key)).toContain(colleague.user.uuid);
    },
  );
});
