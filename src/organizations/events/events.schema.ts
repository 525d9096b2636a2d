import { z } from "@hono/zod-openapi";
import { ActivityEvent } from "../../platform/activity-log/activity-log.schema";
import { ACTIVITY_EVENTS } from "../../platform/activity-log/vocabulary";
import { MAX_PAGE_SIZE } from "../../platform/pagination";

/** `events=A,B`: names the vocabulary knows, else 400 on `events`. */
const EventNames = z
  .string()
  .max(10_000)
  .refine((value) => value.split(",").every((name) => ACTIVITY_EVENTS.includes(name)), "Unknown event: use names such as OrganizationMembership.joined, comma-separated.")
  .transform((value) => [...new Set(value.split(","))])
  .optional()
  .openapi({ description: "Only these events (`Scope.activity`, comma-separated); all when absent.", example: "OrganizationMembership.joined,Dashboard.updated" });

export const EventsQuery = z.object({
  after: z
    .string()
    .regex(/^(0|[1-9]\d{0,15})$/, "Invalid cursor.")
    .optional()
    .openapi({ description: "Where to read from: the `cursor` of the previous answer (a `seq`). Absent or 0: from the oldest entry kept.", example: "0" }),
  events: EventNames,
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional().openapi({ description: "Entries read at most (default 100, at most 1000)." }),
});
export type EventsQuery = z.infer<typeof EventsQuery>;

export const EventsPage = z
  .object({
    next: z.string().openapi({ description: "This feed from `cursor`: follow it now when `has_more`, else poll it later for what comes next." }),
    cursor: z.string().openapi({ description: "Where the next read starts: after the last entry this answer covered (matched or not)." }),
    has_more: z.boolean().openapi({ description: "More entries already follow `cursor`: read `next` right away." }),
    results: z.array(ActivityEvent),
  })
  .openapi("ActivityEventsPage");
