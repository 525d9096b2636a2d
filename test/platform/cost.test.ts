import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import * as schema from "../../src/db/schema";
import { nowIso, uuid7 } from "../../src/platform/ids";
import { MembershipLevel } from "../../src/platform/levels";
import { addMember, addMembership, api, createApiKey, createUser, db, setupOrganization } from "../support/harness";
import {
  emptySeedRows,
  insertSeedRows,
  seedOrganization as seedOrganizationOfEveryKind,
  seedProject,
  type SeededOrganization,
  type SeedRows,
} from "../support/seed";

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
/** Another organization with SIZE rows of every kind a list pages through. */
let everyKind: SeededOrganization;

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
  everyKind = await seedOrganizationOfEveryKind(rows, SIZE);
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
    // The first read after the choice changed finds the key's remembered choice stale and reads again.
    const first = await api("GET", "/api/environments/@current/dashboards?limit=10", { key: team.key });
    const current = await api("GET", "/api/environments/@current/dashboards?limit=10", { key: team.key });
    await db.update(schema.users).set({ currentProjectId: null }).where(eq(schema.users.id, team.owner.id));

    expect(first.body).toEqual(current.body);
    expect(first.cost.queries).toBe(2);
    expect(current.status).toBe(200);
    expect(current.body.results).toEqual(explicit.body.results);
    expect(current.body.count).toBe(explicit.body.count);
    expect(current.cost.queries).toBe(1);
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

  it("reads an organization with all its projects in a few rows: its own, @current, in @me, in the list, after a PATCH", async () => {
    const member = await addMember(team.organization.id, MembershipLevel.member);
    const organization = `/api/organizations/${team.organization.id}`;
    for (const key of [team.key, member.key]) {
      const reads = [
        ["GET", organization],
        ["GET", "/api/organizations/@current"],
        ["GET", "/api/users/@me"],
        ["GET", "/api/organizations?limit=10"],
        ["PATCH", organization],
      ] as const;
      for (const [method, path] of reads) {
        const response = await api(method, path, { key, body: method === "PATCH" ? { name: "Measured" } : undefined });
        const object = path === "/api/users/@me" ? response.body.organization : (response.body.results?.[0] ?? response.body);
        if (key === member.key && method === "PATCH") {
          expect(response.status).toBe(403);
          continue;
        }
        expect(response.status, path).toBe(200);
        expect(object.projects, path).toHaveLength(SIZE + 1);
        expect(object.teams, path).toHaveLength(SIZE + 1);
        expect(response.cost.rowsRead, `${method} ${path}`).toBeLessThanOrEqual(50);
      }
    }
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

describe("every list counts in one row and pages along its index", () => {
  const LIMIT = 10;
  /** What any single request may read beyond the rows it skips. */
  const BUDGET = 3 * LIMIT + 50;
  const lists = (o: SeededOrganization): [string, number][] => [
    [`/api/organizations/${o.organization.id}/members`, SIZE + 1],
    [`/api/organizations/${o.organization.id}/invites`, SIZE],
    [`/api/organizations/${o.organization.id}/domains`, SIZE],
    // The seed stops short of the organization's limit of 2,000 projects.
    [`/api/organizations/${o.organization.id}/projects`, 1990],
    [`/api/organizations/${o.organization.id}/batch_exports`, SIZE],
    [`/api/environments/${o.project.id}/batch_exports`, SIZE],
    [`/api/environments/${o.project.id}/dashboards`, SIZE],
    ["/api/personal_api_keys", SIZE],
    // Across the caller's organizations: here one, so the same projects as the organization's list.
    ["/api/projects", 1990],
  ];

  it("answers the first page and the exact count at the cost of the page", async () => {
    for (const [path, count] of lists(everyKind)) {
      const response = await api("GET", `${path}?limit=${LIMIT}`, { key: everyKind.key });

      expect(response.status, path).toBe(200);
      expect(response.body.count, path).toBe(count);
      expect(response.body.results, path).toHaveLength(LIMIT);
      expect(response.cost.rowsRead, path).toBeLessThanOrEqual(BUDGET);
    }
  });

  // Lists in insertion order find an offset in their tree of gaps (migration list_positions), lists
  // sorted by a column in their shards (migration sorted_list_shards).
  it("answers any offset of every list at the cost of a page, past either end too", async () => {
    const measured = lists(everyKind);
    expect(measured).toHaveLength(9);
    for (const [path, count] of measured) {
      // The whole list through `next` links, whose cursors seek without the tree of gaps.
      const ids: (string | number)[] = [];
      for (let url: string | null = `${path}?limit=1000`; url; ) {
        const page = await api("GET", url, { key: everyKind.key });
        ids.push(...page.body.results.map((row: { id: string | number }) => row.id));
        url = page.body.next && `${new URL(page.body.next).pathname}${new URL(page.body.next).search}`;
      }
      expect(ids, path).toHaveLength(count);
      for (const offset of [1, 17, Math.floor(count / 3), Math.floor(count / 2), count - LIMIT, count - 3, count, count + 5]) {
        const page = await api("GET", `${path}?limit=${LIMIT}&offset=${offset}`, { key: everyKind.key });

        expect(page.status, `${path} at ${offset}`).toBe(200);
        expect(page.body.count, `${path} at ${offset}`).toBe(count);
        expect(page.body.results.map((row: { id: string | number }) => row.id), `${path} at ${offset}`).toEqual(ids.slice(offset, offset + LIMIT));
        expect(page.cost.rowsRead, `${path} at ${offset}`).toBeLessThanOrEqual(BUDGET);
      }
    }
  });

  it("answers any offset of /api/projects across organizations at the cost of a page where the caller is an admin in each", async () => {
    const caller = await createUser();
    const others = seeded.organizations.filter((organization) => organization.id !== team.organization.id).slice(0, 3);
    for (const organization of [team.organization, ...others]) await addMembership(organization.id, caller, MembershipLevel.admin);
    const key = (await createApiKey(caller)).value;
    const count = SIZE + 1 + others.length;
    const whole = async (path: string) => {
      const ids: number[] = [];
      for (let url: string | null = path; url; ) {
        const page = await api("GET", url, { key });
        ids.push(...page.body.results.map((row: { id: number }) => row.id));
        url = page.body.next && `${new URL(page.body.next).pathname}${new URL(page.body.next).search}`;
      }
      return ids;
    };
    const ids = await whole("/api/projects?limit=1000");
    // Organization after organization, oldest first; each in creation order.
    const inOrder = seeded.projects
      .filter((project) => project.organizationId !== team.organization.id)
      .filter((project) => others.some((organization) => organization.id === project.organizationId))
      .map((project) => project.id);
    expect(ids).toHaveLength(count);
    // Back from the last page through `previous` links: their cursors seek across organizations too.
    const backwards: number[] = [];
    for (let url: string | null = `/api/projects?limit=3&offset=${count - 3}`; url; ) {
      const page = await api("GET", url, { key });
      backwards.unshift(...page.body.results.map((row: { id: number }) => row.id));
      if (backwards.length > 30) break;
      url = page.body.previous && `${new URL(page.body.previous).pathname}${new URL(page.body.previous).search}`;
    }
    expect(backwards).toEqual(ids.slice(-backwards.length));
    expect(ids.slice(0, 1)).toEqual([team.project.id]);
    expect(ids.slice(-others.length)).toEqual(inOrder);
    for (const offset of [0, 1, 17, 1000, SIZE - 5, SIZE, SIZE + 1, count - 1, count, count + 5]) {
      const page = await api("GET", `/api/projects?limit=${LIMIT}&offset=${offset}`, { key });
      expect(page.body.count, `at ${offset}`).toBe(count);
      expect(page.body.results.map((row: { id: number }) => row.id), `at ${offset}`).toEqual(ids.slice(offset, offset + LIMIT));
      expect(page.cost.rowsRead, `at ${offset}`).toBeLessThanOrEqual(BUDGET);
    }

    // A plain member somewhere: some projects may be hidden from them, so the page walks from the start.
    const withMember = await createUser();
    await addMembership(team.organization.id, withMember, MembershipLevel.admin);
    await addMembership(others[0]!.id, withMember, MembershipLevel.member);
    const memberKey = (await createApiKey(withMember)).value;
    const memberIds = [...ids.slice(0, SIZE + 1), ...inOrder.slice(0, 1)];
    for (const offset of [0, SIZE - 3, SIZE + 1]) {
      const page = await api("GET", `/api/projects?limit=${LIMIT}&offset=${offset}`, { key: memberKey });
      expect(page.body.count, `member at ${offset}`).toBe(SIZE + 2);
      expect(page.body.results.map((row: { id: number }) => row.id), `member at ${offset}`).toEqual(memberIds.slice(offset, offset + LIMIT));
    }
  });

  it("follows `next` to the last page at the cost of the page: the link's cursor seeks past the row before it", async () => {
    for (const [path, count] of lists(everyKind)) {
      const beforeLast = await api("GET", `${path}?limit=${LIMIT}&offset=${count - 2 * LIMIT}`, { key: everyKind.key });
      const direct = await api("GET", `${path}?limit=${LIMIT}&offset=${count - LIMIT}`, { key: everyKind.key });
      const next = new URL(beforeLast.body.next);
      const followed = await api("GET", `${next.pathname}${next.search}`, { key: everyKind.key });

      const first = await api("GET", `${path}?limit=${LIMIT}`, { key: everyKind.key });

      expect(beforeLast.body.next, path).toContain("&after=");
      expect(followed.status, path).toBe(200);
      expect(followed.body, path).toEqual(direct.body);
      // The first page's cost, plus one index range of at most a page per sort column.
      expect(followed.cost.rowsRead, path).toBeLessThanOrEqual(first.cost.rowsRead + 3 * LIMIT);
      expect(followed.cost.rowsRead, path).toBeLessThanOrEqual(BUDGET);
    }
  });

  it("follows `previous` back from the last page at the cost of the page: the link's cursor seeks before the page's first row", async () => {
    for (const [path, count] of lists(everyKind)) {
      const last = await api("GET", `${path}?limit=${LIMIT}&offset=${count - LIMIT}`, { key: everyKind.key });
      const direct = await api("GET", `${path}?limit=${LIMIT}&offset=${count - 2 * LIMIT}`, { key: everyKind.key });
      const previous = new URL(last.body.previous);
      const followed = await api("GET", `${previous.pathname}${previous.search}`, { key: everyKind.key });

      expect(last.body.previous, path).toContain("&before=");
      expect(followed.status, path).toBe(200);
      expect(followed.body, path).toEqual(direct.body);
      expect(followed.cost.rowsRead, path).toBeLessThanOrEqual(BUDGET);
    }
  });

  it("answers the lists PostHog answers whole (collaborators, access rules) at most 3 rows per item, 50 more", async () => {
    const dashboard = `/api/environments/${everyKind.project.id}/dashboards/${everyKind.dashboardId}`;
    const lists: [string, string][] = [
      [`${dashboard}/collaborators`, everyKind.key],
      [`${dashboard}/access_controls`, everyKind.key],
      [`/api/environments/${team.project.id}/access_controls`, team.key],
    ];
    for (const [path, key] of lists) {
      const response = await api("GET", path, { key });
      const items: unknown[] = Array.isArray(response.body) ? response.body : response.body.access_controls;
      expect(response.status, path).toBe(200);
      expect(items.length, path).toBeGreaterThanOrEqual(SIZE - 2);
      expect(response.cost.rowsRead, path).toBeLessThanOrEqual(3 * items.length + 50);
    }
  });

  it("creates an invite, a bulk of invites and a project at a bounded cost", async () => {
    const organization = `/api/organizations/${everyKind.organization.id}`;
    const one = await api("POST", `${organization}/invites`, { key: everyKind.key, body: { target_email: "cost-one@example.com", send_email: false } });
    const bulk = await api("POST", `${organization}/invites/bulk`, {
      key: everyKind.key,
      body: Array.from({ length: 10 }, (_, index) => ({ target_email: `cost-bulk-${index}@example.com`, send_email: false })),
    });
    const project = await api("POST", `${organization}/projects`, { key: everyKind.key, body: { name: "Measured" } });

    expect([one.status, bulk.status, project.status]).toEqual([201, 200, 201]);
    expect(one.cost.rowsRead).toBeLessThanOrEqual(50);
    expect(bulk.cost.rowsRead).toBeLessThanOrEqual(10 * 10);
    expect(project.cost.rowsRead).toBeLessThanOrEqual(50);
  });

  it("creates and revokes a personal API key at a bounded cost, however many projects the caller sees", async () => {
    const created = await api("POST", "/api/personal_api_keys", { key: everyKind.key, body: { label: "Measured", scopes: ["*"] } });
    const revoked = await api("DELETE", `/api/personal_api_keys/${created.body.id}`, { key: everyKind.key });
    expect([created.status, revoked.status]).toEqual([201, 204]);
    expect(created.cost.rowsRead).toBeLessThanOrEqual(50);
    expect(revoked.cost.rowsRead).toBeLessThanOrEqual(50);
  });
});
