import { z } from "@hono/zod-openapi";
import { ACTIVITY_EVENTS } from "../../platform/activity-log/vocabulary";
import { boundedText } from "../../platform/input-limits";
import { UserBasic } from "../../platform/user-basic";
import { Timestamp, TimestampInput } from "../../platform/timestamps";
import { MAX_RECEIVER_URL_LENGTH } from "./webhook-urls";

const EventName = z
  .string()
  .refine(
    (event) => event === "*" || ACTIVITY_EVENTS.includes(event),
    "Unknown event: use an activity name such as OrganizationMembership.joined, or *.",
  )
  .openapi({ example: "OrganizationMembership.joined" });

const Url = z.string().max(MAX_RECEIVER_URL_LENGTH).openapi({ example: "https://hooks.example.com/posthog" });
const Events = z.array(EventName).min(1).max(100);
const Description = boundedText();

export const Webhook = z
  .object({
    id: z.string().uuid(),
    url: z.string(),
    events: z.array(z.string()),
    enabled: z.boolean(),
    description: z.string(),
    created_by: UserBasic.nullable().openapi({
      description: "Who created it: null once that user is gone. It is disabled when they stop being an admin.",
    }),
    previous_secret_expires_at: Timestamp.nullable().openapi({
      description: "Until then, the previous secret signs too.",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Webhook");
export type Webhook = z.infer<typeof Webhook>;

export const WebhookWithSecret = Webhook.extend({
  secret: z.string().openapi({ description: "The signing secret (`whsec_` + base64): shown this once." }),
}).openapi("WebhookWithSecret");

export const WebhookCreateInput = z.object({
  url: Url,
  events: Events,
  enabled: z.boolean().default(true),
  description: Description.default(""),
});

export const WebhookUpdateInput = z.object({
  url: Url.optional(),
  events: Events.optional(),
  enabled: z.boolean().optional(),
  description: Description.optional(),
});

export const RotateSecretInput = z.object({
  overlap_seconds: z
    .number()
    .int()
    .min(0)
    .max(86_400)
    .default(0)
    .openapi({ description: "How long the old secret signs too.", example: 3600 }),
});

export const RecoverInput = z
  .object({
    since: TimestampInput.openapi({ example: "2026-01-01T00:00:00Z" }),
    until: TimestampInput.optional().openapi({ description: "Default: now." }),
  })
  .refine((input) => input.until === undefined || Date.parse(input.since) < Date.parse(input.until), {
    path: ["until"],
    message: "Must be after `since`.",
  })
  .refine((input) => input.until !== undefined || Date.parse(input.since) < Date.now(), {
    path: ["since"],
    message: "Must be in the past: `until` is now when not sent.",
  });

export const Recovery = z
  .object({
    webhook_id: z.string().uuid(),
    since: Timestamp,
    until: Timestamp,
  })
  .openapi("WebhookRecovery");

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;

export const WebhookDelivery = z
  .object({
    id: z.string().uuid().openapi({ description: "The `webhook-id` header: the same on every attempt." }),
    entry_id: z.string(),
    event: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    next_attempt_at: Timestamp.nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("WebhookDelivery");

/** What `test` answers: how the receiver took the signed `webhook.test` event. */
export const TestResult = z
  .object({
    id: z.string().uuid().openapi({ description: "The test event's `webhook-id`." }),
    ok: z.boolean(),
    status_code: z.number().int().nullable(),
    error: z.string().nullable(),
  })
  .openapi("WebhookTestResult");
