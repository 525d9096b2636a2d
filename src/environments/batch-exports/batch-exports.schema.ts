import { z } from "@hono/zod-openapi";
import { boundedJson, boundedJsonObject, boundedText } from "../../platform/input-limits";
import type { batchExports } from "../../db/schema";
import { TimezoneName } from "../../projects/projects.schema";
import { DESTINATION_TYPES, publicConfig, REQUIRED_CONFIG_KEYS, type DestinationType } from "./destinations";
import { visibleName } from "../../platform/names";
import { Timestamp, TimestampInput } from "../../platform/timestamps";

const INTERVALS = ["hour", "day", "week", "every 5 minutes", "every 15 minutes"] as const;
/** `hogql` exports the results of `hogql_query`, which it requires. */
const MODELS = ["events", "persons", "sessions", "hogql"] as const;

const Interval = z.enum(INTERVALS);
const Model = z.enum(MODELS);
const DestinationTypeName = z.enum(DESTINATION_TYPES);
const ConfigObject = boundedJsonObject().openapi({
  description: `Keys required by each type: ${Object.entries(REQUIRED_CONFIG_KEYS)
    .map(([type, keys]) => `${type}: ${keys.join(", ") || "none"}`)
    .join("; ")}. Secrets are stored, never returned.`,
});

/** The fields create and update share; create adds its requirements and defaults. */
const BatchExportFields = z.object({
  name: visibleName(z.string().trim().min(1).max(255)),
  model: Model,
  interval: Interval,
  paused: z.boolean(),
  start_at: TimestampInput.nullable().openapi({ description: "Runs are not triggered before this time." }),
  end_at: TimestampInput.nullable().openapi({ description: "Runs are not triggered after this time." }),
  // Null, as PostHog reads it (its MCP server's tools may send it): no query; on a time zone, UTC.
  hogql_query: boundedText()
    .nullable()
    .transform((query) => query ?? ""),
  filters: boundedJson(z.unknown()),
  timezone: TimezoneName.nullable().transform((timezone) => timezone ?? "UTC"),
  offset_day: z
    .number()
    .int()
    .min(0)
    .max(6)
    .nullable()
    .openapi({ description: "Day of the week a weekly export runs (0, Sunday, to 6); only with `week`." }),
  offset_hour: z
    .number()
    .int()
    .min(0)
    .max(23)
    .nullable()
    .openapi({ description: "Hour of the day a daily or weekly export runs (0 to 23); only with `day` or `week`." }),
});

/** Set by hand: a destination's required keys and the interval's offsets are rules between fields. */
const BATCH_EXPORT_EXAMPLE = {
  name: "Nightly events",
  interval: "day",
  offset_hour: 3,
  destination: { type: "AwsS3", config: { bucket_name: "exports", region: "us-east-1", prefix: "events/" } },
};

export const BatchExportCreateInput = BatchExportFields.extend({
  model: Model.optional().default("events"),
  destination: z.object({ type: DestinationTypeName, config: ConfigObject.optional().default({}) }),
  paused: z.boolean().optional().default(false),
  start_at: BatchExportFields.shape.start_at.optional().default(null),
  end_at: BatchExportFields.shape.end_at.optional().default(null),
  hogql_query: BatchExportFields.shape.hogql_query.optional().default(""),
  filters: BatchExportFields.shape.filters.optional().default(null),
  timezone: BatchExportFields.shape.timezone.optional().default("UTC"),
  offset_day: BatchExportFields.shape.offset_day.optional().default(null),
  offset_hour: BatchExportFields.shape.offset_hour.optional().default(null),
}).openapi("BatchExportInput", { example: BATCH_EXPORT_EXAMPLE });
export type BatchExportCreateInput = z.infer<typeof BatchExportCreateInput>;

/**
 * PUT: PostHog's full update, where `name`, `interval` and `destination` (its `type`) are
 * required; the rest as PATCH, fields left out kept, as Django REST framework does.
 */
export const BatchExportFullInput = BatchExportFields.partial()
  .required({ name: true, interval: true })
  .extend({ destination: z.object({ type: DestinationTypeName, config: ConfigObject.optional() }) })
  .openapi("BatchExportFullUpdate", { example: BATCH_EXPORT_EXAMPLE });

/** A PATCH: `destination.config` is merged into the stored one; omitted secrets are kept, not past a new endpoint. */
export const BatchExportUpdateInput = BatchExportFields.partial()
  .extend({
    destination: z.object({ type: DestinationTypeName.optional(), config: ConfigObject.optional() }).optional(),
  })
  .openapi("BatchExportUpdate", { example: { name: "Nightly events", interval: "day", offset_hour: 3 } });
export type BatchExportUpdateInput = z.infer<typeof BatchExportUpdateInput>;

export const BatchExport = z
  .object({
    id: z.string().uuid(),
    team_id: z.number().int(),
    name: z.string(),
    model: Model,
    destination: z.object({ type: DestinationTypeName, config: z.record(z.string(), z.unknown()) }),
    interval: Interval,
    paused: z.boolean(),
    created_at: Timestamp,
    last_updated_at: Timestamp,
    last_paused_at: Timestamp.nullable(),
    start_at: Timestamp.nullable(),
    end_at: Timestamp.nullable(),
    hogql_query: z.string(),
    filters: z.unknown(),
    timezone: z.string(),
    offset_day: z.number().int().nullable(),
    offset_hour: z.number().int().nullable(),
    latest_runs: z
      .array(z.record(z.string(), z.unknown()))
      .openapi({ description: "Always empty: exports do not run here." }),
    schema: z.unknown().openapi({ description: "Always null: no custom schema here." }),
  })
  .openapi("BatchExport");
export type BatchExport = z.infer<typeof BatchExport>;

/** What pause and unpause answer (as PostHog). */
export const PausedState = z.object({ paused: z.boolean() }).openapi("BatchExportPausedState");

export type BatchExportRow = typeof batchExports.$inferSelect;

export function toBatchExport(row: BatchExportRow): BatchExport {
  const type = row.destinationType as DestinationType;
  return {
    id: row.id,
    team_id: row.environmentId,
    name: row.name,
    model: row.model as BatchExport["model"],
    destination: { type, config: publicConfig(type, row.destinationConfig) },
    interval: row.interval as BatchExport["interval"],
    paused: row.paused,
    created_at: row.createdAt,
    last_updated_at: row.lastUpdatedAt,
    last_paused_at: row.lastPausedAt,
    start_at: row.startAt,
    end_at: row.endAt,
    hogql_query: row.hogqlQuery,
    filters: row.filters ?? null,
    timezone: row.timezone,
    offset_day: row.offsetDay,
    offset_hour: row.offsetHour,
    latest_runs: [],
    schema: null,
  };
}
