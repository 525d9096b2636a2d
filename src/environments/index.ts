import { accessControls } from "../platform/access-controls/access-controls";
import { createRouter } from "../platform/router";
import { projectAccessControl } from "./project-access-control";
import { underEveryTree } from "./project-trees";
import { projectActivityLogRouter } from "./activity-log";
import { batchExportsRouter } from "./batch-exports";
import { dashboardsRouter } from "./dashboards";
import { resourceAccessControlsRouter } from "./resource-access-controls";
import { collaboratorsRouter } from "./dashboards/collaborators";
import { sharingRouter } from "./dashboards/sharing";
import { deleteCallerEnvironment, retrieveCallerEnvironment, updateCallerEnvironment } from "./environments.handlers";
import { deleteEnvironment, replaceEnvironment, retrieveEnvironment, updateEnvironment } from "./environments.routes";

/** The environment tree: environments themselves, and resources addressed by `/api/environments/:project_id/...`. */
export const environmentsRouter = createRouter()
  .openapi(retrieveEnvironment, retrieveCallerEnvironment)
  .openapi(updateEnvironment, updateCallerEnvironment)
  .openapi(replaceEnvironment, updateCallerEnvironment)
  .openapi(deleteEnvironment, deleteCallerEnvironment)
  .route("/", dashboardsRouter)
  .route("/", collaboratorsRouter)
  .route("/", sharingRouter)
  .route("/", batchExportsRouter)
  .route("/", projectActivityLogRouter)
  .route(
    "/",
    underEveryTree((tree) => accessControls(projectAccessControl, `${tree}/{project_id}`)),
  )
  .route("/", resourceAccessControlsRouter);
