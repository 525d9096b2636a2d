import { z } from "@hono/zod-openapi";
import { MembershipLevel } from "../../platform/levels";
import { OrganizationParams } from "../../platform/route-context";
import { paginated, PaginationQuery } from "../../platform/pagination";
import { apiRoute, conflictResponse, jsonBody, jsonResponse as json } from "../../platform/route";
import { Domain, DomainCreateInput, DomainFullInput, DomainUpdateInput } from "./domains.schema";
import { domainOfPath } from "./domains.request";

const DomainParams = OrganizationParams.extend({ id: z.string().openapi({ description: "Domain id." }) });

// Any member reads; writes need admin or owner, as PostHog's OrganizationAdminWritePermissions.

export const listDomains = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}/domains",
  serviceKeys: true,
  scope: "organization:read",
  context: "organization",
  tags: ["domains"],
  summary: "List the organization's authentication domains, by domain",
  request: { params: OrganizationParams, query: PaginationQuery },
  responses: { 200: json(paginated(Domain), "A page of domains") },
});

export const createDomain = apiRoute({
  method: "post",
  path: "/api/organizations/{organization_id}/domains",
  serviceKeys: true,
  scope: "organization:write",
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["domains"],
  summary: "Add a domain (admin or owner); it starts unverified, with a verification challenge",
  request: { params: OrganizationParams, body: jsonBody(DomainCreateInput) },
  responses: { 201: json(Domain, "The domain") },
});

export const retrieveDomain = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}/domains/{id}",
  serviceKeys: true,
  scope: "organization:read",
  context: "organization",
  tags: ["domains"],
  summary: "Retrieve a domain",
  request: { params: DomainParams },
  responses: { 200: json(Domain, "The domain") },
});

export const updateDomain = apiRoute({
  method: "patch",
  path: "/api/organizations/{organization_id}/domains/{id}",
  serviceKeys: true,
  scope: "organization:write",
  context: "organization",
  reads: domainOfPath,
  level: MembershipLevel.admin,
  tags: ["domains"],
  summary: "Update a domain's SSO settings (admin or owner); `domain` itself cannot change",
  request: { params: DomainParams, body: jsonBody(DomainUpdateInput) },
  responses: { 200: json(Domain, "The domain"), 409: conflictResponse },
});

export const replaceDomain = apiRoute({
  method: "put",
  path: "/api/organizations/{organization_id}/domains/{id}",
  serviceKeys: true,
  scope: "organization:write",
  context: "organization",
  reads: domainOfPath,
  level: MembershipLevel.admin,
  tags: ["domains"],
  summary: "Update a domain with PUT (admin or owner): `domain` required, not applied; fields left out kept",
  request: { params: DomainParams, body: jsonBody(DomainFullInput) },
  responses: { 200: json(Domain, "The domain"), 409: conflictResponse },
});

export const deleteDomain = apiRoute({
  method: "delete",
  path: "/api/organizations/{organization_id}/domains/{id}",
  serviceKeys: true,
  scope: "organization:write",
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["domains"],
  summary: "Remove a domain (admin or owner)",
  request: { params: DomainParams },
  responses: { 204: { description: "Removed" } },
});

export const verifyDomain = apiRoute({
  method: "post",
  path: "/api/organizations/{organization_id}/domains/{id}/verify",
  serviceKeys: true,
  scope: "organization:write",
  context: "organization",
  reads: domainOfPath,
  level: MembershipLevel.admin,
  tags: ["domains"],
  summary: "Look up the TXT record `_posthog-challenge.<domain>` and verify the domain if it holds the challenge",
  description:
    "200 with the domain either way: `is_verified` tells whether the record matched; " +
    "otherwise `last_verification_retry` is set. Already verified: 400 `already_verified`.",
  request: { params: DomainParams },
  responses: { 200: json(Domain, "The domain after the attempt") },
});
