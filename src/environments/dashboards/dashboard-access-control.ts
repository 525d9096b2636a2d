import { sql } from "drizzle-orm";
import { dashboards } from "../../db/schema";
import type { AccessControlDefinition } from "../../platform/access-controls/access-controls";
import { dashboardRuleInSql } from "../../platform/access-rules/dashboard-rights";
import { isAdminInSql } from "../../platform/levels";
import { membershipInEnvironment, projectLevelInEnvironment } from "../../platform/route-context/project";
import { rightsOn } from "./dashboard-response";
import { parseDashboardId, readScopeOf, scopeOf, visibleDashboard } from "./dashboard-request";
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
  // `dashboardRights`' manager, in SQL: its creator, a project admin, or a `manager` rule.
  stillManager: (c, environmentId) => {
    const { actor } = c.var;
    const dashboardId = parseDashboardId(c.req.param("id") ?? "");
    const createdBy = sql`(select ${dashboards.createdById} from ${dashboards}
      where ${dashboards.id} = ${dashboardId})`;
    const rule = dashboardRuleInSql(
      // As its rules store it: text (a bound number would be cast as a real, `5.0`).
      { id: String(dashboardId), environmentId },
      membershipInEnvironment(actor, environmentId),
    );
    return sql`(${createdBy} = ${actor.userId} or ${isAdminInSql(projectLevelInEnvironment(actor, environmentId))}
      or ${rule} = 'manager')`;
  },
};
