import { z } from "@hono/zod-openapi";
import { KeyScope } from "../platform/auth/scopes";
import { idList } from "../platform/input-limits";
import { visibleName } from "../platform/names";
import { Timestamp, TimestampInput } from "../platform/timestamps";

/** A project id as DRF's IntegerField reads it: a number, or a string of digits (`["1"]`). */
export const ProjectId = z
  .union([
    z.number().int(),
    z
      .string()
      .regex(/^\d{1,15}$/)
      .transform(Number),
  ])
  .openapi({ type: "integer" });

export const PersonalApiKey = z
  .object({
    id: z.string().uuid(),
    label: z.string(),
    mask_value: z.string(),
    created_at: Timestamp,
    last_used_at: Timestamp.nullable(),
    user_id: z.number().int(),
    scopes: z.array(z.string()),
    scoped_organizations: z.array(z.string()),
    scoped_teams: z.array(z.number().int()),
    expires_at: Timestamp.nullable().openapi({ description: "After this time the key answers 401; null: never." }),
    last_rolled_at: Timestamp.nullable(),
    previous_value_expires_at: Timestamp.nullable().openapi({
      description: "While a roll's overlap lasts, when the value it replaced stops working; null otherwise.",
    }),
  })
  .openapi("PersonalApiKey");

export const CreatedPersonalApiKey = PersonalApiKey.extend({
  value: z.string().openapi({ description: "The key itself. Shown here once, never again." }),
}).openapi("CreatedPersonalApiKey");

export const Label = visibleName(z.string().trim().min(1).max(40));
export const Scopes = idList(KeyScope)
  .min(1)
  .openapi({ description: "A subset of the calling key's own scopes; `*` for all." });
export const ExpiresAt = TimestampInput.nullable().openapi({
  description: "When the key stops working (in the future); null: never.",
  example: "2027-01-01T00:00:00Z",
});

export const PersonalApiKeyInput = z
  .object({
    label: Label,
    scopes: Scopes,
    scoped_organizations: idList(z.string()).optional().default([]),
    scoped_teams: idList(ProjectId).optional().default([]),
    expires_at: ExpiresAt.optional().default(null),
  })
  .openapi("PersonalApiKeyInput");

export const PersonalApiKeyUpdate = z
  .object({
    label: Label.optional(),
    scopes: Scopes.optional(),
    scoped_organizations: idList(z.string()).optional(),
    scoped_teams: idList(ProjectId).optional(),
    expires_at: ExpiresAt.optional(),
  })
  .openapi("PersonalApiKeyUpdate");

/** The longest a rolled-over value may keep working: a day. */
const MAX_OVERLAP_SECONDS = 86_400;

export const RollInput = z
  .object({
    overlap_seconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_OVERLAP_SECONDS)
      .optional()
      .default(0)
      .openapi({ description: "How long the value being replaced keeps working: 0 (the default) stops it at once." }),
  })
  .openapi("PersonalApiKeyRollInput");

export const CallingApiKey = PersonalApiKey.extend({
  owner_kind: z.enum(["user"]).openapi({ description: "Who the key acts as: a user (a personal API key)." }),
  rate_limits: z
    .object({ per_minute: z.number().int(), per_hour: z.number().int() })
    .openapi({ description: "Requests the key may make, counted per key." }),
}).openapi("CallingApiKey");
