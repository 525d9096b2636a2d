import { z } from "@hono/zod-openapi";
import { Timestamp } from "../../platform/timestamps";

/** PostHog's `OrganizationPersonalAPIKey` shape, with the key's id, kind, label and expiry besides. */
export const OrganizationApiKey = z
  .object({
    id: z.string(),
    kind: z.enum(["personal", "service"]).openapi({ description: "A member's personal key, or a service key." }),
    label: z.string(),
    owner: z
      .object({ first_name: z.string(), last_name: z.string(), email: z.string() })
      .nullable()
      .openapi({ description: "The member who owns a personal key; null for a service key (the organization's)." }),
    mask_value: z.string().openapi({ description: "The value's first and last characters; never the key." }),
    scopes: z.array(z.string()),
    access_scope: z
      .object({
        type: z.enum(["all", "organization", "projects"]),
        projects: z.array(z.object({ id: z.number().int(), name: z.string() })).optional(),
      })
      .openapi({
        description:
          "`all`: every organization of its owner; `organization`: this one; `projects`: those of this organization.",
      }),
    last_used_at: Timestamp.nullable(),
    created_at: Timestamp,
    expires_at: Timestamp.nullable(),
  })
  .openapi("OrganizationApiKey");
export type OrganizationApiKey = z.infer<typeof OrganizationApiKey>;
