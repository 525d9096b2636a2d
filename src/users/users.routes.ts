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
