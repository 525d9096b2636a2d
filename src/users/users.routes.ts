import { z } from "@hono/zod-openapi";
import { apiRoute } from "../platform/route";
import { UserBasic } from "./user-basic";

export const CurrentUser = UserBasic.extend({
  date_joined: z.string(),
  organizations: z.array(
    z.object({ id: z.string().uuid(), name: z.string(), membership_level: z.number().int() }),
  ),
}).openapi("CurrentUser");

export const getCurrentUser = apiRoute({
  method: "get",
  path: "/api/users/@me",
  scope: "user:read",
  tags: ["users"],
  summary: "The user the API key belongs to, with their organizations",
  responses: {
    200: { description: "The caller", content: { "application/json": { schema: CurrentUser } } },
  },
});
