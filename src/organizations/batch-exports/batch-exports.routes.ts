import { z } from "@hono/zod-openapi";
import { BatchExport, PausedState } from "../../environments/batch-exports/batch-exports.schema";
import { OrganizationParams } from "../../platform/route-context";
import { paginated, PaginationQuery } from "../../platform/pagination";
import { apiRoute, jsonResponse as json } from "../../platform/route";

const BatchExportParams = OrganizationParams.extend({ id: z.string().openapi({ description: "Batch export id." }) });

const common = { context: "organization" as const, tags: ["batch_exports"] };

export const listOrganizationBatchExports = apiRoute({
  ...common,
  method: "get",
  path: "/api/organizations/{organization_id}/batch_exports",
  scope: "batch_export:read",
  serviceKeys: true,
  summary: "List the batch exports of every project of the organization the caller can see, newest first",
  request: { params: OrganizationParams, query: PaginationQuery },
  responses: { 200: json(paginated(BatchExport), "A page of batch exports") },
});

export const retrieveOrganizationBatchExport = apiRoute({
  ...common,
  method: "get",
  path: "/api/organizations/{organization_id}/batch_exports/{id}",
  scope: "batch_export:read",
  serviceKeys: true,
  summary: "Retrieve a batch export of the organization",
  request: { params: BatchExportParams },
  responses: { 200: json(BatchExport, "The batch export, without its secrets") },
});

export const pauseBatchExport = apiRoute({
  ...common,
  method: "post",
  path: "/api/organizations/{organization_id}/batch_exports/{id}/pause",
  scope: "batch_export:write",
  serviceKeys: true,
  summary: "Pause a batch export; pausing a paused one changes nothing",
  request: { params: BatchExportParams },
  responses: { 200: json(PausedState, "Paused") },
});

export const unpauseBatchExport = apiRoute({
  ...common,
  method: "post",
  path: "/api/organizations/{organization_id}/batch_exports/{id}/unpause",
  scope: "batch_export:write",
  serviceKeys: true,
  summary: "Unpause a batch export; unpausing a running one changes nothing",
  request: { params: BatchExportParams },
  responses: { 200: json(PausedState, "Running") },
});
