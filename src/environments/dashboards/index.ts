import { accessControls } from "../../platform/access-controls/access-controls";
import { createRouter } from "../../platform/router";
import { dashboardAccessControl } from "./dashboard-access-control";
import {
  createEnvironmentDashboard,
  listEnvironmentDashboards,
  moveDashboardTile,
  refuseDashboardDelete,
  reorderDashboardTiles,
  retrieveEnvironmentDashboard,
  updateEnvironmentDashboard,
} from "./dashboards.handlers";
import {
  listDashboardVersions,
  restoreDashboardVersion,
  retrieveDashboardVersion,
} from "./dashboard-versions.handlers";
import { copyDashboardTile, updateDashboardTile } from "./dashboard-tiles.handlers";
import { underEveryTree, type ProjectTree } from "../project-trees";
import { dashboardRoutes } from "./dashboards.routes";

function dashboardsRouterFor(tree: ProjectTree) {
  const routes = dashboardRoutes(tree);
  const router = createRouter();
  router.use(`${tree}/:project_id/dashboards/:id`, refuseDashboardDelete);
  return router
    .openapi(routes.list, listEnvironmentDashboards)
    .openapi(routes.create, createEnvironmentDashboard)
    .openapi(routes.retrieve, retrieveEnvironmentDashboard)
    .openapi(routes.update, updateEnvironmentDashboard)
    .openapi(routes.moveTile, moveDashboardTile)
    .openapi(routes.copyTile, copyDashboardTile)
    .openapi(routes.updateTile, updateDashboardTile)
    .openapi(routes.reorderTiles, reorderDashboardTiles)
    .openapi(routes.listVersions, listDashboardVersions)
    .openapi(routes.retrieveVersion, retrieveDashboardVersion)
    .openapi(routes.restoreVersion, restoreDashboardVersion)
    .route("/", accessControls(dashboardAccessControl, `${tree}/{project_id}/dashboards/{id}`));
}

export const dashboardsRouter = underEveryTree(dashboardsRouterFor);
