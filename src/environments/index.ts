import { createRouter } from "../platform/router";
import { batchExportsRouter } from "./batch-exports";
import { dashboardsRouter } from "./dashboards";

/** The environment tree: resources addressed by `/api/environments/:project_id/...`. */
export const environmentsRouter = createRouter().route("/", dashboardsRouter).route("/", batchExportsRouter);
