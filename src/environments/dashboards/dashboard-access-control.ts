import { sql } from "drizzle-orm";
import { dashboards } from "../../db/schema";
import type { AccessControlDefinition } from "../../platform/access-controls/access-controls";
import { dashboardManagerInSql, dashboardRuleInSql } from "../../platform/access-rules/dashboard-rights";
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
  stillManager: (c, environmentId) => {
    const { actor } = c.var;
    const dashboardId = parseDashboardId(c.req.param("id") ?? "");
    return dashboardManagerInSql(
      { userId: actor.userId, projectLevel: projectLevelInEnvironment(actor, environmentId) },
      {
        createdById: sql`(select ${dashboards.createdById} from ${dashboards} where ${dashboards.id} = ${dashboardId})`,
        // As its rules store it: text (a bound number would be cast as a real, `5.0`).
        rule: dashboardRuleInSql(
          { id: String(dashboardId), environmentId },
          membershipInEnvironment(actor, environmentId),
        ),
      },
    );
  },
};
