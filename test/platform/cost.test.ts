import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import * as schema from "../../src/db/schema";
import { nowIso, uuid7 } from "../../src/platform/ids";
import { MembershipLevel } from "../../src/platform/levels";
import { api, db, setupOrganization } from "../support/harness";
import { emptySeedRows, insertSeedRows, seedProject, type SeedRows } from "../support/seed";

/**
 * D1 bills rows read: a request's cost must follow the page it answers, not the size of the
 * organization or of the whole table. One organization holds 2,000 of each kind of row, and 50
 * others hold more of the same.
 */
const SIZE = 2000;
const OTHER_ORGANIZATIONS = 50;
const PER_OTHER_ORGANIZATION = 20;

let nextId = 1_000_000;
let now = "";

/** `count` members of the organization, each with a rule on the project, a dashboard there and a collaboration on it. */
function seedOrganization(rows: SeedRows, organizationId: string, projectId: number, count: number) {
  for (let index = 0; index < count; index += 1) {
    const id = (nextId += 1);
    const membershipId = uuid7();
    rows.users.push({ id, uuid: uuid7(), distinctId: `seed-${id}`, email: `seed-${id}@example.com`, createdAt: now });
    rows.memberships.push({ id: membershipId, organizationId, userId: id, level: MembershipLevel.member, joinedAt: now, updatedAt: now });
    rows.dashboards.push({ id, environmentId: projectId, name: `Seeded ${id}`, createdById: id, createdAt: now, lastModifiedAt: now });
    rows.collaborators.push({ id: uuid7(), dashboardId: id, userId: id, level: 37, addedAt: now, updatedAt: now });
    rows.accessControls.push({
      id: uuid7(),
      environmentId: projectId,
      resource: "project",
      resourceId: String(projectId),
      organizationMembershipId: membershipId,
      accessLevel: "member",
      createdAt: now,
      updatedAt: now,
    });
  }
}

/** Projects of the organization besides its first, each with its first environment. */
function seedProjects(rows: SeedRows, organizationId: string, count: number) {
  for (let index = 0; index < count; index += 1) seedProject(rows, organizationId, now);
}

let team: Awaited<ReturnType<typeof setupOrganization>>;
let seeded: SeedRows;

beforeAll(async () => {
  team = await setupOrganization();
  now = nowIso();
  const rows = emptySeedRows();
  seedOrganization(rows, team.organization.id, team.project.id, SIZE);
  seedProjects(rows, team.organization.id, SIZE);
  for (let index = 0; index < OTHER_ORGANIZATIONS; index += 1) {
    const organizationId = uuid7();
    rows.organizations.push({ id: organizationId, name: `Other ${index}`, slug: `cost-other-${index}`, createdAt: now, updatedAt: now });
    seedProjects(rows, organizationId, 1);
    seedOrganization(rows, organizationId, rows.projects.at(-1)!.id!, PER_OTHER_ORGANIZATION);
  }
  await insertSeedRows(rows);
  seeded = rows;
}, 120_000);

describe("rows read are bounded by the page, not the table", () => {
  it("removing a member reads a bounded number of rows", async () => {
    const target = seeded.users[SIZE / 2]!;
    const response = await api("DELETE", `/api/organizations/${team.organization.id}/members/${target.uuid}`, { key: team.key });

    expect(response.status).toBe(204);
    expect(response.cost.rowsRead).toBeLessThanOrEqual(50);
    const members = await api("GET", `/api/organizations/${team.organization.id}/members?email=${target.email}`, { key: team.key });
    expect(members.body.count).toBe(0);
  });

  it("@current lists dashboards at the cost of the explicit project id", async () => {
    const explicit = await api("GET", `/api/environments/${team.project.id}/dashboards?limit=10`, { key: team.key });
    const current = await api("GET", "/api/environments/@current/dashboards?limit=10", { key: team.key });

    expect(current.status).toBe(200);
    expect(current.body.results).toEqual(explicit.body.results);
    expect(current.body.count).toBe(explicit.body.count);
    expect(Math.abs(current.cost.rowsRead - explicit.cost.rowsRead)).toBeLessThanOrEqual(10);
  });

  it("@current costs the same when the user chose a project", async () => {
    const chosen = seeded.projects[SIZE - 1]!.id!;
    await db.update(schema.users).set({ currentProjectId: chosen }).where(eq(schema.users.id, team.owner.id));
    const explicit = await api("GET", `/api/environments/${chosen}/dashboards?limit=10`, { key: team.key });
    const current = await api("GET", "/api/environments/@current/dashboards?limit=10", { key: team.key });
    await db.update(schema.users).set({ currentProjectId: null }).where(eq(schema.users.id, team.owner.id));

    expect(current.status).toBe(200);
    expect(current.body.results).toEqual(explicit.body.results);
    expect(current.body.count).toBe(explicit.body.count);
    expect(Math.abs(current.cost.rowsRead - explicit.cost.rowsRead)).toBeLessThanOrEqual(10);
  });

  it("@current retrieves a project and the user at the cost of one project", async () => {
    const explicit = await api("GET", `/api/projects/${team.project.id}`, { key: team.key });
    const current = await api("GET", "/api/projects/@current", { key: team.key });
    const inOrganization = await api("GET", `/api/organizations/${team.organization.id}/projects/@current`, { key: team.key });
    const me = await api("GET", "/api/users/@me", { key: team.key });

    expect(current.status).toBe(200);
    expect(current.body).toEqual(explicit.body);
    expect(inOrganization.body).toEqual(explicit.body);
    expect(me.body.team.id).toBe(team.project.id);
    expect(Math.abs(current.cost.rowsRead - explicit.cost.rowsRead)).toBeLessThanOrEqual(10);
    expect(Math.abs(inOrganization.cost.rowsRead - explicit.cost.rowsRead)).toBeLessThanOrEqual(10);
  });

  it("finding a member by e-mail reads a bounded number of rows", async () => {
    const member = seeded.users[SIZE / 4]!;
    const response = await api("GET", `/api/organizations/${team.organization.id}/members?email=${member.email}`, { key: team.key });

    expect(response.status).toBe(200);
    expect(response.body.count).toBe(1);
    expect(response.body.results[0].user.uuid).toBe(member.uuid);
    expect(response.cost.rowsRead).toBeLessThanOrEqual(50);
  });
});
