import type { AccessControlDefinition } from "../../platform/access-controls/access-controls";
import { rightsOn } from "./dashboard-response";
import { callerStillManagerOf, parseDashboardId, readScopeOf, scopeOf, visibleDashboard } from "./dashboard-request";
import { selectDashboard } from "./dashboards.queries";
import { DashboardParams } from "./dashboards.routes";

/**
 * Dashboards under access control: a `none` rule hides one from a member, `viewer` makes it
 * read-only, `manager` lets them change its rules. Its creator and organization admins manage it
 * whatever the rules say (`dashboardRights`).
 */
export const dashboardAccessControl: AccessControlDefinition<"dashboard", ReturnType<typeof selectDashboard>> = {
  resource: "dashboard",
  defaultLevel: "editor",
  managerLevel: "manager",
  notManager: "Must be manager to modify dashboard permissions.",
  params: DashboardParams,
  read: (c, environmentId) => {
    const dashboardId = parseDashboardId(c.req.param("id") ?? "");
    return {
      statement: selectDashboard(c.var.db, readScopeOf(c, environmentId), dashboardId),
      resourceId: String(dashboardId),
    };
  },
  levelOf: (c, [row]) => rightsOn(visibleDashboard(c, row), scopeOf(c).caller).userAccessLevel,
  stillManager: (c, environmentId) => callerStillManagerOf(c, environmentId, parseDashboardId(c.req.param("id") ?? "")),
};
