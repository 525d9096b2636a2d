import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { and, eq, gt } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../../src/db/schema";
import worker from "../../../src/index";
import { MembershipLevel } from "../../../src/platform/levels";
import {
  addMember,
  api,
  createApiKey,
  db,
  ISO_TIMESTAMP,
  setupOrganization,
  userBasic,
  UUID,
} from "../../support/harness";
import { expectError, INSUFFICIENT_LEVEL, missingScope, NOT_FOUND } from "../../support/error-bodies";

type Organization = Awaited<ReturnType<typeof setupOrganization>>;
type Entry = {
  seq: number;
  activity: string;
  scope: string;
  item_id: string;
  hash: string | null;
  user: { uuid: string } | null;
};

afterEach(() => {
  vi.useRealTimers();
});

const logPath = (organizationId: string) => `/api/organizations/${organizationId}/activity_log`;
const memberPath = (organizationId: string, userUuid: string) =>
  `/api/organizations/${organizationId}/members/${userUuid}`;

async function readLog(organization: Organization, query = "") {
  const response = await api("GET", `${logPath(organization.organization.id)}${query}`, { key: organization.key });
  expect(response.status).toBe(200);
  return response.body as { next: string | null; previous: null; results: Entry[] };
}

const verify = async (organization: Organization) =>
  (await api("GET", `${logPath(organization.organization.id)}/verify`, { key: organization.key })).body;

/** `count` members promoted to admin by the owner: one entry each. */
async function promoteMembers(organization: Organization, count: number) {
  const members = await Promise.all(
    Array.from({ length: count }, () => addMember(organization.organization.id, MembershipLevel.member)),
  );
  for (const member of members) {
    const response = await api("PATCH", memberPath(organization.organization.id, member.user.uuid), {
      key: organization.key,
      body: { level: MembershipLevel.admin },
    });
    expect(response.status).toBe(200);
  }
  return members;
}

const runScheduledPass = (bindings: typeof env = env) =>
  worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), bindings);

describe("the organization's activity log", () => {
  it("records a change with who made it, through which key and request, and what changed", async () => {
    const organization = await setupOrganization();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const response = await api("PATCH", memberPath(organization.organization.id, member.user.uuid), {
      key: organization.key,
      body: { level: MembershipLevel.admin },
    });
    const [key] = await db
      .select()
      .from(schema.personalApiKeys)
      .where(eq(schema.personalApiKeys.userId, organization.owner.id));
    await verify(organization);
    const log = await readLog(organization);
    expect(log).toEqual({
      next: null,
      previous: null,
      results: [
        {
          id: expect.stringMatching(UUID),
          user: userBasic(organization.owner),
          unread: false,
          organization_id: organization.organization.id,
          project_id: null,
          dashboard_id: null,
          was_impersonated: false,
          is_system: false,
          activity: "updated",
          scope: "OrganizationMembership",
          item_id: member.membership.id,
          detail: {
            id: member.membership.id,
            name: member.user.email,
            short_id: null,
            type: null,
            changes: [{ type: "OrganizationMembership", action: "changed", field: "level", before: 1, after: 8 }],
            merge: null,
            trigger: null,
            context: { user_uuid: member.user.uuid },
          },
          created_at: expect.stringMatching(ISO_TIMESTAMP),
          request_id: response.headers.get("X-Request-Id"),
          api_key_id: key!.id,
          service_key: null,
          seq: 1,
          hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        },
      ],
    });
  });

  it("appends nothing for a write that fails or changes nothing", async () => {
    const organization = await setupOrganization();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const path = memberPath(organization.organization.id, member.user.uuid);
    const failures = [
      await api("PATCH", path, { key: organization.key, body: { level: 3 } }),
      await api("PATCH", memberPath(organization.organization.id, organization.owner.uuid), {
        key: organization.key,
        body: { level: 1 },
      }),
      await api("DELETE", memberPath(organization.organization.id, "01a20283-0000-7000-8000-000000000000"), {
        key: organization.key,
      }),
      await api("PATCH", path, { key: member.key, body: { level: MembershipLevel.owner } }),
    ];
    expect(failures.map((response) => response.status)).toEqual([400, 403, 404, 403]);
    expect((await api("PATCH", path, { key: organization.key, body: { level: MembershipLevel.member } })).status).toBe(
      200,
    );
    expect((await readLog(organization)).results).toEqual([]);
  });

  it("is for admins and owners with activity_log:read; another organization's log is not found", async () => {
    const organization = await setupOrganization();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const admin = await addMember(organization.organization.id, MembershipLevel.admin);
    const outsider = await setupOrganization();
    const narrowKey = (await createApiKey(organization.owner, { scopes: ["organization:read"] })).value;
    const readerKey = (await createApiKey(organization.owner, { scopes: ["activity_log:read"] })).value;
    for (const suffix of ["", "/verify"]) {
      const path = `${logPath(organization.organization.id)}${suffix}`;
      expectError(await api("GET", path, { key: member.key }), 403, INSUFFICIENT_LEVEL);
      expectError(await api("GET", path, { key: outsider.key }), 404, NOT_FOUND);
      expectError(await api("GET", path, { key: narrowKey }), 403, missingScope("activity_log:read"));
      expect((await api("GET", path, { key: admin.key })).status).toBe(200);
      expect((await api("GET", path, { key: readerKey })).status).toBe(200);
    }
  });

  it("filters by scope, item, user, activity and time, each answered by an index", async () => {
    const organization = await setupOrganization();
    const admin = await addMember(organization.organization.id, MembershipLevel.admin);
    const [first, second] = await promoteMembers(organization, 2);
    const startedAt = new Date().toISOString();
    const removed = await api("DELETE", memberPath(organization.organization.id, first!.user.uuid), { key: admin.key });
    expect(removed.status).toBe(204);
    const pick = async (query: string) =>
      (await readLog(organization, query)).results.map((entry) => [entry.activity, entry.item_id]);
    expect(await pick("?scope=OrganizationMembership")).toEqual([
      ["left", first!.membership.id],
      ["updated", second!.membership.id],
      ["updated", first!.membership.id],
    ]);
    expect(await pick(`?item_id=${second!.membership.id}`)).toEqual([["updated", second!.membership.id]]);
    expect(await pick(`?user=${admin.user.uuid}`)).toEqual([["left", first!.membership.id]]);
    expect(await pick("?activity=left")).toEqual([["left", first!.membership.id]]);
    expect(await pick(`?after=${startedAt}`)).toEqual([["left", first!.membership.id]]);
    expect(await pick(`?before=${startedAt}`)).toEqual([
      ["updated", second!.membership.id],
      ["updated", first!.membership.id],
    ]);
    expect(await pick("?scope=Dashboard")).toEqual([]);
    const filtered = await api(
      "GET",
      `${logPath(organization.organization.id)}?user=${admin.user.uuid}&scope=OrganizationMembership`,
      {
        key: organization.key,
      },
    );
    expect(filtered.cost).toEqual({ queries: 1, rowsRead: expect.any(Number), rowsWritten: 0 });
    expect(filtered.cost.rowsRead).toBeLessThanOrEqual(10);
  });

  it("answers 400 naming the parameter for a bad filter or cursor", async () => {
    const organization = await setupOrganization();
    const cases: [string, string][] = [
      // A kind not logged here is an empty page, as in PostHog (its MCP server asks for `Insight`).
      [`scope=${"x".repeat(201)}`, "scope"],
      ["activity=exploded", "activity"],
      ["user=not-a-uuid", "user"],
      ["after=yesterday", "after"],
      ["before=2026-13-01", "before"],
      ["cursor=abc", "cursor"],
      [`item_id=${"x".repeat(201)}`, "item_id"],
    ];
    for (const [query, attr] of cases) {
      const response = await api("GET", `${logPath(organization.organization.id)}?${query}`, { key: organization.key });
      expect({ query, status: response.status, attr: response.body.attr, type: response.body.type }).toEqual({
        query,
        status: 400,
        attr,
        type: "validation_error",
      });
    }
    const unlogged = await api("GET", `${logPath(organization.organization.id)}?scope=Nothing`, {
      key: organization.key,
    });
    expect({ status: unlogged.status, results: unlogged.body.results }).toEqual({ status: 200, results: [] });
  });

  it("reads limit and page_size as every list does: larger is capped, anything else is the default", async () => {
    const organization = await setupOrganization();
    await promoteMembers(organization, 3);
    for (const query of ["limit=5000", "limit=0", "limit=abc", "limit=5&limit=7", "page=1&page_size=5000"]) {
      const response = await api("GET", `${logPath(organization.organization.id)}?${query}`, { key: organization.key });
      expect({ query, status: response.status, seqs: response.body.results?.map((entry: Entry) => entry.seq) }).toEqual(
        { query, status: 200, seqs: [3, 2, 1] },
      );
    }
    const capped = await readLog(organization, "?limit=5000");
    expect(capped.next).toBeNull();
  });

  it("pages newest first with a cursor that entries appended meanwhile do not shift", async () => {
    const organization = await setupOrganization();
    await promoteMembers(organization, 5);
    const firstPage = await readLog(organization, "?limit=2");
    expect(firstPage.results.map((entry) => entry.seq)).toEqual([5, 4]);
    await promoteMembers(organization, 2);
    const secondPage = await api("GET", new URL(firstPage.next!).pathname + new URL(firstPage.next!).search, {
      key: organization.key,
    });
    expect(secondPage.body.results.map((entry: Entry) => entry.seq)).toEqual([3, 2]);
    const lastPage = await api("GET", new URL(secondPage.body.next).pathname + new URL(secondPage.body.next).search, {
      key: organization.key,
    });
    expect(lastPage.body).toMatchObject({ next: null, previous: null });
    expect(lastPage.body.results.map((entry: Entry) => entry.seq)).toEqual([1]);
    expect(lastPage.cost.rowsRead).toBeLessThanOrEqual(10);
  });

  it("shows a project's own entries to those who can see the project, under both trees", async () => {
    const organization = await setupOrganization();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    await promoteMembers(organization, 1);
    const [environment] = await db
      .select()
      .from(schema.environments)
      .where(eq(schema.environments.projectId, organization.project.id));
    await db.insert(schema.activityLog).values({
      id: "01a20283-0000-7000-8000-00000000beef",
      organizationId: organization.organization.id,
      seq: 2,
      projectId: organization.project.id,
      userId: organization.owner.id,
      isSystem: false,
      activity: "created",
      scope: "Dashboard",
      itemId: "42",
      detail: JSON.stringify({ name: "Seeded", changes: null, context: null }),
      createdAt: new Date().toISOString(),
    });
    for (const tree of ["environments", "projects"]) {
      const response = await api("GET", `/api/${tree}/${environment!.id}/activity_log`, { key: member.key });
      expect(response.status).toBe(200);
      expect(response.body.results.map((entry: Entry) => [entry.scope, entry.item_id])).toEqual([["Dashboard", "42"]]);
    }
    const outsider = await setupOrganization();
    expectError(
      await api("GET", `/api/environments/${environment!.id}/activity_log`, { key: outsider.key }),
      404,
      NOT_FOUND,
    );
  });

  it("hides entries about a dashboard from a member whom a none rule keeps from it", async () => {
    const organization = await setupOrganization();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const dashboardPath = `/api/environments/${organization.project.id}/dashboards`;
    const secret = await api("POST", dashboardPath, { key: organization.key, body: { name: "Secret plans" } });
    const open = await api("POST", dashboardPath, { key: organization.key, body: { name: "Open" } });
    await db.insert(schema.accessControls).values({
      id: "01a20283-0000-7000-8000-00000000c0de",
      environmentId: organization.project.id,
      resource: "dashboard",
      resourceId: String(secret.body.id),
      organizationMembershipId: member.membership.id,
      accessLevel: "none",
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    });
    const entry = (seq: number, dashboardId: number, name: string) => ({
      id: `01a20283-0000-7000-8000-0000000000${seq}0`,
      organizationId: organization.organization.id,
      seq: 100 + seq,
      projectId: organization.project.id,
      dashboardId,
      userId: organization.owner.id,
      isSystem: false,
      activity: "updated",
      scope: "Dashboard",
      itemId: String(dashboardId),
      detail: JSON.stringify({ name, changes: null, context: null }),
      createdAt: new Date().toISOString(),
    });
    await db
      .insert(schema.activityLog)
      .values([entry(1, secret.body.id, "Secret plans"), entry(2, open.body.id, "Open")]);
    const names = async (key: string) =>
      (
        await api("GET", `/api/environments/${organization.project.id}/activity_log?scope=Dashboard`, { key })
      ).body.results.map((result: { detail: { name: string } }) => result.detail.name);
    // The seeded updates, then the entries of the two creations through the API.
    expect(await names(member.key)).toEqual(["Open", "Open"]);
    expect(await names(organization.key)).toEqual(["Open", "Secret plans", "Open", "Secret plans"]);
  });
});

describe("PostHog's page mode and filters", () => {
  it("numbers pages with page and page_size, answering count and links either side", async () => {
    const organization = await setupOrganization();
    await promoteMembers(organization, 5);
    const first = await readLog(organization, "?page=1&page_size=2");
    expect(first).toMatchObject({ count: 5, previous: null });
    expect(first.results.map((entry) => entry.seq)).toEqual([5, 4]);
    const second = await api("GET", new URL(first.next!).pathname + new URL(first.next!).search, {
      key: organization.key,
    });
    expect(second.body.results.map((entry: Entry) => entry.seq)).toEqual([3, 2]);
    expect(new URL(second.body.previous).searchParams.get("page")).toBeNull();
    const third = await readLog(organization, "?page=3&page_size=2&cursor=4");
    expect(third).toMatchObject({ count: 5, next: null });
    expect(third.results.map((entry) => entry.seq)).toEqual([1]);
    expect(new URL(third.previous!).searchParams.get("page")).toBe("2");
    const past = await api("GET", `${logPath(organization.organization.id)}?page=4&page_size=2`, {
      key: organization.key,
    });
    expectError(past, 404, NOT_FOUND);
    const filtered = await api("GET", `${logPath(organization.organization.id)}?page=1&activity=updated`, {
      key: organization.key,
    });
    expect(filtered.body.count).toBe(5);
    expect(filtered.cost).toEqual({ queries: 1, rowsRead: expect.any(Number), rowsWritten: 0 });
  });

  it("filters by several scopes at once; an unknown scope matches nothing", async () => {
    const organization = await setupOrganization();
    await promoteMembers(organization, 1);
    await api("POST", `/api/environments/${organization.project.id}/dashboards`, {
      key: organization.key,
      body: { name: "Board" },
    });
    const scopes = async (query: string) => (await readLog(organization, query)).results.map((entry) => entry.scope);
    expect(await scopes("?scopes=Dashboard,OrganizationMembership")).toEqual(["Dashboard", "OrganizationMembership"]);
    expect(await scopes("?scopes=Dashboard,Nothing")).toEqual(["Dashboard"]);
    expect(await scopes("?scopes=Nothing")).toEqual([]);
    // More kinds than a statement binds parameters (100): still one list, matching what is known.
    const many = Array.from({ length: 150 }, (_, index) => `Kind${index}`).join(",");
    expect(await scopes(`?scopes=${many},Dashboard`)).toEqual(["Dashboard"]);
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const projectLog = await api("GET", `/api/projects/${organization.project.id}/activity_log?scopes=${many}`, {
      key: member.key,
    });
    expect([projectLog.status, projectLog.body.results]).toEqual([200, []]);
  });

  it("adds organization-wide entries to a project's log with include_organization_scoped=1, for admins", async () => {
    const organization = await setupOrganization();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    await promoteMembers(organization, 1);
    await api("POST", `/api/environments/${organization.project.id}/dashboards`, {
      key: organization.key,
      body: { name: "Board" },
    });
    const scopes = async (key: string, query: string) =>
      (await api("GET", `/api/projects/${organization.project.id}/activity_log${query}`, { key })).body.results.map(
        (entry: Entry) => entry.scope,
      );
    expect(await scopes(organization.key, "")).toEqual(["Dashboard"]);
    expect(await scopes(organization.key, "?include_organization_scoped=1")).toEqual([
      "Dashboard",
      "OrganizationMembership",
    ]);
    expect(await scopes(organization.key, "?include_organization_scoped=1&scopes=OrganizationMembership")).toEqual([
      "OrganizationMembership",
    ]);
    expect(await scopes(member.key, "?include_organization_scoped=1")).toEqual(["Dashboard"]);
    // Any other value, however long, is off: never refused.
    for (const off of ["true", "yes-please".repeat(20), "1&include_organization_scoped=2"]) {
      expect(await scopes(organization.key, `?include_organization_scoped=${off}`)).toEqual(["Dashboard"]);
    }
    const other = await setupOrganization();
    await promoteMembers(other, 1);
    expect(await scopes(organization.key, "?include_organization_scoped=1&page=1")).toHaveLength(2);

    // A key scoped to the project reaches the project, not the organization: none of its own entries.
    const scopedToProject = await createApiKey(organization.owner, { scopedTeams: [organization.project.id] });
    const serviceKey = await api("POST", `/api/organizations/${organization.organization.id}/service_keys`, {
      key: organization.key,
      body: { label: "one project", scopes: ["activity_log:read"], scoped_teams: [organization.project.id] },
    });
    expect(serviceKey.status).toBe(201);
    for (const key of [scopedToProject.value, serviceKey.body.value]) {
      expect(await scopes(key, "?include_organization_scoped=1")).toEqual(["Dashboard"]);
    }
  });
});

describe("the hash chain", () => {
  it("verifies, and says where an edited, deleted or re-hashed entry breaks it", async () => {
    const organization = await setupOrganization();
    await promoteMembers(organization, 4);
    const intact = await verify(organization);
    expect(intact).toEqual({
      valid: true,
      entries: 4,
      first_invalid: null,
      head: { seq: 4, hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    const entryAt = (seq: number) =>
      and(eq(schema.activityLog.organizationId, organization.organization.id), eq(schema.activityLog.seq, seq));

    const [third] = await db.select().from(schema.activityLog).where(entryAt(3));
    await db
      .update(schema.activityLog)
      .set({ detail: third!.detail.replace('"after":8', '"after":15') })
      .where(entryAt(3));
    expect(await verify(organization)).toEqual({ valid: false, entries: 4, first_invalid: 3, head: null });
    await db.update(schema.activityLog).set({ detail: third!.detail }).where(entryAt(3));
    expect((await verify(organization)).valid).toBe(true);

    await db
      .update(schema.activityLog)
      .set({ hash: "0".repeat(64) })
      .where(entryAt(2));
    expect((await verify(organization)).first_invalid).toBe(2);
    await db.delete(schema.activityLog).where(entryAt(2));
    expect(await verify(organization)).toEqual({ valid: false, entries: 3, first_invalid: 2, head: null });
  });

  it("says where an entry was deleted before entries not sealed yet, which no seal passes", async () => {
    const organization = await setupOrganization();
    await promoteMembers(organization, 4);
    const ofOrganization = eq(schema.activityLog.organizationId, organization.organization.id);
    // Entry 2 deleted while 3 and 4 await their seal (as right after two writes).
    await db.delete(schema.activityLog).where(and(ofOrganization, eq(schema.activityLog.seq, 2)));
    await db
      .update(schema.activityLog)
      .set({ hash: null })
      .where(and(ofOrganization, gt(schema.activityLog.seq, 2)));

    expect(await verify(organization)).toEqual({ valid: false, entries: 1, first_invalid: 2, head: null });
  });

  it("seals every entry a request appended after its response: a member with 210 roles removed", async () => {
    const organization = await setupOrganization();
    const organizationId = organization.organization.id;
    const member = await addMember(organizationId, MembershipLevel.member);
    const now = new Date().toISOString();
    const roles = Array.from({ length: 210 }, (_, index) => ({
      id: crypto.randomUUID(),
      organizationId,
      name: `Role ${index}`,
      nameKey: `role ${index}`,
      createdAt: now,
    }));
    for (let start = 0; start < roles.length; start += 10) {
      const some = roles.slice(start, start + 10);
      await db.insert(schema.roles).values(some);
      await db.insert(schema.roleMemberships).values(
        some.map((role) => ({
          id: crypto.randomUUID(),
          roleId: role.id,
          organizationMembershipId: member.membership.id,
          joinedAt: now,
          updatedAt: now,
        })),
      );
    }

    const removed = await api("DELETE", memberPath(organizationId, member.user.uuid), { key: organization.key });

    expect(removed.status).toBe(204);
    const unsealed = async () => {
      const page = await api("GET", `${logPath(organizationId)}?limit=1000`, { key: organization.key });
      expect(page.body.results).toHaveLength(211);
      return (page.body.results as { hash: string | null }[]).filter((entry) => entry.hash === null).length;
    };
    await expect.poll(unsealed, { timeout: 5_000, interval: 50 }).toBe(0);
  });

  it("stays one gapless chain under concurrent writers", async () => {
    const organization = await setupOrganization();
    const members = await Promise.all(
      Array.from({ length: 16 }, () => addMember(organization.organization.id, MembershipLevel.member)),
    );
    const responses = await Promise.all(
      members.map((member) =>
        api("PATCH", memberPath(organization.organization.id, member.user.uuid), {
          key: organization.key,
          body: { level: MembershipLevel.admin },
        }),
      ),
    );
    expect(responses.every((response) => response.status === 200)).toBe(true);
    expect(await verify(organization)).toMatchObject({
      valid: true,
      entries: 16,
      first_invalid: null,
      head: { seq: 16 },
    });
    const seqs = (await readLog(organization)).results.map((entry) => entry.seq);
    expect(seqs).toEqual(Array.from({ length: 16 }, (_, index) => 16 - index));
  });

  it("is sealed by the cron when the seal after the response did not run", async () => {
    const organization = await setupOrganization();
    await promoteMembers(organization, 2);
    const { head } = await verify(organization);
    await db
      .update(schema.activityLog)
      .set({ hash: null })
      .where(eq(schema.activityLog.organizationId, organization.organization.id));
    await runScheduledPass();
    const rows = await db
      .select()
      .from(schema.activityLog)
      .where(eq(schema.activityLog.organizationId, organization.organization.id));
    expect(rows.every((row) => row.hash !== null)).toBe(true);
    expect(await verify(organization)).toEqual({ valid: true, entries: 2, first_invalid: null, head });
  });

  it("prunes past retention in the scheduled handler, and the rest of the chain still verifies", async () => {
    const organization = await setupOrganization();
    await promoteMembers(organization, 3);
    const before = await verify(organization);
    vi.useFakeTimers({ now: Date.now() + 31 * 86_400_000, toFake: ["Date"] });
    await runScheduledPass({ ...env, ACTIVITY_LOG_RETENTION_DAYS: "30" });
    vi.useRealTimers();
    const [anchor] = await db
      .select()
      .from(schema.activityLogAnchors)
      .where(eq(schema.activityLogAnchors.organizationId, organization.organization.id));
    expect(anchor).toMatchObject({ seq: 3, hash: before.head.hash });
    expect((await readLog(organization)).results).toEqual([]);
    await promoteMembers(organization, 2);
    expect(await verify(organization)).toMatchObject({
      valid: true,
      entries: 2,
      first_invalid: null,
      head: { seq: 5 },
    });
    const untouched = await setupOrganization();
    await promoteMembers(untouched, 1);
    await runScheduledPass();
    expect((await verify(untouched)).entries).toBe(1);
  });
});
