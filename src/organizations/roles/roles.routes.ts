import type { Context } from "hono";
import type { AppEnv } from "../../platform/env";
import { MembershipLevel } from "../../platform/levels";
import { paginated, PaginationQuery } from "../../platform/pagination";
import { peekJsonBody } from "../../platform/request-body";
import { OrganizationParams, organizationRead, routeReads } from "../../platform/route-context";
import { apiRoute, jsonBody, jsonResponse as json } from "../../platform/route";
import { newRoleMembershipReads, roleReads, selectRoleMembership } from "./roles.queries";
import {
  Role,
  RoleInput,
  RoleMembership,
  RoleMembershipInput,
  RoleMembershipParams,
  RoleMembershipsParams,
  RoleParams,
  RoleUpdateInput,
} from "./roles.schema";

// Any member reads; writes need admin or owner, as PostHog's OrganizationAdminWritePermissions.
const tags = ["roles"];
const ROLES = "/api/organizations/{organization_id}/roles";
const MEMBERSHIPS = `${ROLES}/{role_id}/role_memberships`;

const pathParam = (c: Context<AppEnv>, name: string) => c.req.param(name) ?? "";

export const listRoles = apiRoute({
  method: "get",
  path: ROLES,
  scope: "organization:read",
  context: "organization",
  tags,
  summary: "List the organization's roles, earliest first, each with its members",
  request: { params: OrganizationParams, query: PaginationQuery },
  responses: { 200: json(paginated(Role), "A page of roles") },
});

export const createRole = apiRoute({
  method: "post",
  path: ROLES,
  scope: "organization:write",
  context: "organization",
  level: MembershipLevel.admin,
  tags,
  summary: "Create a role (admin or owner); its name is unique in the organization, whatever its case",
  request: { params: OrganizationParams, body: jsonBody(RoleInput) },
  responses: { 201: json(Role, "The role") },
});

export const retrieveRole = apiRoute({
  method: "get",
  path: `${ROLES}/{id}`,
  scope: "organization:read",
  context: "organization",
  tags,
  summary: "Retrieve a role with its members",
  request: { params: RoleParams },
  responses: { 200: json(Role, "The role") },
});

/** The role the path names, with its members, read in the round trip that resolves the organization. */
export function readRoleOfPath(c: Context<AppEnv>) {
  const read = organizationRead(c);
  return read.batch([...roleReads(read.db, read.organizationId, pathParam(c, "id"))]);
}

/** A rename's role, read before its body. */
export const roleOfPath = routeReads(readRoleOfPath);

export const updateRole = apiRoute({
  method: "patch",
  path: `${ROLES}/{id}`,
  scope: "organization:write",
  context: "organization",
  reads: roleOfPath,
  level: MembershipLevel.admin,
  tags,
  summary: "Rename a role (admin or owner)",
  request: { params: RoleParams, body: jsonBody(RoleUpdateInput) },
  responses: { 200: json(Role, "The role") },
});

export const deleteRole = apiRoute({
  method: "delete",
  path: `${ROLES}/{id}`,
  scope: "organization:write",
  context: "organization",
  level: MembershipLevel.admin,
  tags,
  summary: "Delete a role (admin or owner), with its memberships and every access rule that names it",
  request: { params: RoleParams },
  responses: { 204: { description: "Deleted" } },
});

export const listRoleMemberships = apiRoute({
  method: "get",
  path: MEMBERSHIPS,
  scope: "organization:read",
  context: "organization",
  tags,
  summary: "List a role's members, earliest first",
  request: { params: RoleMembershipsParams, query: PaginationQuery },
  responses: { 200: json(paginated(RoleMembership), "A page of the role's memberships") },
});

/** The role and the member a new role membership names (the body's `user_uuid`), read with the organization. */
export const newRoleMembershipOfBody = routeReads(async (c) => {
  const body = await peekJsonBody(c, RoleMembershipInput);
  const read = organizationRead(c);
  const userUuid = body?.user_uuid ?? "";
  return {
    userUuid,
    results: await read.batch([
      ...newRoleMembershipReads(read.db, read.organizationId, pathParam(c, "role_id"), userUuid),
    ]),
  };
});

export const createRoleMembership = apiRoute({
  method: "post",
  path: MEMBERSHIPS,
  scope: "organization:write",
  context: "organization",
  reads: newRoleMembershipOfBody,
  level: MembershipLevel.admin,
  tags,
  summary: "Add a member of the organization to a role (admin or owner), by their user uuid",
  request: { params: RoleMembershipsParams, body: jsonBody(RoleMembershipInput) },
  responses: { 201: json(RoleMembership, "The role membership") },
});

export const retrieveRoleMembership = apiRoute({
  method: "get",
  path: `${MEMBERSHIPS}/{id}`,
  scope: "organization:read",
  context: "organization",
  tags,
  summary: "Retrieve a role membership",
  request: { params: RoleMembershipParams },
  responses: { 200: json(RoleMembership, "The role membership") },
});

/** The role membership the path names, read with the organization. */
export function readRoleMembershipOfPath(c: Context<AppEnv>) {
  const read = organizationRead(c);
  return read.batch([selectRoleMembership(read.db, read.organizationId, pathParam(c, "role_id"), pathParam(c, "id"))]);
}

/** A removal's membership (with the role's name, for its entry), read before the write. */
export const roleMembershipOfPath = routeReads(async (c) => {
  const read = organizationRead(c);
  const [role] = roleReads(read.db, read.organizationId, pathParam(c, "role_id"));
  return read.batch([
    selectRoleMembership(read.db, read.organizationId, pathParam(c, "role_id"), pathParam(c, "id")),
    role,
  ]);
});

export const deleteRoleMembership = apiRoute({
  method: "delete",
  path: `${MEMBERSHIPS}/{id}`,
  scope: "organization:write",
  context: "organization",
  reads: roleMembershipOfPath,
  level: MembershipLevel.admin,
  tags,
  summary: "Remove a member from a role (admin or owner)",
  request: { params: RoleMembershipParams },
  responses: { 204: { description: "Removed" } },
});
