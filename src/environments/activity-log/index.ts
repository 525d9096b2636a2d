import type { RouteHandler } from "@hono/zod-openapi";
import { and, isNull, or, sql } from "drizzle-orm";
import { activityLog, dashboards } from "../../db/schema";
import { activityPageEnvelope, ofEnvironmentProject, selectActivityPage } from "../../platform/activity-log/activity-log.queries";
import type { AppEnv } from "../../platform/env";
import { createRouter } from "../../platform/router";
import { notHiddenByRule, type DashboardScope } from "../dashboards/dashboards.queries";
import { underEveryTree, type ProjectTree } from "../project-trees";
import { projectActivityLogRoute } from "./activity-log.routes";

/**
 * Entries about a dashboard (itself, its tiles, collaborators, sharing, rules) show only to those
 * who can see the dashboard: a `none` rule hides its name and changes here too.
 */
function dashboardEntriesVisibleTo(caller: DashboardScope["caller"]) {
  const visible = notHiddenByRule(caller);
  if (visible === undefined) return undefined;
  const dashboardVisible = sql`exists (select 1 from ${dashboards} where ${dashboards.id} = ${activityLog.dashboardId} and ${visible})`;
  return or(isNull(activityLog.dashboardId), dashboardVisible);
}

const listProjectActivityLog: RouteHandler<ReturnType<typeof projectActivityLogRoute>, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const { environmentId, organizationId, level, membershipId } = c.var.project;
  const caller = { userId: c.var.actor.userId, organizationLevel: level, membershipId };
  const where = and(ofEnvironmentProject(environmentId), dashboardEntriesVisibleTo(caller));
  const rows = await selectActivityPage(c.var.db, { organizationId, where }, query);
  return c.json(activityPageEnvelope(c, query, rows), 200);
};

export const projectActivityLogRouter = underEveryTree((tree: ProjectTree) =>
  createRouter().openapi(projectActivityLogRoute(tree), listProjectActivityLog),
);
