import { createRouter } from "../../platform/router";
import { listOrganizationActivityLog, verifyOrganizationActivityLog } from "./activity-log.handlers";
import { listActivityLog, verifyActivityLog } from "./activity-log.routes";

export const organizationActivityLogRouter = createRouter()
  .openapi(verifyActivityLog, verifyOrganizationActivityLog)
  .openapi(listActivityLog, listOrganizationActivityLog);
