import { createRouter } from "../../platform/router";
import { listOrganizationActivityLog, retrieveOrganizationActivityLogEntry, verifyOrganizationActivityLog } from "./activity-log.handlers";
import { listActivityLog, retrieveActivityLogEntry, verifyActivityLog } from "./activity-log.routes";

// `verify` (and the exports) before `{id}`, which would take their names for ids.
export const organizationActivityLogRouter = createRouter()
  .openapi(verifyActivityLog, verifyOrganizationActivityLog)
  .openapi(listActivityLog, listOrganizationActivityLog)
  .openapi(retrieveActivityLogEntry, retrieveOrganizationActivityLogEntry);
