import type { RouteHandler } from "@hono/zod-openapi";
import { deleteVisibleProject, patchVisibleProject } from "./organization-projects.handlers";
import { findVisibleProject, listVisibleProjects, projectIdFilters } from "./projects.queries";
import { toProject, toProjectListItem } from "./projects.schema";
import { versionedAnswer } from "../platform/conditional-requests";
import type { AppEnv } from "../platform/env";
import { notFound } from "../platform/errors";
import { pageEnvelope, readPage } from "../platform/pagination";
import type {
  deleteAccessibleProject,
  listAccessibleProjects,
  retrieveAccessibleProject,
  updateAccessibleProject,
} from "./accessible-projects.routes";

export const listProjects: RouteHandler<typeof listAccessibleProjects, AppEnv> = async (c) => {
  const page = readPage(c);
  const result = await listVisibleProjects(c.var.db, c.var.actor, page);
  return c.json(pageEnvelope(c, page, result.count, result.projects.map(toProjectListItem), result.links), 200);
};

export const retrieveProject: RouteHandler<typeof retrieveAccessibleProject, AppEnv> = async (c) => {
  const found = await findVisibleProject(
    c.var.db,
    c.var.actor,
    projectIdFilters(c.var.db, c.var.actor, c.req.valid("param").id),
  );
  if (!found) throw notFound();
  return versionedAnswer(c, found.project, toProject(found.project, found.level));
};

export const updateProject: RouteHandler<typeof updateAccessibleProject, AppEnv> = async (c) => {
  const found = await findVisibleProject(
    c.var.db,
    c.var.actor,
    projectIdFilters(c.var.db, c.var.actor, c.req.valid("param").id),
  );
  const updated = await patchVisibleProject(c, found, c.req.valid("json"));
  return c.json(updated.project, 200, updated.etag);
};

export const deleteProject: RouteHandler<typeof deleteAccessibleProject, AppEnv> = async (c) => {
  const found = await findVisibleProject(
    c.var.db,
    c.var.actor,
    projectIdFilters(c.var.db, c.var.actor, c.req.valid("param").id),
  );
  await deleteVisibleProject(c, found);
  return c.body(null, 204);
};
