import type { batchExports } from "../../db/schema";
import type { ProjectContext } from "../../platform/env";
import { validationError } from "../../platform/errors";
import { uuid7 } from "../../platform/ids";
import type { BatchExportChanges } from "./batch-exports.queries";
import type { BatchExportCreateInput, BatchExportRow, BatchExportUpdateInput } from "./batch-exports.schema";
import { parseDestinationConfig, type DestinationConfig, type DestinationType } from "./destinations";

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

/**
 * Offsets are accepted; storage and responses are UTC with `Z`, as every timestamp of the API, which also sort as text.
 */
const toUtc = (timestamp: string | null) => (timestamp === null ? null : new Date(timestamp).toISOString());

/** The row a valid create inserts into the project's environment. */
export function newBatchExport(
  input: BatchExportCreateInput,
  project: ProjectContext,
  now: string,
): typeof batchExports.$inferInsert {
  const { type } = input.destination;
  const config = parseDestinationConfig(type, input.destination.config);
  const startAt = toUtc(input.start_at);
  const endAt = toUtc(input.end_at);
  assertConsistent({ type, model: input.model, startAt, endAt });
  return {
    id: uuid7(),
    environmentId: project.environmentId,
    organizationId: project.organizationId,
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
  };
}

/**
 * The columns a valid PATCH sets. `destination.config` is merged into the stored configuration,
 * so secrets that are not sent are kept, then the result is validated whole. A new destination
 * type starts from an empty configuration instead: the old type's keys mean nothing to it.
 */
export function batchExportChanges(
  current: BatchExportRow,
  input: BatchExportUpdateInput,
  now: string,
): BatchExportChanges & { destinationType: DestinationType; destinationConfig: DestinationConfig } {
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
  const pausing = input.paused === true && !current.paused;
  return {
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
  };
}
