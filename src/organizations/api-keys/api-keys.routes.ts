import { z } from "@hono/zod-openapi";
import { MembershipLevel } from "../../platform/levels";
import { paginated, PaginationQuery } from "../../platform/pagination";
import { apiRoute, jsonResponse } from "../../platform/route";
import { OrganizationParams } from "../../platform/route-context";
import { OrganizationApiKey } from "./api-keys.schema";
import { keyToBlock } from "./api-keys.request";

const collection = "/api/organizations/{organization_id}/api_keys";
const KeyParams = OrganizationParams.extend({ id: z.string().openapi({ description: "The key's id." }) });

export const listApiKeys = apiRoute({
  method: "get",
  path: collection,
  scope: "organization:read",
  context: "organization",
  level: MembershipLevel.admin,
  serviceKeys: true,
  tags: ["api_keys"],
  summary: "Every key that can reach the organization: members' personal keys and service keys, newest first",
  request: { params: OrganizationParams, query: PaginationQuery },
  responses: { 200: jsonResponse(paginated(OrganizationApiKey), "A page of keys, masked") },
});

export const blockApiKey = apiRoute({
  method: "delete",
  path: `${collection}/{id}`,
  managesKeys: true,
  scope: "organization:write",
  context: "organization",
  level: MembershipLevel.admin,
  reads: keyToBlock,
  tags: ["api_keys"],
  summary: "Take a member's personal key out of the organization's reach, at once; it keeps working elsewhere",
  request: { params: KeyParams },
  responses: { 204: { description: "The key no longer reaches the organization" } },
});
