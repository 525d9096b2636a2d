import { createExecutionContext, createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import * as schema from "../../../src/db/schema";
import worker from "../../../src/index";
import { sealChain } from "../../../src/platform/activity-log/chain";
import { MembershipLevel } from "../../../src/platform/levels";
import { keyIdOf } from "../../support/activity-log";
import { expectError, INSUFFICIENT_LEVEL } from "../../support/error-bodies";
import { addMember, api, db, setupOrganization } from "../../support/harness";
import { expectedOrganization } from "../../support/organizations";

type Organization = Awaited<ReturnType<typeof setupOrganization>>;

const organizationPath = (organization: Organization) => `/api/organizations/${organization.organization.id}`;
const DAY = 86_400_000;

/** `count` sealed entries, one every `spacing` ms up to a minute ago (the oldest first). */
async function seedEntries(organization: Organization, count: number, spacing: number) {
  const newest = Date.now() - 60_000;
  await env.DB.prepare(
    `with recursive n(i) as (select 1 union all select i + 1 from n where i < ?2)
     insert into activity_log (id, organization_id, seq, is_system, activity, scope, item_id, detail, created_at, hash)
     select printf('%08x', i) || substr(?1, 9), ?1, i, 1, 'updated', 'Organization', ?1,
       '{"name":null,"changes":null,"context":null}',
       strftime('%Y-%m-%dT%H:%M:%fZ', (?3 - (?2 - i) * ?4) / 1000.0, 'unixepoch'), null
     from n`,
  )
    .bind(organization.organization.id, count, newest, spacing)
    .run();
  while ((await sealChain(db, organization.organization.id)) > 0);
}

const verify = async (organization: Organization) =>
  (await api("GET", `${organizationPath(organization)}/activity_log/verify`, { key: organization.key })).body;

const entriesOf = (organization: Organization) =>
  db
    .select({ seq: schema.activityLog.seq, createdAt: schema.activityLog.createdAt })
    .from(schema.activityLog)
    .where(eq(schema.activityLog.organizationId, organization.organization.id));

describe("activity-log retention per organization", () => {
  it("is an admin's setting, within the deployment's bounds, recorded in the log", async () => {
    const organization = await setupOrganization();
    const response = await api("PATCH", organizationPath(organization), {
      key: organization.key,
      body: { activity_log_retention_days: 90 },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      expectedOrganization(
        { ...organization.organization, updatedAt: undefined },
        {
          level: MembershipLevel.owner,
          projects: [organization.project],
          overrides: { activity_log_retention_days: 90 },
        },
      ),
    );
    const [entry] = (await api("GET", `${organizationPath(organization)}/activity_log`, { key: organization.key })).body
      .results;
    expect(entry).toMatchObject({
      scope: "Organization",
      activity: "updated",
      api_key_id: await keyIdOf(organization.owner),
      detail: {
        changes: [
          { type: "Organization", action: "changed", field: "activity_log_retention_days", before: null, after: 90 },
        ],
      },
    });
    const reset = await api("PATCH", organizationPath(organization), {
      key: organization.key,
      body: { activity_log_retention_days: null },
    });
    expect(reset.body.activity_log_retention_days).toBeNull();

    for (const [days, code, detail] of [
      [366, "max_value", "Ensure this value is less than or equal to 365."],
      [29, "min_value", "Ensure this value is greater than or equal to 30."],
      [0, "min_value", "Ensure this value is greater than or equal to 30."],
    ] as const) {
      expectError(
        await api("PATCH", organizationPath(organization), {
          key: organization.key,
          body: { activity_log_retention_days: days },
        }),
        400,
        {
          type: "validation_error",
          code,
          detail,
          attr: "activity_log_retention_days",
        },
      );
    }
    const fractional = await api("PATCH", organizationPath(organization), {
      key: organization.key,
      body: { activity_log_retention_days: 45.5 },
    });
    expect(fractional.body).toMatchObject({ type: "validation_error", attr: "activity_log_retention_days" });
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    expectError(
      await api("PATCH", organizationPath(organization), {
        key: member.key,
        body: { activity_log_retention_days: 30 },
      }),
      403,
      INSUFFICIENT_LEVEL,
    );
    // A deployment keeping less than 30 days bounds both ends with its own.
    const underLowerMaximum = (days: number) =>
      worker.fetch(
        new Request(`http://localhost${organizationPath(organization)}`, {
          method: "PATCH",
          headers: { Authorization: `Bearer ${organization.key}`, "Content-Type": "application/json" },
          body: JSON.stringify({ activity_log_retention_days: days }),
        }),
        { ...env, ACTIVITY_LOG_RETENTION_DAYS: "20" },
        createExecutionContext(),
      );
    expect((await underLowerMaximum(20)).status).toBe(200);
    expect(await (await underLowerMaximum(21)).json()).toMatchObject({
      code: "max_value",
      attr: "activity_log_retention_days",
    });
  });

  it("is pruned by the cron per organization, in bounded batches, and each chain still verifies", async () => {
    const shortLived = await setupOrganization();
    const keptLonger = await setupOrganization();
    // 2,500 entries over 100 days: more than one statement's 1,000 to prune.
    await seedEntries(shortLived, 2_500, (100 * DAY) / 2_500);
    await seedEntries(keptLonger, 500, (100 * DAY) / 500);
    await api("PATCH", organizationPath(shortLived), {
      key: shortLived.key,
      body: { activity_log_retention_days: 30 },
    });
    const headBefore = (await verify(shortLived)).head;

    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);

    const cutoff = new Date(Date.now() - 30 * DAY).toISOString();
    const kept = await entriesOf(shortLived);
    expect(kept.every((entry) => entry.createdAt >= cutoff)).toBe(true);
    const firstKept = Math.min(...kept.map((entry) => entry.seq));
    // 30 of 100 days are kept (the update's entry is the newest).
    expect(kept.length).toBeGreaterThan(700);
    expect(kept.length).toBeLessThan(800);
    const [anchor] = await db
      .select()
      .from(schema.activityLogAnchors)
      .where(eq(schema.activityLogAnchors.organizationId, shortLived.organization.id));
    expect(anchor).toMatchObject({ seq: firstKept - 1 });
    expect(await verify(shortLived)).toEqual({
      valid: true,
      entries: kept.length,
      first_invalid: null,
      head: headBefore,
    });
    // The other organization keeps the deployment's 365 days: past 30, in the archive.
    expect(await verify(keptLonger)).toMatchObject({ valid: true, entries: 500 });
    // Nothing more is due: a second run prunes nothing.
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
    expect(await entriesOf(shortLived)).toHaveLength(kept.length);
  }, 60_000);
});
