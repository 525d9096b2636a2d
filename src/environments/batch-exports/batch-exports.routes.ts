import { z } from "@hono/zod-openapi";
import { paginated, PaginationQuery } from "../../platform/pagination";
import { ProjectParams } from "../../platform/route-context";
import { apiRoute, conflictResponse, jsonBody, jsonResponse as json } from "../../platform/route";
import type { ProjectTree } from "../project-trees";
import {
  BatchExport,
  BatchExportCreateInput,
  BatchExportFullInput,
  BatchExportUpdateInput,
  PausedState,
} from "./batch-exports.schema";
import { batchExportOfPath } from "./batch-exports.request";

const BatchExportParams = ProjectParams.extend({ id: z.string().openapi({ description: "Batch export id." }) });

export function batchExportRoutes(tree: ProjectTree) {
  const collection = `${tree}/{project_id}/batch_exports` as const;
  const item = `${collection}/{id}` as const;
  const common = { context: "project" as const, tags: ["batch_exports"] };
  return {
    list: apiRoute({
      ...common,
      method: "get",
      path: collection,
      scope: "batch_export:read",
      serviceKeys: true,
      summary: "List the project's batch exports, newest first",
      request: { params: ProjectParams, query: PaginationQuery },
      responses: { 200: json(paginated(BatchExport), "A page of batch exports") },
    }),
    create: apiRoute({
      ...common,
      method: "post",
      path: collection,
      scope: "batch_export:write",
      serviceKeys: true,
      summary: "Create a batch export",
      request: { params: ProjectParams, body: jsonBody(BatchExportCreateInput) },
      responses: { 201: json(BatchExport, "The batch export, without its secrets") },
    }),
    retrieve: apiRoute({
      ...common,
      method: "get",
      path: item,
      scope: "batch_export:read",
      serviceKeys: true,
      summary: "Retrieve a batch export",
      request: { params: BatchExportParams },
      responses: { 200: json(BatchExport, "The batch export, without its secrets") },
    }),
    update: apiRoute({
      ...common,
      reads: batchExportOfPath,
      method: "patch",
      path: item,
      scope: "batch_export:write",
      serviceKeys: true,
      summary:
        "Update a batch export; `destination.config` is merged, so omitted secrets are kept unless an endpoint changes",
      request: { params: BatchExportParams, body: jsonBody(BatchExportUpdateInput) },
      responses: { 200: json(BatchExport, "The batch export, without its secrets"), 409: conflictResponse },
    }),
    replace: apiRoute({
      ...common,
      reads: batchExportOfPath,
      method: "put",
      path: item,
      scope: "batch_export:write",
      serviceKeys: true,
      summary: "Update a batch export with PUT: `name`, `interval` and `destination.type` required, the rest as PATCH",
      request: { params: BatchExportParams, body: jsonBody(BatchExportFullInput) },
      responses: { 200: json(BatchExport, "The batch export, without its secrets"), 409: conflictResponse },
    }),
    remove: apiRoute({
      ...common,
      method: "delete",
      path: item,
      scope: "batch_export:write",
      serviceKeys: true,
      summary: "Delete a batch export (soft: it disappears from lists and reads)",
      request: { params: BatchExportParams },
      responses: { 204: { description: "Deleted" } },
    }),
    pause: apiRoute({
      ...common,
      method: "post",
      path: `${item}/pause`,
      scope: "batch_export:write",
      serviceKeys: true,
      summary: "Pause a batch export; pausing a paused one changes nothing",
      request: { params: BatchExportParams },
      responses: { 200: json(PausedState, "Paused") },
    }),
    unpause: apiRoute({
      ...common,
      method: "post",
      path: `${item}/unpause`,
      scope: "batch_export:write",
      serviceKeys: true,
      summary: "Unpause a batch export; unpausing a running one changes nothing",
      request: { params: BatchExportParams },
      responses: { 200: json(PausedState, "Running") },
    }),
  };
}

export type BatchExportRoutes = ReturnType<typeof batchExportRoutes>;
