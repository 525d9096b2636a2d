import { projectRead, routeReads } from "../../../platform/route-context";
import { parseDashboardId, readScopeOf } from "../dashboard-request";
import { selectDashboard } from "../dashboards.queries";
import { selectPublicSharingAllowed, selectSharePasswords, selectSharing } from "./sharing.queries";

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
