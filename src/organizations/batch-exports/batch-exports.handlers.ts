import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { and, eq } from "drizzle-orm";
import { batchExports } from "../../db/schema";
import {
  batchExportActivity,
  batchExportNameInBatch,
  batchExportProjectInBatch,
} from "../../environments/batch-exports/batch-exports.activity";
import { listBatchExports, selectBatchExport, setPaused } from "../../environments/batch-exports/batch-exports.queries";
import { toBatchExport } from "../../environments/batch-exports/batch-exports.schema";
import type { AppEnv } from "../../platform/env";
import { notFound } from "../../platform/errors";
import { pageEnvelope, readPage } from "../../platform/pagination";
import { organizationRead, type OrganizationRead } from "../../platform/route-context";
import { callerInOrganization, callerStillAtLeast } from "../../platform/route-context/organization";
import { MembershipLevel } from "../../platform/levels";
import { countOfVisibleExports, visibleExportsOfOrganization, type OrganizationCaller } from "./batch-exports.queries";
import type * as routes from "./batch-exports.routes";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

/**
 * The export, while the caller still sees it when the write runs: their membership and level read
 * by the statement, not as admitted, so that a member removed or demoted meanwhile (an admin's
 * level skips the hidden projects' test) pauses or restarts nothing (404).
 */
const visibleExport = (c: Context<AppEnv>, id: string) => {
  const organizationId = c.var.organization.id;
  const caller = { organizationId, ...callerInOrganization(c.var.actor, organizationId) };
  return and(
    eq(batchExports.id, id),
    callerStillAtLeast(c.var.actor, organizationId, MembershipLevel.member),
    visibleExportsOfOrganization(c.var.actor, caller),
  );
};

/** The caller's membership as subqueries of the read that resolves it. */
function callerOfRead(c: Context<AppEnv>, read: OrganizationRead): OrganizationCaller {
  return { organizationId: read.organizationId, ...callerInOrganization(c.var.actor, read.organizationId) };
}

export const listBatchExportsOfOrganization: Handler<"listOrganizationBatchExports"> = async (c) => {
  const page = readPage(c);
  const read = organizationRead(c);
  const caller = callerOfRead(c, read);
  const where = visibleExportsOfOrganization(c.var.actor, caller);
  const count = countOfVisibleExports(read.db, c.var.actor, caller);
  const result = await listBatchExports(read.db, page, (list) => read.batch(list(where, count)));
  return c.json(pageEnvelope(c, page, result.count, result.rows.map(toBatchExport), result.links), 200);
};

export const retrieveBatchExportOfOrganization: Handler<"retrieveOrganizationBatchExport"> = async (c) => {
  const read = organizationRead(c);
  const visible = and(
    eq(batchExports.id, c.req.valid("param").id),
    visibleExportsOfOrganization(c.var.actor, callerOfRead(c, read)),
  );
  const [[row]] = await read.batch([selectBatchExport(read.db, visible)]);
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
