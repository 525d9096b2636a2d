import { createRouter } from "../../../platform/router";
import { underEveryTree, type ProjectTree } from "../../project-trees";
import {
  createSharePassword,
  deleteSharePasswordOf,
  refreshDashboardSharing,
  retrieveDashboardSharing,
  updateDashboardSharing,
} from "./sharing.handlers";
import { sharingRoutes } from "./sharing.routes";

function sharingRouterFor(tree: ProjectTree) {
  const routes = sharingRoutes(tree);
  return createRouter()
    .openapi(routes.retrieve, retrieveDashboardSharing)
    .openapi(routes.update, updateDashboardSharing)
    .openapi(routes.refresh, refreshDashboardSharing)
    .openapi(routes.createPassword, createSharePassword)
    .openapi(routes.deletePassword, deleteSharePasswordOf);
}

export const sharingRouter = underEveryTree(sharingRouterFor);
