import { z } from "@hono/zod-openapi";
import { OrganizationParams } from "../../platform/route-context";
import { paginated, PaginationQuery } from "../../platform/pagination";
import { apiRoute, conflictResponse, jsonBody, jsonResponse } from "../../platform/route";
import { UserBasic } from "../../users/user-basic";
import { MembershipLevelField } from "../membership-level-field";
import { memberOfPath } from "./members.handlers";
import { Timestamp } from "../../platform/timestamps";

const MemberParams = OrganizationParams.extend({
  user__uuid: z.string().openapi({ description: "The member's user uuid, or `@me`." }),
});

export const Member = z
  .object({
    id: z.string().uuid().openapi({ description: "The membership's id." }),
    user: UserBasic,
    level: MembershipLevelField,
    joined_at: Timestamp,
    updated_at: Timestamp,
    is_2fa_enabled: z.boolean(),
    has_social_auth: z.boolean(),
    last_login: z.string().nullable(),
  })
  .openapi("Member");
export type Member = z.infer<typeof Member>;

export const MemberUpdate = z.object({ level: MembershipLevelField.optional() }).openapi("MemberUpdate");

export const listMembers = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}/members",
  serviceKeys: true,
  scope: "organization_member:read",
  context: "organization",
  tags: ["members"],
  summary: "List the organization's members, latest joined first",
  request: {
    params: OrganizationParams,
    query: PaginationQuery.extend({
      email: z.string().optional().openapi({ description: "Only the member with this e-mail (case ignored)." }),
    }),
  },
  responses: { 200: jsonResponse(paginated(Member), "A page of members") },
});

export const updateMember = apiRoute({
  method: "patch",
  path: "/api/organizations/{organization_id}/members/{user__uuid}",
  scope: "organization_member:write",
  context: "organization",
  reads: memberOfPath,
  tags: ["members"],
  summary: "Change a member's level (admin; never your own, never above your own)",
  request: { params: MemberParams, body: jsonBody(MemberUpdate) },
  responses: {
    200: jsonResponse(Member, "The member"),
    409: conflictResponse,
  },
});

export const replaceMember = apiRoute({
  method: "put",
  path: "/api/organizations/{organization_id}/members/{user__uuid}",
  scope: "organization_member:write",
  context: "organization",
  reads: memberOfPath,
  tags: ["members"],
  summary: "Update a member with PUT, as PATCH: no field is required, and `level` left out is kept",
  request: { params: MemberParams, body: jsonBody(MemberUpdate) },
  responses: {
    200: jsonResponse(Member, "The member"),
    409: conflictResponse,
  },
});

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
