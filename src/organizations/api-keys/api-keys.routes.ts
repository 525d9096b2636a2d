import { z } from "@hono/zod-openapi";
import { MembershipLevel } from "../../platform/levels";
import { paginated, PaginationQuery } from "../../platform/pagination";
import { apiRoute, jsonResponse } from "../../platform/route";
import { OrganizationParams } from "../../platform/route-context";
import { Timestamp } from "../../platform/timestamps";
import { keyToBlock } from "./api-keys.handlers";

const collection = "/api/organizations/{organization_id}/api_keys";
const KeyParams = OrganizationParams.extend({ id: z.string().openapi({ description: "The key's id." }) });

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

export const listApiKeys = apiRoute({
  method: "get",
  path: collection,
  scope: "organization:read",
  context: "organization",
  level: MembershipLevel.admin,
  serviceKeys: true,
  tags: ["api_keys"],
  summary: "Every key that can reach the organization: members' personal keys and service keys, newest first",
  request: { params: OrganizationParams, query: PaginationQuery },
  responses: { 200: jsonResponse(paginated(OrganizationApiKey), "A page of keys, masked") },
});

export const blockApiKey = apiRoute({
  method: "delete",
  path: `${collection}/{id}`,
  scope: "organization:write",
  context: "organization",
  level: MembershipLevel.admin,
  reads: keyToBlock,
  tags: ["api_keys"],
  summary: "Take a member's personal key out of the organization's reach, at once; it keeps working elsewhere",
  request: { params: KeyParams },
  responses: { 204: { description: "The key no longer reaches the organization" } },
});
