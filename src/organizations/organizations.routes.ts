import { conditionalRequestsOpenApi } from "../platform/conditional-requests";
import { MembershipLevel } from "../platform/levels";
import { OrganizationParams } from "../platform/route-context";
import { paginated, PaginationQuery } from "../platform/pagination";
import { apiRoute, changedMeanwhileResponse, jsonBody, jsonResponse } from "../platform/route";
import {
  Organization,
  OrganizationFullInput,
  OrganizationInput,
  OrganizationUpdateInput,
} from "./organizations.schema";

const conditional = conditionalRequestsOpenApi("organization");

export const listOrganizations = apiRoute({
  method: "get",
  path: "/api/organizations",
  scope: "organization:read",
  tags: ["organizations"],
  summary: "List the caller's organizations",
  request: { query: PaginationQuery },
  responses: { 200: jsonResponse(paginated(Organization), "A page of organizations") },
});

export const createOrganization = apiRoute({
  method: "post",
  path: "/api/organizations",
  scope: "organization:write",
  tags: ["organizations"],
  summary: "Create an organization: the caller becomes its owner, and a default project is created",
  request: { body: jsonBody(OrganizationInput) },
  responses: { 201: { ...jsonResponse(Organization, "The organization"), headers: conditional.etag } },
});

export const retrieveOrganization = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}",
  scope: "organization:read",
  // No context: the handler checks the membership it reads with the organization.
  tags: ["organizations"],
  summary: "Retrieve an organization the caller belongs to",
  request: { params: OrganizationParams, headers: conditional.ifNoneMatch },
  responses: {
    200: { ...jsonResponse(Organization, "The organization"), headers: conditional.etag },
    304: conditional.notModified,
  },
});

export const updateOrganization = apiRoute({
  method: "patch",
  path: "/api/organizations/{organization_id}",
  scope: "organization:write",
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["organizations"],
  summary: "Rename or configure an organization (admin or owner)",
  request: { params: OrganizationParams, headers: conditional.ifMatch, body: jsonBody(OrganizationUpdateInput) },
  responses: {
    200: { ...jsonResponse(Organization, "The organization"), headers: conditional.etag },
    409: changedMeanwhileResponse,
    412: conditional.preconditionFailed,
  },
});

export const replaceOrganization = apiRoute({
  method: "put",
  path: "/api/organizations/{organization_id}",
  scope: "organization:write",
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["organizations"],
  summary: "Update an organization with PUT (admin or owner): `name` required, fields left out kept",
  request: { params: OrganizationParams, headers: conditional.ifMatch, body: jsonBody(OrganizationFullInput) },
  responses: {
    200: { ...jsonResponse(Organization, "The organization"), headers: conditional.etag },
    409: changedMeanwhileResponse,
    412: conditional.preconditionFailed,
  },
});

export const deleteOrganization = apiRoute({
  method: "delete",
  path: "/api/organizations/{organization_id}",
  scope: "organization:write",
  context: "organization",
  level: MembershipLevel.owner,
  // It revokes the organization's service keys and closes it to every other key.
  managesKeys: true,
  tags: ["organizations"],
  summary: "Delete an organization (owner): closed to everyone at once, its rows removed in the background",
  request: { params: OrganizationParams, headers: conditional.ifMatch },
  responses: { 204: { description: "Deleted" }, 412: conditional.preconditionFailed },
});
