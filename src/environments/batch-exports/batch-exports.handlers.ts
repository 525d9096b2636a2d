import type { RouteHandler } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import type { Context } from "hono";
import type { AppEnv } from "../../platform/env";
import { callerStillSeesProject, refusalInEnvironment } from "../../platform/route-context/project";
import { batchExports, environments } from "../../db/schema";
import { refusedWhenNull, unchangedSinceRead } from "../../platform/db";
import { changedOrGone, notFound } from "../../platform/errors";
import { nowIso } from "../../platform/ids";
import { counterOf, pageEnvelope, readPage } from "../../platform/pagination";
import { projectRead } from "../../platform/route-context";
import { loadKeyring } from "../../platform/secrets";
import { batchExportChanges, newBatchExport } from "./batch-export-changes";
import {
  batchExportActivity,
  batchExportAfter,
  batchExportItem,
  batchExportNameInBatch,
  sentDestinationSecrets,
  trackedBatchExportFields,
} from "./batch-exports.activity";
import { openDestination, sealDestination } from "./destination-secrets";
import type { DestinationType } from "./destinations";
import * as queries from "./batch-exports.queries";
import type { BatchExportRoutes } from "./batch-exports.routes";
import { batchExportOfPath, readBatchExportOfPath } from "./batch-exports.request";
import { toBatchExport } from "./batch-exports.schema";

type Handler<R extends keyof BatchExportRoutes> = RouteHandler<BatchExportRoutes[R], AppEnv>;

/**
 * Every write holds the right it was judged on, seeing the project (a member removed, or hidden
 * by a `none` rule, meanwhile exports nothing to a destination of theirs): 404 otherwise, 403 for
 * a key blocked in the organization meanwhile (`projectLost`).
 */
const stillSeesProject = (c: Context<AppEnv>) => callerStillSeesProject(c.var.actor, c.var.project.environmentId);
const projectLost = (c: Context<AppEnv>) => () =>
  refusalInEnvironment(c.var.db, c.var.actor, c.var.project.environmentId, notFound);

export const listProjectBatchExports: Handler<"list"> = async (c) => {
  const page = readPage(c);
  const result = await queries.listBatchExports(c.var.db, page, (list) =>
    projectRead(c, (environmentId) => {
      const counter = counterOf(environments.batchExportCount, eq(environments.id, environmentId));
      const where = and(queries.ofEnvironment(environmentId), queries.liveBatchExports);
      return list(where, counter);
    }),
  );
  return c.json(pageEnvelope(c, page, result.count, result.rows.map(toBatchExport), result.links), 200);
};

export const createProjectBatchExport: Handler<"create"> = async (c) => {
  const values = newBatchExport(c.req.valid("json"), c.var.project, nowIso());
  const keyring = await loadKeyring(c.env);
  const sealed = await sealDestination(
    keyring,
    values.id,
    values.destinationType as DestinationType,
    values.destinationConfig,
  );
  const entry = batchExportActivity.record(c, "created", batchExportItem(c.var.project, values.id, values.name));
  const row = await refusedWhenNull(
    queries.insertBatchExport(c.var.db, { ...values, ...sealed }, entry, stillSeesProject(c)),
    projectLost(c),
  );
  return c.json(toBatchExport(row), 201);
};

export const retrieveProjectBatchExport: Handler<"retrieve"> = async (c) => {
  const [[row]] = await readBatchExportOfPath(c);
  if (!row) throw notFound();
  return c.json(toBatchExport(row), 200);
};

export const updateProjectBatchExport: Handler<"update"> = async (c) => {
  const where = queries.liveInProject(c.var.project.environmentId, c.req.valid("param").id);
  const [[current]] = batchExportOfPath.results(c);
  if (!current) throw notFound();
  const keyring = await loadKeyring(c.env);
  const opened = { ...current, destinationConfig: await openDestination(keyring, current) };
  const input = c.req.valid("json");
  const changes = batchExportChanges(opened, input, nowIso());
  const sealed = await sealDestination(keyring, current.id, changes.destinationType, changes.destinationConfig);
  // The stored config was merged as read; every write moves last_updated_at, so a write in
  // between makes this one match nothing rather than drop what the other wrote.
  const unchanged = unchangedSinceRead([[batchExports.lastUpdatedAt, current.lastUpdatedAt]]);
  const after = batchExportAfter(opened, changes);
  const entry = batchExportActivity.changed(
    c,
    "updated",
    batchExportItem(c.var.project, current.id, after.name),
    trackedBatchExportFields(opened),
    trackedBatchExportFields(after),
    sentDestinationSecrets(after.destinationType, input.destination?.config),
  );
  const updated = await refusedWhenNull(
    queries.updateBatchExport(c.var.db, and(where, unchanged), { ...changes, ...sealed }, entry, stillSeesProject(c)),
    projectLost(c),
  );
  if (!updated)
    throw await changedOrGone(c.var.db, sql`exists (select 1 from ${batchExports} where ${where})`, "batch export");
  return c.json(toBatchExport(updated), 200);
};

/** Soft delete (as PostHog): the row stays, and disappears from every list and read. */
export const deleteProjectBatchExport: Handler<"remove"> = async (c) => {
  const { id } = c.req.valid("param");
  const where = queries.liveInProject(c.var.project.environmentId, id);
  const entry = batchExportActivity.record(
    c,
    "deleted",
    batchExportItem(c.var.project, id, batchExportNameInBatch(id)),
  );
  const deleted = await refusedWhenNull(
    queries.updateBatchExport(c.var.db, where, { deleted: true, lastUpdatedAt: nowIso() }, entry, stillSeesProject(c)),
    projectLost(c),
  );
  if (!deleted) throw notFound();
  return c.body(null, 204);
};

const pausedStateHandler =
  (paused: boolean): Handler<"pause"> =>
  async (c) => {
    const { id } = c.req.valid("param");
    const where = and(queries.liveInProject(c.var.project.environmentId, id), stillSeesProject(c));
    const item = batchExportItem(c.var.project, id, batchExportNameInBatch(id));
    const entry = batchExportActivity.record(c, paused ? "paused" : "unpaused", item);
    return c.json(await queries.setPaused(c.var.db, where, paused, entry), 200);
  };

export const pauseProjectBatchExport = pausedStateHandler(true);
export const unpauseProjectBatchExport = pausedStateHandler(false);
