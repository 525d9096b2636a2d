import { and, eq, getTableColumns, ne, sql, type SQL } from "drizzle-orm";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import { batchExports } from "../../db/schema";
import { writeWithActivity } from "../../platform/activity-log/resource-activity";
import { whileHolds, type Database } from "../../platform/db";
import { notFound } from "../../platform/errors";
import { nowIso } from "../../platform/ids";
import { joinPage, pageOf, selectCount, type ListOrder, type Page } from "../../platform/pagination";
import { DESTINATION_TYPES, secretFields } from "./destinations";

type Statement = BatchItem<"sqlite">;

type BatchExportInsert = typeof batchExports.$inferInsert;
export type BatchExportChanges = Partial<
  Omit<BatchExportInsert, "id" | "environmentId" | "organizationId" | "createdAt">
>;

/** A batch export that is not soft-deleted: deleted ones disappear from every read and write. */
const liveBatchExport = (id: string) => and(eq(batchExports.id, id), eq(batchExports.deleted, false));
export const liveBatchExports = eq(batchExports.deleted, false);
export const ofEnvironment = (environmentId: number) => eq(batchExports.environmentId, environmentId);
export const liveInProject = (environmentId: number, id: string) =>
  and(ofEnvironment(environmentId), liveBatchExport(id));

/** Newest first, in the organization's list as in the environment's (an index of each). */
const newestFirst: ListOrder = [
  [batchExports.createdAt, "desc"],
  [batchExports.id, "desc"],
];

/** Every destination's secret fields, as JSON paths: `$.aws_secret_access_key`... */
const SECRET_PATHS = [...new Set(DESTINATION_TYPES.flatMap(secretFields))].map((field) => {
  if (!/^[A-Za-z0-9_]+$/.test(field)) throw new Error(`not an identifier: ${field}`);
  return sql.raw(`'$.${field}'`);
});

/**
 * The configuration without its secrets, removed in SQL: a list never shows them, and each may
 * hold 64 KiB sealed, which a page would otherwise read for nothing.
 */
const configWithoutSecrets =
  sql`json_remove(${batchExports.destinationConfig}, ${sql.join(SECRET_PATHS, sql`, `)})`.mapWith(
    batchExports.destinationConfig,
  );

function pageStatements(db: Database, page: Page, where: SQL | undefined, count: SQL<number>) {
  const total = selectCount(db, count);
  const rows = db
    .select({ ...getTableColumns(batchExports), destinationConfig: configWithoutSecrets })
    .from(batchExports)
    .innerJoin(...joinPage(db, newestFirst, where, page));
  return [total, rows] as [typeof total, typeof rows];
}

type PageStatements = ReturnType<typeof pageStatements>;

/**
 * A page, newest first (as PostHog), with its `count` (see `selectCount`): `read` sends the
 * statements `list` makes (of the exports `where` selects) in the round trip that resolves the
 * caller's context.
 */
export async function listBatchExports(
  db: Database,
  page: Page,
  read: (
    list: (where: SQL | undefined, count: SQL<number>) => PageStatements,
  ) => Promise<BatchResponse<PageStatements>>,
) {
  const [[total], rows] = await read((where, count) => pageStatements(db, page, where, count));
  const listed = pageOf(newestFirst, page, rows);
  return { count: total?.value ?? 0, rows: listed.rows, links: listed.links };
}

export const selectBatchExport = (db: Database, where: SQL | undefined) =>
  db.select().from(batchExports).where(where).limit(1);

/**
 * Each write below goes with its `entry` in the activity log, in one batch, and lands only while
 * `allowed` holds when it runs (the caller still sees the project): else its name is NULL, which
 * the column refuses (the caller answers 404), or, for a pause, it matches nothing.
 */
export async function insertBatchExport(db: Database, values: BatchExportInsert, entry: Statement, allowed: SQL) {
  const held = { ...values, name: whileHolds(values.name, allowed) };
  const [row] = await writeWithActivity(db, db.insert(batchExports).values(held).returning(), entry);
  return row!;
}

export async function updateBatchExport(
  db: Database,
  where: SQL | undefined,
  changes: BatchExportChanges,
  entry: Statement | undefined,
  allowed: SQL,
) {
  const held = { ...changes, name: whileHolds(changes.name ?? sql<string>`${batchExports.name}`, allowed) };
  const [row] = await writeWithActivity(db, db.update(batchExports).set(held).where(where).returning(), entry);
  return row;
}

/**
 * Pause or unpause in one round trip, never a read and then a write: the UPDATE matches only an
 * export whose state it changes, so that `entry` records a real change and `last_paused_at` and
 * `last_updated_at` move only then; the read after it answers either way. No row: 404.
 */
export async function setPaused(db: Database, where: SQL | undefined, paused: boolean, entry: Statement) {
  const now = nowIso();
  const [, , [row]] = await db.batch([
    db
      .update(batchExports)
      .set({ paused, lastUpdatedAt: now, ...(paused ? { lastPausedAt: now } : {}) })
      .where(and(where, ne(batchExports.paused, paused))),
    entry,
    db.select({ paused: batchExports.paused }).from(batchExports).where(where).limit(1),
  ]);
  if (!row) throw notFound();
  return row;
}
