import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { asc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { verifyExport } from "../../scripts/activity-export-chain.mjs";
import * as schema from "../../src/db/schema";
import worker from "../../src/index";
import { archiveActivityLog, archiveCutoff } from "../../src/platform/activity-log/archive";
import { sealChain } from "../../src/platform/activity-log/chain";
import { MembershipLevel } from "../../src/platform/levels";
import { addMember, api, db, setupOrganization } from "../support/harness";

type Organization = Awaited<ReturnType<typeof setupOrganization>>;

const DAY = 86_400_000;
const logPath = (organization: Organization) => `/api/organizations/${organization.organization.id}/activity_log`;

/** `count` sealed entries, one every `spacing` ms up to `newestAgo` ms ago (the oldest first). */
async function seedEntries(organization: Organization, count: number, spacing: number, newestAgo = 60_000) {
  const newest = Date.now() - newestAgo;
  await env.DB.prepare(
    `with recursive n(i) as (select 1 union all select i + 1 from n where i < ?2)
     insert into activity_log (id, organization_id, seq, is_system, activity, scope, item_id, detail, created_at, hash)
     select printf('00000000-0000-7000-8000-%012d', i) || ?1, ?1, i, 1, 'updated', 'Organization', ?1,
       '{"name":"entry ' || i || '","changes":null,"context":null}',
       strftime('%Y-%m-%dT%H:%M:%fZ', (?3 - (?2 - i) * ?4) / 1000.0, 'unixepoch'), null
     from n`,
  )
    .bind(organization.organization.id, count, newest, spacing)
    .run();
  while ((await sealChain(db, organization.organization.id)) > 0);
}

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
    const all = ["2020-01-01T00:00:00Z", new Date(Date.now() + DAY).toISOString()] as const;
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
