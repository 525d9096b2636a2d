import { createRouter } from "../platform/router";
import { batchExportsRouter } from "./batch-exports";
import { dashboardsRouter } from "./dashboards";
import { retrieveCallerEnvironment, updateCallerEnvironment } from "./environments.handlers";
import { retrieveEnvironment, updateEnvironment } from "./environments.routes";

/** The environment tree: environments themselves, and resources addressed by `/api/environments/:project_id/...`. */
export const environmentsRouter = createRouter()
  .openapi(retrieveEnvironment, retrieveCallerEnvironment)
  .openapi(updateEnvironment, updateCallerEnvironment)
  .route("/", dashboardsRouter)
  .route("/", batchExportsRouter);
