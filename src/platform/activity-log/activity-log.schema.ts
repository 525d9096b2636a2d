import { z } from "@hono/zod-openapi";
import { UserBasic } from "../user-basic";
import { lenientPageSize } from "../pagination";
import { ACTIVITY_NAMES, ACTIVITY_SCOPES } from "./vocabulary";
import { Timestamp, TimestampInput } from "../timestamps";

const Change = z
  .object({
    type: z.string(),
    action: z.enum(["changed", "created", "deleted"]),
    field: z.string().nullable(),
    before: z.unknown(),
    after: z.unknown(),
  })
  .openapi("ActivityChange");

const Detail = z
  .object({
    id: z.string().nullable(),
    name: z.string().nullable(),
    short_id: z.string().nullable(),
    type: z.string().nullable(),
    changes: z.array(Change).nullable(),
    merge: z.unknown().nullable(),
    trigger: z.unknown().nullable(),
    context: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi("ActivityDetail");

/** PostHog's `ActivityLog`, with where it happened, which request and key did it, and its place in the chain. */
export const ActivityLogEntry = z
  .object({
    id: z.string().uuid(),
    user: UserBasic.nullable(),
    unread: z.boolean(),
    organization_id: z.string().uuid(),
    project_id: z.number().int().nullable(),
    dashboard_id: z
      .number()
      .int()
      .nullable()
      .openapi({
        description:
          "The dashboard the entry is about (the dashboard itself, a tile, a collaborator, its sharing or " +
          "a rule on it); null otherwise. The entry's `hash` covers it, as every stored field.",
      }),
    was_impersonated: z.boolean(),
    is_system: z.boolean(),
    activity: z.string(),
    scope: z.string(),
    item_id: z.string().nullable(),
    detail: Detail,
    created_at: Timestamp,
    request_id: z.string().nullable(),
    api_key_id: z.string().nullable(),
    service_key: z.object({ id: z.string().uuid(), label: z.string() }).nullable().openapi({
      description: "The organization's service key that made the change (`user` is then null); null otherwise.",
    }),
    seq: z
      .number()
      .int()
      .openapi({ description: "The entry's number in its organization's chain: 1, 2, 3, ... with no gaps." }),
    hash: z
      .string()
      .nullable()
      .openapi({
        description:
          "SHA-256 (hex) of the previous entry's hash followed by this entry's canonical JSON; " +
          "null for the moments before it is sealed.",
      }),
  })
  .openapi("ActivityLog");
export type ActivityLogEntry = z.infer<typeof ActivityLogEntry>;

export const ActivityLogPage = z
  .object({
    count: z
      .number()
      .int()
      .optional()
      .openapi({
        description:
          "Page mode (`?page=`) only: the entries the filters match, counted up to 10,000 " +
          "(a larger log answers 10,000, and its pages stop there: read further with the cursor).",
      }),
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(ActivityLogEntry),
  })
  .openapi("PaginatedActivityLogList");

const time = (description: string) =>
  TimestampInput.optional().openapi({ description, example: "2026-01-01T00:00:00Z" });

/** A user's numeric id, as PostHog's web app filters by it (`user=12`). */
export const USER_ID = /^[1-9]\d{0,14}$/;

export const ActivityLogQuery = z.object({
  // Any text, as PostHog takes it (its MCP server suggests kinds this API does not log, `Insight`):
  // a kind not logged here matches nothing.
  scope: z
    .string()
    .max(200)
    .optional()
    .openapi({
      description: `Only entries about this kind of item: ${ACTIVITY_SCOPES.join(", ")}; another matches nothing.`,
      example: "Dashboard",
    }),
  scopes: z.string().max(2000).optional().openapi({
    description: "Only entries about one of these kinds of item, comma-separated; an unknown kind matches nothing.",
    example: "Dashboard,Project",
  }),
  item_id: z.string().max(200).optional().openapi({ description: "Only entries about this item." }),
  user: z
    .string()
    .refine((user) => USER_ID.test(user) || z.uuid().safeParse(user).success, { error: "Enter a user's uuid or id." })
    .optional()
    .openapi({
      description: "Only entries made by this user: their uuid, or their id (as PostHog's web app sends it).",
    }),
  activity: z
    .enum(ACTIVITY_NAMES as [string, ...string[]])
    .optional()
    .openapi({ description: "Only entries of this activity." }),
  after: time("Only entries created after this time."),
  before: time("Only entries created before this time."),
  cursor: z
    .string()
    .regex(/^[1-9]\d{0,15}$/, "Invalid cursor.")
    .optional()
    .openapi({ description: "Where the page starts: taken from the previous page's `next` link." }),
  limit: lenientPageSize("Entries per page (default 100, at most 1000; larger is capped)."),
  page: z.coerce.number().int().min(1).optional().openapi({
    description: "Page mode: the page to read, from 1; the answer then carries `count`. Ignores `cursor`.",
  }),
  page_size: lenientPageSize("Page mode: entries per page (default 100, at most 1000; larger is capped)."),
});
export type ActivityLogQuery = z.infer<typeof ActivityLogQuery>;

/** A project's log also takes PostHog's `include_organization_scoped=1`: entries of the organization itself. */
export const ProjectActivityLogQuery = ActivityLogQuery.extend({
  // Sent twice it is not `1`: off, as every other value is.
  include_organization_scoped: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .openapi({
      type: "string",
      description:
        "`1`: also the entries of the project's organization that name no project, for the organization's " +
        "admins and owners (others see no such entry, as in the organization's log); any other value: not.",
      example: "1",
    })
    .transform((value) => (value === "1" ? "1" : undefined)),
});

export const ChainVerdict = z
  .object({
    valid: z.boolean(),
    entries: z.number().int(),
    first_invalid: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The `seq` of the first missing or altered entry." }),
    head: z.object({ seq: z.number().int(), hash: z.string() }).nullable(),
  })
  .openapi("ActivityLogVerification");

/** An entry as an event: what a webhook delivery posts and the events feed lists. */
export const ActivityEvent = ActivityLogEntry.extend({
  type: z.string().openapi({
    description: "The event's name, `Scope.activity`, as webhooks subscribe to it.",
    example: "OrganizationMembership.joined",
  }),
}).openapi("ActivityEvent");
export type ActivityEvent = z.infer<typeof ActivityEvent>;

/** One entry by its id (`/activity_log/{id}`): a stable URL for it. */
export const EntryIdParam = z.object({ id: z.string().openapi({ description: "The entry's id." }) });
