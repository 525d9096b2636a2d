import { createRouter } from "../../platform/router";
import {
  listOrganizationActivityLog,
  retrieveOrganizationActivityLogEntry,
  verifyOrganizationActivityLog,
} from "./activity-log.handlers";
import { listActivityLog, retrieveActivityLogEntry, verifyActivityLog } from "./activity-log.routes";
import { createActivityLogExport, downloadActivityLogExport, retrieveActivityLogExport } from "./exports.handlers";
import { createExport, downloadExport, retrieveExport } from "./exports.routes";

// `verify` and `exports` before `{id}`, which would take their names for entry ids.
export const organizationActivityLogRouter = createRouter()
  .openapi(verifyActivityLog, verifyOrganizationActivityLog)
  .openapi(createExport, createActivityLogExport)
  .openapi(retrieveExport, retrieveActivityLogExport)
  .openapi(downloadExport, downloadActivityLogExport)
  .openapi(listActivityLog, listOrganizationActivityLog)
  .openapi(retrieveActivityLogEntry, retrieveOrganizationActivityLogEntry);
