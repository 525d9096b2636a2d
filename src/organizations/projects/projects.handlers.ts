import type { RouteHandler } from "@hono/zod-openapi";
import { eq, type SQL } from "drizzle-orm";
import { projects } from "../../db/schema";
import { isUniqueViolation } from "../../platform/db";
import type { AppEnv } from "../../platform/env";
import { conflict, notFound, permissionDenied } from "../../platform/errors";
import { CURRENT } from "../../platform/organization-context";
import { parseProjectId } from "../../platform/project-context";
import { pageEnvelope, readPage } from "../../platform/pagination";
import {
  findVisibleProject,
  insertProjectStatements,
  listProjectsOfOrganization,
  MAX_PROJECTS_PER_ORGANIZATION,
  nextDefaultProjectName,
  readProjectQuota,
} from "./projects.queries";
import type { createProject, listProjects, retrieveProject } from "./projects.routes";
import { toProject, toProjectListItem, type ProjectInput } from "./projects.schema";

export const listOrganizationProjects: RouteHandler<typeof listProjects, AppEnv> = async (c) => {
  const page = readPage(c);
  const result = await listProjectsOfOrganization(c.var.db, c.var.actor, c.var.organization, page);
  return c.json(pageEnvelope(c, page, result.count, result.projects.map(toProjectListItem)), 200);
};

export const createOrganizationProject: RouteHandler<typeof createProject, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const organization = c.var.organization;
  const project = await insertProject(c.var.db, organization.id, input);
  return c.json(toProject(project, organization.level), 201);
};

/** Default names, the per-organization limit, and names unique ignoring case (409). */
export async function insertProject(db: AppEnv["Variables"]["db"], organizationId: string, input: ProjectInput) {
  const quota = await readProjectQuota(db, organizationId);
  if (quota.total >= MAX_PROJECTS_PER_ORGANIZATION) {
    throw permissionDenied(
      `You have reached the maximum limit of allowed projects for your current plan (${MAX_PROJECTS_PER_ORGANIZATION}).`,
    );
  }
  const name = input.name ?? nextDefaultProjectName(quota.takenNames);
  const statements = insertProjectStatements(db, organizationId, { ...input, name });
  try {
    const [, , [project]] = await db.batch([
      statements.insertProject,
      statements.insertEnvironment,
      statements.selectProject,
    ]);
    if (!project) throw new Error("created project was not read back");
    return project;
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw conflict(`There is already a project called "${name}" in this organization. Choose a different name.`);
    }
    throw error;
  }
}

export const retrieveOrganizationProject: RouteHandler<typeof retrieveProject, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const filters: SQL[] = [eq(projects.organizationId, c.var.organization.id)];
  if (id !== CURRENT) filters.push(eq(projects.id, parseProjectId(c.var.actor, id)));
  const found = await findVisibleProject(c.var.db, c.var.actor, filters);
  if (!found) throw notFound();
  return c.json(toProject(found.project, found.level), 200);
};
