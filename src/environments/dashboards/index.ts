import { createRouter } from "../../platform/router";
import {
  createEnvironmentDashboard,
  listEnvironmentDashboards,
  moveDashboardTile,
  refuseDashboardDelete,
  retrieveEnvironmentDashboard,
  updateEnvironmentDashboard,
} from "./dashboards.handlers";
import { DASHBOARD_TREES, dashboardRoutes, type DashboardTree } from "./dashboards.routes";

function dashboardsRouterFor(tree: DashboardTree) {
  const routes = dashboardRoutes(tree);
  const router = createRouter();
  router.use(`${tree}/:project_id/dashboards/:id`, refuseDashboardDelete);
  router.openAPIRegistry.registerPath(routes.refusedDelete);
  return router
    .openapi(routes.list, listEnvironmentDashboards)
    .openapi(routes.create, createEnvironmentDashboard)
    .openapi(routes.retrieve, retrieveEnvironmentDashboard)
    .openapi(routes.update, updateEnvironmentDashboard)
    .openapi(routes.moveTile, moveDashboardTile);
}

/** `/api/environments/:project_id/dashboards` and its `/api/projects/...` twin: one code path. */
export const dashboardsRouter = DASHBOARD_TREES.reduce(
  (router, tree) => router.route("/", dashboardsRouterFor(tree)),
  createRouter(),
);
