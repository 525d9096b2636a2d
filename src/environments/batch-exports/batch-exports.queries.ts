import { and, eq, ne, type SQL } from "drizzle-orm";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import { batchExports, environments, organizations } from "../../db/schema";
import { writeWithActivity } from "../../platform/activity-log/resource-activity";
import type { Database } from "../../platform/db";
import { resolveProjectWith } from "../../platform/project-context";
import { notFound } from "../../platform/errors";
import { nowIso } from "../../platform/ids";
import { keysOfPage, onPage, positionOrder, selectCount, type Page, type SeekOrder } from "../../platform/pagination";
import type { OrganizationRef } from "../../platform/organization-context";

type Statement = BatchItem<"sqlite">;

type BatchExportInsert = typeof batchExports.$inferInsert;
export type BatchExportChanges = Partial<Omit<BatchExportInsert, "id" | "environmentId" | "organizationId" | "createdAt">>;

/** A batch export that is not soft-deleted: deleted ones disappear from every read and write. */
export const liveBatchExport = (id: string) => and(eq(batchExports.id, id), eq(batchExports.deleted, false));
export const liveBatchExports = eq(batchExports.deleted, false);
export const ofEnvironment = (environmentId: number) => eq(batchExports.environmentId, environmentId);

/** Newest first in the environment's list: by the exports' positions in it. */
export const newestInEnvironment = (environmentId: number) =>
  positionOrder(batchExports.environmentPosition, "desc", {
    list: "environment_batch_exports",
    owner: environmentId,
    issued: environments.batchExportPositions,
  });

/** Newest first in the organization's list: by the exports' positions in it. */
export const newestInOrganization = (organizationId: OrganizationRef) =>
  positionOrder(batchExports.organizationPosition, "desc", {
    list: "organization_batch_exports",
    owner: organizationId,
    issued: organizations.batchExportPositions,
  });

/** `counter`: the count when it is one row (null where it is not): see `onPage`. */
function pageStatements(db: Database, page: Page, where: SQL | undefined, order: SeekOrder, count: SQL<number>, counter?: SQL<number>) {
  const total = selectCount(db, count);
  const rows = db.select().from(batchExports).where(onPage(db, batchExports.id, where, order, page, counter)).orderBy(...order.sql).limit(page.limit);
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
    list: (where: SQL | undefined, order: SeekOrder, count: SQL<number>, counter?: SQL<number>) => PageStatements,
  ) => Promise<BatchResponse<PageStatements>>,
) {
  // The order of the statements sent last (a project's `@current` may build them twice).
  let sentOrder: SeekOrder | undefined;
  const [[total], rows] = await read((where, order, count, counter) => {
    sentOrder = order;
    return pageStatements(db, page, where, order, count, counter);
  });
  return { count: total?.value ?? 0, rows, keys: sentOrder && keysOfPage(sentOrder, rows) };
}

export const selectBatchExport = (db: Database, where: SQL | undefined) => db.select().from(batchExports).where(where).limit(1);

/** The live export the path names in the environment, read with the project (PATCH). */
export const batchExportOfPath = resolveProjectWith((db, environmentId, c) => [
  selectBatchExport(db, and(ofEnvironment(environmentId), liveBatchExport(c.req.param("id") ?? ""))),
]);

/** Each write below goes with its `entry` in the activity log, in one batch. */
export async function insertBatchExport(db: Database, values: BatchExportInsert, entry: Statement) {
  const [row] = await writeWithActivity(db, db.insert(batchExports).values(values).returning(), entry);
  return row!;
}

export async function updateBatchExport(
  db: Database,
  where: SQL | undefined,
  changes: BatchExportChanges,
  entry: Statement | undefined,
) {
  const [row] = await writeWithActivity(db, db.update(batchExports).set(changes).where(where).returning(), entry);
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
