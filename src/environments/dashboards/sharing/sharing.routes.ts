import { z } from "@hono/zod-openapi";
import { projectRead, ProjectParams, routeReads } from "../../../platform/route-context";
import { parseDashboardId, readScopeOf } from "../dashboard-request";
import { selectDashboard } from "../dashboards.queries";
import { selectPublicSharingAllowed, selectSharing } from "./sharing.queries";
import { apiRoute, jsonBody, jsonResponse as json } from "../../../platform/route";
import type { ProjectTree } from "../../project-trees";
import { Timestamp } from "../../../platform/timestamps";
import { ACCESS_LEVELS } from "../../../platform/access-rules/dashboard-rights";

/** The settings keys PostHog's sharing accepts; any other key is dropped. */
export const SHARING_SETTINGS_KEYS = [
  "whitelabel",
  "noHeader",
  "showInspector",
  "legend",
  "detailed",
  "hideExtraDetails",
] as const;

export const SharingConfiguration = z
  .object({
    created_at: Timestamp,
    enabled: z.boolean(),
    access_token: z.string().openapi({ description: "The public link is `/shared/<access_token>`." }),
    settings: z.record(z.string(), z.boolean()),
    password_required: z.boolean(),
    share_passwords: z.array(z.unknown()),
    user_access_level: z
      .enum(ACCESS_LEVELS)
      .openapi({ description: "The caller's access to the dashboard shared, as the dashboard answers it." }),
  })
  .openapi("SharingConfiguration");
export type SharingConfiguration = z.infer<typeof SharingConfiguration>;

const UpdateSharingInput = z
  .object({
    enabled: z.boolean().optional(),
    settings: z
      .unknown()
      .optional()
      .openapi({ description: `An object of booleans; only ${SHARING_SETTINGS_KEYS.join(", ")} are kept.` }),
  })
  .openapi("UpdateSharingConfiguration");
export type UpdateSharingInput = z.infer<typeof UpdateSharingInput>;

const SharingParams = ProjectParams.extend({ dashboard_id: z.string().openapi({ description: "Dashboard id." }) });

/**
 * The dashboard the path names, whether the organization allows public sharing, and the
 * dashboard's configuration, read in the round trip that resolves the project (the writes).
 */
export const sharingOfPath = routeReads((c) => {
  const dashboardId = parseDashboardId(c.req.param("dashboard_id") ?? "");
  return projectRead(c, (environmentId) => [
    selectDashboard(c.var.db, readScopeOf(c, environmentId), dashboardId),
    selectPublicSharingAllowed(c.var.db, environmentId),
    selectSharing(c.var.db, dashboardId),
  ]);
});

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
      summary: "The dashboard's sharing configuration; created disabled on first read, so its token is stable",
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
      summary: "Enable or disable the public link, and set its display settings (needs edit rights)",
      request: { params: SharingParams, body: jsonBody(UpdateSharingInput) },
      responses: answer,
    }),
    refresh: apiRoute({
      tags,
      context: "project",
      reads: sharingOfPath,
      method: "post",
      path: `${path}/refresh`,
      scope: "sharing_configuration:write",
      summary: "Issue a new access token; the old link stops working at once",
      request: { params: SharingParams },
      responses: answer,
    }),
  };
}
