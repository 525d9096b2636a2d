import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { verifyExport } from "../../../scripts/activity-export-chain.mjs";
import * as schema from "../../../src/db/schema";
import worker from "../../../src/index";
import { sealChain } from "../../../src/platform/activity-log/chain";
import { MembershipLevel } from "../../../src/platform/levels";
import { beforeWrites } from "../../support/races";
import {
  expectError,
  INSUFFICIENT_LEVEL,
  missingScope,
  NOT_AUTHENTICATED,
  NOT_FOUND,
} from "../../support/error-bodies";
import {
  addMember,
  api,
  createApiKey,
  db,
  errorBody,
  ISO_TIMESTAMP,
  setupOrganization,
  userBasic,
  UUID,
} from "../../support/harness";

type Organization = Awaited<ReturnType<typeof setupOrganization>>;

const exportsPath = (organization: Organization) =>
  `/api/organizations/${organization.organization.id}/activity_log/exports`;
const FROM = "2026-01-01T00:00:00Z";
const TO = "2027-01-01T00:00:00Z";

/**
 * `count` entries, one minute apart from 2026-01-01, sealed into a valid chain. Their values try
 * the formats: text with quotes, commas and a newline, an empty text beside nulls, every scope.
 */
async function seedChain(organization: Organization, count: number) {
  await env.DB.prepare(
    `with recursive n(i) as (select 1 union all select i + 1 from n where i < ?2)
     insert into activity_log (id, organization_id, seq, project_id, dashboard_id, user_id, api_key_id, is_system,
       activity, scope, item_id, detail, request_id, created_at, hash)
     select printf('%08x', i) || substr(?1, 9), ?1, i,
       case when i % 3 = 0 then ?3 end, case when i % 6 = 0 then i end, case when i % 5 = 0 then null else ?4 end,
       case when i % 5 = 0 then null else 'key-' || (i % 7) end, i % 5 = 0,
       case when i % 2 = 0 then 'updated' else 'created' end,
       case i % 4 when 0 then 'Dashboard' when 1 then 'OrganizationMembership' when 2 then 'Webhook' else 'Project' end,
       case when i % 11 = 0 then '' when i % 13 = 0 then 'line' || char(10) || 'break, "quoted"'
         else 'item-' || (i % 50) end,
       json_object('name', 'Entry "' || i || '", with commas', 'changes', null, 'context', json_object('n', i)),
       'request-' || i, strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' minutes'), null
     from n`,
  )
    .bind(organization.organization.id, count, organization.project.id, organization.owner.id)
    .run();
  while ((await sealChain(db, organization.organization.id)) > 0);
}

async function createExport(organization: Organization, body: Record<string, unknown>) {
  const response = await api("POST", exportsPath(organization), { key: organization.key, body });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return response;
}

async function finished(organization: Organization, id: string, timeout = 60_000) {
  const path = `${exportsPath(organization)}/${id}`;
  await expect
    .poll(async () => (await api("GET", path, { key: organization.key })).body.status, { timeout, interval: 200 })
    .toMatch(/^(succeeded|failed)$/);
  return (await api("GET", path, { key: organization.key })).body;
}

const download = (organization: Organization, id: string) =>
  api("GET", `${exportsPath(organization)}/${id}/download`, { key: organization.key });

describe("activity-log exports", () => {
  it("exports 10,000 entries in the background, in parts; the file verifies offline against the head", async () => {
    const organization = await setupOrganization();
    await seedChain(organization, 10_000);
    const head = (
      await api("GET", `/api/organizations/${organization.organization.id}/activity_log/verify`, {
        key: organization.key,
      })
    ).body;
    expect(head).toMatchObject({ valid: true, entries: 10_000 });

    const created = await createExport(organization, { from: FROM, to: TO });

    const pending = {
      id: expect.stringMatching(UUID),
      status: "pending",
      format: "ndjson",
      from: "2026-01-01T00:00:00.000Z",
      to: "2027-01-01T00:00:00.000Z",
      scopes: null,
      entries: 0,
      parts: 0,
      bytes: 0,
      error: null,
      created_by: userBasic(organization.owner),
      created_at: expect.stringMatching(ISO_TIMESTAMP),
      completed_at: null,
      download_url: null,
    };
    expect(created.body).toEqual(pending);
    const done = await finished(organization, created.body.id);
    expect(done).toEqual({
      ...pending,
      id: created.body.id,
      status: "succeeded",
      entries: 10_000,
      parts: 10,
      bytes: expect.any(Number),
      completed_at: expect.stringMatching(ISO_TIMESTAMP),
      download_url: `http://localhost${exportsPath(organization)}/${created.body.id}/download`,
    });
    const file = await download(organization, created.body.id);
    expect(file.status).toBe(200);
    expect(file.headers.get("Content-Type")).toBe("application/x-ndjson");
    expect(file.headers.get("Content-Disposition")).toBe(
      `attachment; filename="activity-log-${created.body.id}.ndjson"`,
    );
    expect(new TextEncoder().encode(file.text).byteLength).toBe(done.bytes);
    expect(await verifyExport(file.text, { contiguous: true })).toEqual({
      valid: true,
      entries: 10_000,
      first_seq: 1,
      last_seq: 10_000,
      head: head.head,
      gaps: [],
    });
    // What the API shows of an entry is what the file holds of it.
    const lines = file.text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    // The newest entry is the export's own (who copied the log out); the one before it, the file's last.
    const [own, entry] = (
      await api("GET", `/api/organizations/${organization.organization.id}/activity_log?limit=2`, {
        key: organization.key,
      })
    ).body.results;
    expect(own).toMatchObject({
      scope: "ActivityLogExport",
      activity: "created",
      item_id: created.body.id,
      seq: 10_001,
      user: { uuid: organization.owner.uuid },
      detail: {
        name: "ndjson",
        context: { from: "2026-01-01T00:00:00.000Z", to: "2027-01-01T00:00:00.000Z", scopes: null },
      },
    });
    expect(lines.at(-1)).toMatchObject({
      id: entry.id,
      seq: entry.seq,
      hash: entry.hash,
      created_at: entry.created_at,
      activity: entry.activity,
    });

    // A tampered line fails at that line; a line removed fails where the chain breaks.
    const tampered = [
      ...lines.slice(0, 4),
      { ...lines[4], detail: (lines[4]!.detail as string).replace("commas", "comas") },
      ...lines.slice(5),
    ];
    expect(await verifyExport(tampered.map((line) => JSON.stringify(line)).join("\n"))).toMatchObject({
      valid: false,
      line: 5,
      seq: 5,
      reason: "hash does not match the entry",
    });
    const removed = [...lines.slice(0, 6), ...lines.slice(7)].map((line) => JSON.stringify(line)).join("\n");
    expect(await verifyExport(removed, { contiguous: true })).toMatchObject({
      valid: false,
      line: 7,
      seq: 8,
      reason: "entries 7 to 7 are missing",
    });
    expect(await verifyExport(removed)).toMatchObject({ valid: true, gaps: [[7, 7]] });
    const forged = [...lines.slice(0, 9), { ...lines[9], previous_hash: "0".repeat(64) }]
      .map((line) => JSON.stringify(line))
      .join("\n");
    expect(await verifyExport(forged)).toMatchObject({
      valid: false,
      line: 10,
      reason: "hash does not match the entry",
    });
  }, 180_000);

  it("exports CSV of some scopes and a time range, typed so every row verifies; fails a tampered row", async () => {
    const organization = await setupOrganization();
    await seedChain(organization, 200);
    // Entries 11 to 150 by time (one a minute from 00:01), of two scopes.
    const created = await createExport(organization, {
      from: "2026-01-01T00:11:00Z",
      to: "2026-01-01T02:31:00.000+00:00",
      format: "csv",
      scopes: ["Dashboard", "Webhook"],
    });
    expect(created.body).toMatchObject({
      format: "csv",
      scopes: ["Dashboard", "Webhook"],
      from: "2026-01-01T00:11:00.000Z",
      to: "2026-01-01T02:31:00.000Z",
    });
    const done = await finished(organization, created.body.id);
    expect(done).toMatchObject({ status: "succeeded", entries: 70, parts: 1 });

    const file = await download(organization, created.body.id);

    expect(file.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    const [header] = file.text.split("\n");
    expect(header).toBe(
      "activity,api_key_id,created_at,dashboard_id,detail,id,is_system,item_id,organization_id,project_id," +
        "request_id,scope,seq,user_id,hash,previous_hash",
    );
    const verdict = await verifyExport(file.text, { format: "csv" });
    expect(verdict).toMatchObject({ valid: true, entries: 70, first_seq: 12, last_seq: 150 });
    // The row of entry 26 (a Webhook entry whose item is text with a newline, quotes and a comma).
    expect(file.text).toContain('"line\nbreak, ""quoted"""');
    const tampered = file.text.replace('{""n"":26}', '{""n"":62}');
    expect(tampered).not.toBe(file.text);
    expect(await verifyExport(tampered, { format: "csv" })).toMatchObject({
      valid: false,
      seq: 26,
      reason: "hash does not match the entry",
    });
    expect(await verifyExport(tampered.replace('"item-14"', "14"), { format: "csv" })).toMatchObject({ valid: false });
  }, 60_000);

  it("holds no cell a spreadsheet reads as a formula: a member's request id beginning with = is replaced", async () => {
    const organization = await setupOrganization();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const invited = await api("POST", `/api/organizations/${organization.organization.id}/invites`, {
      key: member.key,
      body: { target_email: "someone@example.com", send_email: false },
      headers: { "X-Request-Id": "=C2-D2" },
    });
    expect(invited.status).toBe(201);
    const requestId = invited.headers.get("X-Request-Id");
    expect(requestId).toMatch(UUID);

    const created = await createExport(organization, { from: FROM, to: "2100-01-01T00:00:00Z", format: "csv" });
    expect(await finished(organization, created.body.id)).toMatchObject({ status: "succeeded" });
    const file = (await download(organization, created.body.id)).text;
    expect(file).not.toContain("=C2-D2");
    expect(file).toContain(`"${requestId}"`);
  }, 60_000);

  it("resumes an export whose next step was lost, and a step that runs twice writes its part once", async () => {
    const organization = await setupOrganization();
    await seedChain(organization, 2_500);
    const created = await createExport(organization, { from: FROM, to: TO });
    await finished(organization, created.body.id);
    // As if the second step's message had been lost: back to one part, idle for an hour.
    const exportId = created.body.id;
    const anHourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const firstPart = await env.ACTIVITY_LOG_EXPORTS.get(
      `${organization.organization.id}/${exportId}/part-000000.ndjson`,
    );
    const firstPartBytes = new TextEncoder().encode(await firstPart!.text()).byteLength;
    await db
      .update(schema.activityLogExports)
      .set({
        status: "running",
        parts: 1,
        cursorSeq: 1000,
        entries: 1000,
        bytes: firstPartBytes,
        completedAt: null,
        updatedAt: anHourAgo,
      })
      .where(eq(schema.activityLogExports.id, exportId));

    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
    // A duplicate of the resumed step, sent meanwhile.
    await env.BACKGROUND_JOBS.send({ kind: "export_part", exportId, part: 1 });

    const done = await finished(organization, exportId);
    expect(done).toMatchObject({ status: "succeeded", entries: 2_500, parts: 3 });
    const file = await download(organization, exportId);
    expect(await verifyExport(file.text, { contiguous: true })).toMatchObject({
      valid: true,
      entries: 2_500,
      first_seq: 1,
      last_seq: 2_500,
    });
    expect(new TextEncoder().encode(file.text).byteLength).toBe(done.bytes);
  }, 120_000);

  it("is for admins with activity_log:read; another organization's export is 404; bad input is named", async () => {
    const organization = await setupOrganization();
    const outsider = await setupOrganization();
    const theirs = await createExport(outsider, { from: FROM, to: TO });
    const path = exportsPath(organization);
    for (const [body, attr] of [
      [{ from: TO, to: FROM }, "to"],
      [{ from: FROM, to: FROM }, "to"],
      [{ from: "yesterday", to: TO }, "from"],
      [{ from: FROM }, "to"],
      [{ from: FROM, to: TO, format: "xml" }, "format"],
      [{ from: FROM, to: TO, scopes: ["Dashboard", "Nothing"] }, "scopes.1"],
      [{ from: FROM, to: TO, scopes: [] }, "scopes"],
    ] as const) {
      const response = await api("POST", path, { key: organization.key, body });
      expect({ body, status: response.status, type: response.body.type, attr: response.body.attr }).toEqual({
        body,
        status: 400,
        type: "validation_error",
        attr,
      });
    }
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    expectError(await api("POST", path, { key: member.key, body: { from: FROM, to: TO } }), 403, INSUFFICIENT_LEVEL);
    const noScope = await createApiKey(organization.owner, { scopes: ["organization:read"] });
    expectError(
      await api("POST", path, { key: noScope.value, body: { from: FROM, to: TO } }),
      403,
      missingScope("activity_log:read"),
    );
    expectError(await api("POST", path, { body: { from: FROM, to: TO } }), 401, NOT_AUTHENTICATED);
    for (const suffix of ["", "/download"]) {
      expectError(await api("GET", `${path}/${theirs.body.id}${suffix}`, { key: organization.key }), 404, NOT_FOUND);
      expectError(
        await api("GET", `${exportsPath(outsider)}/${theirs.body.id}${suffix}`, { key: organization.key }),
        404,
        NOT_FOUND,
      );
      expectError(
        await api("GET", `${exportsPath(outsider)}/${theirs.body.id}${suffix}`, { key: member.key }),
        404,
        NOT_FOUND,
      );
      expectError(await api("GET", `${path}/${theirs.body.id}${suffix}`, { key: member.key }), 403, INSUFFICIENT_LEVEL);
    }
  }, 30_000);

  it("answers 409 to a download before the export has succeeded", async () => {
    const organization = await setupOrganization();
    const now = new Date().toISOString();
    const id = crypto.randomUUID();
    await db.insert(schema.activityLogExports).values({
      id,
      organizationId: organization.organization.id,
      format: "ndjson",
      fromTime: now,
      toTime: now,
      firstSeq: 1,
      lastSeq: 0,
      status: "running",
      cursorSeq: 0,
      createdAt: now,
      updatedAt: now,
    });
    expectError(await download(organization, id), 409, {
      type: "conflict",
      code: "conflict",
      detail: "The export is running: it can be downloaded once it has succeeded.",
      attr: null,
    });
    const retrieved = await api("GET", `${exportsPath(organization)}/${id}`, { key: organization.key });
    expect(retrieved.body).toMatchObject({ id, status: "running", download_url: null, created_by: null });
  });
});

describe("exports of one organization", () => {
  it("run one at a time: another one while it is pending or running is 409 and makes nothing", async () => {
    const organization = await setupOrganization();
    await seedChain(organization, 10);
    const range = { from: "2020-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z" };
    const first = await createExport(organization, range);
    const second = await api("POST", exportsPath(organization), { key: organization.key, body: range });
    expectError(second, 409, errorBody("conflict", "conflict", "An export of this organization is still running."));
    const listed = await db
      .select({ id: schema.activityLogExports.id })
      .from(schema.activityLogExports)
      .where(eq(schema.activityLogExports.organizationId, organization.organization.id));
    expect(listed).toEqual([{ id: first.body.id }]);
    // Another organization's export is not held back by it.
    await createExport(await setupOrganization(), range);
    expect((await finished(organization, first.body.id)).status).toBe("succeeded");
    await createExport(organization, range);
  }, 60_000);
});

describe("an export sent again with its Idempotency-Key", () => {
  it("is not made twice by a retry with its key when its first step could not be queued", async () => {
    const team = await setupOrganization();
    const path = `/api/organizations/${team.organization.id}/activity_log/exports`;
    const request = {
      key: team.key,
      body: { from: "2020-01-01T00:00:00Z", to: "2030-01-01T00:00:00Z" },
      headers: { "Idempotency-Key": "export-once" },
    };
    const sent = vi.spyOn(env.BACKGROUND_JOBS, "send").mockRejectedValueOnce(new Error("queue unavailable"));
    const first = await api("POST", path, request);
    sent.mockRestore();

    const retry = await api("POST", path, request);

    const exports = await db
      .select({ id: schema.activityLogExports.id })
      .from(schema.activityLogExports)
      .where(eq(schema.activityLogExports.organizationId, team.organization.id));
    // Either the first attempt succeeded (202, the cron sends the lost step) and the retry is its
    // replay, or it failed and wrote nothing: never two exports for one key.
    expect({ first: first.status, exports: exports.length }).toEqual({ first: 202, exports: 1 });
    expect(retry.status).toBe(202);
  });
});

describe("an activity-log export's creation holds the caller's admin level", () => {
  it("an admin removed from the organization meanwhile starts no export (404, none made)", async () => {
    const { organization, key: ownerKey } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const ran = beforeWrites([
      [
        /^insert into "activity_log_exports"/,
        async () =>
          (await api("DELETE", `/api/organizations/${organization.id}/members/${admin.user.uuid}`, { key: ownerKey }))
            .status,
      ],
    ]);
    const created = await api("POST", `/api/organizations/${organization.id}/activity_log/exports`, {
      key: admin.key,
      body: { from: "2020-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z" },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    const rows = await db
      .select({ id: schema.activityLogExports.id })
      .from(schema.activityLogExports)
      .where(eq(schema.activityLogExports.organizationId, organization.id));
    expect({ status: created.status, exports: rows.length }).toEqual({ status: 404, exports: 0 });
  });
});
