import { createRouter } from "../../platform/router";
import {
  listBatchExportsOfOrganization,
  pauseBatchExportOfOrganization,
  retrieveBatchExportOfOrganization,
  unpauseBatchExportOfOrganization,
} from "./batch-exports.handlers";
import {
  listOrganizationBatchExports,
  pauseBatchExport,
  retrieveOrganizationBatchExport,
  unpauseBatchExport,
} from "./batch-exports.routes";

export const organizationBatchExportsRouter = createRouter()
  .openapi(listOrganizationBatchExports, listBatchExportsOfOrganization)
  .openapi(retrieveOrganizationBatchExport, retrieveBatchExportOfOrganization)
  .openapi(pauseBatchExport, pauseBatchExportOfOrganization)
  .openapi(unpauseBatchExport, unpauseBatchExportOfOrganization);
