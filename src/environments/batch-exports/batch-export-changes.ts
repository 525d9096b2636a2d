import type { batchExports } from "../../db/schema";
import type { ProjectContext } from "../../platform/env";
import { validationError } from "../../platform/errors";
import { uuid7 } from "../../platform/ids";
import { withinJsonLimit } from "../../platform/input-limits";
import type { BatchExportChanges } from "./batch-exports.queries";
import type { BatchExportCreateInput, BatchExportRow, BatchExportUpdateInput } from "./batch-exports.schema";
import { configKeptFor, parseDestinationConfig, type DestinationConfig, type DestinationType } from "./destinations";

type Schedule = {
  type: DestinationType;
  model: string;
  hogqlQuery: string;
  startAt: string | null;
  endAt: string | null;
};

/** Rules across fields, checked on the export as it will be after a create or update. */
function assertConsistent({ type, model, hogqlQuery, startAt, endAt }: Schedule) {
  if (type === "HTTP" && model !== "events") {
    throw validationError("invalid_input", "HTTP batch exports only support the events model.", "model");
  }
  if (model === "hogql" && hogqlQuery.trim() === "") {
    throw validationError("required", "hogql_query is required when model is hogql.", "hogql_query");
  }
  if (startAt !== null && endAt !== null && startAt >= endAt) {
    throw validationError("invalid_input", "start_at must be before end_at.", "start_at");
  }
}

type Offsets = { interval: string; offsetDay: number | null; offsetHour: number | null };

/** An offset only where its interval has one, worded as PostHog words it. */
function assertOffsetsFit({ interval, offsetDay, offsetHour }: Offsets) {
  if (offsetDay !== null && interval !== "week") {
    throw validationError("invalid_input", "offset_day is not applicable for non-weekly intervals", "offset_day");
  }
  if (offsetHour !== null && interval !== "day" && interval !== "week") {
    throw validationError(
      "invalid_input",
      "offset_hour is not applicable for non-daily/weekly intervals",
      "offset_hour",
    );
  }
}

/**
 * The offsets after a PATCH: those sent, else the stored ones while the interval still has them
 * (a new interval without them clears them, as in PostHog).
 */
function offsetsAfter(current: BatchExportRow, input: BatchExportUpdateInput): Offsets {
  const interval = input.interval ?? current.interval;
  const offsetDay = input.offset_day !== undefined ? input.offset_day : interval === "week" ? current.offsetDay : null;
  const keepsHour = interval === "day" || interval === "week";
  const offsetHour = input.offset_hour !== undefined ? input.offset_hour : keepsHour ? current.offsetHour : null;
  return { interval, offsetDay, offsetHour };
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
  assertConsistent({ type, model: input.model, hogqlQuery: input.hogql_query, startAt, endAt });
  assertOffsetsFit({ interval: input.interval, offsetDay: input.offset_day, offsetHour: input.offset_hour });
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
    offsetDay: input.offset_day,
    offsetHour: input.offset_hour,
    createdAt: now,
    lastUpdatedAt: now,
  };
}

/**
 * The columns a valid PATCH sets. `destination.config` is merged into the stored configuration,
 * so secrets that are not sent are kept (unless an endpoint moves: `configKeptFor`), then the
 * result is validated whole, its size too. A new destination type starts from an empty configuration instead:
 * the old type's keys mean nothing to it.
 */
export function batchExportChanges(
  current: BatchExportRow,
  input: BatchExportUpdateInput,
  now: string,
): BatchExportChanges & { destinationType: DestinationType; destinationConfig: DestinationConfig } {
  const type = input.destination?.type ?? (current.destinationType as DestinationType);
  const sentConfig = input.destination?.config ?? {};
  const merged =
    type === current.destinationType
      ? { ...configKeptFor(type, current.destinationConfig, sentConfig), ...sentConfig }
      : sentConfig;
  // Each PATCH within the limit must not add up past it.
  const config = withinJsonLimit(parseDestinationConfig(type, merged), "destination.config");
  const model = input.model ?? current.model;
  // A query's export and a model's are different exports, as in PostHog.
  if (model !== current.model && (model === "hogql" || current.model === "hogql")) {
    throw validationError(
      "invalid_input",
      "A batch export's model cannot be changed to or from hogql. Create a new batch export instead.",
      "model",
    );
  }
  const startAt = input.start_at === undefined ? current.startAt : toUtc(input.start_at);
  const endAt = input.end_at === undefined ? current.endAt : toUtc(input.end_at);
  const hogqlQuery = input.hogql_query ?? current.hogqlQuery;
  assertConsistent({ type, model, hogqlQuery, startAt, endAt });
  const offsets = offsetsAfter(current, input);
  assertOffsetsFit(offsets);
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
    offsetDay: offsets.offsetDay,
    offsetHour: offsets.offsetHour,
    lastUpdatedAt: now,
  };
}
