import { z } from "@hono/zod-openapi";
import { peekJsonBody } from "../../../platform/request-body";
import { projectRead, routeReads } from "../../../platform/route-context";
import { parseDashboardId, readScopeOf } from "../dashboard-request";
import { selectDashboard } from "../dashboards.queries";
import { selectCandidate, selectCollaboration } from "./collaborators.queries";
import { apiRoute, jsonBody, jsonResponse as json } from "../../../platform/route";
import type { ProjectTree } from "../../project-trees";
import { AddCollaboratorInput, Collaborator, CollaboratorParams, CollaboratorsParams } from "./collaborators.schema";

/** The dashboard the path names and the user the body names, read with the project (POST). */
export const collaborationToAdd = routeReads(async (c) => {
  const body = await peekJsonBody(c, AddCollaboratorInput);
  const dashboardId = parseDashboardId(c.req.param("dashboard_id") ?? "");
  const results = await projectRead(c, (environmentId) => [
    selectDashboard(c.var.db, readScopeOf(c, environmentId), dashboardId),
    selectCandidate(c.var.db, environmentId, body?.user_uuid ?? ""),
  ]);
  return { body, results };
});

/** The dashboard and the collaboration the path names, read with the project (DELETE). */
export const collaborationOfPath = routeReads((c) => {
  const dashboardId = parseDashboardId(c.req.param("dashboard_id") ?? "");
  return projectRead(c, (environmentId) => [
    selectDashboard(c.var.db, readScopeOf(c, environmentId), dashboardId),
    selectCollaboration(c.var.db, dashboardId, c.req.param("user__uuid") ?? ""),
  ]);
});

/** The collaborator routes of one tree; `tree` only changes the path. */
export function collaboratorRoutes<T extends ProjectTree>(tree: T) {
  const collection = `${tree}/{project_id}/dashboards/{dashboard_id}/collaborators` as const;
  const tags = ["dashboards"];
  return {
    list: apiRoute({
      tags,
      context: "project",
      method: "get",
      path: collection,
      scope: "dashboard:read",
      serviceKeys: true,
      summary: "List a dashboard's collaborators, oldest first (a plain array)",
      request: { params: CollaboratorsParams },
      responses: { 200: json(z.array(Collaborator), "The collaborators") },
    }),
    add: apiRoute({
      tags,
      context: "project",
      reads: collaborationToAdd,
      method: "post",
      path: collection,
      scope: "dashboard:write",
      serviceKeys: true,
      summary: "Let a member edit a dashboard restricted to collaborators (restriction level 37)",
      request: { params: CollaboratorsParams, body: jsonBody(AddCollaboratorInput) },
      responses: { 201: json(Collaborator, "The collaborator") },
    }),
    remove: apiRoute({
      tags,
      context: "project",
      reads: collaborationOfPath,
      method: "delete",
      path: `${collection}/{user__uuid}`,
      scope: "dashboard:write",
      serviceKeys: true,
      summary: "Remove a collaborator: their edit right ends at once",
      request: { params: CollaboratorParams },
      responses: { 204: { description: "Removed" } },
    }),
  };
}
