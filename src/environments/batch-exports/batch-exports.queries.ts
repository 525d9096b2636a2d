import { and, desc, eq, ne, sql, type SQL } from "drizzle-orm";
import { batchExports } from "../../db/schema";
import type { Database } from "../../platform/db";
import { notFound } from "../../platform/errors";
import { nowIso } from "../../platform/ids";
import { onPage, selectCount, type Page } from "../../platform/pagination";

type BatchExportInsert = typeof batchExports.$inferInsert;
export type BatchExportChanges = Partial<Omit<BatchExportInsert, "id" | "environmentId" | "organizationId" | "createdAt">>;

/** A batch export that is not soft-deleted: deleted ones disappear from every read and write. */
export const liveBatchExport = (id: string) => and(eq(batchExports.id, id), eq(batchExports.deleted, false));
export const liveBatchExports = eq(batchExports.deleted, false);
export const ofEnvironment = (environmentId: number) => eq(batchExports.environmentId, environmentId);

const newestFirst = [desc(batchExports.createdAt), desc(batchExports.id)];

/** A page, newest first (as PostHog), with its `count` (see `selectCount`): one round trip. */
export async function listBatchExports(db: Database, where: SQL | undefined, count: SQL<number>, page: Page) {
  const [[total], rows] = await db.batch([
    selectCount(db, count),
    db.select().from(batchExports).where(onPage(db, batchExports.id, where, newestFirst, page)).orderBy(...newestFirst),
  ]);
  return { count: total?.value ?? 0, rows };
}

export async function findBatchExport(db: Database, where: SQL | undefined) {
  const [row] = await db.select().from(batchExports).where(where).limit(1);
  return row;
}

export async function insertBatchExport(db: Database, values: BatchExportInsert) {
  const [row] = await db.insert(batchExports).values(values).returning();
  return row!;
}

export async function updateBatchExport(db: Database, where: SQL | undefined, changes: BatchExportChanges) {
  const [row] = await db.update(batchExports).set(changes).where(where).returning();
  return row;
}

/**
 * Pause or unpause as one conditional UPDATE ... RETURNING, never a read and then a write.
 * Setting the state an export already has changes nothing: `last_paused_at` and
 * `last_updated_at` move only when `paused` does. No row matched: 404.
 */
export async function setPaused(db: Database, where: SQL | undefined, paused: boolean) {
  const now = nowIso();
  const changes = ne(batchExports.paused, paused);
  const nowIfChanged = (column: typeof batchExports.lastUpdatedAt | typeof batchExports.lastPausedAt) =>
    sql`CASE WHEN ${changes} THEN ${now} ELSE ${column} END`;
  const [row] = await db
    .update(batchExports)
    .set({
      paused,
      lastUpdatedAt: nowIfChanged(batchExports.lastUpdatedAt),
      ...(paused ? { lastPausedAt: nowIfChanged(batchExports.lastPausedAt) } : {}),
    })
    .where(where)
    .returning({ paused: batchExports.paused });
  if (!row) throw notFound();
  return row;
}
