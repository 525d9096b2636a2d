import { z } from "@hono/zod-openapi";
import { idList } from "../platform/input-limits";
import { SCOPES } from "../platform/auth/scopes";
import { paginated, PaginationQuery } from "../platform/pagination";
import { noStore } from "../platform/response-headers";
import { apiRoute, jsonBody, jsonResponse } from "../platform/route";
import { visibleName } from "../platform/names";
import { Timestamp } from "../platform/timestamps";

/** A project id as DRF's IntegerField reads it: a number, or a string of digits (`["1"]`). */
const ProjectId = z
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
  })
  .openapi("PersonalApiKey");

export const CreatedPersonalApiKey = PersonalApiKey.extend({
  value: z.string().openapi({ description: "The key itself. Shown here once, never again." }),
}).openapi("CreatedPersonalApiKey");

export const PersonalApiKeyInput = z
  .object({
    label: visibleName(z.string().trim().min(1).max(40)),
    scopes: idList(z.enum(SCOPES as [string, ...string[]]))
      .min(1)
      .openapi({ description: "A subset of the calling key's own scopes; `*` for all." }),
    scoped_organizations: idList(z.string()).optional().default([]),
    scoped_teams: idList(ProjectId).optional().default([]),
  })
  .openapi("PersonalApiKeyInput");

const KeyParams = z.object({ id: z.string() });

export const listKeys = apiRoute({
  method: "get",
  path: "/api/personal_api_keys",
  scope: "personal_api_key:read",
  tags: ["personal_api_keys"],
  summary: "List the caller's personal API keys, newest first",
  request: { query: PaginationQuery },
  responses: { 200: jsonResponse(paginated(PersonalApiKey), "A page of keys, masked") },
});

export const createKey = apiRoute({
  method: "post",
  path: "/api/personal_api_keys",
  scope: "personal_api_key:write",
  middleware: [noStore],
  tags: ["personal_api_keys"],
  summary: "Create a personal API key; its value is returned once",
  request: { body: jsonBody(PersonalApiKeyInput) },
  responses: { 201: jsonResponse(CreatedPersonalApiKey, "The key, with its value") },
});

export const retrieveCurrentKey = apiRoute({
  method: "get",
  path: "/api/personal_api_keys/@current",
  // PostHog serves it as `retrieve` with the id `@current`; apart from `{id}` here, it needs its own name.
  operationId: "personal_api_keys_current_retrieve",
  // Any valid key may read itself, whatever its scopes: clients call this to learn them.
  scope: null,
  tags: ["personal_api_keys"],
  summary: "The calling key, masked: its scopes and scoping",
  responses: { 200: jsonResponse(PersonalApiKey, "The calling key") },
});

export const retrieveKey = apiRoute({
  method: "get",
  path: "/api/personal_api_keys/{id}",
  scope: "personal_api_key:read",
  tags: ["personal_api_keys"],
  summary: "Retrieve one of the caller's keys, masked",
  request: { params: KeyParams },
  responses: { 200: jsonResponse(PersonalApiKey, "The key") },
});

export const deleteKey = apiRoute({
  method: "delete",
  path: "/api/personal_api_keys/{id}",
  scope: "personal_api_key:write",
  tags: ["personal_api_keys"],
  summary: "Revoke a key at once",
  request: { params: KeyParams },
  responses: { 204: { description: "Revoked" } },
});
