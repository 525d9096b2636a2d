import { and, eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { MembershipLevel } from "../../src/platform/levels";
import { nowIso, uuid7 } from "../../src/platform/ids";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  createProject,
  db,
  errorBody,
  grantProjectAccess,
  setupOrganization,
} from "../support/harness";
import { changedMeanwhile } from "../support/error-bodies";
import { S3_EXPORT } from "../support/projects";
import { beforeWrites } from "../support/races";

afterEach(() => {
  vi.restoreAllMocks();
});

const movePath = (projectId: number | string) => `/api/projects/${projectId}/change_organization/`;
const badRequest = (detail: string, attr: string | null = null) =>
  errorBody("validation_error", "invalid_input", detail, attr);
const NOT_IN_BOTH = "You must be an admin or owner of both the source and target organizations to move a project.";
const NOT_ADMIN_OF_BOTH = "You must be an admin of both the source and target organizations to move a project.";
const notFound = errorBody("invalid_request", "not_found", "Not found.");
const forbidden = (detail: string) => errorBody("authentication_error", "permission_denied", detail);

/** Two organizations the owner of the first is an admin of, and a second project in the first to move. */
async function setupMove() {
  const from = await setupOrganization();
  const to = await setupOrganization();
  await addMembership(to.organization.id, from.owner, MembershipLevel.admin);
  const project = await createProject(from.organization.id, { name: `Moving ${from.organization.id.slice(-6)}` });
  return { from, to, project, key: from.key };
}

/**
 * `request`, with the project's move to `to` landing between its reads and its write (the first
 * batch whose SQL matches `write`); the move itself lands.
 */
async function duringMove<T>(
  setup: { project: { id: number }; to: { organization: { id: string } }; key: string },
  write: RegExp,
  request: () => Promise<T>,
) {
  const { project, to, key } = setup;
  const ran = beforeWrites([
    [write, () => api("POST", movePath(project.id), { key, body: { organization_id: to.organization.id } })],
  ]);
  const answer = await request();
  vi.restoreAllMocks();
  expect((ran[0] as { status: number }).status).toBe(200);
  return answer;
}

/** The old organization's membership id is not shown to a member of the new one reading `path`. */
async function expectUnseenInNewOrganization(organizationId: string, path: string, membershipId: string) {
  const newcomer = await addMember(organizationId, MembershipLevel.member);
  const read = await api("GET", path, { key: newcomer.key });
  expect(read.status).toBe(200);
  expect(read.text).not.toContain(membershipId);
}

const organizationOf = async (projectId: number) =>
  (await db.select().from(schema.projects).where(eq(schema.projects.id, projectId)))[0]!.organizationId;

const organizationCounts = async (organizationId: string) => {
  const [row] = await db.select().from(schema.organizations).where(eq(schema.organizations.id, organizationId));
  return { projects: row!.projectCount, exports: row!.batchExportCount };
};

describe("POST /api/projects/:id/change_organization", () => {
  it("moves a project with what is in it, answers it as its new organization shows it, logs it in both", async () => {
    const { from, to, project, key } = await setupMove();
    const stayer = await addMember(from.organization.id, MembershipLevel.member);
    const both = await addMember(from.organization.id, MembershipLevel.member);
    await addMembership(to.organization.id, both.user, MembershipLevel.member);
    await grantProjectAccess(project.id, stayer.membership.id, "member");
    const dashboard = await api("POST", `/api/environments/${project.id}/dashboards/`, {
      key,
      body: { name: "Moved along", restriction_level: 37 },
    });
    expect(dashboard.status).toBe(201);
    for (const member of [stayer, both]) {
      const added = await api("POST", `/api/projects/${project.id}/dashboards/${dashboard.body.id}/collaborators/`, {
        key,
        body: { user_uuid: member.user.uuid, level: 37 },
      });
      expect(added.status).toBe(201);
    }
    const created = await api("POST", `/api/environments/${project.id}/batch_exports`, { key, body: S3_EXPORT });
    expect(created.status).toBe(201);
    const countsBefore = [await organizationCounts(from.organization.id), await organizationCounts(to.organization.id)];

    const moved = await api("POST", movePath(project.id), { key, body: { organization_id: to.organization.id } });
    expect(moved.status).toBe(200);
    const read = await api("GET", `/api/projects/${project.id}/`, { key });
    expect(read.status).toBe(200);
    expect(moved.body).toEqual(read.body);
    expect(moved.body.organization).toBe(to.organization.id);
    expect(moved.headers.get("etag")).toBe(read.headers.get("etag"));
    expect(await organizationOf(project.id)).toBe(to.organization.id);

    // Its lists and counts follow it.
    const ids = async (organizationId: string) =>
      (await api("GET", `/api/organizations/${organizationId}/projects/`, { key })).body.results.map(
        (item: { id: number }) => item.id,
      );
    expect(await ids(from.organization.id)).not.toContain(project.id);
    expect(await ids(to.organization.id)).toContain(project.id);
    expect([await organizationCounts(from.organization.id), await organizationCounts(to.organization.id)]).toEqual([
      { projects: countsBefore[0]!.projects - 1, exports: countsBefore[0]!.exports - 1 },
      { projects: countsBefore[1]!.projects + 1, exports: countsBefore[1]!.exports + 1 },
    ]);
    const exportsOf = async (organizationId: string) =>
      (await api("GET", `/api/organizations/${organizationId}/batch_exports/`, { key })).body.results.map(
        (item: { id: string }) => item.id,
      );
    expect(await exportsOf(to.organization.id)).toContain(created.body.id);
    expect(await exportsOf(from.organization.id)).not.toContain(created.body.id);
    const [environment] = await db.select().from(schema.environments).where(eq(schema.environments.id, project.id));
    expect(environment!.organizationId).toBe(to.organization.id);

    // The old organization's rules and its members who are not in the new one stay behind.
    const rules = await db
      .select()
      .from(schema.accessControls)
      .where(eq(schema.accessControls.environmentId, project.id));
    expect(rules.filter((rule) => rule.organizationMembershipId !== null)).toEqual([]);
    const collaborators = await api(
      "GET",
      `/api/projects/${project.id}/dashboards/${dashboard.body.id}/collaborators/`,
      {
        key,
      },
    );
    expect(collaborators.body.map((item: { user: { uuid: string } }) => item.user.uuid)).toEqual([both.user.uuid]);
    // The member of the old organization alone no longer sees it.
    expect((await api("GET", `/api/projects/${project.id}/`, { key: stayer.key })).status).toBe(404);

    // One entry in each organization's log, as PostHog's: the organization it left and the one it joined.
    for (const organizationId of [from.organization.id, to.organization.id]) {
      const [entry] = await db
        .select()
        .from(schema.activityLog)
        .where(and(eq(schema.activityLog.organizationId, organizationId), eq(schema.activityLog.scope, "Project")))
        .orderBy(schema.activityLog.seq)
        .then((rows) => rows.filter((row) => row.itemId === String(project.id)).slice(-1));
      expect(entry, organizationId).toMatchObject({ activity: "updated", projectId: project.id });
      expect(JSON.parse(entry!.detail)).toEqual({
        name: project.name,
        changes: [
          {
            type: "Project",
            action: "changed",
            field: "organization_id",
            before: from.organization.id,
            after: to.organization.id,
          },
        ],
        context: null,
      });
    }
  });

  it("refuses in PostHog's words: not an admin of both, not a member, unknown or the same organization", async () => {
    const { from, to, project, key } = await setupMove();
    const stranger = await setupOrganization();
    const memberThere = await setupOrganization();
    await addMembership(memberThere.organization.id, from.owner, MembershipLevel.member);
    const cases: [unknown, number, unknown][] = [
      [{ organization_id: stranger.organization.id }, 400, badRequest(NOT_IN_BOTH)],
      [{ organization_id: uuid7() }, 400, badRequest(NOT_IN_BOTH)],
      [{ organization_id: "not-an-id" }, 400, badRequest(NOT_IN_BOTH)],
      [{ organization_id: memberThere.organization.id }, 400, badRequest(NOT_ADMIN_OF_BOTH)],
      [{ organization_id: from.organization.id }, 400, badRequest("Project is already in the target organization.")],
      [{}, 400, badRequest(NOT_IN_BOTH)],
      [{ organization_id: 7 }, 400, expect.objectContaining({ attr: "organization_id" })],
    ];
    for (const [body, status, answer] of cases) {
      const response = await api("POST", movePath(project.id), { key, body });
      expect([response.status, response.body], JSON.stringify(body)).toEqual([status, answer]);
    }
    // An admin of the new organization who is a plain member of the old one.
    const plain = await addMember(from.organization.id, MembershipLevel.member);
    await addMembership(to.organization.id, plain.user, MembershipLevel.admin);
    const byMember = await api("POST", movePath(project.id), {
      key: plain.key,
      body: { organization_id: to.organization.id },
    });
    expect([byMember.status, byMember.body]).toEqual([400, badRequest(NOT_ADMIN_OF_BOTH)]);
    expect(await organizationOf(project.id)).toBe(from.organization.id);
  });

  it("answers 404 for a project the caller does not see, and 403 to keys that may not move it", async () => {
    const { from, to, project, key } = await setupMove();
    const body = { organization_id: to.organization.id };
    const other = await setupOrganization();
    for (const id of [other.project.id, 999_999_999]) {
      const response = await api("POST", movePath(id), { key, body });
      expect([response.status, response.body]).toEqual([404, notFound]);
    }
    const scopedToProject = (await createApiKey(from.owner, { scopedTeams: [project.id] })).value;
    const scopedToSource = (await createApiKey(from.owner, { scopedOrganizations: [from.organization.id] })).value;
    const readOnly = (await createApiKey(from.owner, { scopes: ["project:read"] })).value;
    const refusals: [string, string][] = [
      [scopedToProject, "API key with scoped projects are only supported on project-based views."],
      [scopedToSource, "API key does not have access to the requested organization"],
      [readOnly, "API key missing required scope 'project:write'"],
    ];
    for (const [refused, detail] of refusals) {
      const response = await api("POST", movePath(project.id), { key: refused, body });
      expect([response.status, response.body], detail).toEqual([403, forbidden(detail)]);
    }
    const service = await api("POST", `/api/organizations/${from.organization.id}/service_keys`, {
      key,
      body: { label: "Automation", scopes: ["*"] },
    });
    expect(service.status).toBe(201);
    const byService = await api("POST", movePath(project.id), { key: service.body.value, body });
    expect([byService.status, byService.body.code]).toEqual([403, "permission_denied"]);
    expect(await organizationOf(project.id)).toBe(from.organization.id);
  });

  it("holds the new organization's rules: its project names, its project limit, its keys' lifetime limit", async () => {
    const { from, to, project, key } = await setupMove();
    const body = { organization_id: to.organization.id };
    await createProject(to.organization.id, { name: project.name.toUpperCase() });
    const taken = await api("POST", movePath(project.id), { key, body });
    expect([taken.status, taken.body.detail]).toEqual([
      409,
      `There is already a project called "${project.name}" in this organization. Choose a different name.`,
    ]);
    await db
      .delete(schema.projects)
      .where(
        and(
          eq(schema.projects.organizationId, to.organization.id),
          eq(schema.projects.name, project.name.toUpperCase()),
        ),
      );
    await db
      .update(schema.organizations)
      .set({ projectCount: 2000 })
      .where(eq(schema.organizations.id, to.organization.id));
    const full = await api("POST", movePath(project.id), { key, body });
    expect([full.status, full.body.code]).toEqual([403, "permission_denied"]);
    await db
      .update(schema.organizations)
      .set({ projectCount: 1 })
      .where(eq(schema.organizations.id, to.organization.id));
    // A member of the new organization whose key reaches the project and never expires.
    const member = await addMember(to.organization.id, MembershipLevel.member);
    await createApiKey(member.user, { scopedTeams: [project.id] });
    await db
      .update(schema.organizations)
      .set({ apiKeyMaxLifetimeDays: 30 })
      .where(eq(schema.organizations.id, to.organization.id));
    const outliving = await api("POST", movePath(project.id), { key, body });
    expect([outliving.status, outliving.body.code]).toEqual([400, "invalid_input"]);
    expect(outliving.body.detail).toContain("api_key_max_lifetime_days");
    expect(await organizationOf(project.id)).toBe(from.organization.id);
    expect(await organizationCounts(from.organization.id)).toMatchObject({ projects: 2 });
  });

  it("changes nothing when the caller is demoted in the new organization between the read and the write", async () => {
    const { from, to, project, key } = await setupMove();
    beforeWrites([
      [
        /update "projects" set "organization_id"/,
        () =>
          db
            .update(schema.organizationMemberships)
            .set({ level: MembershipLevel.member, updatedAt: nowIso() })
            .where(
              and(
                eq(schema.organizationMemberships.organizationId, to.organization.id),
                eq(schema.organizationMemberships.userId, from.owner.id),
              ),
            ),
      ],
    ]);
    const response = await api("POST", movePath(project.id), { key, body: { organization_id: to.organization.id } });
    expect([response.status, response.body]).toEqual([400, badRequest(NOT_ADMIN_OF_BOTH)]);
    expect(await organizationOf(project.id)).toBe(from.organization.id);
    const [environment] = await db.select().from(schema.environments).where(eq(schema.environments.id, project.id));
    expect(environment!.organizationId).toBe(from.organization.id);
    expect(await organizationCounts(to.organization.id)).toMatchObject({ projects: 1 });
  });
  it("leaves the old organization's members' and roles' rules on kinds of resources behind", async () => {
    const { from, to, project, key } = await setupMove();
    const stayer = await addMember(from.organization.id, MembershipLevel.member);
    const role = await api("POST", `/api/organizations/${from.organization.id}/roles`, {
      key,
      body: { name: "Old support" },
    });
    expect(role.status).toBe(201);
    const rulesPath = `/api/projects/${project.id}/resource_access_controls`;
    for (const body of [
      { resource: "dashboard", organization_member: stayer.membership.id, access_level: "editor" },
      { resource: "dashboard", role: role.body.id, access_level: "viewer" },
      { resource: "activity_log", access_level: "viewer" },
    ]) {
      const written = await api("PUT", rulesPath, { key, body });
      expect(written.status, JSON.stringify(body)).toBe(200);
    }

    const moved = await api("POST", movePath(project.id), { key, body: { organization_id: to.organization.id } });
    expect(moved.status).toBe(200);

    // A plain member of the new organization, never a member of the old one, reads the project's rules.
    const newcomer = await addMember(to.organization.id, MembershipLevel.member);
    const read = await api("GET", rulesPath, { key: newcomer.key });
    expect(read.status).toBe(200);
    const named = read.body.access_controls.filter(
      (rule: { organization_member: string | null; role: string | null }) =>
        rule.organization_member !== null || rule.role !== null,
    );
    // The old organization's membership and role ids are not shown in the new organization.
    expect(named).toEqual([]);
    // Only the default for everyone moves with the project.
    expect(read.body.access_controls.map((rule: { resource: string }) => rule.resource)).toEqual(["activity_log"]);
  });

  it("shows none of the old organization's log through the moved project's log", async () => {
    const { from, to, project, key } = await setupMove();
    const stayer = await addMember(from.organization.id, MembershipLevel.member);
    // Before the move: a rule naming a member of the old organization, logged there (with their e-mail).
    const rule = await api("PUT", `/api/projects/${project.id}/resource_access_controls`, {
      key,
      body: { resource: "dashboard", organization_member: stayer.membership.id, access_level: "editor" },
    });
    expect(rule.status).toBe(200);
    const oldLog = await api("GET", `/api/organizations/${from.organization.id}/activity_log?scope=AccessControl`, {
      key,
    });
    expect(oldLog.status).toBe(200);
    const oldEntry = oldLog.body.results[0] as { id: string };
    expect(JSON.stringify(oldEntry)).toContain(stayer.user.email);

    const moved = await api("POST", movePath(project.id), { key, body: { organization_id: to.organization.id } });
    expect(moved.status).toBe(200);

    // A plain member of the new organization (never in the old one) sees the project and its log.
    const newcomer = await addMember(to.organization.id, MembershipLevel.member);
    const list = await api("GET", `/api/projects/${project.id}/activity_log`, { key: newcomer.key });
    expect(list.status).toBe(200);
    // The old organization's entries about it, and the e-mails in them, stay in its log.
    expect(list.body.results.map((entry: { id: string }) => entry.id)).not.toContain(oldEntry.id);
    expect(list.text).not.toContain(stayer.user.email);
    const byId = await api("GET", `/api/projects/${project.id}/activity_log/${oldEntry.id}`, { key: newcomer.key });
    expect([byId.status, byId.text.includes(stayer.user.email)]).toEqual([404, false]);
  });

  it("accepts a destination one project below its limit, as a create there is", async () => {
    const { to, project, key } = await setupMove();
    await db
      .update(schema.organizations)
      .set({ projectCount: 1999 })
      .where(eq(schema.organizations.id, to.organization.id));
    const moved = await api("POST", movePath(project.id), { key, body: { organization_id: to.organization.id } });
    expect([moved.status, moved.body.detail]).toEqual([200, undefined]);
    expect(await organizationCounts(to.organization.id)).toMatchObject({ projects: 2000 });
    // Its real count again (its first project and this one), as the whole database's counters are checked.
    await db
      .update(schema.organizations)
      .set({ projectCount: 2 })
      .where(eq(schema.organizations.id, to.organization.id));
  });

  it("refuses a batch export created while its project moves (409): none is left in the old organization", async () => {
    const { from, to, project, key } = await setupMove();
    const stayer = await addMember(from.organization.id, MembershipLevel.member);
    // The project moves between the export's read of the project (in the old organization) and its insert.
    const created = await duringMove({ project, to, key }, /insert into "batch_exports"/, () =>
      api("POST", `/api/environments/${project.id}/batch_exports`, { key, body: S3_EXPORT }),
    );
    expect([created.status, created.body.detail]).toEqual([
      409,
      "The project was changed by another request meanwhile. Try again.",
    ]);
    const rows = await db.select().from(schema.batchExports).where(eq(schema.batchExports.environmentId, project.id));
    expect(rows).toEqual([]);
    // Sent again, it is made in the project as it now is: an export of the new organization.
    const again = await api("POST", `/api/environments/${project.id}/batch_exports`, { key, body: S3_EXPORT });
    expect(again.status).toBe(201);
    const [row] = await db.select().from(schema.batchExports).where(eq(schema.batchExports.id, again.body.id));
    expect(row!.organizationId).toBe(to.organization.id);
    const seen = await api("GET", `/api/organizations/${from.organization.id}/batch_exports/${again.body.id}`, {
      key: stayer.key,
    });
    expect(seen.status).toBe(404);
  });
  it("refuses a dashboard rename that would land after the move with its entry in the old organization", async () => {
    const { from, to, project, key } = await setupMove();
    const oldAdmin = await addMember(from.organization.id, MembershipLevel.admin);
    const dashboard = await api("POST", `/api/environments/${project.id}/dashboards/`, {
      key,
      body: { name: "Before the move" },
    });
    expect(dashboard.status).toBe(201);
    // The move lands between the PATCH's read (project in the old organization) and its write.
    const renamed = await duringMove({ project, to, key }, /update "dashboards" set/, () =>
      api("PATCH", `/api/environments/${project.id}/dashboards/${dashboard.body.id}/`, {
        key,
        body: { name: "Secret plan of the new organization" },
      }),
    );
    // An admin of the old organization alone must learn nothing of the project after it left.
    const oldLog = await api("GET", `/api/organizations/${from.organization.id}/activity_log`, { key: oldAdmin.key });
    expect(oldLog.status).toBe(200);
    expect(oldLog.text).not.toContain("Secret plan of the new organization");
    // The rename is refused as the project changed meanwhile: sent again, it lands in the new organization.
    expect([renamed.status, renamed.body.detail]).toEqual([
      409,
      "The project was changed by another request meanwhile. Try again.",
    ]);
    const again = await api("PATCH", `/api/environments/${project.id}/dashboards/${dashboard.body.id}/`, {
      key,
      body: { name: "Secret plan of the new organization" },
    });
    expect(again.status).toBe(200);
    const projectLog = await api("GET", `/api/projects/${project.id}/activity_log`, { key });
    expect(projectLog.text).toContain("Secret plan of the new organization");
  });

  it("refuses a rule naming an old organization's member that would land on the moved project", async () => {
    const { from, to, project, key } = await setupMove();
    const stayer = await addMember(from.organization.id, MembershipLevel.member);
    const rulesPath = `/api/projects/${project.id}/resource_access_controls`;
    const put = await duringMove({ project, to, key }, /insert into "resource_access_controls"/, () =>
      api("PUT", rulesPath, {
        key,
        body: { resource: "dashboard", organization_member: stayer.membership.id, access_level: "editor" },
      }),
    );
    await expectUnseenInNewOrganization(to.organization.id, rulesPath, stayer.membership.id);
    expect(put.status).toBe(409);
  });

  it("keeps the old organization's entries about a private project from its plain member after the move", async () => {
    const { from, to, key } = await setupMove();
    const secret = await createProject(from.organization.id, { name: "Secret moving", access_control: true });
    // A plain member of the old organization without access to the private project, admin of the new one.
    const member = await addMember(from.organization.id, MembershipLevel.member);
    await addMembership(to.organization.id, member.user, MembershipLevel.admin);
    const dashboard = await api("POST", `/api/environments/${secret.id}/dashboards/`, {
      key,
      body: { name: "Hidden roadmap of the old organization" },
    });
    expect(dashboard.status).toBe(201);
    const feed = async () => {
      await api("GET", `/api/organizations/${from.organization.id}/activity_log/verify`, { key });
      const read = await api("GET", `/api/organizations/${from.organization.id}/events?limit=1000`, {
        key: member.key,
      });
      expect(read.status).toBe(200);
      return read.text;
    };
    expect(await feed()).not.toContain("Hidden roadmap of the old organization");

    const moved = await api("POST", movePath(secret.id), { key, body: { organization_id: to.organization.id } });
    expect(moved.status).toBe(200);
    // The old organization's entries about the project stay for its admins (docs/activity-log.md):
    // its plain member, whom it hid them from, does not read them through their level in the new one.
    expect(await feed()).not.toContain("Hidden roadmap of the old organization");
  });
  for (const [what, rulesPath, pattern, body] of [
    [
      "a project rule",
      (id: number) => `/api/projects/${id}/access_controls`,
      /insert into "access_controls"/,
      (membershipId: string) => ({ organization_member: membershipId, access_level: "member" }),
    ],
    [
      "a rule on a kind of resources",
      (id: number) => `/api/projects/${id}/resource_access_controls`,
      /insert into "resource_access_controls"/,
      (membershipId: string) => ({ resource: "dashboard", organization_member: membershipId, access_level: "editor" }),
    ],
  ] as const) {
    it(`refuses ${what} of an old organization's member sent again at its level while the project moves`, async () => {
      const { from, to, project, key } = await setupMove();
      const stayer = await addMember(from.organization.id, MembershipLevel.member);
      const path = rulesPath(project.id);
      // The rule exists before the move, at the level the client sends again (a re-applied configuration).
      const first = await api("PUT", path, { key, body: body(stayer.membership.id) });
      expect(first.status).toBe(200);
      const again = await duringMove({ project, to, key }, pattern, () =>
        api("PUT", path, { key, body: body(stayer.membership.id) }),
      );
      // The move took the old organization's member rules off the project; this PUT, judged on the
      // project as it was, must not put one back.
      await expectUnseenInNewOrganization(to.organization.id, path, stayer.membership.id);
      expect(again.status).toBe(409);
    });
  }

  it("refuses a copy of its dashboard into a third organization that would land after the move (409)", async () => {
    const { from, to, project, key } = await setupMove();
    // Admin of the old organization and of a third one, a plain member of the new one.
    const copier = await addMember(from.organization.id, MembershipLevel.admin);
    await addMembership(to.organization.id, copier.user, MembershipLevel.member);
    const third = await setupOrganization();
    await addMembership(third.organization.id, copier.user, MembershipLevel.admin);
    const source = await api("POST", `/api/environments/${project.id}/dashboards/`, {
      key,
      body: { name: "Roadmap", description: "for the new organization's eyes" },
    });
    expect(source.status).toBe(201);
    const copyPath = `/api/environments/${third.project.id}/dashboards/`;
    const copy = { name: "Copied out", use_dashboard: source.body.id };

    // Judged on the read in the old organization, where the copier is an admin; landing after the
    // move, it would copy a dashboard of an organization where they are not.
    const raced = await duringMove({ project, to, key }, /insert into "dashboards"/, () =>
      api("POST", copyPath, { key: copier.key, body: copy }),
    );
    expect([raced.status, raced.body]).toEqual([409, changedMeanwhile("project")]);
    // Sent again, it is judged in the new organization.
    const again = await api("POST", copyPath, { key: copier.key, body: copy });
    expect([again.status, again.body]).toEqual([
      403,
      forbidden("Copying a dashboard to another project needs admin rights in the organizations of both projects."),
    ]);
    const copies = await db
      .select()
      .from(schema.dashboards)
      .where(and(eq(schema.dashboards.environmentId, third.project.id), eq(schema.dashboards.name, copy.name)));
    expect(copies).toEqual([]);
  });

  it("replays a kept move only to a caller who still sees the project, and not after @current changed", async () => {
    const { from, to, project, key } = await setupMove();
    const body = { organization_id: to.organization.id };
    const headers = { "Idempotency-Key": "move-once" };
    const moved = await api("POST", movePath(project.id), { key, headers, body });
    expect(moved.status).toBe(200);
    const replayed = await api("POST", movePath(project.id), { key, headers, body });
    expect([replayed.status, replayed.headers.get("Idempotent-Replayed"), replayed.body]).toEqual([
      200,
      "true",
      moved.body,
    ]);
    // Removed from the new organization, the mover no longer sees the project: no replay of it.
    await db
      .delete(schema.organizationMemberships)
      .where(
        and(
          eq(schema.organizationMemberships.userId, from.owner.id),
          eq(schema.organizationMemberships.organizationId, to.organization.id),
        ),
      );
    const refused = await api("POST", movePath(project.id), { key, headers, body });
    expect([refused.status, refused.body, refused.headers.get("Idempotent-Replayed")]).toEqual([404, notFound, null]);

    // `@current` is part of the request: after the caller switched project, the same key and body is another one.
    const first = await createProject(from.organization.id, { name: "First current" });
    const second = await createProject(from.organization.id, { name: "Second current" });
    const other = await setupOrganization();
    await addMembership(other.organization.id, from.owner, MembershipLevel.admin);
    const current = { "Idempotency-Key": "move-current" };
    const toOther = { organization_id: other.organization.id };
    expect((await api("PATCH", "/api/users/@me", { key, body: { set_current_team: first.id } })).status).toBe(200);
    const movedCurrent = await api("POST", movePath("@current"), { key, headers: current, body: toOther });
    expect([movedCurrent.status, movedCurrent.body.id]).toEqual([200, first.id]);
    expect((await api("PATCH", "/api/users/@me", { key, body: { set_current_team: second.id } })).status).toBe(200);
    const retried = await api("POST", movePath("@current"), { key, headers: current, body: toOther });
    expect([retried.status, retried.body.code]).toEqual([422, "idempotency_key_reused"]);
    expect(await organizationOf(second.id)).toBe(from.organization.id);
  });

  it("takes its mover's current organization along with their current project: a retry replays", async () => {
    const { from, to, project, key } = await setupMove();
    const other = await addMember(from.organization.id, MembershipLevel.admin);
    for (const caller of [key, other.key]) {
      const chosen = await api("PATCH", "/api/users/@me", { key: caller, body: { set_current_team: project.id } });
      expect(chosen.status).toBe(200);
    }
    const headers = { "Idempotency-Key": "move-current-once" };
    const body = { organization_id: to.organization.id };
    const moved = await api("POST", movePath("@current"), { key, headers, body });
    expect([moved.status, moved.body.id]).toEqual([200, project.id]);
    expect((await api("GET", "/api/users/@me", { key })).body).toMatchObject({
      team: { id: project.id, organization: to.organization.id },
      organization: { id: to.organization.id },
    });
    // The answer was lost: the very same request, nothing switched, is replayed.
    const retried = await api("POST", movePath("@current"), { key, headers, body });
    expect([retried.status, retried.headers.get("Idempotent-Replayed"), retried.body]).toEqual([
      200,
      "true",
      moved.body,
    ]);
    // Another member who had it as current stays in their organization, at its first project.
    expect((await api("GET", "/api/users/@me", { key: other.key })).body).toMatchObject({
      team: { id: from.project.id },
      organization: { id: from.organization.id },
    });
  });
});
