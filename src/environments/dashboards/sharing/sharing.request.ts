import type { Context } from "hono";
import type { Database } from "../../../platform/db";
import { primaryOfRequest } from "../../../platform/request-context";
import type { AppEnv } from "../../../platform/env";
import { projectRead, routeReads } from "../../../platform/route-context";
import { parseDashboardId, readScopeOf } from "../dashboard-request";
import { selectDashboard } from "../dashboards.queries";
import { selectPublicSharingAllowed, selectSharePasswords, selectSharing } from "./sharing.queries";

/**
 * The dashboard the path names, whether the organization allows public sharing (and its longest
 * link lifetime), and the dashboard's configuration with its passwords.
 */
function sharingReads(c: Context<AppEnv>, db: Database, environmentId: number) {
  const dashboardId = parseDashboardId(c.req.param("dashboard_id") ?? "");
  return [
    selectDashboard(db, readScopeOf(c, environmentId), dashboardId),
    selectPublicSharingAllowed(db, environmentId),
    selectSharing(db, dashboardId),
    selectSharePasswords(db, dashboardId),
  ] as [
    ReturnType<typeof selectDashboard>,
    ReturnType<typeof selectPublicSharingAllowed>,
    ReturnType<typeof selectSharing>,
    ReturnType<typeof selectSharePasswords>,
  ];
}

/** `sharingReads`, in the round trip that resolves the project (the writes). */
export const sharingOfPath = routeReads((c) =>
  projectRead(c, (environmentId) => sharingReads(c, c.var.db, environmentId)),
);

/**
 * `sharingReads` again, for a write whose first read went stale (`judgedOnLatest`): at the
 * primary, which holds the write that made it stale.
 */
export function sharingOfPathAgain(c: Context<AppEnv>) {
  const primary = primaryOfRequest(c);
  return primary.batch(sharingReads(c, primary, c.var.project.environmentId));
}
