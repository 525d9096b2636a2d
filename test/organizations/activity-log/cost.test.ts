import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { ACTIVITY_SCOPES } from "../../../src/platform/activity-log/vocabulary";
import { MembershipLevel } from "../../../src/platform/levels";
import { addMember, api, loggedRowsRead, setupOrganization } from "../../support/harness";

/**
 * The log grows forever (until retention), so reading it must cost the page, not the log: one
 * organization holds 10,000 entries and another 10,000 more.
 */
const ENTRIES = 10_000;
const PAGE_BOUND = (limit: number) => 3 * limit + 50;

let organization: Awaited<ReturnType<typeof setupOrganization>>;
let member: Awaited<ReturnType<typeof addMember>>;
let boundaryTime = "";

/**
 * `count` entries in one statement: every 100th is a Dashboard entry by the member, the others
 * are membership updates by the owner, one minute apart so that time filters have a range.
 */
async function seedEntries(
  organizationId: string,
  projectId: number,
  ownerId: number,
  memberId: number,
  count: number,
) {
  await env.DB.prepare(
    `with recursive n(i) as (select 1 union all select i + 1 from n where i < ?1)
     insert into activity_log
       (id, organization_id, seq, project_id, user_id, is_system, activity, scope, item_id, detail, created_at, hash)
     select printf('%08x', i) || substr(?2, 9), ?2, i, ?3,
       case when i % 100 = 0 then ?5 else ?4 end, 0,
       case when i % 100 = 0 then 'created' else 'updated' end,
       case when i % 100 = 0 then 'Dashboard' else 'OrganizationMembership' end,
       'item-' || (i % 50), '{"name":null,"changes":null,"context":null}',
       strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' minutes'), null
     from n`,
  )
    .bind(count, organizationId, projectId, ownerId, memberId)
    .run();
}

beforeAll(async () => {
  organization = await setupOrganization();
  member = await addMember(organization.organization.id, MembershipLevel.admin);
  await seedEntries(
    organization.organization.id,
    organization.project.id,
    organization.owner.id,
    member.user.id,
    ENTRIES,
  );
  const other = await setupOrganization();
  await seedEntries(other.organization.id, other.project.id, other.owner.id, other.owner.id, ENTRIES);
  boundaryTime = new Date(Date.UTC(2026, 0, 1) + 5_000 * 60_000).toISOString();
}, 60_000);

const logPath = () => `/api/organizations/${organization.organization.id}/activity_log`;

async function costOf(path: string) {
  const response = await api("GET", path, { key: organization.key });
  expect(response.status).toBe(200);
  return { rowsRead: response.cost.rowsRead, results: response.body.results.length as number };
}

describe("reading a log of 10,000 entries", () => {
  it.each([
    ["the first page", "?limit=100", 100],
    ["a page deep in the log", "?limit=100&cursor=5000", 100],
    ["the last page", "?limit=100&cursor=60", 59],
    ["a page of one scope", "?limit=20&scope=Dashboard", 20],
    ["one item's entries", "?limit=20&item_id=item-7", 20],
    ["one user's entries", "?limit=20&user=MEMBER", 20],
    ["one activity", "?limit=20&activity=created", 20],
    ["entries after a time", `?limit=100&after=BOUNDARY`, 100],
    ["entries before a time", `?limit=100&before=BOUNDARY`, 100],
  ])("%s costs the page, not the log", async (_label, query, expected) => {
    const path = logPath() + query.replace("MEMBER", member.user.uuid).replace("BOUNDARY", boundaryTime);
    const limit = Number(/limit=(\d+)/.exec(query)![1]);
    const cost = await costOf(path);
    expect(cost.results).toBe(expected);
    expect(cost.rowsRead).toBeLessThanOrEqual(PAGE_BOUND(limit));
  });

  /**
   * Several kinds: per kind, its page's edge found and its page read along the kind's index (limit
   * + 1 rows each, and the range's end), then the page.
   */
  const KINDS_BOUND = (limit: number, kinds: number) => 2 * kinds * (limit + 2) + 3 * limit + 50;

  it.each([
    ["as PostHog's web app asks them (`scopes`)", "?limit=20&scopes=Dashboard,Project", 20],
    ["no entry has", "?limit=20&scopes=Insight,Notebook", 0],
    ["deep in the log", "?limit=20&scopes=Project,Dashboard&cursor=5000", 20],
  ])("a page of kinds %s costs their pages, not the log", async (_label, query, expected) => {
    const cost = await costOf(logPath() + query);
    expect(cost.results).toBe(expected);
    expect(cost.rowsRead).toBeLessThanOrEqual(KINDS_BOUND(20, 2));
  });

  it("reads several kinds in the log's order, as the entries of each kind merged", async () => {
    const every = await api("GET", `${logPath()}?limit=150&cursor=5050`, { key: organization.key });
    const kinds = await api("GET", `${logPath()}?limit=150&cursor=5050&scopes=OrganizationMembership,Dashboard`, {
      key: organization.key,
    });
    const seqs = (page: { body: { results: { seq: number }[] } }) => page.body.results.map((entry) => entry.seq);
    expect(seqs(kinds)).toEqual(seqs(every));
    expect(seqs(kinds)).toEqual(Array.from({ length: 150 }, (_, index) => 5049 - index));
    expect(new URL(kinds.body.next).searchParams.get("cursor")).toBe("4900");
    const dashboards = await api("GET", `${logPath()}?limit=20&scopes=Dashboard,Insight`, { key: organization.key });
    expect(seqs(dashboards)).toEqual(Array.from({ length: 20 }, (_, index) => 10_000 - 100 * index));
    const numbered = await api("GET", `${logPath()}?page=2&page_size=20&scopes=Dashboard,Insight`, {
      key: organization.key,
    });
    expect(numbered.body.count).toBe(100);
    expect(seqs(numbered)).toEqual(Array.from({ length: 20 }, (_, index) => 8_000 - 100 * index));
    // The count reads the kinds' entries (at most 10,000), the page its kinds' pages up to it.
    expect(numbered.cost.rowsRead).toBeLessThanOrEqual(100 + KINDS_BOUND(40, 2));
  });

  it("a page naming every kind the log records keeps to the bound, whatever the limit", async () => {
    const team = await setupOrganization();
    const id = team.organization.id;
    // 800 entries, the log's kinds in turn.
    await env.DB.prepare(
      `with recursive n(i) as (select 1 union all select i + 1 from n where i < 800)
       insert into activity_log
         (id, organization_id, seq, is_system, activity, scope, item_id, detail, created_at, hash)
       select printf('%08x', i) || substr(?1, 9), ?1, i, 1, 'updated',
         json_extract(?2, '$[' || cast(i % ?3 as integer) || ']'), 'x',
         '{"name":null,"changes":null,"context":null}',
         strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' minutes'), null
       from n`,
    )
      .bind(id, JSON.stringify(ACTIVITY_SCOPES), ACTIVITY_SCOPES.length)
      .run();
    for (const limit of [1, 2, 10, 100]) {
      const path = `/api/organizations/${id}/activity_log?limit=${limit}&scopes=${ACTIVITY_SCOPES.join(",")}`;
      const response = await api("GET", path, { key: team.key });
      expect(response.body.results.map((entry: { seq: number }) => entry.seq)).toEqual(
        Array.from({ length: limit }, (_, index) => 800 - index),
      );
      expect(response.cost.rowsRead, `limit ${limit}`).toBeLessThanOrEqual(KINDS_BOUND(limit, ACTIVITY_SCOPES.length));
    }
  });

  it("page mode counts at most 10,000 entries and reads no page past them", async () => {
    const first = await api("GET", `${logPath()}?page=1&page_size=100`, { key: organization.key });
    expect(first.body).toMatchObject({ count: 10_000 });
    expect(first.cost.rowsRead).toBeLessThanOrEqual(10_000 + PAGE_BOUND(100));
    const last = await api("GET", `${logPath()}?page=100&page_size=100`, { key: organization.key });
    expect(last.body.results).toHaveLength(100);
    expect(last.body.next).toBeNull();
    const pastRows = await loggedRowsRead(async () => {
      const past = await api("GET", `${logPath()}?page=1000000&page_size=1000`, { key: organization.key });
      expect(past.status).toBe(404);
    });
    expect(pastRows).toBeLessThanOrEqual(10_000 + PAGE_BOUND(1000));
  });

  it("a project's log costs the page too, read with the project in one round trip", async () => {
    await api("GET", "/api/users/@me", { key: member.key }); // the key's cache entry, warm
    const response = await api("GET", `/api/environments/${organization.project.id}/activity_log?limit=100`, {
      key: member.key,
    });
    expect(response.body.results).toHaveLength(100);
    expect(response.cost.queries).toBe(1);
    expect(response.cost.rowsRead).toBeLessThanOrEqual(PAGE_BOUND(100));
  });

  it.each([
    ["a page of one scope", "?limit=20&scope=Dashboard", 20],
    ["one item's history", "?limit=20&scope=OrganizationMembership&item_id=item-7", 20],
    ["an item no entry names", "?limit=20&item_id=no-such-item", 0],
  ])(
    "a project's log filtered as PostHog's clients filter it, %s, costs the page for a member",
    async (_, query, n) => {
      const plain = await addMember(organization.organization.id, MembershipLevel.member);
      await api("GET", "/api/users/@me", { key: plain.key }); // the key's cache entry, warm
      const response = await api("GET", `/api/environments/${organization.project.id}/activity_log${query}`, {
        key: plain.key,
      });
      expect(response.body.results).toHaveLength(n);
      expect(response.cost.rowsRead).toBeLessThanOrEqual(PAGE_BOUND(20));
    },
  );

  it("a project's log with include_organization_scoped=1 costs the page, for a member and for an admin", async () => {
    const plain = await addMember(organization.organization.id, MembershipLevel.member);
    for (const key of [plain.key, member.key]) {
      await api("GET", "/api/users/@me", { key }); // the key's cache entry, warm
      const path = `/api/environments/${organization.project.id}/activity_log?limit=20&include_organization_scoped=1`;
      const response = await api("GET", path, { key });
      expect(response.body.results).toHaveLength(20);
      expect(response.cost.rowsRead).toBeLessThanOrEqual(PAGE_BOUND(20));
    }
  });

  it("include_organization_scoped=1 costs a member a page behind 2,000 entries of the organization alone", async () => {
    const team = await setupOrganization();
    const plain = await addMember(team.organization.id, MembershipLevel.member);
    await seedEntries(team.organization.id, team.project.id, team.owner.id, team.owner.id, 3_000);
    // The newest 2,000 name no project: the organization's own (its members joining, its settings).
    await env.DB.prepare("update activity_log set project_id = null where organization_id = ? and seq > 1000")
      .bind(team.organization.id)
      .run();
    const path = `/api/environments/${team.project.id}/activity_log?limit=20&include_organization_scoped=1`;
    for (const [key, projectIds] of [
      [plain.key, [team.project.id]],
      [team.key, [null]],
    ] as const) {
      await api("GET", "/api/users/@me", { key }); // the key's cache entry, warm
      const response = await api("GET", path, { key });
      expect(response.body.results).toHaveLength(20);
      expect([
        ...new Set(response.body.results.map((entry: { project_id: number | null }) => entry.project_id)),
      ]).toEqual(projectIds);
      expect(response.cost.rowsRead).toBeLessThanOrEqual(PAGE_BOUND(20));
    }
  });

  it("appending an entry reads a handful of rows whatever the log's length", async () => {
    const other = await addMember(organization.organization.id, MembershipLevel.member);
    const response = await api(
      "PATCH",
      `/api/organizations/${organization.organization.id}/members/${other.user.uuid}`,
      {
        key: organization.key,
        body: { level: MembershipLevel.admin },
      },
    );
    expect(response.status).toBe(200);
    expect(response.cost.rowsRead).toBeLessThanOrEqual(50);
    const [latest] = (await api("GET", `${logPath()}?limit=1`, { key: organization.key })).body.results;
    expect(latest).toMatchObject({ seq: ENTRIES + 1, item_id: other.membership.id });
  });
});
