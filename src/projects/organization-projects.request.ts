import type { Context } from "hono";
import { organizationRead, projectRead, routeReads } from "../platform/route-context";
import type { Actor, AppEnv } from "../platform/env";
import { insufficientLevel, notFound } from "../platform/errors";
import { isAdmin } from "../platform/levels";
import {
  admitVisibleProject,
  projectIdOfPath,
  selectProjectOfEnvironment,
  selectProjectOfOrganization,
} from "./projects.queries";

/** The project the path names with the caller's level in it, read with the membership. */
export function readProjectOfPath(c: Context<AppEnv>) {
  const read = organizationRead(c);
  const project = projectIdOfPath(c.var.actor, c.req.param("id") ?? "");
  return read.batch([selectProjectOfOrganization(read.db, c.var.actor, read.requested, project)]);
}

/**
 * A row of the project a write's path names, if the caller sees it and is its admin (every write
 * here is an admin's), before the body is read: 404 and 403 come before a 400 about the body.
 */
function admitted(actor: Actor, row: Parameters<typeof admitVisibleProject>[1]) {
  const found = admitVisibleProject(actor, row);
  if (!found) throw notFound();
  if (!isAdmin(found.level)) throw insufficientLevel();
  return found;
}

/** A write's project, read before its body. */
export const projectOfPath = routeReads(async (c) => {
  const [[row]] = await readProjectOfPath(c);
  return admitted(c.var.actor, row);
});

/**
 * A write's project named by an environment path (`/api/environments/{project_id}`,
 * `/api/projects/{project_id}`), read with its context before its body: 404 and 403 come first.
 */
export const projectOfEnvironmentPath = routeReads(async (c) => {
  const { db, actor } = c.var;
  const [[row]] = await projectRead(c, (environmentId) => [selectProjectOfEnvironment(db, actor, environmentId)]);
  return admitted(actor, row);
});
