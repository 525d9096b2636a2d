import type { RouteHandler } from "@hono/zod-openapi";
import { and } from "drizzle-orm";
import type { AppEnv } from "../../platform/env";
import { notFound, validationError } from "../../platform/errors";
import { nowIso, uuid7 } from "../../platform/ids";
import { pageEnvelope, readPage } from "../../platform/pagination";
import * as queries from "./batch-exports.queries";
import type { BatchExportRoutes } from "./batch-exports.routes";
import { toBatchExport } from "./batch-exports.schema";
import { parseDestinationConfig, type DestinationType } from "./destinations";

type Handler<R extends keyof BatchExportRoutes> = RouteHandler<BatchExportRoutes[R], AppEnv>;

type Schedule = { type: DestinationType; model: string; startAt: string | null; endAt: string | null };

/** Rules across fields, checked on the export as it will be after a create or update. */
function assertConsistent({ type, model, startAt, endAt }: Schedule) {
  if (type === "HTTP" && model !== "events") {
    throw validationError("invalid_input", "HTTP batch exports only support the events model.", "model");
  }
  if (startAt !== null && endAt !== null && startAt >= endAt) {
    throw validationError("invalid_input", "start_at must be before end_at.", "start_at");
  }
}

/** Offsets are accepted; storage and responses are UTC with `Z` (SPEC 1), which also sort as text. */
const toUtc = (timestamp: string | null) => (timestamp === null ? null : new Date(timestamp).toISOString());

export const listProjectBatchExports: Handler<"list"> = async (c) => {
  const page = readPage(c);
  const where = and(queries.ofEnvironment(c.var.project.environmentId), queries.liveBatchExports);
  const result = await queries.listBatchExports(c.var.db, where, page);
  return c.json(pageEnvelope(c, page, result.count, result.rows.map(toBatchExport)), 200);
};

export const createProjectBatchExport: Handler<"create"> = async (c) => {
  const input = c.req.valid("json");
  const { type } = input.destination;
  const config = parseDestinationConfig(type, input.destination.config);
  const startAt = toUtc(input.start_at);
  const endAt = toUtc(input.end_at);
  assertConsistent({ type, model: input.model, startAt, endAt });
  const now = nowIso();
  const row = await queries.insertBatchExport(c.var.db, {
    id: uuid7(),
    environmentId: c.var.project.environmentId,
    organizationId: c.var.project.organizationId,
    name: input.name,
    model: input.model,
    destinationType: type,
    destinationConfig: config,
    interval: input.interval,
    paused: input.paused,
    // Created paused counts as paused now.
    lastPausedAt: input.paused ? now : null,
    startAt,
    endAt,
    hogqlQuery: input.hogql_query,
    filters: input.filters,
    timezone: input.timezone,
    createdAt: now,
    lastUpdatedAt: now,
  });
  return c.json(toBatchExport(row), 201);
};

const liveInProject = (environmentId: number, id: string) =>
  and(queries.ofEnvironment(environmentId), queries.liveBatchExport(id));

export const retrieveProjectBatchExport: Handler<"retrieve"> = async (c) => {
  const where = liveInProject(c.var.project.environmentId, c.req.valid("param").id);
  const row = await queries.findBatchExport(c.var.db, where);
  if (!row) throw notFound();
  return c.json(toBatchExport(row), 200);
};

/**
 * A PATCH: `destination.config` is merged into the stored configuration, so secrets that are
 * not sent are kept, then the result is validated whole. A new destination type starts from an
 * empty configuration instead: the old type's keys mean nothing to it.
 */
export const updateProjectBatchExport: Handler<"update"> = async (c) => {
  const input = c.req.valid("json");
  const where = liveInProject(c.var.project.environmentId, c.req.valid("param").id);
  const current = await queries.findBatchExport(c.var.db, where);
  if (!current) throw notFound();

  const type = input.destination?.type ?? (current.destinationType as DestinationType);
  const sentConfig = input.destination?.config ?? {};
  const config = parseDestinationConfig(
    type,
    type === current.destinationType ? { ...current.destinationConfig, ...sentConfig } : sentConfig,
  );
  const model = input.model ?? current.model;
  const startAt = input.start_at === undefined ? current.startAt : toUtc(input.start_at);
  const endAt = input.end_at === undefined ? current.endAt : toUtc(input.end_at);
  assertConsistent({ type, model, startAt, endAt });

  const now = nowIso();
  const pausing = input.paused === true && !current.paused;
  const updated = await queries.updateBatchExport(c.var.db, where, {
    name: input.name,
    model,
    destinationType: type,
    destinationConfig: config,
    interval: input.interval,
    paused: input.paused,
    lastPausedAt: pausing ? now : undefined,
    startAt,
    endAt,
    hogqlQuery: input.hogql_query,
    filters: input.filters,
    timezone: input.timezone,
    lastUpdatedAt: now,
  });
  if (!updated) throw notFound();
  return c.json(toBatchExport(updated), 200);
};

/** Soft delete (as PostHog): the row stays, and disappears from every list and read. */
export const deleteProjectBatchExport: Handler<"remove"> = async (c) => {
  const where = liveInProject(c.var.project.environmentId, c.req.valid("param").id);
  const deleted = await queries.updateBatchExport(c.var.db, where, { deleted: true, lastUpdatedAt: nowIso() });
  if (!deleted) throw notFound();
  return c.body(null, 204);
};

const pausedStateHandler =
  (paused: boolean): Handler<"pause"> =>
  async (c) => {
    const where = liveInProject(c.var.project.environmentId, c.req.valid("param").id);
    return c.json(await queries.setPaused(c.var.db, where, paused), 200);
  };

export const pauseProjectBatchExport = pausedStateHandler(true);
export const unpauseProjectBatchExport = pausedStateHandler(false);
