import { createRouter } from "../../platform/router";
import {
  createProjectBatchExport,
  deleteProjectBatchExport,
  listProjectBatchExports,
  retrieveProjectBatchExport,
  updateProjectBatchExport,
} from "./batch-exports.handlers";
import { batchExportRoutes, type ProjectTree } from "./batch-exports.routes";

function createBatchExportsRouter(tree: ProjectTree) {
  const routes = batchExportRoutes(tree);
  return createRouter()
    .openapi(routes.list, listProjectBatchExports)
    .openapi(routes.create, createProjectBatchExport)
    .openapi(routes.retrieve, retrieveProjectBatchExport)
    .openapi(routes.update, updateProjectBatchExport)
    .openapi(routes.remove, deleteProjectBatchExport);
}

export const environmentBatchExportsRouter = createBatchExportsRouter("/api/environments");
export const projectBatchExportsRouter = createBatchExportsRouter("/api/projects");
