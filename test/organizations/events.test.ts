import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { MembershipLevel } from "../../src/platform/levels";
import { promotionEntry } from "../support/activity-log";
import { expectError, INSUFFICIENT_LEVEL, missingScope, NOT_AUTHENTICATED, NOT_FOUND } from "../support/error-bodies";
import {
  addMember,
  api,
  createApiKey,
  createProject,
  db,
  grantProjectAccess,
  setupOrganization,
} from "../support/harness";

type Organization = Awaited<ReturnType<typeof setupOrganization>>;
type Event = {
  type: string;
  seq: number;
  scope: string;
  activity: string;
  item_id: string;
  project_id: number | null;
  detail: { name: string | null };
};
type Feed = { next: string; cursor: string; has_more: boolean; results: Event[] };

afterEach(() => vi.restoreAllMocks());

const feedPath = (organizationId: string, query = "") => `/api/organizations/${organizationId}/events${query}`;
const memberPath = (organization: Organization, userUuid: string) =>
  `/api/organizations/${organization.organization.id}/members/${userUuid}`;

/** Sealed before reading: the feed lists only sealed entries (`verify` seals what is pending). */
async function sealed(organization: Organization) {
  await api("GET", `/api/organizations/${organization.organization.id}/activity_log/verify`, { key: organization.key });
}

async function readFeed(organization: Organization, query = "", key = organization.key) {
  const response = await api("GET", feedPath(organization.organization.id, query), { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as Feed;
}

/** Follows `next` while `has_more`, as a consumer catching up does: every event from `after`. */
async function readAll(organization: Organization, query: string, key = organization.key) {
  const events: Event[] = [];
  let page = await readFeed(organization, query, key);
  events.push(...page.results);
  while (page.has_more) {
    const next = new URL(page.next);
    page = (await api("GET", next.pathname + next.search, { key })).body as Feed;
    events.push(...page.results);
  }
  return { events, cursor: page.cursor };
}

async function promote(organization: Organization, count: number) {
  const members = await Promise.all(
    Array.from({ length: count }, () => addMember(organization.organization.id, MembershipLevel.member)),
  );
  for (const member of members) {
    const response = await api("PATCH", memberPath(organization, member.user.uuid), {
      key: organization.key,
      body: { level: MembershipLevel.admin },
    });
    expect(response.status).toBe(200);
  }
  return members;
}

describe("the events feed", () => {
  it("lists the organization's events oldest first, as webhooks deliver them, with a cursor to poll", async () => {
    const organization = await setupOrganization();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const response = await api("PATCH", memberPath(organization, member.user.uuid), {
      key: organization.key,
      body: { level: MembershipLevel.admin },
    });
    await sealed(organization);

    const feed = await readFeed(organization);

    const base = `http://localhost${feedPath(organization.organization.id)}`;
    const entry = await promotionEntry(response, organization, member);
    expect(feed).toEqual({
      next: `${base}?after=1`,
      cursor: "1",
      has_more: false,
      results: [
        { type: "OrganizationMembership.updated", ...entry, seq: 1, hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      ],
    });
    // Nothing new yet: the same cursor, nothing listed; then what came since.
    expect(await readFeed(organization, "?after=1")).toEqual({
      next: `${base}?after=1`,
      cursor: "1",
      has_more: false,
      results: [],
    });
    await promote(organization, 2);
    await sealed(organization);
    const since = await readFeed(organization, "?after=1");
    expect(since.results.map((event) => event.seq)).toEqual([2, 3]);
    expect(since).toMatchObject({ cursor: "3", has_more: false, next: `${base}?after=3` });
  });

  it("pages by `limit`, each answer after the cursor of the one before, in seq order", async () => {
    const organization = await setupOrganization();
    await promote(organization, 5);
    await sealed(organization);
    const first = await readFeed(organization, "?limit=2");
    expect(first.results.map((event) => event.seq)).toEqual([1, 2]);
    expect(first).toMatchObject({ cursor: "2", has_more: true });
    expect(new URL(first.next).search).toBe("?limit=2&after=2");
    const { events, cursor } = await readAll(organization, "?limit=2");
    expect(events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(cursor).toBe("5");
  });

  it("from a cursor, equals the webhook stream for the same events", async () => {
    const organization = await setupOrganization();
    await promote(organization, 1);
    await sealed(organization);
    const { cursor } = await readAll(organization, "");
    const received: string[] = [];
    // This organization's receiver alone: other files' deliveries may run in this runtime meanwhile.
    const url = `http://receiver.test/feed/${organization.organization.id}`;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const request = new Request(input, init);
      if (request.url === url) received.push(await request.text());
      return new Response("ok");
    });
    const events = ["OrganizationMembership.updated", "OrganizationMembership.left"];
    const webhook = await api("POST", `/api/organizations/${organization.organization.id}/webhooks`, {
      key: organization.key,
      body: { url, events },
    });
    expect(webhook.status).toBe(201);
    const [kept, removed] = await promote(organization, 2);
    await api("PATCH", `/api/organizations/${organization.organization.id}`, {
      key: organization.key,
      body: { name: "Renamed" },
    });
    expect((await api("DELETE", memberPath(organization, removed!.user.uuid), { key: organization.key })).status).toBe(
      204,
    );
    await api("PATCH", memberPath(organization, kept!.user.uuid), {
      key: organization.key,
      body: { level: MembershipLevel.member },
    });
    await sealed(organization);
    const deliveries = `/api/organizations/${organization.organization.id}/webhooks/${webhook.body.id}/deliveries`;
    await expect
      .poll(
        async () =>
          (await api("GET", deliveries, { key: organization.key })).body.results.filter(
            (d: { status: string }) => d.status === "succeeded",
          ).length,
        { timeout: 5_000 },
      )
      .toBe(4);

    const feed = await readAll(organization, `?after=${cursor}&events=${events.join(",")}`);

    const stream = received.map((body) => JSON.parse(body) as Event).sort((a, b) => a.seq - b.seq);
    expect(stream.map((event) => event.type)).toEqual([
      "OrganizationMembership.updated",
      "OrganizationMembership.updated",
      "OrganizationMembership.left",
      "OrganizationMembership.updated",
    ]);
    expect(feed.events).toEqual(stream);
  });

  it("shows a member what project logs show: own projects' entries, no hidden dashboard nor organization", async () => {
    const organization = await setupOrganization();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const hiddenProject = await createProject(organization.organization.id, { name: "Private", access_control: true });
    await grantProjectAccess(hiddenProject.id, member.membership.id, "none");
    const dashboards = (projectId: number) => `/api/environments/${projectId}/dashboards`;
    const open = await api("POST", dashboards(organization.project.id), {
      key: organization.key,
      body: { name: "Open" },
    });
    const secret = await api("POST", dashboards(organization.project.id), {
      key: organization.key,
      body: { name: "Secret" },
    });
    await api("POST", dashboards(hiddenProject.id), { key: organization.key, body: { name: "Elsewhere" } });
    const now = new Date().toISOString();
    await db.insert(schema.accessControls).values({
      id: crypto.randomUUID(),
      environmentId: organization.project.id,
      resource: "dashboard",
      resourceId: String(secret.body.id),
      organizationMembershipId: member.membership.id,
      accessLevel: "none",
      createdAt: now,
      updatedAt: now,
    });
    await promote(organization, 1);
    await sealed(organization);

    const asMember = await readAll(organization, "", member.key);
    const asOwner = await readAll(organization, "");

    expect(asMember.events.map((event) => [event.type, event.detail.name])).toEqual([["Dashboard.created", "Open"]]);
    const projectLog = await api("GET", `/api/environments/${organization.project.id}/activity_log`, {
      key: member.key,
    });
    expect(projectLog.body.results.map((entry: { id: string }) => entry.id)).toEqual(
      asMember.events.map((event) => (event as unknown as { id: string }).id),
    );
    expect(asOwner.events.map((event) => [event.type, event.detail.name])).toEqual([
      ["Dashboard.created", "Open"],
      ["Dashboard.created", "Secret"],
      ["Dashboard.created", "Elsewhere"],
      ["OrganizationMembership.updated", expect.any(String)],
    ]);
    // The cursor moves past what the member does not see, so their next poll starts after it.
    expect(asMember.cursor).toBe(asOwner.cursor);
    expect(open.status).toBe(201);
  });

  it("hands back, past every entry, a cursor it accepts back", async () => {
    const { organization, key } = await setupOrganization();
    const first = await api("GET", `${feedPath(organization.id)}?after=999999999999999`, { key });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ cursor: "999999999999999", has_more: false });
    const next = new URL(first.body.next as string);
    expect((await api("GET", next.pathname + next.search, { key })).status).toBe(200);
  });

  it("refuses bad input naming the parameter, and other organizations' and keys' callers", async () => {
    const organization = await setupOrganization();
    const path = feedPath(organization.organization.id);
    for (const [query, attr] of [
      ["?events=Dashboard.exploded", "events"],
      ["?events=Dashboard.created,", "events"],
      ["?after=-1", "after"],
      ["?after=abc", "after"],
      // Past 2^53 a number loses digits: the cursor handed back would not be the one given.
      ["?after=9999999999999999", "after"],
      ["?limit=0", "limit"],
      ["?limit=1001", "limit"],
    ]) {
      const response = await api("GET", `${path}${query}`, { key: organization.key });
      expect({ query, status: response.status, type: response.body.type, attr: response.body.attr }).toEqual({
        query,
        status: 400,
        type: "validation_error",
        attr,
      });
    }
    expectError(await api("GET", path), 401, NOT_AUTHENTICATED);
    const outsider = await setupOrganization();
    expectError(await api("GET", path, { key: outsider.key }), 404, NOT_FOUND);
    const noScope = await createApiKey(organization.owner, { scopes: ["organization:read"] });
    expectError(await api("GET", path, { key: noScope.value }), 403, missingScope("activity_log:read"));
    // Not a level check: a member reads their share (above); an org-level log stays admin-only.
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    expectError(
      await api("GET", `/api/organizations/${organization.organization.id}/activity_log`, { key: member.key }),
      403,
      INSUFFICIENT_LEVEL,
    );
    expect((await api("GET", path, { key: member.key })).status).toBe(200);
  });

  it("starts after the retention anchor when the cursor points into what was pruned", async () => {
    const organization = await setupOrganization();
    await promote(organization, 3);
    await sealed(organization);
    await db.insert(schema.activityLogAnchors).values({
      organizationId: organization.organization.id,
      seq: 2,
      hash: "0".repeat(64),
      prunedAt: new Date().toISOString(),
    });
    const feed = await readFeed(organization, "?after=0&limit=1");
    expect(feed.results.map((event) => event.seq)).toEqual([3]);
    expect(feed).toMatchObject({ cursor: "3" });
  });
});

describe("the events feed of a long log", () => {
  it("reads a page from any cursor: an index seek and limit + 1 entries", async () => {
    const organization = await setupOrganization();
    const other = await setupOrganization();
    for (const target of [organization, other]) {
      await env.DB.prepare(
        `with recursive n(i) as (select 1 union all select i + 1 from n where i < 10000)
         insert into activity_log
           (id, organization_id, seq, user_id, is_system, activity, scope, item_id, detail, created_at, hash)
         select printf('%08x', i) || substr(?1, 9), ?1, i, ?2, 0,
           case when i % 100 = 0 then 'created' else 'updated' end,
           case when i % 100 = 0 then 'Dashboard' else 'Organization' end,
           'item', '{"name":null,"changes":null,"context":null}',
           strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' minutes'), 'sealed'
         from n`,
      )
        .bind(target.organization.id, target.owner.id)
        .run();
    }
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    // Keys warm in their cache, as a client's are after its first request.
    for (const key of [organization.key, member.key]) await api("GET", "/api/users/@me", { key });
    for (const [query, key, listed] of [
      ["?after=5000&limit=100", organization.key, 100],
      ["?after=9950&limit=100", organization.key, 50],
      ["?after=5000&limit=100&events=Dashboard.created", organization.key, 1],
      ["?after=5000&limit=100", member.key, 0],
    ] as const) {
      const response = await api("GET", feedPath(organization.organization.id, query), { key });
      expect(response.body.results, query).toHaveLength(listed);
      expect(response.cost.queries, query).toBe(1);
      // The page and its users, the membership, the anchor and the range's end: no scan of the log.
      expect(response.cost.rowsRead, query).toBeLessThanOrEqual(2 * 101 + 20);
    }
  });
});
