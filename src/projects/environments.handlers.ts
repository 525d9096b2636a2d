import type { RouteHandler } from "@hono/zod-openapi";
import { deleteVisibleProject, patchVisibleProject } from "./organization-projects.handlers";
import { projectOfEnvironmentPath } from "./organization-projects.request";
import { findVisibleProject, projectIdFilters } from "./projects.queries";
import { toProject, type Project } from "./projects.schema";
import { versionedAnswer } from "../platform/conditional-requests";
import type { AppEnv } from "../platform/env";
import { notFound } from "../platform/errors";
import type { deleteEnvironment, Environment, retrieveEnvironment, updateEnvironment } from "./environments.routes";

const toEnvironment = (project: Project): Environment => ({ ...project, project_id: project.id });

/** Found as a project is (one query): the environment shares its project's id. */
export const retrieveCallerEnvironment: RouteHandler<typeof retrieveEnvironment, AppEnv> = async (c) => {
  const found = await findVisibleProject(
    c.var.db,
    c.var.actor,
    projectIdFilters(c.var.db, c.var.actor, c.req.valid("param").project_id),
  );
  if (!found) throw notFound();
  return versionedAnswer(c, found.project, toEnvironment(toProject(found.project, found.level)));
};

export const updateCallerEnvironment: RouteHandler<typeof updateEnvironment, AppEnv> = async (c) => {
  const updated = await patchVisibleProject(c, projectOfEnvironmentPath.results(c), c.req.valid("json"));
  return c.json(toEnvironment(updated.project), 200, updated.etag);
};

export const deleteCallerEnvironment: RouteHandler<typeof deleteEnvironment, AppEnv> = async (c) => {
  const filters = projectIdFilters(c.var.db, c.var.actor, c.req.valid("param").project_id);
  await deleteVisibleProject(c, await findVisibleProject(c.var.db, c.var.actor, filters));
  return c.body(null, 204);
};
