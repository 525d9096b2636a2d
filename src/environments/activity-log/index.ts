import type { RouteHandler } from "@hono/zod-openapi";
import { activityPageEnvelope, ofEnvironmentProject, selectActivityPage } from "../../platform/activity-log/activity-log.queries";
import type { AppEnv } from "../../platform/env";
import { resolveProjectAndRead } from "../../platform/project-context";
import { createRouter } from "../../platform/router";
import { underEveryTree, type ProjectTree } from "../project-trees";
import { projectActivityLogRoute } from "./activity-log.routes";

const listProjectActivityLog: RouteHandler<ReturnType<typeof projectActivityLogRoute>, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const [rows] = await resolveProjectAndRead(c, (environmentId) => [
    selectActivityPage(c.var.db, ofEnvironmentProject(environmentId), query),
  ]);
  return c.json(activityPageEnvelope(c, query, rows), 200);
};

export const projectActivityLogRouter = underEveryTree((tree: ProjectTree) =>
  createRouter().openapi(projectActivityLogRoute(tree), listProjectActivityLog),
);
