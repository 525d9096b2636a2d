import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import * as schema from "../../src/db/schema";
import { nowIso, uuid7 } from "../../src/platform/ids";
import { MembershipLevel } from "../../src/platform/levels";
import { mintInviteToken } from "../../src/organizations/invites/invite-tokens";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  createProject,
  createUser,
  db,
  grantProjectAccess,
  setupOrganization,
} from "../support/harness";
import {
  emptySeedRows,
  insertSeedRows,
  seedOrganization as seedOrganizationOfEveryKind,
  seedMembershipsOf,
  seedOtherOrganizations,
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

/**
 * `count` members of the organization, each with a rule on the project, a dashboard there, a
 * collaboration on it, and a place in the organization's one role.
 */
function seedOrganization(rows: SeedRows, organizationId: string, projectId: number, count: number) {
  const roleId = uuid7();
  rows.roles.push({ id: roleId, organizationId, name: "Everyone", nameKey: "everyone", createdAt: now });
  for (let index = 0; index < count; index += 1) {
    const id = (nextId += 1);
    const membershipId = uuid7();
    rows.users.push({ id, uuid: uuid7(), distinctId: `seed-${id}`, email: `seed-${id}@example.com`, createdAt: now });
    rows.memberships.push({
      id: membershipId,
      organizationId,
      userId: id,
      level: MembershipLevel.member,
      joinedAt: now,
      updatedAt: now,
    });
    rows.dashboards.push({
      id,
      environmentId: projectId,
      name: `Seeded ${id}`,
      createdById: id,
      createdAt: now,
      lastModifiedAt: now,
    });
    rows.collaborators.push({ id: uuid7(), dashboardId: id, userId: id, level: 37, addedAt: now, updatedAt: now });
    rows.roleMemberships.push({
      id: uuid7(),
      roleId,
      organizationMembershipId: membershipId,
      joinedAt: now,
      updatedAt: now,
    });
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
    rows.organizations.push({
      id: organizationId,
      name: `Other ${index}`,
      slug: `cost-other-${index}`,
      createdAt: now,
      updatedAt: now,
    });
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
    const response = await api("DELETE", `/api/organizations/${team.organization.id}/members/${target.uuid}`, {
      key: team.key,
    });

    expect(response.status).toBe(204);
    expect(response.cost.rowsRead).toBeLessThanOrEqual(50);
    const members = await api("GET", `/api/organizations/${team.organization.id}/members?email=${target.email}`, {
      key: team.key,
    });
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
    const inOrganization = await api("GET", `/api/organizations/${team.organization.id}/projects/@current`, {
      key: team.key,
    });
    const me = await api("GET", "/api/users/@me", { key: team.key });

    expect(current.status).toBe(200);
    expect(current.body).toEqual(explicit.body);
    expect(inOrganization.body).toEqual(explicit.body);
    expect(me.body.team.id).toBe(team.project.id);
    expect(Math.abs(current.cost.rowsRead - explicit.cost.rowsRead)).toBeLessThanOrEqual(10);
    expect(Math.abs(inOrganization.cost.rowsRead - explicit.cost.rowsRead)).toBeLessThanOrEqual(10);
  });

  it("reads an organization and its projects at most 3 rows each: by id, @current, @me, list, PATCH", async () => {
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
        const object =
          path === "/api/users/@me" ? response.body.organization : (response.body.results?.[0] ?? response.body);
        if (key === member.key && method === "PATCH") {
          expect(response.status).toBe(403);
          continue;
        }
        expect(response.status, path).toBe(200);
        expect(object.projects, path).toHaveLength(SIZE + 1);
        expect(object.teams, path).toHaveLength(SIZE + 1);
        // One read of the projects, at most 3 rows per project listed.
        expect(response.cost.rowsRead, `${method} ${path}`).toBeLessThanOrEqual(3 * (SIZE + 1) + 50);
      }
    }
  });

  it("searches dashboards and filters them by tag along indexes: rows read follow the matches", async () => {
    const dashboards = `/api/environments/${team.project.id}/dashboards`;
    for (const name of ["Quarterly revenue", "Quarterly costs", "Yearly revenue"]) {
      const created = await api("POST", dashboards, { key: team.key, body: { name, tags: ["finance", "board"] } });
      expect(created.status).toBe(201);
    }
    // The seeded dashboards' names hold their ids (from 1,000,001): "seeded 1001" is in a thousand of them.
    const few: [string, number][] = [
      ["search=quarterly", 2],
      ["search=REVENUE", 2],
      ["tags=finance", 3],
      ["tags=finance,board&search=yearly", 1],
      ["search=nowhere", 0],
    ];
    for (const [query, count] of few) {
      const response = await api("GET", `${dashboards}?${query}&limit=10`, { key: team.key });
      expect(response.body.count, query).toBe(count);
      expect(response.cost.queries, query).toBe(1);
      expect(response.cost.rowsRead, query).toBeLessThanOrEqual(80);
    }
    const many = await api("GET", `${dashboards}?search=seeded%201001&limit=10`, { key: team.key });
    expect(many.body.count).toBeGreaterThanOrEqual(1000);
    expect(many.body.count).toBeLessThan(SIZE);
    expect(many.body.results).toHaveLength(10);
    // Each match: its index entry, counted once and listed once (its row read by id and sorted).
    console.log("MANY", many.cost);
  });

  it("a member hidden from every dashboard by one rule reads their few dashboards, not the project's", async () => {
    const environmentId = team.project.id;
    const dashboards = `/api/environments/${environmentId}/dashboards`;
    const hidden = await addMember(team.organization.id, MembershipLevel.member);
    const rule = <T extends { resource: string; accessLevel: "none" | "viewer" }>(fields: T) => ({
      id: uuid7(),
      environmentId,
      organizationMembershipId: hidden.membership.id,
      createdAt: now,
      updatedAt: now,
      ...fields,
    });
    // One they made before the rule (which stops them making more), and two seeded dashboards granted them one
    // by one ("seeded 1001..." names).
    const own = await api("POST", dashboards, { key: hidden.key, body: { name: "Own board" } });
    expect(own.status).toBe(201);
    await db.insert(schema.resourceAccessControls).values(rule({ resource: "dashboard", accessLevel: "none" }));
    const granted = seeded.dashboards.filter((row) => row.environmentId === environmentId).slice(1000, 1002);
    for (const dashboard of granted) {
      await db
        .insert(schema.accessControls)
        .values(rule({ resource: "dashboard", resourceId: String(dashboard.id), accessLevel: "viewer" }));
    }
    await api("GET", "/api/users/@me", { key: hidden.key });

    const first = await api("GET", `${dashboards}?limit=2`, { key: hidden.key });
    expect(first.body.count).toBe(3);
    expect(first.body.results).toHaveLength(2);
    expect(first.cost.queries).toBe(1);
    // A page's cost, and the caller's few rules read for the page and for the count: not the 2,000 dashboards.
    expect(first.cost.rowsRead).toBeLessThanOrEqual(100);
    const rest = await api("GET", new URL(first.body.next).pathname + new URL(first.body.next).search, {
      key: hidden.key,
    });
    const names = [...first.body.results, ...rest.body.results].map((row: { name: string }) => row.name);
    expect(names.sort()).toEqual([...granted.map((row) => row.name), "Own board"].sort());
    expect(rest.body.next).toBeNull();
    expect(rest.cost.rowsRead).toBeLessThanOrEqual(100);
    // Along the search index: the matches the member sees, counted and listed at the matches' cost.
    const search = `${dashboards}?search=seeded%201001&limit=10`;
    const matches = (await api("GET", search, { key: team.key })).body.count;
    const searched = await api("GET", search, { key: hidden.key });
    expect(searched.body.count).toBe(2);
    expect(searched.body.results.map((row: { name: string }) => row.name).sort()).toEqual(
      granted.map((row) => row.name).sort(),
    );
    expect(searched.cost.rowsRead).toBeLessThanOrEqual(6 * matches + 80);
    // Without the rule, the counter again.
    await db
      .delete(schema.resourceAccessControls)
      .where(eq(schema.resourceAccessControls.environmentId, environmentId));
    const all = await api("GET", `${dashboards}?limit=2`, { key: hidden.key });
    expect(all.body.count).toBeGreaterThanOrEqual(SIZE);
    expect(all.cost.rowsRead).toBeLessThanOrEqual(80);
  });

  it("a role's members page along its index: every page through `next` reads about a page", async () => {
    const roles = await api("GET", `/api/organizations/${team.organization.id}/roles?limit=1`, { key: team.key });
    const role = roles.body.results[0];
    // Every seeded member, less any an earlier test removed from the organization (and so from the role).
    const members = role.members.length;
    expect(members).toBeGreaterThanOrEqual(SIZE - 1);
    let url: string | null = `/api/organizations/${team.organization.id}/roles/${role.id}/role_memberships?limit=10`;
    const listed = new Set<string>();
    for (let page = 0; page < 20 && url; page += 1) {
      const response = await api("GET", url, { key: team.key });
      expect(response.body.count).toBe(members);
      expect(response.body.results).toHaveLength(10);
      expect(response.cost.queries).toBe(1);
      expect(response.cost.rowsRead, url).toBeLessThanOrEqual(3 * 10 + 50);
      for (const membership of response.body.results) listed.add(membership.id);
      url = response.body.next && `${new URL(response.body.next).pathname}${new URL(response.body.next).search}`;
    }
    expect(listed.size).toBe(200);
  });

  it("searches members along the search index: rows read follow the matches, not the organization", async () => {
    const members = `/api/organizations/${team.organization.id}/members`;
    // The seeded members' e-mails hold their ids, from 1,000,001: "seed-100150" is in ten of them.
    // A key's first use in a while records it (one more round trip): used once before, alone.
    await api("GET", `${members}?limit=5`, { key: team.key });
    const few = await api("GET", `${members}?search=SEED-100150&limit=5`, { key: team.key });
    expect(few.status).toBe(200);
    expect(few.body.count).toBe(10);
    expect(few.body.results.map((member: { user: { email: string } }) => member.user.email).sort()).toEqual(
      [1_001_505, 1_001_506, 1_001_507, 1_001_508, 1_001_509].map((id) => `seed-${id}@example.com`),
    );
    expect(few.cost.queries).toBe(1);
    // Each match: its index entry and its membership, counted once and listed once, its user if listed.
    const byMatches = (matches: number) => 8 * matches + 50;
    expect(few.cost.rowsRead).toBeLessThanOrEqual(byMatches(10));
    const none = await api("GET", `${members}?search=nobody-here`, { key: team.key });
    expect(none.body.count).toBe(0);
    expect(none.cost.rowsRead).toBeLessThanOrEqual(byMatches(0));
    const many = await api("GET", `${members}?search=seed-10015&limit=10`, { key: team.key });
    expect(many.body.count).toBe(100);
    expect(many.body.results).toHaveLength(10);
    expect(many.cost.rowsRead).toBeLessThanOrEqual(byMatches(100));
  });

  it("finding a member by e-mail reads a bounded number of rows", async () => {
    const member = seeded.users[SIZE / 4]!;
    const response = await api("GET", `/api/organizations/${team.organization.id}/members?email=${member.email}`, {
      key: team.key,
    });

    expect(response.status).toBe(200);
    expect(response.body.count).toBe(1);
    expect(response.body.results[0].user.uuid).toBe(member.uuid);
    expect(response.cost.rowsRead).toBeLessThanOrEqual(50);
  });
});

describe("every list counts in one row and pages along its index", () => {
  const LIMIT = 10;
  /** What a page may read, whatever its depth, once reached through `next` or `previous`. */
  const BUDGET = 3 * LIMIT + 50;
  /**
   * What a page reached by `offset` alone may read: D1 counts every index entry an OFFSET steps
   * over. Twice that across organizations (`/api/projects` merges their ranges, sorting what it
   * skips).
   */
  const coldBudget = (offset: number, factor = 1.2) => factor * offset + BUDGET;
  const coldFactor = (path: string) => (path === "/api/projects" ? 2 : 1.2);

  /** A plain member whose rules hide projects from them: their own `none` rules on three, and a private project. */
  let member: { key: string; hiddenProjects: number };
  beforeAll(async () => {
    const organizationId = everyKind.organization.id;
    const joined = await addMember(organizationId, MembershipLevel.member);
    const ofOrganization = seeded.projects.filter((project) => project.organizationId === organizationId);
    for (const project of [ofOrganization[0]!, ofOrganization[5]!, ofOrganization[700]!]) {
      await grantProjectAccess(project.id!, joined.membership.id, "none");
    }
    // A private project, its two exports hidden from the member with it.
    const hidden = await createProject(organizationId, { access_control: true });
    for (const name of ["Hidden one", "Hidden two"]) {
      await db.insert(schema.batchExports).values({
        id: uuid7(),
        environmentId: hidden.id,
        organizationId,
        name,
        destinationType: "S3",
        destinationConfig: {},
        interval: "hour",
        createdAt: nowIso(),
        lastUpdatedAt: nowIso(),
      });
    }
    // And a dashboard their own rule hides.
    const dashboard = seeded.dashboards.find(
      (row) => row.environmentId === everyKind.project.id && row.id !== everyKind.dashboardId,
    )!;
    await db.insert(schema.accessControls).values({
      id: uuid7(),
      environmentId: everyKind.project.id,
      resource: "dashboard",
      resourceId: String(dashboard.id),
      organizationMembershipId: joined.membership.id,
      accessLevel: "none",
      createdAt: nowIso(),
      updatedAt: nowIso(),
    });
    member = { key: joined.key, hiddenProjects: 4 };
    // Both keys warm: a key's first request reads it from D1.
    for (const key of [everyKind.key, member.key]) await api("GET", "/api/users/@me", { key });
  }, 60_000);

  /** Each list and its count, for the owner and for the member. */
  const lists = (caller: "owner" | "member"): [string, number][] => {
    const o = everyKind;
    const hidden = caller === "member";
    // The seed stops short of the organization's limit of 2,000 projects; one private project more.
    const projects = 1990 + 1 - (hidden ? member.hiddenProjects : 0);
    return [
      [`/api/organizations/${o.organization.id}/members`, SIZE + 2],
      [`/api/organizations/${o.organization.id}/invites`, SIZE],
      [`/api/organizations/${o.organization.id}/domains`, SIZE],
      [`/api/organizations/${o.organization.id}/roles`, SIZE],
      [`/api/organizations/${o.organization.id}/projects`, projects],
      [`/api/organizations/${o.organization.id}/batch_exports`, SIZE + (hidden ? 0 : 2)],
      [`/api/environments/${o.project.id}/batch_exports`, SIZE],
      [`/api/environments/${o.project.id}/dashboards`, SIZE - (hidden ? 1 : 0)],
      // Across the caller's organizations: here one, so the same projects as the organization's list.
      ["/api/projects", projects],
    ];
  };
  const callers = () =>
    [
      ["owner", everyKind.key],
      ["member", member.key],
    ] as const;
  const ids = (body: { results: { id: string | number }[] }) => body.results.map((row) => row.id);
  const local = (link: string) => `${new URL(link).pathname}${new URL(link).search}`;

  it("answers the first page and exact count in one query at a page's cost, for owner and ruled member", async () => {
    for (const [caller, key] of callers()) {
      for (const [path, count] of lists(caller)) {
        const response = await api("GET", `${path}?limit=${LIMIT}`, { key });

        expect(response.status, `${caller} ${path}`).toBe(200);
        expect(response.body.count, `${caller} ${path}`).toBe(count);
        expect(response.body.results, `${caller} ${path}`).toHaveLength(LIMIT);
        expect(response.cost.queries, `${caller} ${path}`).toBe(1);
        expect(response.cost.rowsRead, `${caller} ${path}`).toBeLessThanOrEqual(BUDGET);
      }
    }
  });

  it("walks every list whole through `next` at a page's cost per page; every offset answers its part", async () => {
    for (const [caller, key] of callers()) {
      for (const [path, count] of lists(caller)) {
        const whole: (string | number)[] = [];
        for (let url: string | null = `${path}?limit=${LIMIT * 100}`; url; ) {
          const page = await api("GET", url, { key });
          whole.push(...ids(page.body));
          url = page.body.next && local(page.body.next);
        }
        expect(whole, `${caller} ${path}`).toHaveLength(count);
        expect(new Set(whole).size, `${caller} ${path}`).toBe(count);

        for (const offset of [
          1,
          17,
          Math.floor(count / 3),
          Math.floor(count / 2),
          count - LIMIT,
          count - 3,
          count,
          count + 5,
        ]) {
          const page = await api("GET", `${path}?limit=${LIMIT}&offset=${offset}`, { key });
          const at = `${caller} ${path} at ${offset}`;
          expect(page.status, at).toBe(200);
          expect(page.body.count, at).toBe(count);
          expect(ids(page.body), at).toEqual(whole.slice(offset, offset + LIMIT));
          expect(page.cost.rowsRead, at).toBeLessThanOrEqual(coldBudget(offset, coldFactor(path)));
        }
      }
    }
  });

  it("follows `next` to the last page and `previous` back at a page's cost: cursors start at edge rows", async () => {
    for (const [caller, key] of callers()) {
      for (const [path, count] of lists(caller)) {
        const beforeLast = await api("GET", `${path}?limit=${LIMIT}&offset=${count - 2 * LIMIT}`, { key });
        const last = await api("GET", `${path}?limit=${LIMIT}&offset=${count - LIMIT}`, { key });
        const viaNext = await api("GET", local(beforeLast.body.next), { key });
        const viaPrevious = await api("GET", local(last.body.previous), { key });

        expect(beforeLast.body.next, `${caller} ${path}`).toContain("&after=");
        expect(last.body.previous, `${caller} ${path}`).toContain("&before=");
        expect(viaNext.body, `${caller} ${path}`).toEqual(last.body);
        expect(viaPrevious.body, `${caller} ${path}`).toEqual(beforeLast.body);
        for (const followed of [viaNext, viaPrevious]) {
          expect(followed.cost.queries, `${caller} ${path}`).toBe(1);
          expect(followed.cost.rowsRead, `${caller} ${path}`).toBeLessThanOrEqual(BUDGET);
        }
      }
    }
  });

  it("pages /api/projects across organizations in creation order, at a page's cost by link or offset", async () => {
    const caller = await createUser();
    const others = seeded.organizations.filter((organization) => organization.id !== team.organization.id).slice(0, 3);
    for (const organization of [team.organization, ...others])
      await addMembership(organization.id, caller, MembershipLevel.admin);
    const key = (await createApiKey(caller)).value;
    const count = SIZE + 1 + others.length;
    const whole: number[] = [];
    for (let url: string | null = "/api/projects?limit=1000"; url; ) {
      const page = await api("GET", url, { key });
      whole.push(...ids(page.body).map(Number));
      url = page.body.next && local(page.body.next);
    }
    // Creation order across organizations: the seeded projects share their creation time, so by id.
    const inOrder = seeded.projects
      .filter((project) =>
        [team.organization, ...others].some((organization) => organization.id === project.organizationId),
      )
      .map((project) => project.id!);
    expect(whole).toEqual([team.project.id, ...inOrder]);
    // Back from the last page through `previous` links, each at the cost of a page.
    const backwards: number[] = [];
    for (
      let url: string | null = `/api/projects?limit=${LIMIT}&offset=${count - LIMIT}`;
      url && backwards.length < 5 * LIMIT;
    ) {
      const page = await api("GET", url, { key });
      backwards.unshift(...ids(page.body).map(Number));
      expect(page.cost.rowsRead, url).toBeLessThanOrEqual(
        url.includes("before=") ? BUDGET : coldBudget(count - LIMIT, 2),
      );
      url = page.body.previous && local(page.body.previous);
    }
    expect(backwards).toEqual(whole.slice(-backwards.length));
    for (const offset of [0, 1, 17, 1000, SIZE - 5, SIZE, count - 1, count, count + 5]) {
      const page = await api("GET", `/api/projects?limit=${LIMIT}&offset=${offset}`, { key });
      expect(page.body.count, `at ${offset}`).toBe(count);
      expect(ids(page.body), `at ${offset}`).toEqual(whole.slice(offset, offset + LIMIT));
      expect(page.cost.rowsRead, `at ${offset}`).toBeLessThanOrEqual(coldBudget(offset, 2));
    }

    // A plain member in one of the organizations: the projects they see there, in the same order.
    const withMember = await createUser();
    await addMembership(team.organization.id, withMember, MembershipLevel.admin);
    await addMembership(others[0]!.id, withMember, MembershipLevel.member);
    const memberKey = (await createApiKey(withMember)).value;
    const memberIds = whole.filter(
      (id) =>
        seeded.projects.find((project) => project.id === id)?.organizationId !== others[1]!.id &&
        seeded.projects.find((project) => project.id === id)?.organizationId !== others[2]!.id,
    );
    for (const offset of [0, SIZE - 3, SIZE + 1]) {
      const page = await api("GET", `/api/projects?limit=${LIMIT}&offset=${offset}`, { key: memberKey });
      expect(page.body.count, `member at ${offset}`).toBe(SIZE + 2);
      expect(ids(page.body), `member at ${offset}`).toEqual(memberIds.slice(offset, offset + LIMIT));
    }
  });

  it("answers lists PostHog answers whole (collaborators, access rules) at 3 rows per item, 50 more", async () => {
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
    const one = await api("POST", `${organization}/invites`, {
      key: everyKind.key,
      body: { target_email: "cost-one@example.com", send_email: false },
    });
    const bulk = await api("POST", `${organization}/invites/bulk`, {
      key: everyKind.key,
      body: Array.from({ length: 10 }, (_, index) => ({
        target_email: `cost-bulk-${index}@example.com`,
        send_email: false,
      })),
    });
    const project = await api("POST", `${organization}/projects`, { key: everyKind.key, body: { name: "Measured" } });

    expect([one.status, bulk.status, project.status]).toEqual([201, 201, 201]);
    expect(one.cost.rowsRead).toBeLessThanOrEqual(50);
    // About ten rows an invite, one more probe of each e-mail's invites (one sent since the
    // request's read, which it would replace without its entry, refuses it: 409), and the caller's
    // key, still theirs (a revoked key sends no invite: 401).
    expect(bulk.cost.rowsRead).toBeLessThanOrEqual(10 * 12);
    expect(project.cost.rowsRead).toBeLessThanOrEqual(50);
  });

  it("writes at most 30 rows per one-row write: the row, its index entries, counters, activity-log entry", async () => {
    const o = everyKind;
    const organization = `/api/organizations/${o.organization.id}`;
    const environment = `/api/environments/${o.project.id}`;
    const invite = await api("POST", `${organization}/invites`, {
      key: o.key,
      body: { target_email: "written@example.com", send_email: false },
    });
    const exported = await api("POST", `${environment}/batch_exports`, {
      key: o.key,
      body: {
        name: "Written",
        interval: "hour",
        destination: { type: "S3", config: { bucket_name: "bucket", region: "us-east-1", prefix: "events/" } },
      },
    });
    const dashboard = await api("POST", `${environment}/dashboards`, { key: o.key, body: { name: "Written" } });
    const key = await api("POST", "/api/personal_api_keys", { key: o.key, body: { label: "Written", scopes: ["*"] } });
    const writes = [
      invite,
      await api("DELETE", `${organization}/invites/${invite.body.id}`, { key: o.key }),
      await api("POST", `${organization}/domains`, { key: o.key, body: { domain: "written.example.com" } }),
      await api("POST", `${organization}/projects`, { key: o.key, body: { name: "Written" } }),
      await api("PATCH", `/api/projects/${o.project.id}`, { key: o.key, body: { name: "Written again" } }),
      exported,
      await api("POST", `${organization}/batch_exports/${exported.body.id}/pause`, { key: o.key }),
      await api("DELETE", `${environment}/batch_exports/${exported.body.id}`, { key: o.key }),
      dashboard,
      await api("PATCH", `${environment}/dashboards/${dashboard.body.id}`, { key: o.key, body: { deleted: true } }),
      key,
      await api("DELETE", `/api/personal_api_keys/${key.body.id}`, { key: o.key }),
      await api("PATCH", `${organization}/members/${o.spareMembers[0]!.uuid}`, {
        key: o.key,
        body: { level: MembershipLevel.admin },
      }),
      await api("DELETE", `${organization}/members/${o.spareMembers[0]!.uuid}`, { key: o.key }),
    ];
    // Tags and the search index follow a dashboard's writes: its tags, a rename, a restore.
    const tagged = await api("POST", `${environment}/dashboards`, {
      key: o.key,
      body: { name: "Tagged", description: "Searched", tags: ["one", "two", "three"] },
    });
    const domain = await api("POST", `${organization}/domains`, { key: o.key, body: { domain: "gone.example.com" } });
    const webhook = await api("POST", `${organization}/webhooks`, {
      key: o.key,
      body: { url: "http://receiver.test/hook", events: ["Dashboard.created"] },
    });
    writes.push(
      tagged,
      await api("PATCH", `${environment}/dashboards/${tagged.body.id}`, {
        key: o.key,
        body: { name: "Renamed", tags: ["four", "five", "six"] },
      }),
      await api("PATCH", `${environment}/dashboards/${tagged.body.id}`, { key: o.key, body: { deleted: true } }),
      await api("PATCH", `${environment}/dashboards/${tagged.body.id}`, { key: o.key, body: { deleted: false } }),
      await api("PATCH", `${organization}/domains/${domain.body.id}`, {
        key: o.key,
        body: { jit_provisioning_enabled: false },
      }),
      await api("DELETE", `${organization}/domains/${domain.body.id}`, { key: o.key }),
      await api("PATCH", `${organization}/projects/${o.project.id}`, { key: o.key, body: { name: "Written thrice" } }),
      webhook,
      await api("PATCH", `${organization}/webhooks/${webhook.body.id}`, { key: o.key, body: { enabled: false } }),
      await api("DELETE", `${organization}/webhooks/${webhook.body.id}`, { key: o.key }),
    );
    for (const response of writes) {
      expect(response.status, response.text).toBeLessThan(300);
      expect(response.cost.rowsWritten, response.text).toBeLessThanOrEqual(30);
    }
  });

  it("creates and revokes a personal API key at a bounded cost, however many projects the caller sees", async () => {
    const created = await api("POST", "/api/personal_api_keys", {
      key: everyKind.key,
      body: { label: "Measured", scopes: ["*"] },
    });
    const revoked = await api("DELETE", `/api/personal_api_keys/${created.body.id}`, { key: everyKind.key });
    expect([created.status, revoked.status]).toEqual([201, 204]);
    expect(created.cost.rowsRead).toBeLessThanOrEqual(50);
    expect(revoked.cost.rowsRead).toBeLessThanOrEqual(50);
  });
});

describe("a user in 1,001 organizations", () => {
  const MANY = 1000;
  let key: string;
  beforeAll(async () => {
    // The seed's ids first: users created after it take ids above them.
    const rows = emptySeedRows();
    seedOtherOrganizations(rows, MANY);
    await insertSeedRows(rows);
    const own = await setupOrganization();
    const memberships = emptySeedRows();
    seedMembershipsOf(
      memberships,
      own.owner.id,
      rows.organizations.map((organization) => organization.id),
    );
    await insertSeedRows(memberships);
    key = own.key;
    await api("GET", "/api/users/@me", { key });
  }, 120_000);

  const local = (link: string) => `${new URL(link).pathname}${new URL(link).search}`;
  /** Organizations and the projects embedded in them. */
  const itemsOf = (organizations: { projects: unknown[] }[]) =>
    organizations.length + organizations.reduce((sum, organization) => sum + organization.projects.length, 0);

  it("lists them, counts them and embeds their projects at most 3 rows per item, one indexed read each", async () => {
    const whole = await api("GET", "/api/organizations", { key });
    expect(whole.body.results).toHaveLength(100);
    expect(whole.cost.rowsRead).toBeLessThanOrEqual(3 * itemsOf(whole.body.results) + 50);
    const first = await api("GET", "/api/organizations?limit=10", { key });
    const deep = await api("GET", "/api/organizations?limit=10&offset=500", { key });
    const back = await api("GET", local(deep.body.previous), { key });
    for (const page of [first, deep, back]) {
      expect(page.body.count).toBe(MANY + 1);
      expect(page.body.results).toHaveLength(10);
      expect(page.cost.queries).toBe(1);
    }
    for (const page of [first, back])
      expect(page.cost.rowsRead).toBeLessThanOrEqual(3 * itemsOf(page.body.results) + 50);
    // By offset, each index entry skipped is read (twice: the organizations and their projects).
    expect(deep.cost.rowsRead).toBeLessThanOrEqual(2 * 500 + 3 * itemsOf(deep.body.results) + 50);
  });

  it("renames them once in each organization's members' search index, in the one write", async () => {
    const renamed = await api("PATCH", "/api/users/@me", { key, body: { first_name: "Manyorgs" } });
    expect(renamed.status).toBe(200);
    // The user's row, and for each of their organizations the old entry out and the new one in.
    expect(renamed.cost.rowsWritten).toBeLessThanOrEqual(1 + 2 * (MANY + 1) + 10);
    const [organization] = (await api("GET", "/api/organizations?limit=1&offset=700", { key })).body.results;
    const found = await api("GET", `/api/organizations/${organization.id}/members?search=manyorgs`, { key });
    expect(found.body.count).toBe(1);
  });

  it("shows them in /api/users/@me and picks @current at most 3 rows per item", async () => {
    const me = await api("GET", "/api/users/@me", { key });
    const current = await api("GET", "/api/organizations/@current", { key });

    expect(me.body.organizations).toHaveLength(MANY + 1);
    expect(me.cost.queries).toBe(1);
    expect(me.cost.rowsRead).toBeLessThanOrEqual(3 * (MANY + 1 + itemsOf([me.body.organization])) + 50);
    expect(current.body.id).toBe(me.body.organization.id);
    expect(current.cost.rowsRead).toBeLessThanOrEqual(3 * itemsOf([current.body]) + 50);
  });
});

// Last: joining changes the organization the lists above count.
describe("signing up by invite", () => {
  it("reads at most 50 rows in an organization of 10,000 of everything", async () => {
    const preview = await api("GET", `/api/signup/${everyKind.inviteToken}`);
    const signup = await api("POST", "/api/signup", { body: { token: everyKind.inviteToken } });

    expect([preview.status, signup.status]).toEqual([200, 201]);
    expect(preview.cost.rowsRead).toBeLessThanOrEqual(50);
    expect(signup.cost.queries).toBe(2);
    expect(signup.cost.rowsRead).toBeLessThanOrEqual(50);
  });

  it("signs a new user up by a token in the path: reads 50 rows at most, writes as in a small one", async () => {
    const small = await setupOrganization();
    const signUp = async (organizationId: string, email: string, createdById: number) => {
      const token = await mintInviteToken();
      await db.insert(schema.invites).values({
        id: uuid7(),
        organizationId,
        createdById,
        targetEmail: email,
        level: MembershipLevel.member,
        sendEmail: false,
        combinePendingInvites: false,
        tokenHash: token.hash,
        createdAt: nowIso(),
        updatedAt: nowIso(),
      });
      return api("POST", `/api/signup/${token.value}`, { body: { first_name: "New" } });
    };
    const inSmall = await signUp(small.organization.id, "path-small@example.com", small.owner.id);
    const inLarge = await signUp(everyKind.organization.id, "path-large@example.com", everyKind.owner.id);

    expect([inSmall.status, inLarge.status]).toEqual([201, 201]);
    expect(inLarge.cost.queries).toBe(2);
    expect(inLarge.cost.rowsRead).toBeLessThanOrEqual(50);
    expect(inLarge.cost.rowsWritten).toBe(inSmall.cost.rowsWritten);
    // The user, their key, the membership (and its entry in the members' search index) and the
    // invite (20 rows with their indexes), and three entries (the key's creation, the joining, the
    // acceptance) of 13 each: a row and 12 filter indexes.
    expect(inLarge.cost.rowsWritten).toBeLessThanOrEqual(20 + 3 * 13);
  });
});
