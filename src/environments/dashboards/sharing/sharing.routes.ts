import { z } from "@hono/zod-openapi";
import { projectRead, ProjectParams, routeReads } from "../../../platform/route-context";
import { parseDashboardId, readScopeOf } from "../dashboard-request";
import { selectDashboard } from "../dashboards.queries";
import { selectPublicSharingAllowed, selectSharePasswords, selectSharing } from "./sharing.queries";
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

/** PostHog's SharePassword: never the password, which only its creation answers. */
export const SharePassword = z
  .object({
    id: z.string(),
    created_at: Timestamp,
    note: z.string(),
    created_by_email: z.string(),
    is_active: z.boolean(),
  })
  .openapi("SharePassword");
export type SharePassword = z.infer<typeof SharePassword>;

export const CreatedSharePassword = SharePassword.omit({ is_active: true })
  .extend({ password: z.string() })
  .openapi("CreatedSharePassword");

const CreateSharePasswordInput = z
  .object({
    raw_password: z
      .union([z.string().min(8).max(200), z.literal("")])
      .optional()
      .openapi({
        description: "8 characters or more; absent or empty: random.",
        example: "correct horse battery",
      }),
    note: z.string().max(100).optional(),
  })
  .openapi("CreateSharePassword");

export const SharingConfiguration = z
  .object({
    created_at: Timestamp,
    enabled: z.boolean().openapi({ description: "`false` pauses the link; its token is kept." }),
    access_token: z.string().openapi({ description: "The public link is `/shared/<access_token>`." }),
    settings: z.record(z.string(), z.boolean()),
    expires_at: Timestamp.nullable(),
    password_required: z.boolean(),
    share_passwords: z.array(SharePassword),
    view_count: z.number().int(),
    last_viewed_at: Timestamp.nullable(),
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
    expires_at: z.string().datetime({ offset: true }).nullable().optional(),
    password_required: z.boolean().optional(),
  })
  .openapi("UpdateSharingConfiguration");
export type UpdateSharingInput = z.infer<typeof UpdateSharingInput>;

const SharingParams = ProjectParams.extend({ dashboard_id: z.string().openapi({ description: "Dashboard id." }) });

/**
 * The dashboard the path names, whether the organization allows public sharing (and its longest
 * link lifetime), and the dashboard's configuration with its passwords, read in the round trip
 * that resolves the project (the writes).
 */
export const sharingOfPath = routeReads((c) => {
  const dashboardId = parseDashboardId(c.req.param("dashboard_id") ?? "");
  return projectRead(c, (environmentId) => [
    selectDashboard(c.var.db, readScopeOf(c, environmentId), dashboardId),
    selectPublicSharingAllowed(c.var.db, environmentId),
    selectSharing(c.var.db, dashboardId),
    selectSharePasswords(c.var.db, dashboardId),
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
      summary: "Enable or pause the public link, set its expiry, password and settings (edit rights)",
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
    createPassword: apiRoute({
      tags,
      context: "project",
      reads: sharingOfPath,
      method: "post",
      path: `${path}/passwords`,
      scope: "sharing_configuration:write",
      summary: "Add a share password, shown this once",
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
      summary: "Delete a share password",
      request: { params: SharingParams.extend({ password_id: z.string().openapi({ description: "Password id." }) }) },
      responses: { 204: { description: "Deleted" } },
    }),
  };
}
