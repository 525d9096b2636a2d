import { z } from "@hono/zod-openapi";
import { apiRoute, changedMeanwhileResponse, jsonBody, jsonResponse as json } from "../../../platform/route";
import { noStore } from "../../../platform/response-headers";
import type { ProjectTree } from "../../project-trees";
import {
  CreatedSharePassword,
  CreateSharePasswordInput,
  SharingConfiguration,
  SharingParams,
  UpdateSharingInput,
} from "./sharing.schema";
import { sharingOfPath } from "./sharing.request";

/** Their answers carry the link's access token (or a new password): no cache may keep them. */
const carriesSecret = [noStore];

/** The sharing routes of one tree; `tree` only changes the path. */
export function sharingRoutes<T extends ProjectTree>(tree: T) {
  const path = `${tree}/{project_id}/dashboards/{dashboard_id}/sharing` as const;
  const tags = ["sharing"];
  const answer = { 200: json(SharingConfiguration, "The sharing configuration") };
  return {
    retrieve: apiRoute({
      tags,
      context: "project",
      method: "get",
      path,
      scope: "sharing_configuration:read",
      serviceKeys: true,
      summary: "The dashboard's sharing configuration; created disabled on first read, so its token is stable",
      middleware: carriesSecret,
      request: { params: SharingParams },
      responses: answer,
    }),
    update: apiRoute({
      tags,
      context: "project",
      reads: sharingOfPath,
      method: "patch",
      path,
      scope: "sharing_configuration:write",
      serviceKeys: true,
      summary: "Enable or pause the public link, set its expiry, password and settings (edit rights)",
      middleware: carriesSecret,
      request: { params: SharingParams, body: jsonBody(UpdateSharingInput) },
      responses: { 200: json(SharingConfiguration, "The sharing configuration"), 409: changedMeanwhileResponse },
    }),
    refresh: apiRoute({
      tags,
      context: "project",
      reads: sharingOfPath,
      method: "post",
      path: `${path}/refresh`,
      scope: "sharing_configuration:write",
      serviceKeys: true,
      summary: "Issue a new access token; the old link stops working at once",
      middleware: carriesSecret,
      request: { params: SharingParams },
      responses: answer,
    }),
    createPassword: apiRoute({
      tags,
      context: "project",
      reads: sharingOfPath,
      method: "post",
      path: `${path}/passwords`,
      scope: "sharing_configuration:write",
      serviceKeys: true,
      summary: "Add a share password, shown this once",
      middleware: carriesSecret,
      request: { params: SharingParams, body: jsonBody(CreateSharePasswordInput) },
      responses: { 201: json(CreatedSharePassword, "The new password") },
    }),
    deletePassword: apiRoute({
      tags,
      context: "project",
      reads: sharingOfPath,
      method: "delete",
      path: `${path}/passwords/{password_id}`,
      scope: "sharing_configuration:write",
      serviceKeys: true,
      summary: "Delete a share password",
      request: { params: SharingParams.extend({ password_id: z.string().openapi({ description: "Password id." }) }) },
      responses: { 204: { description: "Deleted" } },
    }),
  };
}
