import { accessControls } from "../platform/access-controls/access-controls";
import { createRouter } from "../platform/router";
import { environmentRouter } from "../projects";
import { projectAccessControl } from "../projects/project-access-control";
import { projectActivityLogRouter } from "./activity-log";
import { batchExportsRouter } from "./batch-exports";
import { dashboardsRouter } from "./dashboards";
import { resourceAccessControlsRouter } from "./resource-access-controls";
import { collaboratorsRouter } from "./dashboards/collaborators";
import { sharingRouter } from "./dashboards/sharing";
import { underEveryTree } from "./project-trees";

/** The environment tree: environments themselves, and resources addressed by `/api/environments/:project_id/...`. */
export const environmentsRouter = createRouter()
  .route("/", environmentRouter)
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
