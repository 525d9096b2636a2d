import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { and, eq } from "drizzle-orm";
import { batchExports } from "../../db/schema";
import {
  batchExportActivity,
  batchExportNameInBatch,
  batchExportProjectInBatch,
} from "../../environments/batch-exports/batch-exports.activity";
import { findBatchExport, listBatchExports, setPaused } from "../../environments/batch-exports/batch-exports.queries";
import { toBatchExport } from "../../environments/batch-exports/batch-exports.schema";
import type { AppEnv } from "../../platform/env";
import { notFound } from "../../platform/errors";
import { pageEnvelope, readPage } from "../../platform/pagination";
import { countOfVisibleExports, visibleExportsOfOrganization } from "./batch-exports.queries";
import type * as routes from "./batch-exports.routes";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

const visibleExport = (c: Context<AppEnv>, id: string) =>
  and(eq(batchExports.id, id), visibleExportsOfOrganization(c.var.db, c.var.actor, c.var.organization));

export const listBatchExportsOfOrganization: Handler<"listOrganizationBatchExports"> = async (c) => {
  const page = readPage(c);
  const where = visibleExportsOfOrganization(c.var.db, c.var.actor, c.var.organization);
  const count = countOfVisibleExports(c.var.db, c.var.actor, c.var.organization);
  const result = await listBatchExports(c.var.db, where, count, page);
  return c.json(pageEnvelope(c, page, result.count, result.rows.map(toBatchExport)), 200);
};

export const retrieveBatchExportOfOrganization: Handler<"retrieveOrganizationBatchExport"> = async (c) => {
  const row = await findBatchExport(c.var.db, visibleExport(c, c.req.valid("param").id));
  if (!row) throw notFound();
  return c.json(toBatchExport(row), 200);
};

/** The export's project is not in the path: the entry reads it, as the name, in the batch. */
const pausedStateHandler =
  (paused: boolean): Handler<"pauseBatchExport"> =>
  async (c) => {
    const { id } = c.req.valid("param");
    const entry = batchExportActivity.record(c, paused ? "paused" : "unpaused", {
      organizationId: c.var.organization.id,
      projectId: batchExportProjectInBatch(id),
      itemId: id,
      name: batchExportNameInBatch(id),
    });
    return c.json(await setPaused(c.var.db, visibleExport(c, id), paused, entry), 200);
  };

export const pauseBatchExportOfOrganization = pausedStateHandler(true);
export const unpauseBatchExportOfOrganization = pausedStateHandler(false);
