import { z } from "@hono/zod-openapi";
import { MembershipLevel } from "../../platform/levels";
import { OrganizationParams } from "../../platform/route-context";
import { paginated, PaginationQuery } from "../../platform/pagination";
import { noStore } from "../../platform/response-headers";
import { apiRoute, conflictResponse, jsonBody, jsonResponse } from "../../platform/route";
import { bulkInviteReads, oneInviteReads } from "./invites.request";
import { requireInvitePermission } from "./invites.rules";
import { BulkInviteInput, CreatedInvite, Invite, InviteInput, InviteParams } from "./invites.schema";

export const listInvites = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}/invites",
  scope: "organization_member:read",
  serviceKeys: true,
  context: "organization",
  tags: ["invites"],
  summary: "List the organization's invites, newest first",
  request: { params: OrganizationParams, query: PaginationQuery },
  responses: { 200: jsonResponse(paginated(Invite), "A page of invites") },
});

export const createInvite = apiRoute({
  method: "post",
  path: "/api/organizations/{organization_id}/invites",
  scope: "organization_member:write",
  context: "organization",
  reads: oneInviteReads,
  middleware: [requireInvitePermission, noStore],
  tags: ["invites"],
  summary: "Invite someone by e-mail; replaces earlier invites for the same e-mail",
  request: { params: OrganizationParams, body: jsonBody(InviteInput) },
  responses: { 201: jsonResponse(CreatedInvite, "The invite, with its acceptance token"), 409: conflictResponse },
});

export const createInvitesInBulk = apiRoute({
  method: "post",
  path: "/api/organizations/{organization_id}/invites/bulk",
  scope: "organization_member:write",
  context: "organization",
  reads: bulkInviteReads,
  middleware: [requireInvitePermission, noStore],
  tags: ["invites"],
  summary: "Invite up to 20 people at once: all are created, or none",
  request: { params: OrganizationParams, body: jsonBody(BulkInviteInput) },
  responses: {
    201: jsonResponse(z.array(CreatedInvite), "The invites, in the order sent, with their acceptance tokens"),
    409: conflictResponse,
  },
});

export const deleteInvite = apiRoute({
  method: "delete",
  path: "/api/organizations/{organization_id}/invites/{id}",
  scope: "organization_member:write",
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["invites"],
  summary: "Cancel an invite (admin or owner)",
  request: { params: InviteParams },
  responses: { 204: { description: "Deleted" } },
});

export const resendInviteEmail = apiRoute({
  method: "post",
  path: "/api/organizations/{organization_id}/invites/{id}/resend_email",
  scope: "organization_member:write",
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["invites"],
  summary: "Send again an invite e-mail that failed (admin or owner): the same e-mail, its attempts from the start",
  request: { params: InviteParams },
  responses: { 202: jsonResponse(Invite, "The invite, its e-mail pending again"), 409: conflictResponse },
});
