import { eq, sql } from "drizzle-orm";
import { batchExports, environments } from "../../db/schema";
import type { ReadInBatch } from "../../platform/activity-log/record";
import { resourceActivity } from "../../platform/activity-log/resource-activity";
import type { ProjectContext } from "../../platform/env";
import {
  DESTINATION_TYPES,
  publicConfig,
  secretFields,
  type DestinationConfig,
  type DestinationType,
} from "./destinations";

/** Each destination secret as a field of its own, so that a change says only that it changed. */
const secretConfigField = (field: string) => `destination.config.${field}`;
const DESTINATION_SECRET_FIELDS = [...new Set(DESTINATION_TYPES.flatMap(secretFields))].map(secretConfigField);

/**
 * Batch exports are created, updated, paused, unpaused and deleted. An update records the fields
 * a PATCH can change; the destination as responses show it (secrets left out), and each secret
 * masked.
 */
export const batchExportActivity = resourceActivity("BatchExport", {
  fields: [
    "name",
    "model",
    "interval",
    "paused",
    "start_at",
    "end_at",
    "hogql_query",
    "filters",
    "timezone",
    "offset_day",
    "offset_hour",
    "destination",
    ...DESTINATION_SECRET_FIELDS,
  ],
  secretFields: DESTINATION_SECRET_FIELDS,
});

type TrackedExport = {
  name: string;
  model: string;
  interval: string;
  paused: boolean;
  startAt: string | null;
  endAt: string | null;
  hogqlQuery: string;
  filters: unknown;
  timezone: string;
  offsetDay: number | null;
  offsetHour: number | null;
  destinationType: string;
  /** With its secrets in the clear: compared here, never recorded. */
  destinationConfig: DestinationConfig;
};

/** The secrets of a `type` destination a PATCH sent, as fields of the entry: changed whenever sent. */
export const sentDestinationSecrets = (type: string, sentConfig: Record<string, unknown> | undefined) =>
  secretFields(type as DestinationType)
    .filter((field) => sentConfig !== undefined && field in sentConfig)
    .map(secretConfigField);

/** The tracked fields of an export as the API names them, secrets included for comparison. */
export function trackedBatchExportFields(row: TrackedExport): Record<string, unknown> {
  const type = row.destinationType as DestinationType;
  const secrets = Object.fromEntries(
    secretFields(type).map((field) => [secretConfigField(field), row.destinationConfig[field] ?? null]),
  );
  return {
    name: row.name,
    model: row.model,
    interval: row.interval,
    paused: row.paused,
    start_at: row.startAt,
    end_at: row.endAt,
    hogql_query: row.hogqlQuery,
    filters: row.filters ?? null,
    timezone: row.timezone,
    offset_day: row.offsetDay,
    offset_hour: row.offsetHour,
    destination: { type, config: publicConfig(type, row.destinationConfig) },
    ...secrets,
  };
}

/** The export as a PATCH leaves it: a column it does not set (undefined) keeps its value. */
export function batchExportAfter(current: TrackedExport, changes: Partial<TrackedExport>): TrackedExport {
  const kept = <T>(changed: T | undefined, value: T) => (changed === undefined ? value : changed);
  return {
    name: kept(changes.name, current.name),
    model: kept(changes.model, current.model),
    interval: kept(changes.interval, current.interval),
    paused: kept(changes.paused, current.paused),
    startAt: kept(changes.startAt, current.startAt),
    endAt: kept(changes.endAt, current.endAt),
    hogqlQuery: kept(changes.hogqlQuery, current.hogqlQuery),
    filters: kept(changes.filters, current.filters),
    timezone: kept(changes.timezone, current.timezone),
    offsetDay: kept(changes.offsetDay, current.offsetDay),
    offsetHour: kept(changes.offsetHour, current.offsetHour),
    destinationType: kept(changes.destinationType, current.destinationType),
    destinationConfig: kept(changes.destinationConfig, current.destinationConfig),
  };
}

/** An export of the request's project, named as it is. */
export const batchExportItem = (project: ProjectContext, id: string, name: string | ReadInBatch) => ({
  organizationId: project.organizationId,
  projectId: project.projectId,
  itemId: id,
  name,
});

/** The export's name, read when the entry is appended: a write that matched it by id did not read it. */
export const batchExportNameInBatch = (id: string): ReadInBatch =>
  sql`select ${batchExports.name} from ${batchExports} where ${batchExports.id} = ${id}`;

/** The project of an export reached through its organization, read in the batch likewise. */
export const batchExportProjectInBatch = (id: string): ReadInBatch =>
  sql`select ${environments.projectId} from ${environments}
    join ${batchExports} on ${eq(batchExports.environmentId, environments.id)} where ${batchExports.id} = ${id}`;
