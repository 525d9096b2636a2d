import { keyPathId } from "../platform/path-ids";
import { z } from "@hono/zod-openapi";
import { idList } from "../platform/input-limits";
import { SCOPES } from "../platform/auth/scopes";
import { noStore } from "../platform/response-headers";
import { apiRoute, changedMeanwhileResponse, jsonBody, jsonResponse } from "../platform/route";
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

const PersonalApiKey = z
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
export const Scopes = idList(z.enum(SCOPES as [string, ...string[]]))
  .min(1)
  .openapi({ description: "A subset of the calling key's own scopes; `*` for all." });
export const ExpiresAt = TimestampInput.nullable().openapi({
  description: "When the key stops working (in the future); null: never.",
  example: "2027-01-01T00:00:00Z",
});

const PersonalApiKeyInput = z
  .object({
    label: Label,
    scopes: Scopes,
    scoped_organizations: idList(z.string()).optional().default([]),
    scoped_teams: idList(ProjectId).optional().default([]),
    expires_at: ExpiresAt.optional().default(null),
  })
  .openapi("PersonalApiKeyInput");

const PersonalApiKeyUpdate = z
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

const CallingApiKey = PersonalApiKey.extend({
  owner_kind: z.enum(["user"]).openapi({ description: "Who the key acts as: a user (a personal API key)." }),
  rate_limits: z
    .object({ per_minute: z.number().int(), per_hour: z.number().int() })
    .openapi({ description: "Requests the key may make, counted per key." }),
}).openapi("CallingApiKey");

const KeyParams = z.object({ id: keyPathId });

export const listKeys = apiRoute({
  method: "get",
  path: "/api/personal_api_keys",
  scope: "personal_api_key:read",
  tags: ["personal_api_keys"],
  summary: "List the caller's personal API keys, newest first (a JSON array, as PostHog answers)",
  responses: { 200: jsonResponse(z.array(PersonalApiKey), "Every key of the caller, masked") },
});

export const createKey = apiRoute({
  method: "post",
  path: "/api/personal_api_keys",
  scope: "personal_api_key:write",
  middleware: [noStore],
  tags: ["personal_api_keys"],
  summary: "Create a personal API key; its value is returned once",
  request: { body: jsonBody(PersonalApiKeyInput) },
  responses: { 201: jsonResponse(CreatedPersonalApiKey, "The key, with its value"), 409: changedMeanwhileResponse },
});

export const retrieveCurrentKey = apiRoute({
  method: "get",
  path: "/api/personal_api_keys/@current",
  // PostHog serves it as `retrieve` with the id `@current`; apart from `{id}` here, it needs its own name.
  operationId: "personal_api_keys_current_retrieve",
  // Any valid key may read itself, whatever its scopes: clients call this to learn them.
  scope: null,
  tags: ["personal_api_keys"],
  summary: "The calling key, masked: who it acts as, its scopes, scoping, expiry and rate limits",
  responses: { 200: jsonResponse(CallingApiKey, "The calling key") },
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
  responses: { 204: { description: "Revoked" }, 409: changedMeanwhileResponse },
});

export const updateKey = apiRoute({
  method: "patch",
  path: "/api/personal_api_keys/{id}",
  scope: "personal_api_key:write",
  tags: ["personal_api_keys"],
  summary: "Change a key's label, scopes, scoping or expiry; it applies at once",
  request: { params: KeyParams, body: jsonBody(PersonalApiKeyUpdate) },
  responses: { 200: jsonResponse(PersonalApiKey, "The key, masked"), 409: changedMeanwhileResponse },
});

export const rollKey = apiRoute({
  method: "post",
  path: "/api/personal_api_keys/{id}/roll",
  scope: "personal_api_key:write",
  middleware: [noStore],
  tags: ["personal_api_keys"],
  summary: "Replace a key's value; the new one is returned once, the old one stops after `overlap_seconds`",
  request: { params: KeyParams, body: jsonBody(RollInput) },
  responses: { 200: jsonResponse(CreatedPersonalApiKey, "The key, with its new value"), 409: changedMeanwhileResponse },
});
