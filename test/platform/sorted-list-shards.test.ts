import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import * as schema from "../../src/db/schema";
import { nowIso, uuid7 } from "../../src/platform/ids";
import { MembershipLevel } from "../../src/platform/levels";
import { addMember, api, db, setupOrganization } from "../support/harness";
import { idsByOwner, shardsThatDisagree, type SortedListShard } from "../support/sorted-list-shards";

/*
 * The lists sorted by a column (an organization's domains, an environment's dashboards) keep their
 * ids in order in shards (sorted_list_shards), so that any offset reads a page. With 10,000
 * dashboards and 6,000 domains, each list spans several shards: every offset at every limit must
 * answer the rows SQL orders there, at the cost of a page, and keep doing so after writes.
 */

const DASHBOARDS = 10_000;
const DOMAINS = 6_000;
const BUDGET = (limit: number) => 3 * limit + 50;

let team: Awaited<ReturnType<typeof setupOrganization>>;
let dashboardsPath = "";
let domainsPath = "";

const dashboardsInOrder = async () =>
  (await db.all<{ id: number }>(sql`select id from dashboards where environment_id = ${team.project.id} and deleted = 0 order by pinned desc, name, id`)).map(({ id }) => id);
const domainsInOrder = async () =>
  (await db.all<{ id: string }>(sql`select id from domains where organization_id = ${team.organization.id} order by domain, id`)).map(({ id }) => id);

async function disagreements() {
  const shards = (list: string, owner: string) =>
    db.all<SortedListShard>(sql`select owner, first_key, size, ids from sorted_list_shards where list = ${list} and owner = ${owner}`);
  const environment = String(team.project.id);
  return [
    ...shardsThatDisagree(idsByOwner((await dashboardsInOrder()).map((id) => ({ owner: environment, id }))), await shards("dashboards", environment), 13),
    ...shardsThatDisagree(idsByOwner((await domainsInOrder()).map((id) => ({ owner: team.organization.id, id }))), await shards("domains", team.organization.id), 39),
  ];
}

/** Pages at offsets around the shards' edges, at each limit: the rows SQL orders there, at the cost of a page. */
async function expectEveryOffset(path: string, ids: (string | number)[]) {
  const count = ids.length;
  for (const limit of [1, 10, 100, 1000]) {
    const offsets = [0, 1, 1023, 2047, 2048, 2049, 4095, 4096, Math.floor(count / 2), count - limit, count - 1, count, count + 5];
    for (const offset of offsets.filter((offset) => offset >= 0)) {
      const page = await api("GET", `${path}?limit=${limit}&offset=${offset}`, { key: team.key });
      const at = `${path} limit ${limit} offset ${offset}`;
      expect(page.status, at).toBe(200);
      expect(page.body.count, at).toBe(count);
      expect(page.body.results.map((row: { id: string | number }) => row.id), at).toEqual(ids.slice(offset, offset + limit));
      expect(page.cost.queries, at).toBe(1);
      expect(page.cost.rowsRead, at).toBeLessThanOrEqual(BUDGET(limit));
    }
  }
}

beforeAll(async () => {
  team = await setupOrganization();
  const now = nowIso();
  dashboardsPath = `/api/environments/${team.project.id}/dashboards`;
  domainsPath = `/api/organizations/${team.organization.id}/domains`;
  // Names that repeat (ties broken by id), differ in case, start alike or are not ASCII; some pinned, some deleted.
  await db.run(sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${DASHBOARDS})
    insert into dashboards (environment_id, name, pinned, deleted, created_by_id, created_at, last_modified_at)
    select ${team.project.id}, case i % 4 when 0 then 'Board ' when 1 then 'board ' when 2 then 'Ébauche ' else '' end || (i * 7919 % 997),
      i % 13 = 0, i % 17 = 0, ${team.owner.id}, ${now}, ${now} from n`);
  await db.run(sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${DOMAINS})
    insert into domains (id, organization_id, domain, verification_challenge, created_at)
    select printf('00000000-0000-7000-8000-%012d', i), ${team.organization.id}, 'd' || (i * 7919 % 6007) || '-' || ${team.organization.id} || '.example.com', 'challenge', ${now} from n`);
  // A warm key: its first request also reads it.
  expect((await api("GET", domainsPath, { key: team.key })).status).toBe(200);
}, 60_000);

describe("lists sorted by a column, in shards", () => {
  it("hold each list's ids in list order, in several shards", async () => {
    expect(await disagreements()).toEqual([]);
    const [shards] = await db.all<{ dashboards: number; domains: number }>(sql`select
      sum(list = 'dashboards' and owner = ${String(team.project.id)}) as dashboards, sum(list = 'domains' and owner = ${team.organization.id}) as domains
      from sorted_list_shards`);
    expect(shards!.dashboards).toBeGreaterThanOrEqual(3);
    expect(shards!.domains).toBeGreaterThanOrEqual(2);
  });

  it("answer every offset at every limit with the rows SQL orders there, at the cost of a page", async () => {
    await expectEveryOffset(dashboardsPath, await dashboardsInOrder());
    await expectEveryOffset(domainsPath, await domainsInOrder());
  }, 60_000);

  it("stay in order through creations, renames, pins, deletions and restores over HTTP, each write at most 50 rows read", async () => {
    /** A write's response, held to its status and to the cost of a single write. */
    const write = async (method: string, path: string, body: Record<string, unknown> | undefined, status: number) => {
      const response = await api(method, path, { key: team.key, body });
      expect(response.status, `${method} ${path}`).toBe(status);
      expect(response.cost.rowsRead, `${method} ${path}`).toBeLessThanOrEqual(50);
      return response;
    };
    const created: number[] = [];
    for (const name of ["", "Board 5", "board 5", "zzz", "Ébauche 996"]) created.push((await write("POST", dashboardsPath, { name }, 201)).body.id);
    const [renamed, pinned, deleted] = created as [number, number, number];
    const patch = (id: number, body: Record<string, unknown>) => write("PATCH", `${dashboardsPath}/${id}`, body, 200);
    await patch(renamed, { name: "Board 500" });
    await patch(pinned, { pinned: true });
    await patch(deleted, { deleted: true });
    const [firstDomain, lastDomain] = [(await domainsInOrder())[0]!, (await domainsInOrder()).at(-1)!];
    await write("DELETE", `${domainsPath}/${firstDomain}`, undefined, 204);
    await write("DELETE", `${domainsPath}/${lastDomain}`, undefined, 204);
    await write("POST", domainsPath, { domain: `aaa-${team.organization.id}.example.com` }, 201);
    await write("POST", domainsPath, { domain: `m-${team.organization.id}.example.com` }, 201);

    expect(await disagreements()).toEqual([]);
    const dashboards = await dashboardsInOrder();
    for (const id of [renamed, pinned]) {
      const offset = dashboards.indexOf(id);
      const page = await api("GET", `${dashboardsPath}?limit=3&offset=${Math.max(0, offset - 1)}`, { key: team.key });
      expect(page.body.results.map((row: { id: number }) => row.id)).toEqual(dashboards.slice(Math.max(0, offset - 1), offset + 2));
    }
    expect(dashboards).not.toContain(deleted);

    await patch(deleted, { deleted: false });
    expect(await disagreements()).toEqual([]);
    expect(await dashboardsInOrder()).toContain(deleted);
  }, 30_000);

  it("are not read for a member whom rules may hide dashboards from: their pages walk from the start and skip what is hidden", async () => {
    const member = await addMember(team.organization.id, MembershipLevel.member);
    const ids = await dashboardsInOrder();
    const hidden = [ids[1]!, ids[4]!, ids[7]!];
    const now = nowIso();
    await db.insert(schema.accessControls).values(
      hidden.map((id) => ({
        id: uuid7(),
        environmentId: team.project.id,
        resource: "dashboard",
        resourceId: String(id),
        organizationMembershipId: member.membership.id,
        accessLevel: "none" as const,
        createdAt: now,
        updatedAt: now,
      })),
    );
    const visible = ids.filter((id) => !hidden.includes(id));
    for (const offset of [0, 3, 10]) {
      const page = await api("GET", `${dashboardsPath}?limit=5&offset=${offset}`, { key: member.key });
      expect(page.status, `at ${offset}`).toBe(200);
      expect(page.body.count, `at ${offset}`).toBe(visible.length);
      expect(page.body.results.map((row: { id: number }) => row.id), `at ${offset}`).toEqual(visible.slice(offset, offset + 5));
    }
  });
});
