import { peekJsonBody } from "../../../platform/request-body";
import { projectRead, routeReads } from "../../../platform/route-context";
import { parseDashboardId, readScopeOf } from "../dashboard-request";
import { selectDashboard } from "../dashboards.queries";
import { selectCandidate, selectCollaboration } from "./collaborators.queries";
import { AddCollaboratorInput } from "./collaborators.schema";

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
