import { createRouter } from "../../../platform/router";
import { underEveryTree, type ProjectTree } from "../../project-trees";
import {
  addDashboardCollaborator,
  listDashboardCollaborators,
  removeDashboardCollaborator,
} from "./collaborators.handlers";
import { collaboratorRoutes } from "./collaborators.routes";

function collaboratorsRouterFor(tree: ProjectTree) {
  const routes = collaboratorRoutes(tree);
  return createRouter()
    .openapi(routes.list, listDashboardCollaborators)
    .openapi(routes.add, addDashboardCollaborator)
    .openapi(routes.remove, removeDashboardCollaborator);
}

/** Collaborators only come and go: PATCH and PUT answer 405, as PostHog's. */
export const collaboratorsRouter = underEveryTree(collaboratorsRouterFor);
