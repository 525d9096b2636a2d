import type { Context } from "hono";
import type { AppEnv } from "../platform/env";
import { organizationRead, routeReads } from "../platform/route-context";
import { projectIdOfPath, selectProjectOfOrganization } from "./projects.queries";

/** The project the path names with the caller's level in it, read with the membership. */
export function readProjectOfPath(c: Context<AppEnv>) {
  const read = organizationRead(c);
  const project = projectIdOfPath(c.var.actor, c.req.param("id") ?? "");
  return read.batch([selectProjectOfOrganization(read.db, c.var.actor, read.requested, project)]);
}

/** A PATCH's project, read before its body. */
export const projectOfPath = routeReads(readProjectOfPath);
