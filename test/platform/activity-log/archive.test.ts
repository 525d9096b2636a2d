import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { asc, eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { verifyExport } from "../../../scripts/activity-export-chain.mjs";
import * as schema from "../../../src/db/schema";
import worker from "../../../src/index";
import { archiveActivityLog, archiveCutoff } from "../../../src/platform/activity-log/archive";
import { sealChain } from "../../../src/platform/activity-log/chain";
import { pruneArchivedSegments } from "../../../src/platform/activity-log/retention";
import { MembershipLevel } from "../../../src/platform/levels";
import { expectError, NOT_FOUND } from "../../support/error-bodies";
import {
  firstEntryOf,
  lastEntryOf,
  seedEntries as seedEntriesOf,
  seedEntriesWithTimedIds,
} from "../../support/activity-log";
import { addMember, api, createProject, createUser, db, setupOrganization } from "../../support/harness";
import { beforeWrites } from "../../support/races";

type Organization = Awaited<ReturnType<typeof setupOrganization>>;

const DAY = 86_400_000;
const logPath = (organization: Organization) => `/api/organizations/${organization.organization.id}/activity_log`;

/** `count` sealed entries, one every `spacing` ms up to `newestAgo` ms ago (the oldest first). */
const seedEntries = (organization: Organization, count: number, spacing: number, newestAgo = 60_000) =>
  seedEntriesOf(organization.organization.id, count, spacing, newestAgo);

const runCron = () => worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
const verify = async (organization: Organization) =>
  (await api("GET", `${logPath(organization)}/verify`, { key: organization.key })).body;

const keptEntries = (organization: Organization) =>
  db
    .select({ seq: schema.activityLog.seq, createdAt: schema.activityLog.createdAt })
    .from(schema.activityLog)
    .where(eq(schema.activityLog.organizationId, organization.organization.id));

const segmentsOf = (organization: Organization) =>
  db
    .select()
    .from(schema.activityLogSegments)
    .where(eq(schema.activityLogSegments.organizationId, organization.organization.id))
    .orderBy(asc(schema.activityLogSegments.firstSeq));

const objectsOf = async (organization: Organization) =>
  (await env.ACTIVITY_LOG_ARCHIVE.list({ prefix: `${organization.organization.id}/` })).objects.map(
    (object) => object.key,
  );

/** Every page of the log, `limit` entries a page, following `next`. */
async function allPages(organization: Organization, limit: number) {
  const pages: unknown[] = [];
  let path: string | null = `${logPath(organization)}?limit=${limit}`;
  while (path) {
    const response = await api("GET", path, { key: organization.key });
    expect(response.status).toBe(200);
    pages.push(...response.body.results);
    path = response.body.next ? new URL(response.body.next).pathname + new URL(response.body.next).search : null;
  }
  return pages;
}

/** An export of the range, run to its end, and its file. */
async function exported(organization: Organization, from: string, to: string) {
  const created = await api("POST", `${logPath(organization)}/exports`, {
    key: organization.key,
    body: { format: "ndjson", from, to },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  const path = `${logPath(organization)}/exports/${created.body.id}`;
  await expect
    .poll(async () => (await api("GET", path, { key: organization.key })).body.status, { timeout: 30_000 })
    .toBe("succeeded");
  return (await api("GET", `${path}/download`, { key: organization.key })).text;
}

/** The whole events feed, `limit` events a read, from the start, following `cursor`. */
async function wholeFeed(organization: Organization, limit: number, key = organization.key) {
  const events: unknown[] = [];
  let cursor = "0";
  for (;;) {
    const response = await api(
      "GET",
      `/api/organizations/${organization.organization.id}/events?after=${cursor}&limit=${limit}`,
      { key },
    );
    expect(response.status).toBe(200);
    events.push(...response.body.results);
    cursor = response.body.cursor;
    if (!response.body.has_more) return { events, cursor };
  }
}

describe("activity-log archive", () => {
  it("records no segment when retention prunes its first entries as it writes (two cron passes at once)", async () => {
    const organization = await setupOrganization();
    const organizationId = organization.organization.id;
    // Three entries of one day, 40 days ago, a second apart.
    await seedEntries(organization, 3, 1000, 40 * DAY);
    // Another pass's retention deletes the first entry, and moves the anchor past it, while this
    // one's archive writes its object.
    const bucket = new Proxy(env.ACTIVITY_LOG_ARCHIVE, {
      get(target, property) {
        if (property !== "put") return Reflect.get(target, property).bind(target);
        return async (...args: Parameters<R2Bucket["put"]>) => {
          const first = await firstEntryOf(organizationId);
          await db.batch([
            db.delete(schema.activityLog).where(eq(schema.activityLog.id, first.id)),
            db
              .insert(schema.activityLogAnchors)
              .values({ organizationId, seq: first.seq, hash: first.hash!, prunedAt: new Date().toISOString() })
              .onConflictDoUpdate({
                target: schema.activityLogAnchors.organizationId,
                set: { seq: first.seq, hash: first.hash! },
              }),
          ]);
          return target.put(...args);
        };
      },
    });
    expect(await archiveActivityLog(db, bucket, 30)).toBe(0);
    expect(await segmentsOf(organization)).toEqual([]);
    expect(await objectsOf(organization)).toEqual([]);
    expect((await keptEntries(organization)).map((entry) => entry.seq)).toEqual([2, 3]);
    expect(await verify(organization)).toMatchObject({ valid: true, first_invalid: null });
    // The next pass archives what retention left.
    expect(await archiveActivityLog(db, env.ACTIVITY_LOG_ARCHIVE, 30)).toBe(2);
    expect(await verify(organization)).toMatchObject({ valid: true, first_invalid: null });
  });

  it("moves entries past the hot window into segments in bounded runs; reads and the chain span both", async () => {
    const organization = await setupOrganization();
    // 120 entries over 60 days: two a day, about 30 days of them past the 30-day window.
    await seedEntries(organization, 120, DAY / 2);
    const listBefore = (await api("GET", `${logPath(organization)}?limit=1000`, { key: organization.key })).body;
    const pagesBefore = await allPages(organization, 7);
    const filteredBefore = (
      await api("GET", `${logPath(organization)}?limit=5&before=${new Date(Date.now() - 40 * DAY).toISOString()}`, {
        key: organization.key,
      })
    ).body.results;
    const verdictBefore = await verify(organization);
    expect(verdictBefore).toMatchObject({ valid: true, entries: 120 });
    const feedBefore = await wholeFeed(organization, 9);
    expect(feedBefore.events).toHaveLength(120);

    await runCron();
    // One segment per UTC day, at most 20 a run.
    expect(await segmentsOf(organization)).toHaveLength(20);
    await runCron();
    const cutoff = archiveCutoff(30, new Date());
    const kept = await keptEntries(organization);
    expect(kept.every((entry) => entry.createdAt >= cutoff)).toBe(true);
    const segments = await segmentsOf(organization);
    expect(segments.length).toBeGreaterThan(20);
    expect(segments.reduce((sum, segment) => sum + segment.entries, 0) + kept.length).toBe(120);
    expect(segments.every((segment) => segment.lastCreatedAt < cutoff)).toBe(true);
    expect((await objectsOf(organization)).sort()).toEqual(segments.map((segment) => segment.key).sort());

    // The same bodies, in one page or page by page, filtered too; the chain verifies across.
    expect((await api("GET", `${logPath(organization)}?limit=1000`, { key: organization.key })).body).toEqual(
      listBefore,
    );
    expect(await allPages(organization, 7)).toEqual(pagesBefore);
    expect(
      (
        await api("GET", `${logPath(organization)}?limit=5&before=${new Date(Date.now() - 40 * DAY).toISOString()}`, {
          key: organization.key,
        })
      ).body.results,
    ).toEqual(filteredBefore);
    expect(await verify(organization)).toEqual(verdictBefore);
    expect(await wholeFeed(organization, 9)).toEqual(feedBefore);

    // A new entry follows the archived ones in the chain.
    await api("PATCH", `/api/organizations/${organization.organization.id}`, {
      key: organization.key,
      body: { name: "Renamed" },
    });
    expect(await verify(organization)).toMatchObject({ valid: true, entries: 121, head: { seq: 121 } });
  }, 60_000);

  it("reads a page of archived entries by more users than a statement binds parameters (100)", async () => {
    const organization = await setupOrganization();
    // One a second, 40 days ago: one segment of one day holds them all.
    await seedEntries(organization, 120, 1000, 40 * DAY);
    const users = await Promise.all(Array.from({ length: 120 }, () => createUser()));
    await env.DB.batch(
      users.map((user, index) =>
        env.DB.prepare("update activity_log set user_id = ?1 where organization_id = ?2 and seq = ?3").bind(
          user.id,
          organization.organization.id,
          index + 1,
        ),
      ),
    );
    const listBefore = (await api("GET", `${logPath(organization)}?limit=1000`, { key: organization.key })).body;
    expect(new Set(listBefore.results.map((entry: { user: { uuid: string } }) => entry.user.uuid)).size).toBe(120);
    await runCron();
    await runCron();
    expect(await segmentsOf(organization)).toHaveLength(1);
    const listAfter = await api("GET", `${logPath(organization)}?limit=1000`, { key: organization.key });
    expect([listAfter.status, listAfter.body]).toEqual([200, listBefore]);
  }, 60_000);

  it("continues the chain after every kept entry was archived", async () => {
    const organization = await setupOrganization();
    await seedEntries(organization, 10, DAY, 40 * DAY);
    await runCron();
    expect(await keptEntries(organization)).toHaveLength(0);
    await api("PATCH", `/api/organizations/${organization.organization.id}`, {
      key: organization.key,
      body: { name: "Renamed" },
    });
    const [newest] = (await api("GET", logPath(organization), { key: organization.key })).body.results;
    expect(newest).toMatchObject({ seq: 11, activity: "updated" });
    expect(await verify(organization)).toMatchObject({ valid: true, entries: 11, head: { seq: 11 } });
  });

  it("writes the same object again when a pass stopped after its put, and no duplicate", async () => {
    const organization = await setupOrganization();
    await seedEntries(organization, 20, DAY * 3);
    const bucket = env.ACTIVITY_LOG_ARCHIVE;
    // A pass that stops right after its first put: the object is there, the entries still here.
    const stopping = Object.assign(Object.create(bucket) as R2Bucket, {
      put: async (...args: Parameters<R2Bucket["put"]>) => {
        await bucket.put(...args);
        throw new Error("stopped");
      },
    });
    await expect(archiveActivityLog(db, stopping, 30)).rejects.toThrow("stopped");
    const [written] = await objectsOf(organization);
    const firstText = await (await bucket.get(written!))!.text();
    expect(await segmentsOf(organization)).toHaveLength(0);
    expect(await keptEntries(organization)).toHaveLength(20);

    await runCron();
    await runCron();
    const segments = await segmentsOf(organization);
    expect(segments.length).toBeGreaterThan(0);
    expect((await objectsOf(organization)).sort()).toEqual(segments.map((segment) => segment.key).sort());
    expect(segments[0]!.key).toBe(written);
    expect(await (await bucket.get(written!))!.text()).toBe(firstText);
    expect(await verify(organization)).toMatchObject({ valid: true, entries: 20 });
  });

  it("detects a segment altered in the bucket", async () => {
    const organization = await setupOrganization();
    await seedEntries(organization, 20, DAY * 3);
    await runCron();
    const [segment, second] = await segmentsOf(organization);
    const text = await (await env.ACTIVITY_LOG_ARCHIVE.get(second!.key))!.text();
    const lines = text.split("\n");
    // The entry's detail changed, its hash left as it was.
    const altered = JSON.parse(lines[0]!) as { seq: number; detail: string };
    altered.detail = altered.detail.replace("entry", "altered");
    lines[0] = JSON.stringify(altered);
    await env.ACTIVITY_LOG_ARCHIVE.put(second!.key, lines.join("\n"));
    expect(await verify(organization)).toMatchObject({ valid: false, first_invalid: altered.seq, head: null });

    // An object changed otherwise (a byte added) is detected at its segment.
    await env.ACTIVITY_LOG_ARCHIVE.put(second!.key, text);
    expect((await verify(organization)).valid).toBe(true);
    const firstText = await (await env.ACTIVITY_LOG_ARCHIVE.get(segment!.key))!.text();
    await env.ACTIVITY_LOG_ARCHIVE.put(segment!.key, `${firstText} `);
    expect(await verify(organization)).toMatchObject({ valid: false, first_invalid: segment!.firstSeq });
  });

  it("exports the same file across the archive and the database, verifying as one chain", async () => {
    const organization = await setupOrganization();
    await seedEntries(organization, 90, DAY / 2);
    // Up to now: each export appends its own entry, which a later export must not take in.
    const all = ["2020-01-01T00:00:00Z", new Date().toISOString()] as const;
    // A range from inside an archived day to the hot window.
    const straddling = [
      new Date(Date.now() - 40 * DAY + DAY / 4).toISOString(),
      new Date(Date.now() - 10 * DAY).toISOString(),
    ] as const;
    const wholeBefore = await exported(organization, ...all);
    const rangeBefore = await exported(organization, ...straddling);

    await runCron();
    expect((await segmentsOf(organization)).length).toBeGreaterThan(10);
    const whole = await exported(organization, ...all);
    expect(whole).toBe(wholeBefore);
    expect(await exported(organization, ...straddling)).toBe(rangeBefore);
    expect(await verifyExport(whole, { contiguous: true })).toMatchObject({ valid: true, entries: 90 });
  }, 60_000);

  it("is deleted for good past retention: objects and rows go, the anchor moves, the rest verifies", async () => {
    const organization = await setupOrganization();
    // 100 entries over 100 days: about 70 archived, then retention lowered to 60 days.
    await seedEntries(organization, 100, DAY);
    await runCron();
    await runCron();
    const archived = await segmentsOf(organization);
    expect(archived.length).toBeGreaterThan(30);
    const headBefore = (await verify(organization)).head;
    await api("PATCH", `/api/organizations/${organization.organization.id}`, {
      key: organization.key,
      body: { activity_log_retention_days: 60 },
    });

    await runCron();
    const cutoff = new Date(Date.now() - 60 * DAY).toISOString();
    const remaining = await segmentsOf(organization);
    expect(remaining.length).toBeGreaterThan(0);
    expect(remaining.every((segment) => segment.lastCreatedAt >= cutoff)).toBe(true);
    expect((await objectsOf(organization)).sort()).toEqual(remaining.map((segment) => segment.key).sort());
    const [anchor] = await db
      .select()
      .from(schema.activityLogAnchors)
      .where(eq(schema.activityLogAnchors.organizationId, organization.organization.id));
    expect(anchor).toMatchObject({ seq: remaining[0]!.firstSeq - 1 });
    const kept = await keptEntries(organization);
    expect(await verify(organization)).toMatchObject({
      valid: true,
      entries: remaining.reduce((sum, segment) => sum + segment.entries, 0) + kept.length,
      head: { seq: 101 },
    });
    expect(headBefore).toMatchObject({ seq: 100 });
    const oldest = (await allPages(organization, 1000)).at(-1) as { seq: number };
    expect(oldest.seq).toBe(remaining[0]!.firstSeq);
  }, 60_000);

  it("verifies when a pruning run stops right after deleting an object, and the next run ends the step", async () => {
    const organization = await setupOrganization();
    await seedEntries(organization, 100, DAY);
    await runCron();
    await runCron();
    const [oldest] = await segmentsOf(organization);
    // The bucket itself, whose delete stops the run once the object is gone (as a run cut short would).
    const stopping = Object.create(env.ACTIVITY_LOG_ARCHIVE, {
      delete: {
        value: async (key: string) => {
          await env.ACTIVITY_LOG_ARCHIVE.delete(key);
          throw new Error("run stopped");
        },
      },
    }) as R2Bucket;

    await expect(pruneArchivedSegments(db, stopping, 60)).rejects.toThrow("run stopped");
    expect(await objectsOf(organization)).not.toContain(oldest!.key);
    expect(await verify(organization)).toMatchObject({ valid: true, first_invalid: null });

    await pruneArchivedSegments(db, env.ACTIVITY_LOG_ARCHIVE, 60);
    expect((await segmentsOf(organization)).map((segment) => segment.key)).not.toContain(oldest!.key);
    expect((await objectsOf(organization)).sort()).toEqual(
      (await segmentsOf(organization)).map((segment) => segment.key).sort(),
    );
    expect(await verify(organization)).toMatchObject({ valid: true, first_invalid: null });
  }, 60_000);

  it("reports no break when retention deletes a segment while verify reads it", async () => {
    const organization = await setupOrganization();
    const organizationId = organization.organization.id;
    // Three entries 40 days old, archived past a 30-day hot window, then three kept here.
    await seedEntries(organization, 3, 1000, 40 * DAY);
    await archiveActivityLog(db, env.ACTIVITY_LOG_ARCHIVE, 30);
    expect(await segmentsOf(organization)).toMatchObject([{ firstSeq: 1, lastSeq: 3 }]);
    for (const name of ["One", "Two", "Three"]) {
      const patched = await api("PATCH", `/api/organizations/${organizationId}`, {
        key: organization.key,
        body: { name },
      });
      expect(patched.status).toBe(200);
    }
    await expect.poll(async () => (await verify(organization)).valid).toBe(true);
    // Kept 35 days now: the segment is past retention, and retention runs between verify's read of
    // the segments and its read of the object.
    await db
      .update(schema.organizations)
      .set({ activityLogRetentionDays: 35 })
      .where(eq(schema.organizations.id, organizationId));
    const get = env.ACTIVITY_LOG_ARCHIVE.get.bind(env.ACTIVITY_LOG_ARCHIVE);
    let pruned = 0;
    vi.spyOn(env.ACTIVITY_LOG_ARCHIVE, "get").mockImplementation((async (key: string, options?: R2GetOptions) => {
      if (pruned === 0) pruned = await pruneArchivedSegments(db, env.ACTIVITY_LOG_ARCHIVE, 365);
      return get(key, options);
    }) as R2Bucket["get"]);
    const verdict = await verify(organization);
    vi.restoreAllMocks();

    expect(pruned).toBe(1);
    expect(await segmentsOf(organization)).toEqual([]);
    expect(verdict).toEqual({ valid: true, entries: 3, first_invalid: null, head: (await verify(organization)).head });
    expect(verdict.head).toMatchObject({ seq: 6 });
  });

  it("shows a member the archived events it showed before: their projects' entries only", async () => {
    const organization = await setupOrganization();
    await seedEntries(organization, 60, DAY);
    // Half of the entries about the organization's project, which a member sees.
    await env.DB.prepare("update activity_log set project_id = ?1 where organization_id = ?2 and seq % 2 = 0")
      .bind(organization.project.id, organization.organization.id)
      .run();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const before = await wholeFeed(organization, 7, member.key);
    expect(before.events).toHaveLength(30);

    await runCron();
    // Part archived (the run's 20 segments are shared with the organizations of the tests above).
    expect((await segmentsOf(organization)).length).toBeGreaterThan(0);
    expect(await keptEntries(organization)).not.toHaveLength(0);
    expect(await wholeFeed(organization, 7, member.key)).toEqual(before);
  }, 60_000);
});

/** A UUIDv7 of the time `ms`, as the Worker mints an entry's id (`n`: its counter, unique per seed). */
const uuid7At = (ms: number, n: number) => {
  const random = crypto.randomUUID().replaceAll("-", "").slice(-15);
  const hex = `${ms.toString(16).padStart(12, "0")}7${n.toString(16).padStart(3, "0")}8${random}`;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

type Page = { results: unknown[] };

type ProjectLogWorld = {
  organization: Organization;
  member: Awaited<ReturnType<typeof addMember>>;
  open: number;
  secret: number;
  otherProject: number;
};

/** The kinds of entry a project's log tells apart: its dashboards (one hidden from the member), others. */
function projectLogEntry(world: ProjectLogWorld, i: number) {
  const project = world.organization.project.id;
  const kinds = [
    { projectId: null, dashboardId: null, scope: "Organization", activity: "updated", itemId: "org" },
    { projectId: project, dashboardId: world.open, scope: "Dashboard", activity: "updated", itemId: world.open },
    { projectId: project, dashboardId: world.secret, scope: "Dashboard", activity: "updated", itemId: world.secret },
    { projectId: project, dashboardId: null, scope: "BatchExport", activity: "created", itemId: `export-${i}` },
    { projectId: project, dashboardId: world.open, scope: "DashboardTile", activity: "moved", itemId: world.open },
    { projectId: world.otherProject, dashboardId: null, scope: "Project", activity: "updated", itemId: "other" },
  ];
  return kinds[i % kinds.length]!;
}

/**
 * `count` sealed entries of every kind, one every `spacing` ms up to a minute ago, with ids minted
 * at their times as the Worker mints them; the organization's log holds nothing else.
 */
async function seedProjectLog(world: ProjectLogWorld, count: number, spacing: number) {
  const organizationId = world.organization.organization.id;
  await env.DB.prepare("delete from activity_log where organization_id = ?").bind(organizationId).run();
  const newest = Date.now() - 60_000;
  const insert = env.DB.prepare(
    `insert into activity_log (id, organization_id, seq, project_id, dashboard_id, user_id, is_system, activity,
       scope, item_id, detail, created_at, hash)
     values (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, null)`,
  );
  const rows = Array.from({ length: count }, (_, index) => {
    const seq = index + 1;
    const time = newest - (count - seq) * spacing;
    const kind = projectLogEntry(world, seq);
    const userId = seq % 4 === 0 ? world.member.user.id : world.organization.owner.id;
    return insert.bind(
      uuid7At(time, seq),
      organizationId,
      seq,
      kind.projectId,
      kind.dashboardId,
      userId,
      kind.activity,
      kind.scope,
      String(kind.itemId),
      JSON.stringify({ name: `entry ${seq}`, changes: null, context: null }),
      new Date(time).toISOString(),
    );
  });
  await env.DB.batch(rows);
  while ((await sealChain(db, organizationId)) > 0);
}

/** Two dashboards in the first project, the second hidden from a member, and a second project. */
async function projectLogWorld(): Promise<ProjectLogWorld> {
  const organization = await setupOrganization();
  const member = await addMember(organization.organization.id, MembershipLevel.member);
  const dashboard = async (name: string) =>
    (
      await api("POST", `/api/environments/${organization.project.id}/dashboards`, {
        key: organization.key,
        body: { name },
      })
    ).body.id as number;
  const open = await dashboard("Open");
  const secret = await dashboard("Secret");
  const now = new Date().toISOString();
  await db.insert(schema.accessControls).values({
    id: crypto.randomUUID(),
    environmentId: organization.project.id,
    resource: "dashboard",
    resourceId: String(secret),
    organizationMembershipId: member.membership.id,
    accessLevel: "none",
    createdAt: now,
    updatedAt: now,
  });
  const otherProject = await createProject(organization.organization.id, { name: "Other" });
  return { organization, member, open, secret, otherProject: otherProject.id };
}

/** Every answer reached from `path` by following `next`: status and body of each. */
async function answersFrom(path: string, key: string) {
  const answers: { status: number; body: unknown }[] = [];
  let next: string | null = path;
  while (next) {
    const response = await api("GET", next, { key });
    answers.push({ status: response.status, body: response.body });
    const link = response.status === 200 ? (response.body.next as string | null) : null;
    next = link ? new URL(link).pathname + new URL(link).search : null;
  }
  return answers;
}

/** Runs the cron until none of the organization's entries kept here is older than the hot window. */
async function archiveAllDue(organization: Organization) {
  const cutoff = archiveCutoff(30, new Date());
  for (let run = 0; run < 10; run += 1) {
    if ((await keptEntries(organization)).every((entry) => entry.createdAt >= cutoff)) return;
    await runCron();
  }
  throw new Error("entries past the hot window are still kept");
}

describe("archived entries read as kept ones", () => {
  it("in a project's log: cursor and numbered pages, every filter, what a member sees", async () => {
    const world = await projectLogWorld();
    const { organization, member } = world;
    await seedProjectLog(world, 90, (DAY * 2) / 3);
    const project = organization.project.id;
    const paths = [
      `/api/environments/${project}/activity_log?limit=7`,
      `/api/projects/${project}/activity_log`,
      `/api/projects/${project}/activity_log?include_organization_scoped=1&limit=9`,
      `/api/environments/${project}/activity_log?scope=Dashboard&limit=4`,
      `/api/environments/${project}/activity_log?scopes=DashboardTile,BatchExport&limit=6`,
      `/api/environments/${project}/activity_log?item_id=${world.open}&limit=5`,
      `/api/environments/${project}/activity_log?user=${member.user.uuid}&limit=3`,
      `/api/environments/${project}/activity_log?activity=moved&limit=4`,
      `/api/environments/${project}/activity_log?before=${new Date(Date.now() - 40 * DAY).toISOString()}&limit=6`,
      `/api/environments/${project}/activity_log?after=${new Date(Date.now() - 45 * DAY).toISOString()}&limit=8`,
      `/api/environments/${project}/activity_log?page=1&page_size=8`,
      `/api/environments/${project}/activity_log?page=5&page_size=6&scope=Dashboard`,
      `/api/projects/${project}/activity_log?page=2&page_size=10&include_organization_scoped=1`,
      `/api/environments/${project}/activity_log?page=40&page_size=10`,
      `/api/organizations/${organization.organization.id}/activity_log?page=2&page_size=25&scopes=Organization,Project`,
    ];
    const read = async () => {
      const answers: unknown[] = [];
      for (const key of [organization.key, member.key]) {
        for (const path of paths) answers.push({ path, key, answers: await answersFrom(path, key) });
      }
      return answers;
    };
    const before = await read();
    // Numbered pages list what the cursor lists, and one past the last is 404.
    const numbered = await answersFrom(paths[10]!, organization.key);
    const listed = (answers: { body: unknown }[]) => answers.flatMap((answer) => (answer.body as Page).results);
    expect(numbered[0]!.body).toMatchObject({ count: 60 });
    expect(listed(numbered)).toEqual(listed(await answersFrom(paths[0]!, organization.key)));
    expect((await answersFrom(paths[13]!, organization.key))[0]!.status).toBe(404);

    await archiveAllDue(organization);
    const kept = await keptEntries(organization);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(50);
    expect((await segmentsOf(organization)).length).toBeGreaterThan(20);
    expect(await read()).toEqual(before);
  }, 120_000);

  it("at its own URL: found through the time in its id, seen by whom it was seen by, 404 elsewhere", async () => {
    const world = await projectLogWorld();
    const { organization, member } = world;
    await seedProjectLog(world, 60, DAY);
    const ids = (
      await db
        .select({ id: schema.activityLog.id, seq: schema.activityLog.seq })
        .from(schema.activityLog)
        .where(eq(schema.activityLog.organizationId, organization.organization.id))
        .orderBy(asc(schema.activityLog.seq))
    ).map((row) => row.id);
    const urls = (id: string) => [
      [`/api/organizations/${organization.organization.id}/activity_log/${id}`, organization.key],
      [`/api/environments/${organization.project.id}/activity_log/${id}`, organization.key],
      [`/api/projects/${organization.project.id}/activity_log/${id}`, member.key],
      [`/api/environments/${world.otherProject}/activity_log/${id}`, member.key],
    ];
    const read = async () => {
      const answers: unknown[] = [];
      for (const id of ids) {
        for (const [path, key] of urls(id)) {
          const response = await api("GET", path!, { key });
          answers.push({ path, status: response.status, body: response.body });
        }
      }
      return answers;
    };
    const before = await read();
    // Every kind answered: an entry to an admin and to a member, and 404 where the log would not show it.
    const statuses = new Set(before.map((answer) => (answer as { status: number }).status));
    expect([...statuses].sort()).toEqual([200, 404]);

    await archiveAllDue(organization);
    const keptIds = new Set(
      (
        await db
          .select({ id: schema.activityLog.id })
          .from(schema.activityLog)
          .where(eq(schema.activityLog.organizationId, organization.organization.id))
      ).map((row) => row.id),
    );
    const archived = ids.filter((id) => !keptIds.has(id));
    expect(archived.length).toBeGreaterThan(20);
    expect(await read()).toEqual(before);

    // The member is not shown the hidden dashboard's archived entry; the owner is.
    const secretEntry = ids[1]!;
    expect(archived).toContain(secretEntry);
    expect(projectLogEntry(world, 2).dashboardId).toBe(world.secret);
    const hidden = await api("GET", `/api/projects/${organization.project.id}/activity_log/${secretEntry}`, {
      key: member.key,
    });
    expectError(hidden, 404, NOT_FOUND);
    const shown = await api("GET", `/api/projects/${organization.project.id}/activity_log/${secretEntry}`, {
      key: organization.key,
    });
    // One round trip finds the segment with the caller's rights, one more reads its user and visibility.
    expect(shown.cost.queries).toBe(2);
    expect(shown.body).toMatchObject({
      id: secretEntry,
      seq: 2,
      scope: "Dashboard",
      project_id: organization.project.id,
    });

    // Another organization's archived entry is not found through this organization's URLs.
    const outsider = await projectLogWorld();
    await seedProjectLog(outsider, 4, DAY * 15);
    await archiveAllDue(outsider.organization);
    const [theirs] = await segmentsOf(outsider.organization);
    const theirId = JSON.parse((await (await env.ACTIVITY_LOG_ARCHIVE.get(theirs!.key))!.text()).split("\n")[0]!).id;
    const theirUrl = `/api/organizations/${outsider.organization.organization.id}/activity_log/${theirId}`;
    expect((await api("GET", theirUrl, { key: outsider.organization.key })).body).toMatchObject({ id: theirId });
    for (const path of [
      `/api/organizations/${organization.organization.id}/activity_log/${theirId}`,
      `/api/environments/${organization.project.id}/activity_log/${theirId}`,
      `/api/organizations/${organization.organization.id}/activity_log/${archived[0]!.replace(/^.{8}/, "00000000")}`,
    ]) {
      expectError(await api("GET", path, { key: organization.key }), 404, NOT_FOUND);
    }
  }, 120_000);
});

/**
 * An organization whose owner made a dashboard a `none` rule hides from a plain member, and a
 * webhook (an organization-level entry, for admins only), with every entry of the log archived.
 */
async function archivedHiddenActivity() {
  const organization = await setupOrganization();
  const { key, project } = organization;
  const member = await addMember(organization.organization.id, MembershipLevel.member);
  const dashboards = `/api/environments/${project.id}/dashboards`;
  const hidden = await api("POST", dashboards, { key, body: { name: "Acquisition plans" } });
  expect(hidden.status).toBe(201);
  const rule = await api("PUT", `${dashboards}/${hidden.body.id}/access_controls`, {
    key,
    body: { organization_member: member.membership.id, access_level: "none" },
  });
  expect(rule.status).toBe(200);
  const webhook = await api("POST", `/api/organizations/${organization.organization.id}/webhooks`, {
    key,
    body: { url: "https://receiver.example.com/hook", events: ["Dashboard.updated"] },
  });
  expect(webhook.status).toBe(201);
  const log = `/api/environments/${project.id}/activity_log`;
  const entries = await api("GET", `${log}?item_id=${hidden.body.id}`, { key });
  expect(entries.body.results.length).toBeGreaterThan(0);
  while ((await sealChain(db, organization.organization.id)) > 0);
  // Archived as if 40 days had passed.
  expect(await archiveActivityLog(db, env.ACTIVITY_LOG_ARCHIVE, 30, new Date(Date.now() + 40 * DAY))).toBeGreaterThan(
    0,
  );
  // The member's key, used once (its first lookup costs a round trip of its own).
  expect((await api("GET", "/api/users/@me", { key: member.key })).status).toBe(200);
  return {
    member,
    log,
    hiddenDashboardId: hidden.body.id as number,
    hiddenEntryId: entries.body.results[0].id as string,
    webhookId: webhook.body.id as string,
  };
}

describe("archived entries a caller may not see", () => {
  it("cost a filtered page the round trips of entries that do not exist", async () => {
    const { member, log, hiddenDashboardId, webhookId } = await archivedHiddenActivity();
    const read = (query: string) => api("GET", `${log}?${query}`, { key: member.key });
    const alike = async (hiddenQuery: string, unknownQuery: string) => {
      const [hidden, unknown] = [await read(hiddenQuery), await read(unknownQuery)];
      expect(hidden.status).toBe(200);
      expect(hidden.body.results).toEqual([]);
      expect(unknown.body.results).toEqual([]);
      // Server-Timing's round trips would otherwise tell the hidden dashboard's id, and when and by
      // whom it was changed (`after`, `before`, `user`, `activity` narrow the same probe).
      expect(hidden.cost.queries).toBe(unknown.cost.queries);
    };
    await alike(`item_id=${hiddenDashboardId}`, `item_id=${hiddenDashboardId + 1000}`);
    await alike(`item_id=${hiddenDashboardId}&page=1`, `item_id=${hiddenDashboardId + 1000}&page=1`);
    // An organization's admin-only entries (its webhooks) cost a member nothing more either.
    await alike("include_organization_scoped=1&scope=Webhook", "include_organization_scoped=1&scope=Domain");
    await alike(
      `include_organization_scoped=1&item_id=${webhookId}`,
      `include_organization_scoped=1&item_id=${crypto.randomUUID()}`,
    );
  });

  it("answer 404 at their own URL with the round trips of an unknown id of the same time", async () => {
    const { member, log, hiddenEntryId } = await archivedHiddenActivity();
    const unknownId = `${hiddenEntryId.slice(0, 24)}${"a".repeat(12)}`;
    const hidden = await api("GET", `${log}/${hiddenEntryId}`, { key: member.key });
    const unknown = await api("GET", `${log}/${unknownId}`, { key: member.key });
    expectError(hidden, 404, NOT_FOUND);
    expectError(unknown, 404, NOT_FOUND);
    expect(hidden.headers.get("Server-Timing")).toBe(unknown.headers.get("Server-Timing"));
  });
});

describe("an archived entry's own URL", () => {
  it("finds it among many segments of a few minutes: a busy organization's thousands of entries after it", async () => {
    const organization = await setupOrganization();
    const organizationId = organization.organization.id;
    await env.DB.prepare("delete from activity_log where organization_id = ?").bind(organizationId).run();
    // 5,000 entries of one UTC day 40 days ago, one every 50 ms: five segments within 4 minutes.
    const noon = Math.floor((Date.now() - 40 * DAY) / DAY) * DAY + DAY / 2;
    await seedEntriesWithTimedIds(organizationId, 5000, 50, noon);
    const [first, last] = [await firstEntryOf(organizationId), await lastEntryOf(organizationId)];
    while ((await keptEntries(organization)).length > 0) await archiveActivityLog(db, env.ACTIVITY_LOG_ARCHIVE, 30);
    expect(await segmentsOf(organization)).toHaveLength(5);
    for (const entry of [first, last]) {
      const archived = await api("GET", `${logPath(organization)}/${entry.id}`, { key: organization.key });
      expect(archived.status).toBe(200);
      expect(archived.body).toMatchObject({ id: entry.id, seq: entry.seq });
    }
  }, 120_000);
});

describe("archived segments too large to read together", () => {
  /** The most reads of the bucket in flight at once while `read` runs. */
  async function mostReadAtOnce(read: () => Promise<unknown>) {
    const get = env.ACTIVITY_LOG_ARCHIVE.get.bind(env.ACTIVITY_LOG_ARCHIVE);
    let inFlight = 0;
    let most = 0;
    vi.spyOn(env.ACTIVITY_LOG_ARCHIVE, "get").mockImplementation((async (key: string, options?: R2GetOptions) => {
      most = Math.max(most, (inFlight += 1));
      try {
        return await get(key, options);
      } finally {
        inFlight -= 1;
      }
    }) as R2Bucket["get"]);
    try {
      await read();
    } finally {
      vi.restoreAllMocks();
    }
    return most;
  }

  it("are read one at a time (pages, counts, an entry's URL, exports), and small ones ten at once", async () => {
    const organization = await setupOrganization();
    const organizationId = organization.organization.id;
    await env.DB.prepare("delete from activity_log where organization_id = ?").bind(organizationId).run();
    // 40 entries, two a UTC day (at 01:00 and 13:00) from 60 days ago: 20 segments of a day each,
    // all past the hot window. Begun at any other hour, they would straddle 21 days after noon.
    const startOfDay = Math.floor((Date.now() - 60 * DAY) / DAY) * DAY;
    await seedEntriesWithTimedIds(organizationId, 40, DAY / 2, startOfDay + DAY / 24);
    const first = await firstEntryOf(organizationId);
    const reads = {
      // The seeded entries (scope Organization), not the exports' own entries appended meanwhile.
      page: () => api("GET", `${logPath(organization)}?limit=1000&scope=Organization`, { key: organization.key }),
      filtered: () => api("GET", `${logPath(organization)}?page=2&limit=5&activity=updated`, { key: organization.key }),
      entry: () => api("GET", `${logPath(organization)}/${first.id}`, { key: organization.key }),
    };
    const before = {
      page: (await reads.page()).body,
      filtered: (await reads.filtered()).body,
      entry: (await reads.entry()).body,
    };
    while ((await keptEntries(organization)).length > 0) await archiveActivityLog(db, env.ACTIVITY_LOG_ARCHIVE, 30);
    expect(await segmentsOf(organization)).toHaveLength(20);
    const range = [new Date(Date.now() - 90 * DAY).toISOString(), new Date().toISOString()] as const;
    const exportedBefore = await exported(organization, ...range);

    // As they are (a few hundred bytes each): ten at once.
    expect(await mostReadAtOnce(reads.page)).toBe(10);
    // As if each held 1,000 entries of 10 MiB in all: one at a time, and the same answers.
    await db
      .update(schema.activityLogSegments)
      .set({ bytes: 10 * 1024 * 1024 })
      .where(eq(schema.activityLogSegments.organizationId, organizationId));
    for (const name of ["page", "filtered", "entry"] as const) {
      let response: Awaited<ReturnType<(typeof reads)[typeof name]>> | undefined;
      expect(await mostReadAtOnce(async () => (response = await reads[name]())), name).toBe(1);
      expect([response!.status, response!.body], name).toEqual([200, before[name]]);
    }
    let file = "";
    expect(await mostReadAtOnce(async () => (file = await exported(organization, ...range)))).toBe(1);
    expect(file).toBe(exportedBefore);
  }, 120_000);
});

describe("two cron runs archiving at once", () => {
  it("keeps an archived segment's object when two cron runs archive the same day at once", async () => {
    const organization = await setupOrganization();
    const organizationId = organization.organization.id;
    // Three sealed entries of one day, 40 days ago: past the 30-day hot window, within retention.
    await seedEntries(organization, 3, 1000, 40 * DAY);
    // Two cron runs overlap: the second runs whole between the first's put and its write.
    beforeWrites([[/insert into "activity_log_segments"/, () => runCron()]]);
    await runCron();
    vi.restoreAllMocks();

    const segments = await db
      .select()
      .from(schema.activityLogSegments)
      .where(eq(schema.activityLogSegments.organizationId, organizationId))
      .orderBy(asc(schema.activityLogSegments.firstSeq));
    expect(segments).toHaveLength(1);
    const objects = (await env.ACTIVITY_LOG_ARCHIVE.list({ prefix: `${organizationId}/` })).objects.map(
      (object) => object.key,
    );
    // The segment the database lists still has its object in the archive...
    expect(objects).toEqual([segments[0]!.key]);
    // ...so the chain verifies and the archived entries are still there.
    const verdict = await api("GET", `/api/organizations/${organizationId}/activity_log/verify`, {
      key: organization.key,
    });
    expect(verdict.body).toMatchObject({ valid: true, entries: 3 });
  });
});
