import { z } from "@hono/zod-openapi";
import { ExpiresAt, Label, ProjectId, Scopes } from "../personal-api-keys/personal-api-keys.schema";
import { idList } from "../platform/input-limits";
import { Timestamp } from "../platform/timestamps";

export const ServiceKey = z
  .object({
    id: z.string().uuid(),
    organization_id: z.string().uuid(),
    label: z.string(),
    mask_value: z.string(),
    created_at: Timestamp,
    created_by_id: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The user who created it; null once that user is gone. The key does not depend on it." }),
    last_used_at: Timestamp.nullable(),
    scopes: z.array(z.string()),
    scoped_teams: z.array(z.number().int()),
    expires_at: Timestamp.nullable().openapi({ description: "After this time the key answers 401; null: never." }),
    last_rolled_at: Timestamp.nullable(),
    previous_value_expires_at: Timestamp.nullable().openapi({
      description: "While a roll's overlap lasts, when the value it replaced stops working; null otherwise.",
    }),
  })
  .openapi("ServiceKey");

export const CreatedServiceKey = ServiceKey.extend({
  value: z.string().openapi({ description: "The key itself (`pho_...`). Shown here once, never again." }),
}).openapi("CreatedServiceKey");

const ScopedTeams = idList(ProjectId).openapi({ description: "Projects of the organization the key is held to." });

export const ServiceKeyInput = z
  .object({
    label: Label,
    scopes: Scopes,
    scoped_teams: ScopedTeams.optional().default([]),
    expires_at: ExpiresAt.optional().default(null),
  })
  .openapi("ServiceKeyInput");

export const ServiceKeyUpdate = z
  .object({
    label: Label.optional(),
    scopes: Scopes.optional(),
    scoped_teams: ScopedTeams.optional(),
    expires_at: ExpiresAt.optional(),
  })
  .openapi("ServiceKeyUpdate");

export const CallingServiceKey = ServiceKey.extend({
  owner_kind: z
    .enum(["organization"])
    .openapi({ description: "Who the key acts as: its organization, at admin level, never as a person." }),
  level: z.number().int().openapi({ description: "The membership level it acts with: admin (8)." }),
  rate_limits: z
    .object({ per_minute: z.number().int(), per_hour: z.number().int() })
    .openapi({ description: "Requests the key may make, counted per key." }),
}).openapi("CallingServiceKey");
