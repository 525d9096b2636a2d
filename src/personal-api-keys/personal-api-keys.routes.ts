import { z } from "@hono/zod-openapi";
import { keyPathId } from "../platform/path-ids";
import { noStore } from "../platform/response-headers";
import { apiRoute, changedMeanwhileResponse, jsonBody, jsonResponse } from "../platform/route";
import {
  CallingApiKey,
  CreatedPersonalApiKey,
  PersonalApiKey,
  PersonalApiKeyInput,
  PersonalApiKeyUpdate,
  RollInput,
} from "./personal-api-keys.schema";

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
  managesKeys: true,
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
  managesKeys: true,
  scope: "personal_api_key:write",
  tags: ["personal_api_keys"],
  summary: "Revoke a key at once",
  request: { params: KeyParams },
  responses: { 204: { description: "Revoked" }, 409: changedMeanwhileResponse },
});

export const updateKey = apiRoute({
  method: "patch",
  path: "/api/personal_api_keys/{id}",
  managesKeys: true,
  scope: "personal_api_key:write",
  tags: ["personal_api_keys"],
  summary: "Change a key's label, scopes, scoping or expiry; it applies at once",
  request: { params: KeyParams, body: jsonBody(PersonalApiKeyUpdate) },
  responses: { 200: jsonResponse(PersonalApiKey, "The key, masked"), 409: changedMeanwhileResponse },
});

export const rollKey = apiRoute({
  method: "post",
  path: "/api/personal_api_keys/{id}/roll",
  managesKeys: true,
  scope: "personal_api_key:write",
  middleware: [noStore],
  tags: ["personal_api_keys"],
  summary: "Replace a key's value; the new one is returned once, the old one stops after `overlap_seconds`",
  request: { params: KeyParams, body: jsonBody(RollInput) },
  responses: { 200: jsonResponse(CreatedPersonalApiKey, "The key, with its new value"), 409: changedMeanwhileResponse },
});
