import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { eq } from "drizzle-orm";
import { activityLogExports, users } from "../../db/schema";
import { CONTENT_TYPES, type ExportFormat } from "../../platform/activity-log/export-format";
import { resourceActivity } from "../../platform/activity-log/resource-activity";
import { personOf, type AppEnv } from "../../platform/env";
import { conflict, notFound } from "../../platform/errors";
import { nowIso, uuid7 } from "../../platform/ids";
import { errorFields, logLine } from "../../platform/log";
import { organizationRead } from "../../platform/route-context";
import { callerStillAdmin, refusedWhenLevelLost } from "../../platform/route-context/organization";
import {
  downloadPath,
  insertExport,
  isAnotherExportRunning,
  partKey,
  selectExport,
  type ExportRow,
  type UserRow,
} from "./exports.queries";
import type { createExport, downloadExport, retrieveExport } from "./exports.routes";
import type { ActivityLogExport } from "./exports.schema";
import { publicUrl } from "../../platform/public-url";
import { toUserBasic } from "../../platform/user-basic";

function toExport(c: Context<AppEnv>, row: ExportRow, createdBy: UserRow | null): ActivityLogExport {
  return {
    id: row.id,
    status: row.status as ActivityLogExport["status"],
    format: row.format as ActivityLogExport["format"],
    from: row.fromTime,
    to: row.toTime,
    scopes: row.scopes,
    entries: row.entries,
    parts: row.parts,
    bytes: row.bytes,
    error: row.error,
    created_by: createdBy ? toUserBasic(createdBy) : null,
    created_at: row.createdAt,
    completed_at: row.completedAt,
    download_url: row.status === "succeeded" ? publicUrl(c, downloadPath(row)).toString() : null,
  };
}

/** An export is logged as it starts: the log records who copied it out, and which part of it. */
const exportActivity = resourceActivity("ActivityLogExport", { fields: [] });

export const createActivityLogExport: RouteHandler<typeof createExport, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const { db, actor } = c.var;
  const row = {
    id: uuid7(),
    organizationId: c.var.organization.id,
    createdById: personOf(actor),
    format: input.format,
    scopes: input.scopes ?? null,
    from: input.from,
    to: input.to,
  };
  // Made only while the caller is still an admin (removed or demoted meanwhile: 404 or 403).
  const stillAdmin = callerStillAdmin(actor, row.organizationId);
  const entry = exportActivity.record(c, "created", {
    organizationId: row.organizationId,
    itemId: row.id,
    name: row.format,
    context: { from: new Date(row.from).toISOString(), to: new Date(row.to).toISOString(), scopes: row.scopes },
  });
  const [[created], , [creator]] = await db
    .batch([
      insertExport(db, row, nowIso(), stillAdmin),
      entry,
      db.select().from(users).where(eq(users.id, actor.userId)),
    ])
    .catch((error: unknown) => {
      if (isAnotherExportRunning(error)) throw conflict("An export of this organization is still running.");
      throw error;
    })
    .catch(refusedWhenLevelLost(c, activityLogExports.format));
  if (!created) throw new Error("the export was not read back");
  try {
    await c.env.BACKGROUND_JOBS.send({ kind: "export_part", exportId: created.id, part: 0 });
  } catch (error) {
    // The export is made: the cron sends a lost first step (`resumeStalledExports`). A 500 here
    // would have a retry, even with its `Idempotency-Key`, make a second one.
    logLine("warn", { task: "schedule activity-log export", export_id: created.id, error: errorFields(error) });
  }
  return c.json(toExport(c, created, creator ?? null), 202);
};

/** The export the path names, with the membership, in one round trip. */
async function exportOfPath(c: Context<AppEnv>) {
  const read = organizationRead(c);
  const [[found]] = await read.batch([selectExport(read.db, read.organizationId, c.req.param("id") ?? "")]);
  if (!found) throw notFound();
  return found;
}

export const retrieveActivityLogExport: RouteHandler<typeof retrieveExport, AppEnv> = async (c) => {
  const { row, createdBy } = await exportOfPath(c);
  return c.json(toExport(c, row, createdBy), 200);
};

/**
 * The parts one after the other as one stream, each read from R2 only when the one before is
 * sent: the Worker holds one chunk at a time, whatever the export's size. `first` is already open.
 */
function concatenatedParts(bucket: R2Bucket, row: ExportRow, first: R2ObjectBody): ReadableStream<Uint8Array> {
  let next = 1;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined = first.body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        if (!reader) {
          if (next >= row.parts) return controller.close();
          const part = await bucket.get(partKey(row, next));
          if (!part) return controller.error(new Error(`part ${next} of export ${row.id} is missing`));
          next += 1;
          reader = part.body.getReader();
        }
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        reader = undefined;
      }
    },
    cancel: (reason) => reader?.cancel(reason),
  });
}

/**
 * The file, streamed from R2 through the Worker with the caller's key checked as on any read:
 * no signed link to leak or expire. 409 until the export has succeeded; 404 once its parts are
 * gone from the bucket (a lifecycle rule, say).
 */
export const downloadActivityLogExport: RouteHandler<typeof downloadExport, AppEnv> = async (c) => {
  const { row } = await exportOfPath(c);
  if (row.status !== "succeeded")
    throw conflict(`The export is ${row.status}: it can be downloaded once it has succeeded.`);
  const first = await c.env.ACTIVITY_LOG_EXPORTS.get(partKey(row, 0));
  if (!first) throw notFound();
  const format = row.format as ExportFormat;
  return c.body(concatenatedParts(c.env.ACTIVITY_LOG_EXPORTS, row, first), 200, {
    "Content-Type": CONTENT_TYPES[format],
    "Content-Disposition": `attachment; filename="activity-log-${row.id}.${format}"`,
  });
};
