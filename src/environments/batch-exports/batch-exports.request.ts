import type { Context } from "hono";
import type { AppEnv } from "../../platform/env";
import { projectRead, routeReads } from "../../platform/route-context";
import { liveInProject, selectBatchExport } from "./batch-exports.queries";

/** The live export the path names in the environment, read with the project. */
export function readBatchExportOfPath(c: Context<AppEnv>) {
  const id = c.req.param("id") ?? "";
  return projectRead(c, (environmentId) => [selectBatchExport(c.var.db, liveInProject(environmentId, id))]);
}

/** A PATCH's export, read before its body. */
export const batchExportOfPath = routeReads(readBatchExportOfPath);
