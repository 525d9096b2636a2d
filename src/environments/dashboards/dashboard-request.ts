import type { Context } from "hono";
import type { AppEnv } from "../../platform/env";
import { notFound, permissionDenied } from "../../platform/errors";
import { membershipInEnvironment, projectLevelInEnvironment } from "../../platform/project-context";
import { rightsOn } from "./dashboard-response";
import type { DashboardListScope, DashboardReadScope, DashboardRow, DashboardScope } from "./dashboards.queries";

export const NO_EDIT_RIGHT = "You don't have edit permissions for this dashboard.";

/** The dashboard scope of a request whose project is resolved. */
export function scopeOf(c: Context<AppEnv>): DashboardScope {
  const { project, actor } = c.var;
  return {
    environmentId: project.environmentId,
    caller: { userId: actor.userId, organizationLevel: project.level, membershipId: project.membershipId },
  };
}

/** The scope of a read batched with the project itself (`resolveProjectAndRead`). */
export function readScopeOf(c: Context<AppEnv>, environmentId: number): DashboardReadScope {
  const userId = c.var.actor.userId;
  return { environmentId, caller: { userId, membershipId: membershipInEnvironment(userId, environmentId) } };
}

/** The scope of a list batched with the project: the caller's membership and level as SQL. */
export function listScopeOf(c: Context<AppEnv>, environmentId: number): DashboardListScope {
  const userId = c.var.actor.userId;
  return {
    environmentId,
    caller: {
      userId,
      membershipId: membershipInEnvironment(userId, environmentId),
      level: projectLevelInEnvironment(userId, environmentId),
    },
  };
}

export function parseDashboardId(value: string): number {
  if (!/^\d{1,15}$/.test(value)) throw notFound();
  return Number(value);
}

/** The dashboard, unless it is missing or a `none` rule hides it from the caller: then 404. */
export function visibleDashboard(c: Context<AppEnv>, row: DashboardRow | undefined): DashboardRow {
  if (!row || rightsOn(row, scopeOf(c).caller).userAccessLevel === "none") throw notFound();
  return row;
}

/** The visible dashboard, which the caller may edit (403 otherwise). */
export function editableDashboard(c: Context<AppEnv>, row: DashboardRow | undefined): DashboardRow {
  const visible = visibleDashboard(c, row);
  if (!rightsOn(visible, scopeOf(c).caller).canEdit) throw permissionDenied(NO_EDIT_RIGHT);
  return visible;
}
