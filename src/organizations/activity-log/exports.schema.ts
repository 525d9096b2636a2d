import { z } from "@hono/zod-openapi";
import { EXPORT_FORMATS } from "../../platform/activity-log/export-format";
import { ACTIVITY_SCOPES } from "../../platform/activity-log/vocabulary";
import { UserBasic } from "../../platform/user-basic";
import { Timestamp, TimestampInput } from "../../platform/timestamps";

const time = (description: string, example: string) => TimestampInput.openapi({ description, example });

export const ActivityLogExportInput = z
  .object({
    from: time("Inclusive.", "2026-01-01T00:00:00Z"),
    to: time("Exclusive.", "2026-02-01T00:00:00Z"),
    format: z.enum(EXPORT_FORMATS).default("ndjson"),
    scopes: z
      .array(z.enum(ACTIVITY_SCOPES as [string, ...string[]]))
      .min(1)
      .max(ACTIVITY_SCOPES.length)
      .optional()
      .openapi({ description: "Only these scopes." }),
  })
  .refine((input) => Date.parse(input.from) < Date.parse(input.to), { path: ["to"], message: "Must be after `from`." })
  .openapi("ActivityLogExportInput");

export const ActivityLogExport = z
  .object({
    id: z.string().uuid(),
    status: z.enum(["pending", "running", "succeeded", "failed"]),
    format: z.enum(EXPORT_FORMATS),
    from: Timestamp,
    to: Timestamp,
    scopes: z.array(z.string()).nullable(),
    entries: z.number().int(),
    parts: z.number().int(),
    bytes: z.number().int(),
    error: z.string().nullable(),
    created_by: UserBasic.nullable(),
    created_at: Timestamp,
    completed_at: Timestamp.nullable(),
    download_url: z.string().nullable(),
  })
  .openapi("ActivityLogExport");
export type ActivityLogExport = z.infer<typeof ActivityLogExport>;
