import { userBasicColumns, type UserBasicRow } from "../../platform/user-basic";
import { and, eq, sql, type SQL } from "drizzle-orm";
import { activityLogExports, users } from "../../db/schema";
import { lastSeqAtOrBefore } from "../../platform/activity-log/activity-log.queries";
import { isNotNullViolationOf, whileHolds, type Database } from "../../platform/db";
import type { OrganizationRef } from "../../platform/route-context/organization";

export type ExportRow = typeof activityLogExports.$inferSelect;
export type UserRow = UserBasicRow;

/** The path of an export's file, downloaded through the API. */
export const downloadPath = (row: ExportRow) =>
  `/api/organizations/${row.organizationId}/activity_log/exports/${row.id}/download`;

/** Where part `part` of an export is kept in the bucket: one object per part, in order. */
export const partKey = (row: Pick<ExportRow, "organizationId" | "id" | "format">, part: number) =>
  `${row.organizationId}/${row.id}/part-${String(part).padStart(6, "0")}.${row.format}`;

/** The millisecond before a time: the list's `before` and the exports' bounds exclude their own millisecond's end. */
const justBefore = (time: string) => new Date(Date.parse(time) - 1).toISOString();

type NewExport = Pick<ExportRow, "id" | "organizationId" | "createdById" | "format" | "scopes"> & {
  from: string;
  to: string;
};

/**
 * The export's row, its range of `seq` fixed now from its times (entries take their number and
 * their time together, so a time range is a range of numbers: one probe of the time index each).
 * Its cursor starts before the range. Made only while the organization has no other export
 * pending or running: else its status is NULL, which the column refuses (`isAnotherExportRunning`),
 * so that one key cannot start exports without bound (each copies its range into R2, a queue
 * message and a write per 1,000 entries). And only while `heldWhile` holds (the caller's level as
 * judged): else its format is NULL.
 */
export function insertExport(db: Database, input: NewExport, now: string, heldWhile: SQL) {
  const beforeRange = lastSeqAtOrBefore(input.organizationId, justBefore(input.from), "before");
  const noneUnfinished = sql`not exists (select 1 from ${activityLogExports}
    where ${activityLogExports.organizationId} = ${input.organizationId}
      and ${activityLogExports.status} in ('pending', 'running'))`;
  return db
    .insert(activityLogExports)
    .values({
      id: input.id,
      organizationId: input.organizationId,
      createdById: input.createdById,
      format: whileHolds(input.format, heldWhile),
      fromTime: new Date(input.from).toISOString(),
      toTime: new Date(input.to).toISOString(),
      scopes: input.scopes,
      firstSeq: sql`${beforeRange} + 1`,
      lastSeq: lastSeqAtOrBefore(input.organizationId, justBefore(input.to)),
      status: whileHolds("pending", noneUnfinished),
      cursorSeq: beforeRange,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
}

export const isAnotherExportRunning = (error: unknown) => isNotNullViolationOf(error, activityLogExports.status);

/** An export of the organization, with its creator. */
export const selectExport = (db: Database, organizationId: OrganizationRef, id: string) =>
  db
    .select({ row: activityLogExports, createdBy: userBasicColumns(users) })
    .from(activityLogExports)
    .leftJoin(users, eq(users.id, activityLogExports.createdById))
    .where(and(eq(activityLogExports.organizationId, organizationId), eq(activityLogExports.id, id)));
