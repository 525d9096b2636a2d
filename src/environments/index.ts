import { createRouter } from "../platform/router";
import { dashboardsRouter } from "./dashboards";

/** The environment tree: resources addressed by `/api/environments/:project_id/...`. */
export const environmentsRouter = createRouter().route("/", dashboardsRouter);
