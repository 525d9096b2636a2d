import { z } from "@hono/zod-openapi";
import { apiRoute, jsonBody, jsonResponse } from "../platform/route";
import { CurrentUser, CurrentUserUpdate } from "./users.schema";

export const getCurrentUser = apiRoute({
  method: "get",
  path: "/api/users/@me",
  scope: "user:read",
  tags: ["users"],
  summary: "The user the API key belongs to, with their current organization and project",
  responses: { 200: jsonResponse(CurrentUser, "The caller") },
});

export const updateCurrentUser = apiRoute({
  method: "patch",
  path: "/api/users/@me",
  scope: "user:write",
  tags: ["users"],
  summary: "Change the caller's name, preferences, and current organization or project",
  request: { body: jsonBody(CurrentUserUpdate) },
  responses: { 200: jsonResponse(CurrentUser, "The caller") },
});

const UserParams = z.object({
  user_uuid: z.string().openapi({ description: "The caller's own uuid: the same user as `@me`; any other is 404." }),
});

/** PostHog's `/api/users/{uuid}/`, which its MCP server calls with the caller's own uuid. */
export const getUserByUuid = apiRoute({
  method: "get",
  path: "/api/users/{user_uuid}",
  // PostHog's ids name its one `{uuid}` route, `@me` included: `users_retrieve` stays `@me`'s here.
  operationId: "users_by_uuid_retrieve",
  scope: "user:read",
  tags: ["users"],
  summary: "The caller by their own uuid, as `@me`; another user's uuid is 404",
  request: { params: UserParams },
  responses: { 200: jsonResponse(CurrentUser, "The caller") },
});

export const updateUserByUuid = apiRoute({
  method: "patch",
  path: "/api/users/{user_uuid}",
  operationId: "users_by_uuid_partial_update",
  scope: "user:write",
  tags: ["users"],
  summary: "Change the caller by their own uuid, as `@me`; another user's uuid is 404",
  request: { params: UserParams, body: jsonBody(CurrentUserUpdate) },
  responses: { 200: jsonResponse(CurrentUser, "The caller") },
});
