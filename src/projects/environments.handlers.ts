import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../platform/env";
import { notFound } from "../platform/errors";
import type { deleteEnvironment, Environment, retrieveEnvironment, updateEnvironment } from "./environments.routes";
import { deleteVisibleProject, patchVisibleProject } from "./organization-projects.handlers";
import { findVisibleProject, projectIdFilters } from "./projects.queries";
import { type Project, toProject } from "./projects.schema";

const toEnvironment = (project: Project): Environment => ({ ...project, project_id: project.id });

/** Found as a project is (one query): the environment shares its project's id. */
export const retrieveCallerEnvironment: RouteHandler<typeof retrieveEnvironment, AppEnv> = async (c) => {
  const found = await findVisibleProject(
    c.var.db,
    c.var.actor,
    projectIdFilters(c.var.db, c.var.actor, c.req.valid("param").project_id),
  );
  if (!found) throw notFound();
  return c.json(toEnvironment(toProject(found.project, found.level)), 200);
};

export const updateCallerEnvironment: RouteHandler<typeof updateEnvironment, AppEnv> = async (c) => {
  const filters = projectIdFilters(c.var.db, c.var.actor, c.req.valid("param").project_id);
  return c.json(
    toEnvironment(
      await patchVisibleProject(c, await findVisibleProject(c.var.db, c.var.actor, filters), c.req.valid("json")),
    ),
    200,
  );
};

export const deleteCallerEnvironment: RouteHandler<typeof deleteEnvironment, AppEnv> = async (c) => {
  const filters = projectIdFilters(c.var.db, c.var.actor, c.req.valid("param").project_id);
  await deleteVisibleProject(c, await findVisibleProject(c.var.db, c.var.actor, filters));
  return c.body(null, 204);
};
