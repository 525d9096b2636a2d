import { env } from "cloudflare:workers";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { expect, it } from "vitest";
import * as schema from "../src/db/schema";
import { segmentLine } from "../src/platform/activity-log/archive";
import { chunkForInsert } from "../src/platform/db";
import { nowIso, uuid7 } from "../src/platform/ids";
import { MembershipLevel } from "../src/platform/levels";
import { db, setupOrganization } from "../test/support/harness";
import { emptySeedRows, insertSeedRows, seedProject } from "../test/support/seed";

/**
 * The capacity model of docs/capacity.md: the database's size (D1's `size_after`: page count times
 * page size, indexes included) before and after inserting 10,000 rows of each kind, shaped as the
 * API writes them; and the bytes of an archived activity-log segment line. Prints one line a kind.
 */
const ROWS = 10_000;
const GB = 1_000_000_000;
const D1_DATABASE_BYTES = 10 * GB;

/**
 * The database file's size: D1 answers it with every query (`meta.size_after`, its pages times
 * their size); `pragma page_count` itself is not authorized in D1.
 */
async function databaseBytes(): Promise<number> {
  const result = await env.DB.prepare("select 1").run();
  return result.meta.size_after;
}

async function insertAll<T extends SQLiteTable>(table: T, rows: T["$inferInsert"][]) {
  const statements = chunkForInsert(table, rows).map((chunk) => db.insert(table).values(chunk) as BatchItem<"sqlite">);
  for (let start = 0; start < statements.length; start += 500) {
    const [first, ...rest] = statements.slice(start, start + 500);
    if (first) await db.batch([first, ...rest]);
  }
}

/** Bytes per row of what `insert` adds: the database's growth over 10,000 rows. */
async function bytesPerRow(insert: () => Promise<void>): Promise<number> {
  const before = await databaseBytes();
  await insert();
  return (await databaseBytes()) - before;
}

/** An entry as a write records it: a change with before and after, a request, a key, sealed. */
const activityEntry = (organizationId: string, projectId: number, userId: number, seq: number) => ({
  id: uuid7(),
  organizationId,
  seq,
  projectId,
  dashboardId: seq,
  userId,
  apiKeyId: uuid7(),
  isSystem: false,
  activity: "updated",
  scope: "Dashboard",
  itemId: String(seq),
  detail: JSON.stringify({
    name: `Dashboard ${seq}`,
    changes: [{ type: "Dashboard", action: "changed", field: "name", before: `Dashboard ${seq}`, after: "Renamed" }],
    context: null,
  }),
  requestId: uuid7(),
  createdAt: nowIso(),
  hash: "0123456789abcdef".repeat(4),
});

it("measures bytes per row of each kind, and where one database fills", async () => {
  const team = await setupOrganization();
  const organizationId = team.organization.id;
  const now = nowIso();
  const measured: [string, number][] = [];

  const entries = Array.from({ length: ROWS }, (_, index) =>
    activityEntry(organizationId, team.project.id, team.owner.id, index + 1),
  );
  measured.push(["activity-log entries", await bytesPerRow(() => insertAll(schema.activityLog, entries))]);
  const segmentBytes = entries.reduce((sum, entry) => sum + new TextEncoder().encode(segmentLine(entry)).length, 0);

  measured.push([
    "projects (with their environment)",
    await bytesPerRow(async () => {
      const rows = emptySeedRows();
      for (let index = 0; index < ROWS; index += 1) seedProject(rows, organizationId, now);
      await insertSeedRows(rows);
    }),
  ]);
  measured.push([
    "dashboards",
    await bytesPerRow(() =>
      insertAll(
        schema.dashboards,
        Array.from({ length: ROWS }, (_, index) => ({
          environmentId: team.project.id,
          name: `Dashboard ${index}`,
          createdById: team.owner.id,
          createdAt: now,
          lastModifiedAt: now,
        })),
      ),
    ),
  ]);
  measured.push([
    "memberships (with their user)",
    await bytesPerRow(async () => {
      const users = Array.from({ length: ROWS }, (_, index) => ({
        uuid: uuid7(),
        distinctId: uuid7(),
        email: `capacity-${index}@example.com`,
        firstName: "Member",
        createdAt: now,
      }));
      const inserted = [];
      for (const chunk of chunkForInsert(schema.users, users))
        inserted.push(...(await db.insert(schema.users).values(chunk).returning({ id: schema.users.id })));
      await insertAll(
        schema.organizationMemberships,
        inserted.map((user) => ({
          id: uuid7(),
          organizationId,
          userId: user.id,
          level: MembershipLevel.member,
          joinedAt: now,
          updatedAt: now,
        })),
      );
    }),
  ]);
  const webhookId = uuid7();
  await db.insert(schema.webhooks).values({
    id: webhookId,
    organizationId,
    url: "https://example.com/hooks",
    events: ["*"],
    enabled: true,
    sealedSecret: "sealed",
    lastEnqueuedSeq: 0,
    createdAt: now,
    updatedAt: now,
  });
  measured.push([
    "webhook deliveries",
    await bytesPerRow(() =>
      insertAll(
        schema.webhookDeliveries,
        entries.map((entry) => ({
          id: uuid7(),
          webhookId,
          entryId: entry.id,
          event: "Dashboard.updated",
          status: "succeeded",
          attempts: 1,
          lastStatusCode: 200,
          retryUntil: now,
          createdAt: now,
          updatedAt: now,
        })),
      ),
    ),
  ]);

  measured.push([
    "archive index rows (one per segment)",
    await bytesPerRow(() =>
      insertAll(
        schema.activityLogSegments,
        Array.from({ length: ROWS }, (_, index) => ({
          organizationId,
          firstSeq: index * 1_000 + 1,
          lastSeq: (index + 1) * 1_000,
          firstCreatedAt: now,
          lastCreatedAt: now,
          key: `${organizationId}/${now.slice(0, 10)}/${String(index * 1_000 + 1).padStart(12, "0")}.ndjson`,
          hash: "0123456789abcdef".repeat(4),
          previousHash: "0123456789abcdef".repeat(4),
          lastHash: "0123456789abcdef".repeat(4),
          entries: 1_000,
          bytes: 645_000,
          archivedAt: now,
        })),
      ),
    ),
  ]);

  const lines = measured.map(([kind, bytes]) => {
    const perRow = bytes / ROWS;
    expect(perRow).toBeGreaterThan(0);
    const millionsPerDatabase = (D1_DATABASE_BYTES / perRow / 1e6).toFixed(1);
    return `${kind.padEnd(36)} ${perRow.toFixed(0).padStart(5)} bytes/row   ${millionsPerDatabase} M rows fill 10 GB`;
  });
  lines.push(`${"archived segment line (R2)".padEnd(36)} ${(segmentBytes / ROWS).toFixed(0).padStart(5)} bytes/entry`);
  console.log(
    `\nCapacity: database growth per ${ROWS} rows (size_after: page_count * page_size)\n${lines.join("\n")}\n`,
  );
});
