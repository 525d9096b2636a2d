import { z } from "@hono/zod-openapi";
import { MembershipLevel } from "../../platform/levels";
import { OrganizationParams } from "../../platform/route-context";
import { noStore } from "../../platform/response-headers";
import { apiRoute, conflictResponse, jsonBody, jsonResponse as json } from "../../platform/route";
import { ActivityLogExport, ActivityLogExportInput } from "./exports.schema";

const collection = "/api/organizations/{organization_id}/activity_log/exports";
const ExportParams = OrganizationParams.extend({ id: z.string().openapi({ description: "Export id." }) });

// Exports are of the organization-wide log: for its admins and owners, as the log itself is.
const common = {
  scope: "activity_log:read" as const,
  serviceKeys: true,
  context: "organization" as const,
  level: MembershipLevel.admin,
  tags: ["activity log"],
};

export const createExport = apiRoute({
  ...common,
  method: "post",
  path: collection,
  summary: "Export the log between two times (NDJSON or CSV), built in the background; each line verifies offline",
  request: { params: OrganizationParams, body: jsonBody(ActivityLogExportInput) },
  responses: { 202: json(ActivityLogExport, "The export, pending"), 409: conflictResponse },
});

export const retrieveExport = apiRoute({
  ...common,
  method: "get",
  path: `${collection}/{id}`,
  summary: "An export's progress, and its download link once it succeeded",
  request: { params: ExportParams },
  responses: { 200: json(ActivityLogExport, "The export") },
});

const file = { schema: z.string().openapi({ example: '{"activity":"joined","...":"..."}\n' }) };

export const downloadExport = apiRoute({
  ...common,
  middleware: [noStore],
  method: "get",
  path: `${collection}/{id}/download`,
  operationId: "organizations_activity_log_exports_download_retrieve",
  summary: "Download a finished export, streamed",
  request: { params: ExportParams },
  responses: {
    200: { description: "The file", content: { "application/x-ndjson": file, "text/csv": file } },
    409: conflictResponse,
  },
});
