import type { RouteHandler } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { projects } from "../db/schema";
import { findVisibleProject, listVisibleProjects } from "../organizations/projects/projects.queries";
import { toProject, toProjectListItem } from "../organizations/projects/projects.schema";
import type { AppEnv } from "../platform/env";
import { notFound } from "../platform/errors";
import { CURRENT } from "../platform/organization-context";
import { pageEnvelope, readPage } from "../platform/pagination";
import { parseProjectId, projectsInKeyScope } from "../platform/project-context";
import { assertOrganizationInKeyScope } from "../platform/auth/key-scoping";
import type { listAccessibleProjects, retrieveAccessibleProject } from "./projects.routes";

export const listProjects: RouteHandler<typeof listAccessibleProjects, AppEnv> = async (c) => {
  const page = readPage(c);
  const result = await listVisibleProjects(c.var.db, c.var.actor, page);
  return c.json(pageEnvelope(c, page, result.count, result.projects.map(toProjectListItem)), 200);
};

export const retrieveProject: RouteHandler<typeof retrieveAccessibleProject, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const { actor } = c.var;
  const filters = id === CURRENT ? projectsInKeyScope(actor) : [eq(projects.id, parseProjectId(actor, id))];
  const found = await findVisibleProject(c.var.db, actor, filters);
  if (!found) throw notFound();
  assertOrganizationInKeyScope(actor, found.project.organizationId);
  return c.json(toProject(found.project, found.level), 200);
};
