import { z } from "@hono/zod-openapi";
import { OrganizationParams } from "../../platform/route-context";
import { paginated, PaginationQuery } from "../../platform/pagination";
import { TimestampInput } from "../../platform/timestamps";
import { SearchQuery } from "../../platform/text-search";
import { apiRoute, conflictResponse, jsonBody, jsonResponse } from "../../platform/route";
import { Member, MemberParams, MemberUpdate } from "./members.schema";
import { memberOfPath } from "./members.request";

export const listMembers = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}/members",
  serviceKeys: true,
  scope: "organization_member:read",
  context: "organization",
  tags: ["members"],
  summary: "List the organization's members, latest joined first (`order`), filtered by `email` or `search`",
  request: {
    params: OrganizationParams,
    query: PaginationQuery.extend({
      email: z.string().optional().openapi({ description: "Only the member with this e-mail (case ignored)." }),
      search: SearchQuery.openapi({
        description:
          "Only members whose first name, last name or e-mail contains this text, case ignored " +
          "(its first 200 characters).",
      }),
      updated_after: TimestampInput.optional().openapi({
        description: "Only members whose membership changed after this time, as PostHog's web app refreshes its list.",
        example: "2026-01-01T00:00:00Z",
      }),
      order: z.string().optional().openapi({
        description: "`-joined_at` (latest joined first, the default) or `joined_at`; any other value is the default.",
      }),
    }),
  },
  responses: { 200: jsonResponse(paginated(Member), "A page of members") },
});

/** PATCH, and PostHog's PUT, which takes the same fields (none required, those left out kept). */
const memberUpdate = <const M extends "patch" | "put">(method: M, summary: string) =>
  apiRoute({
    method,
    path: "/api/organizations/{organization_id}/members/{user__uuid}",
    scope: "organization_member:write",
    context: "organization",
    reads: memberOfPath,
    tags: ["members"],
    summary,
    request: { params: MemberParams, body: jsonBody(MemberUpdate) },
    responses: {
      200: jsonResponse(Member, "The member"),
      409: conflictResponse,
    },
  });

export const updateMember = memberUpdate(
  "patch",
  "Change a member's level (admin; never your own, never above your own)",
);

export const replaceMember = memberUpdate(
  "put",
  "Update a member with PUT, as PATCH: no field is required, and `level` left out is kept",
);

export const removeMember = apiRoute({
  method: "delete",
  path: "/api/organizations/{organization_id}/members/{user__uuid}",
  scope: "organization_member:write",
  context: "organization",
  reads: memberOfPath,
  tags: ["members"],
  summary: "Remove a member (admin), or leave the organization (`@me`)",
  request: { params: MemberParams },
  responses: {
    204: { description: "Removed" },
    409: conflictResponse,
  },
});
