import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import * as schema from "../../../src/db/schema";
import worker from "../../../src/index";
import { uuid7 } from "../../../src/platform/ids";
import { archiveActivityLog } from "../../../src/platform/activity-log/archive";
import { sealChain } from "../../../src/platform/activity-log/chain";
import { pruneActivityLog } from "../../../src/platform/activity-log/retention";
import { seedEntries } from "../../support/activity-log";
import { verifyExport } from "../../../scripts/activity-export-chain.mjs";
import { MembershipLevel } from "../../../src/platform/levels";
import { addMember, api, db, setupOrganization, userBasic } from "../../support/harness";
import { subscribe, webhooksPath } from "../../support/webhooks";

type Organization = Awaited<ReturnType<typeof setupOrganization>>;

afterEach(() => {
  vi.restoreAllMocks();
});

const orgPath = (organization: Organization) => `/api/organizations/${organization.organization.id}`;

/** A few real entries (organization renamed), sealed, then an export of all of them, downloaded. */
async function exportedLog(organization: Organization, format: "ndjson" | "csv") {
  for (const name of ["Renamed one", "Renamed two", "Renamed three"]) {
    const renamed = await api("PATCH", orgPath(organization), { key: organization.key, body: { name } });
    expect(renamed.status).toBe(200);
  }
  const verified = await api("GET", `${orgPath(organization)}/activity_log/verify`, { key: organization.key });
  expect(verified.body).toMatchObject({ valid: true, entries: 3 });
  const created = await api("POST", `${orgPath(organization)}/activity_log/exports`, {
    key: organization.key,
    body: { from: "2020-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z", format },
  });
  expect(created.status).toBe(202);
  const path = `${orgPath(organization)}/activity_log/exports/${created.body.id}`;
  await expect
    .poll(async () => (await api("GET", path, { key: organization.key })).body.status, { timeout: 30_000 })
    .toBe("succeeded");
  const file = await api("GET", `${path}/download`, { key: organization.key });
  expect(file.status).toBe(200);
  expect(await verifyExport(file.text, { format, contiguous: true })).toMatchObject({
    valid: true,
    entries: 3,
    head: verified.body.head,
  });
  return { text: file.text, head: verified.body.head };
}

describe("the activity log as evidence", () => {
  it("does not verify an NDJSON export with fields no hash covers (an added or a duplicated key)", async () => {
    const organization = await setupOrganization();
    const { text, head } = await exportedLog(organization, "ndjson");
    const lines = text.trimEnd().split("\n");
    const second = JSON.parse(lines[1]!) as Record<string, unknown>;

    // A field added to an entry: who "really" made it, as a reader of the file would take it.
    const attributed = JSON.stringify({ ...second, user: { email: "ceo@example.com" } });
    const added = [lines[0], attributed, lines[2]].join("\n");
    // A duplicated key: a reader that takes the first occurrence (a person reading the line,
    // a strict or first-wins parser) reads another detail and another user than the one hashed.
    const duplicated = lines[1]!.replace(
      /^\{/,
      `{"detail":${JSON.stringify(JSON.stringify({ name: "Harmless", changes: null, context: null }))},"user_id":1,`,
    );
    const shadowed = [lines[0], duplicated, lines[2]].join("\n");

    for (const forged of [added, shadowed]) {
      const verdict = await verifyExport(forged, { contiguous: true });
      // Refused at the forged line, before its hash is even checked.
      expect(verdict, forged).toMatchObject({ valid: false, line: 2 });
      expect(verdict).not.toMatchObject({ head });
    }
  }, 60_000);

  it("a CSV export with a column added or duplicated (a second `detail`) does not verify", async () => {
    const organization = await setupOrganization();
    const { text } = await exportedLog(organization, "csv");
    const [header, ...rows] = text.trimEnd().split("\n");
    // A first `detail` column in front: pandas reads it as `detail` (the genuine one becomes
    // `detail.1`), a spreadsheet shows it first; the verifier keeps the last one and hashes it.
    const fake = `"${JSON.stringify({ name: "Harmless", changes: null, context: null }).replaceAll('"', '""')}"`;
    const duplicated = [`detail,${header}`, ...rows.map((row) => `${fake},${row}`)].join("\n");
    expect(await verifyExport(duplicated, { format: "csv", contiguous: true })).toMatchObject({ valid: false });
    // An extra column the hash does not cover.
    const extra = [`${header},user_email`, ...rows.map((row) => `${row},"ceo@example.com"`)].join("\n");
    expect(await verifyExport(extra, { format: "csv", contiguous: true })).toMatchObject({ valid: false });
  }, 60_000);

  it("an NDJSON line that is JSON but no object (null) is reported at its line, not thrown", async () => {
    const organization = await setupOrganization();
    const { text } = await exportedLog(organization, "ndjson");
    const lines = text.trimEnd().split("\n");
    const broken = [lines[0], "null", lines[2]].join("\n");
    await expect(verifyExport(broken, { contiguous: true })).resolves.toMatchObject({ valid: false, line: 2 });
  }, 60_000);

  it("a webhook taken over with `enabled: true` (its created_by changes) is recorded in the log", async () => {
    const organization = await setupOrganization();
    const webhook = await subscribe(organization, { events: ["*"] });
    const webhookPath = `${webhooksPath(organization)}/${webhook.id}`;
    const admin = await addMember(organization.organization.id, MembershipLevel.admin);
    const before = await api("GET", `${orgPath(organization)}/activity_log?scope=Webhook`, { key: organization.key });
    expect(before.body.results).toHaveLength(1);

    const takenOver = await api("PATCH", webhookPath, { key: admin.key, body: { enabled: true } });
    expect(takenOver.status).toBe(200);
    // The webhook is now the admin's: it lives as long as they are an admin, not the owner.
    expect(takenOver.body.created_by).toEqual(userBasic(admin.user));

    const after = await api("GET", `${orgPath(organization)}/activity_log?scope=Webhook`, { key: organization.key });
    expect(after.body.results.length).toBe(2);
  }, 60_000);

  it("`?user=` with a uuid of no user lists no archived entry (not the system's and service keys')", async () => {
    const organization = await setupOrganization();
    // 10 entries by the system (no user), 40 days ago: past the 30-day hot window, so archived.
    await seedEntries(organization.organization.id, 10, 60_000, 40 * 86_400_000);
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
    const all = await api("GET", `${orgPath(organization)}/activity_log?limit=100`, { key: organization.key });
    expect(all.body.results).toHaveLength(10);
    expect(all.body.results.every((entry: { user: unknown }) => entry.user === null)).toBe(true);

    const nobody = uuid7();
    const byNobody = await api("GET", `${orgPath(organization)}/activity_log?user=${nobody}`, {
      key: organization.key,
    });
    expect(byNobody.status).toBe(200);
    // Entries kept in D1 answer none for an unknown user; archived ones answer every entry without a user.
    expect(byNobody.body.results).toEqual([]);
  }, 60_000);

  it("verify seals every entry still unsealed before judging: a backlog of 250 is no broken chain", async () => {
    const organization = await setupOrganization();
    // Arranged: 250 entries whose seals never ran (an isolate stopped after each write, say),
    // numbered 1 to 250 as the writes numbered them, not hashed yet.
    await env.DB.prepare(
      `with recursive n(i) as (select 1 union all select i + 1 from n where i < 250)
       insert into activity_log
         (id, organization_id, seq, is_system, activity, scope, item_id, detail, created_at, hash)
       select printf('%08x', i) || substr(?1, 9), ?1, i, 1, 'updated', 'Organization', ?1,
         '{"name":"entry ' || i || '","changes":null,"context":null}',
         strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || (300 - i) || ' seconds'), null
       from n`,
    )
      .bind(organization.organization.id)
      .run();
    const verdict = await api("GET", `${orgPath(organization)}/activity_log/verify`, { key: organization.key });
    expect(verdict.status).toBe(200);
    // Sealing one pass of 200 only would answer `{valid: false, first_invalid: 201}`: a false alarm.
    expect(verdict.body).toMatchObject({ valid: true, entries: 250, first_invalid: null });
  }, 60_000);

  it("numbers a write after the anchor when retention pruned past a segment not yet deleted", async () => {
    const organization = await setupOrganization();
    const organizationId = organization.organization.id;
    // Arranged: entries 1-5 of one day and 6-10 of the next, long past the 365 days kept.
    await env.DB.prepare(
      `with recursive n(i) as (select 1 union all select i + 1 from n where i < 10)
       insert into activity_log
         (id, organization_id, seq, is_system, activity, scope, item_id, detail, created_at, hash)
       select printf('%08x', i) || substr(?1, 9), ?1, i, 1, 'updated', 'Organization', ?1,
         '{"name":"entry ' || i || '","changes":null,"context":null}',
         case when i <= 5 then '2024-01-01T10:00:0' || i || '.000Z' else '2024-01-02T10:00:0' || (i - 5) || '.000Z' end,
         null
       from n`,
    )
      .bind(organizationId)
      .run();
    while ((await sealChain(db, organizationId)) > 0);
    // The cron as it runs when its bounded passes lag (20 segments archived, 100 deleted per run,
    // for the whole deployment): the first day was archived; then the segment pass did not reach
    // this organization, and the database's prune took entries 6-10, the anchor moving to 10.
    expect(await archiveActivityLog(db, env.ACTIVITY_LOG_ARCHIVE, 30, new Date("2024-02-01T12:00:00Z"))).toBe(5);
    expect(await pruneActivityLog(db, 365)).toBe(5);

    const renamed = await api("PATCH", orgPath(organization), { key: organization.key, body: { name: "After" } });
    expect(renamed.status).toBe(200);
    const [entry] = (await api("GET", `${orgPath(organization)}/activity_log?limit=1`, { key: organization.key })).body
      .results;
    // Numbers go on after the last one taken (10), never reuse 6.
    expect(entry.seq).toBe(11);
    const verdict = await api("GET", `${orgPath(organization)}/activity_log/verify`, { key: organization.key });
    expect(verdict.body).toMatchObject({ valid: true, first_invalid: null });
  }, 60_000);
});

const sqlOf = (statement: D1PreparedStatement) => String((statement as unknown as { statement: string }).statement);

describe("verify, while the organization writes", () => {
  it("is not broken by a write landing while verify seals, its own seal still in flight", async () => {
    const organization = await setupOrganization();
    const orgPath = `/api/organizations/${organization.organization.id}`;
    for (const name of ["One", "Two"]) {
      expect((await api("PATCH", orgPath, { key: organization.key, body: { name } })).status).toBe(200);
    }
    expect((await api("GET", `${orgPath}/activity_log/verify`, { key: organization.key })).body).toMatchObject({
      valid: true,
      entries: 2,
    });
    // The seals after these two responses were lost (an isolate stopped): verify must seal them first.
    await db
      .update(schema.activityLog)
      .set({ hash: null })
      .where(eq(schema.activityLog.organizationId, organization.organization.id));

    // A concurrent write, committed after verify's own seal passes and just before its read of the
    // chain; its seal after the response is still running (held until verify has read).
    let chainReads = 0;
    let holdingSeals = false;
    let releaseSeals = () => {};
    const sealsReleased = new Promise<void>((resolve) => (releaseSeals = resolve));
    const withSession = env.DB.withSession.bind(env.DB);
    vi.spyOn(env.DB, "withSession").mockImplementation((constraint) => {
      const session = withSession(constraint);
      const batch = session.batch.bind(session);
      session.batch = async <T>(statements: D1PreparedStatement[]) => {
        const sqls = statements.map(sqlOf);
        if (holdingSeals && sqls.some((text) => /^update "activity_log" set "hash"/.test(text))) await sealsReleased;
        const readsChain = sqls.some((text) => /from "activity_log_segments"/.test(text) && /"last_seq" >/.test(text));
        if (readsChain) {
          chainReads += 1;
          // The second read of the chain: verify's, after `sealChain` answered 0.
          if (chainReads === 2) {
            holdingSeals = true;
            const renamed = await api("PATCH", orgPath, { key: organization.key, body: { name: "Three" } });
            expect(renamed.status).toBe(200);
          }
        }
        const result = await batch<T>(statements);
        if (readsChain && chainReads === 2) releaseSeals();
        return result;
      };
      return session;
    });

    const verdict = await api("GET", `${orgPath}/activity_log/verify`, { key: organization.key });
    expect(chainReads).toBeGreaterThanOrEqual(2);
    expect(verdict.status).toBe(200);
    // Nothing was tampered with: three genuine entries, the third being sealed as verify read it.
    expect(verdict.body).toMatchObject({ valid: true, first_invalid: null });
  }, 60_000);
});
