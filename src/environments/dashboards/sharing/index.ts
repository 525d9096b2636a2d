import { createRouter } from "../../../platform/router";
import { underEveryTree, type ProjectTree } from "../../project-trees";
import { refreshDashboardSharing, retrieveDashboardSharing, updateDashboardSharing } from "./sharing.handlers";
import { sharingRoutes } from "./sharing.routes";

function sharingRouterFor(tree: ProjectTree) {
  const routes = sharingRoutes(tree);
  return createRouter()
    .openapi(routes.retrieve, retrieveDashboardSharing)
    .openapi(routes.update, updateDashboardSharing)
    .openapi(routes.refresh, refreshDashboardSharing);
}

export const sharingRouter = underEveryTree(sharingRouterFor);
