import { MembershipLevel } from "../../platform/levels";
import { paginated, PaginationQuery } from "../../platform/pagination";
import { OrganizationParams } from "../../platform/route-context";
import { apiRoute, changedMeanwhileResponse, jsonBody, jsonResponse as json } from "../../platform/route";
import { newRoleMembershipOfBody, roleMembershipOfPath, roleOfPath } from "./roles.request";
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
  responses: { 200: json(Role, "The role"), 409: changedMeanwhileResponse },
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
