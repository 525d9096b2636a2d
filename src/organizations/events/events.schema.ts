import { z } from "@hono/zod-openapi";
import { ActivityEvent } from "../../platform/activity-log/activity-log.schema";
import { ACTIVITY_EVENTS } from "../../platform/activity-log/vocabulary";
import { MAX_PAGE_SIZE } from "../../platform/pagination";

/** `events=A,B`: names the vocabulary knows, else 400 on `events`. */
const EventNames = z
  .string()
  .max(10_000)
  .refine(
    (value) => value.split(",").every((name) => ACTIVITY_EVENTS.includes(name)),
    "Unknown event: use names such as OrganizationMembership.joined, comma-separated.",
  )
  .transform((value) => [...new Set(value.split(","))])
  .optional()
  .openapi({
    description: "Only these events, comma-separated.",
    example: "OrganizationMembership.joined,Dashboard.updated",
  });

export const EventsQuery = z.object({
  after: z
    .string()
    .regex(/^(0|[1-9]\d{0,14})$/, "Invalid cursor.")
    .optional()
    .openapi({ description: "The previous answer's `cursor` (0: from the start).", example: "0" }),
  events: EventNames,
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .optional()
    .openapi({ description: "Entries read (default 100, at most 1000)." }),
});
export type EventsQuery = z.infer<typeof EventsQuery>;

export const EventsPage = z
  .object({
    next: z.string().openapi({ description: "The feed from `cursor`: to poll." }),
    cursor: z.string(),
    has_more: z.boolean(),
    results: z.array(ActivityEvent),
  })
  .openapi("ActivityEventsPage");
