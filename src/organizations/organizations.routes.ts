import { z } from "@hono/zod-openapi";
import { OrganizationParams, resolveOrganization } from "../platform/organization-context";
import { paginated, PaginationQuery } from "../platform/pagination";
import { apiRoute, jsonBody, jsonResponse } from "../platform/route";

export const Organization = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    membership_level: z.number().int(),
  })
  .openapi("Organization");

export const OrganizationInput = z
  .object({ name: z.string().trim().min(1).max(64) })
  .openapi("OrganizationInput");

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
  responses: { 201: jsonResponse(Organization, "The organization") },
});

export const retrieveOrganization = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}",
  scope: "organization:read",
  middleware: [resolveOrganization],
  tags: ["organizations"],
  summary: "Retrieve an organization the caller belongs to",
  request: { params: OrganizationParams },
  responses: { 200: jsonResponse(Organization, "The organization") },
});
