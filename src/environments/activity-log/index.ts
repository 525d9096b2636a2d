import type { RouteHandler } from "@hono/zod-openapi";
import { and, sql } from "drizzle-orm";
import { activityLog, dashboards, environments } from "../../db/schema";
import { ruleOfMember } from "../../platform/access-controls/access-rules";
import { activityPageEnvelope, ofEnvironmentProject, selectActivityPage } from "../../platform/activity-log/activity-log.queries";
import type { AppEnv } from "../../platform/env";
import { isAdminInSql } from "../../platform/levels";
import { membershipInEnvironment, projectLevelInEnvironment, resolveProjectAndRead } from "../../platform/project-context";
import { createRouter } from "../../platform/router";
import { underEveryTree, type ProjectTree } from "../project-trees";
import { projectActivityLogRoute } from "./activity-log.routes";

/**
 * Entries about a dashboard (itself, its tiles, collaborators, sharing, rules) show only to those
 * who can see the dashboard: a `none` rule hides its name and changes here too. Its creator and
 * the project's admins (organization admins, or a project rule of `admin`) always see it, as the
 * dashboards list decides. In SQL, so that the page is read with the project in one round trip.
 */
function dashboardEntriesVisibleTo(userId: number, environmentId: number) {
  const membershipId = membershipInEnvironment(userId, environmentId);
  const isProjectAdmin = isAdminInSql(projectLevelInEnvironment(userId, environmentId));
  const dashboardRule = ruleOfMember("dashboard", dashboards.id, membershipId);
  const dashboardVisible = sql`exists (select 1 from ${dashboards} where ${dashboards.id} = ${activityLog.dashboardId}
    and (${dashboards.createdById} = ${userId} or coalesce(${dashboardRule}, 'editor') <> 'none'))`;
  return sql`(${activityLog.dashboardId} is null or ${isProjectAdmin} or ${dashboardVisible})`;
}

/**
 * The project and the page in one round trip; the page is dropped unless the project is the
 * caller's. Its entries are found by the project's organization, read in the same statement.
 */
const listProjectActivityLog: RouteHandler<ReturnType<typeof projectActivityLogRoute>, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const userId = c.var.actor.userId;
  const [rows] = await resolveProjectAndRead(c, (environmentId) => [
    selectActivityPage(
      c.var.db,
      {
        organizationId: sql`(select ${environments.organizationId} from ${environments} where ${environments.id} = ${environmentId})`,
        where: and(ofEnvironmentProject(environmentId), dashboardEntriesVisibleTo(userId, environmentId)),
      },
      query,
    ),
  ]);
  return c.json(activityPageEnvelope(c, query, rows), 200);
};

export const projectActivityLogRouter = underEveryTree((tree: ProjectTree) =>
  createRouter().openapi(projectActivityLogRoute(tree), listProjectActivityLog),
);
