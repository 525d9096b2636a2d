import { keyPathId } from "../platform/path-ids";
import { z } from "@hono/zod-openapi";
import { RollInput } from "../personal-api-keys/personal-api-keys.schema";
import { MembershipLevel } from "../platform/levels";
import { noStore } from "../platform/response-headers";
import { apiRoute, changedMeanwhileResponse, jsonBody, jsonResponse } from "../platform/route";
import { OrganizationParams } from "../platform/route-context";
import {
  CallingServiceKey,
  CreatedServiceKey,
  ServiceKey,
  ServiceKeyInput,
  ServiceKeyUpdate,
} from "./service-keys.schema";

const KeyParams = OrganizationParams.extend({ id: keyPathId });
const collection = "/api/organizations/{organization_id}/service_keys";

export const listServiceKeys = apiRoute({
  method: "get",
  path: collection,
  scope: "organization:read",
  context: "organization",
  level: MembershipLevel.admin,
  serviceKeys: true,
  tags: ["service_keys"],
  summary: "List the organization's service keys, newest first (a JSON array)",
  request: { params: OrganizationParams },
  responses: { 200: jsonResponse(z.array(ServiceKey), "Every service key of the organization, masked") },
});

export const createServiceKey = apiRoute({
  method: "post",
  path: collection,
  managesKeys: true,
  scope: "organization:write",
  context: "organization",
  level: MembershipLevel.admin,
  middleware: [noStore],
  tags: ["service_keys"],
  summary: "Create a service key, which acts as the organization; its value is returned once",
  request: { params: OrganizationParams, body: jsonBody(ServiceKeyInput) },
  responses: { 201: jsonResponse(CreatedServiceKey, "The key, with its value"), 409: changedMeanwhileResponse },
});

export const retrieveCurrentServiceKey = apiRoute({
  method: "get",
  path: "/api/service_keys/@current",
  operationId: "service_keys_current_retrieve",
  // Any valid service key may read itself, whatever its scopes.
  scope: null,
  serviceKeys: true,
  tags: ["service_keys"],
  summary: "The calling service key, masked: its organization, level, scopes, projects, expiry and rate limits",
  responses: { 200: jsonResponse(CallingServiceKey, "The calling key") },
});

export const retrieveServiceKey = apiRoute({
  method: "get",
  path: `${collection}/{id}`,
  scope: "organization:read",
  context: "organization",
  level: MembershipLevel.admin,
  serviceKeys: true,
  tags: ["service_keys"],
  summary: "Retrieve one of the organization's service keys, masked",
  request: { params: KeyParams },
  responses: { 200: jsonResponse(ServiceKey, "The key") },
});

export const updateServiceKey = apiRoute({
  method: "patch",
  path: `${collection}/{id}`,
  managesKeys: true,
  scope: "organization:write",
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["service_keys"],
  summary: "Change a service key's label, scopes, projects or expiry; it applies at once",
  request: { params: KeyParams, body: jsonBody(ServiceKeyUpdate) },
  responses: { 200: jsonResponse(ServiceKey, "The key, masked"), 409: changedMeanwhileResponse },
});

export const rollServiceKey = apiRoute({
  method: "post",
  path: `${collection}/{id}/roll`,
  managesKeys: true,
  scope: "organization:write",
  context: "organization",
  level: MembershipLevel.admin,
  middleware: [noStore],
  tags: ["service_keys"],
  summary: "Replace a service key's value; the new one is returned once, the old one stops after `overlap_seconds`",
  request: { params: KeyParams, body: jsonBody(RollInput) },
  responses: { 200: jsonResponse(CreatedServiceKey, "The key, with its new value"), 409: changedMeanwhileResponse },
});

export const deleteServiceKey = apiRoute({
  method: "delete",
  path: `${collection}/{id}`,
  managesKeys: true,
  scope: "organization:write",
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["service_keys"],
  summary: "Revoke a service key at once",
  request: { params: KeyParams },
  responses: { 204: { description: "Revoked" } },
});
