import type { Context } from "hono";
import type { AppEnv } from "../../../platform/env";
import { projectRead, routeReads } from "../../../platform/route-context";
import { parseDashboardId, readScopeOf } from "../dashboard-request";
import { selectDashboard } from "../dashboards.queries";
import { selectPublicSharingAllowed, selectSharePasswords, selectSharing } from "./sharing.queries";

/**
 * The dashboard the path names, whether the organization allows public sharing (and its longest
 * link lifetime), and the dashboard's configuration with its passwords.
 */
function sharingReads(c: Context<AppEnv>, environmentId: number) {
  const dashboardId = parseDashboardId(c.req.param("dashboard_id") ?? "");
  return [
    selectDashboard(c.var.db, readScopeOf(c, environmentId), dashboardId),
    selectPublicSharingAllowed(c.var.db, environmentId),
    selectSharing(c.var.db, dashboardId),
    selectSharePasswords(c.var.db, dashboardId),
  ] as [
    ReturnType<typeof selectDashboard>,
    ReturnType<typeof selectPublicSharingAllowed>,
    ReturnType<typeof selectSharing>,
    ReturnType<typeof selectSharePasswords>,
  ];
}

/** `sharingReads`, in the round trip that resolves the project (the writes). */
export const sharingOfPath = routeReads((c) => projectRead(c, (environmentId) => sharingReads(c, environmentId)));

/** `sharingReads` again, for a write whose first read went stale (`judgedOnLatest`). */
export const sharingOfPathAgain = (c: Context<AppEnv>) => c.var.db.batch(sharingReads(c, c.var.project.environmentId));
