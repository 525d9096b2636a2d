import { createRouter } from "../../platform/router";
import {
  createProjectBatchExport,
  deleteProjectBatchExport,
  listProjectBatchExports,
  pauseProjectBatchExport,
  retrieveProjectBatchExport,
  unpauseProjectBatchExport,
  updateProjectBatchExport,
} from "./batch-exports.handlers";
import { underEveryTree, type ProjectTree } from "../project-trees";
import { batchExportRoutes } from "./batch-exports.routes";

function createBatchExportsRouter(tree: ProjectTree) {
  const routes = batchExportRoutes(tree);
  return createRouter()
    .openapi(routes.list, listProjectBatchExports)
    .openapi(routes.create, createProjectBatchExport)
    .openapi(routes.retrieve, retrieveProjectBatchExport)
    .openapi(routes.update, updateProjectBatchExport)
    .openapi(routes.replace, updateProjectBatchExport)
    .openapi(routes.remove, deleteProjectBatchExport)
    .openapi(routes.pause, pauseProjectBatchExport)
    .openapi(routes.unpause, unpauseProjectBatchExport);
}

export const batchExportsRouter = underEveryTree(createBatchExportsRouter);
