import { env } from "cloudflare:workers";
import { asc, desc, eq } from "drizzle-orm";
import { expect } from "vitest";
import * as schema from "../../src/db/schema";
import { sealChain } from "../../src/platform/activity-log/chain";
import { db, ISO_TIMESTAMP, userBasic, UUID, type TestUser } from "./harness";

const HASH = /^[0-9a-f]{64}$/;

/**
 * `count` sealed entries of the organization, numbered from 1, one every `spacing` ms up to
 * `newestAgo` ms ago (the oldest first), written straight into D1.
 */
export async function seedEntries(organizationId: string, count: number, spacing: number, newestAgo = 60_000) {
  const newest = Date.now() - newestAgo;
  await env.DB.prepare(
    `with recursive n(i) as (select 1 union all select i + 1 from n where i < ?2)
     insert into activity_log (id, organization_id, seq, is_system, activity, scope, item_id, detail, created_at, hash)
     select printf('%08x', i) || substr(?1, 9), ?1, i, 1, 'updated', 'Organization', ?1,
       '{"name":"entry ' || i || '","changes":null,"context":null}',
       strftime('%Y-%m-%dT%H:%M:%fZ', (?3 - (?2 - i) * ?4) / 1000.0, 'unixepoch'), null
     from n`,
  )
    .bind(organizationId, count, newest, spacing)
    .run();
  while ((await sealChain(db, organizationId)) > 0);
}

/**
 * `count` sealed entries, one every `spacing` ms from `start` (ms), their ids UUIDv7 of their own
 * times, as the Worker mints them: what an entry's URL finds its archived segment by.
 */
export async function seedEntriesWithTimedIds(organizationId: string, count: number, spacing: number, start: number) {
  await env.DB.prepare(
    `with recursive n(i) as (select 1 union all select i + 1 from n where i < ?2),
       t(i, ms, hex) as (select i, ?3 + (i - 1) * ?4, printf('%012x', ?3 + (i - 1) * ?4) from n)
     insert into activity_log (id, organization_id, seq, is_system, activity, scope, item_id, detail, created_at, hash)
     select substr(hex, 1, 8) || '-' || substr(hex, 9, 4) || '-7' || printf('%03x', i % 4096) || '-8'
         || substr(lower(hex(randomblob(2))), 1, 3) || '-' || lower(hex(randomblob(6))),
       ?1, i, 1, 'updated', 'Organization', ?1, '{"name":"entry ' || i || '","changes":null,"context":null}',
       strftime('%Y-%m-%dT%H:%M:%fZ', ms / 1000.0, 'unixepoch'), null
     from t`,
  )
    .bind(organizationId, count, start, spacing)
    .run();
  while ((await sealChain(db, organizationId)) > 0);
}

/** The organization's oldest entry still in D1 (lowest `seq`). */
export const firstEntryOf = (organizationId: string) => entryAtEnd(organizationId, asc);

/** The organization's newest entry still in D1 (highest `seq`). */
export const lastEntryOf = (organizationId: string) => entryAtEnd(organizationId, desc);

async function entryAtEnd(organizationId: string, order: typeof asc) {
  const [entry] = await db
    .select()
    .from(schema.activityLog)
    .where(eq(schema.activityLog.organizationId, organizationId))
    .orderBy(order(schema.activityLog.seq))
    .limit(1);
  return entry!;
}

/** The id of the user's (first) key: the one their requests in a test are made with. */
export async function keyIdOf(user: TestUser): Promise<string> {
  const [key] = await db.select().from(schema.personalApiKeys).where(eq(schema.personalApiKeys.userId, user.id));
  return key!.id;
}

export type ExpectedActivity = {
  organizationId: string;
  projectId: number | null;
  /** The dashboard an entry about a dashboard or its parts names; none otherwise. */
  dashboardId?: number;
  user: TestUser;
  apiKeyId: string | null;
  scope: string;
  activity: string;
  itemId: string;
  name: string | null;
  changes?: unknown;
  context?: unknown;
};

/** An entry as the log shows it, made by the request that answered `response`. */
export function activityEntry(response: { headers: Headers }, expected: ExpectedActivity) {
  return {
    id: expect.stringMatching(UUID),
    user: userBasic(expected.user),
    unread: false,
    organization_id: expected.organizationId,
    project_id: expected.projectId,
    dashboard_id: expected.dashboardId ?? null,
    was_impersonated: false,
    is_system: false,
    activity: expected.activity,
    scope: expected.scope,
    item_id: expected.itemId,
    detail: {
      id: expected.itemId,
      name: expected.name,
      short_id: null,
      type: null,
      changes: expected.changes ?? null,
      merge: null,
      trigger: null,
      context: expected.context ?? null,
    },
    created_at: expect.stringMatching(ISO_TIMESTAMP),
    request_id: response.headers.get("X-Request-Id"),
    api_key_id: expected.apiKeyId,
    service_key: null,
    seq: expect.any(Number),
    hash: expect.toBeOneOf([null, expect.stringMatching(HASH)]),
  };
}

/** The entry of the owner's key promoting a member to admin (`PATCH .../members/:uuid`), as the log shows it. */
export async function promotionEntry(
  response: { headers: Headers },
  organization: { organization: { id: string }; owner: TestUser },
  member: { user: TestUser; membership: { id: string } },
) {
  return activityEntry(response, {
    organizationId: organization.organization.id,
    projectId: null,
    user: organization.owner,
    apiKeyId: await keyIdOf(organization.owner),
    scope: "OrganizationMembership",
    activity: "updated",
    itemId: member.membership.id,
    name: member.user.email,
    changes: [{ type: "OrganizationMembership", action: "changed", field: "level", before: 1, after: 8 }],
    context: { user_uuid: member.user.uuid },
  });
}
