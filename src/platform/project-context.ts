import { z } from "@hono/zod-openapi";
import { integerOrCurrentPathId } from "./path-ids";
import { and, asc, eq, exists, gte, inArray, isNotNull, or, type SQL } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { environments, organizationMemberships, projectAccessGrants, projects } from "../db/schema";
import { assertOrganizationInKeyScope, assertProjectInKeyScope } from "./auth/scopes";
import type { Actor, AppEnv, ProjectContext } from "./env";
import { notFound } from "./errors";
import { MembershipLevel } from "./levels";
import { CURRENT } from "./organization-context";
import type { Database } from "./db";

/** The path parameter `resolveProject` reads, for every environment route's schema. */
export const ProjectParams = z.object({
  project_id: integerOrCurrentPathId("Environment (project) id, or `@current`."),
});

/**
 * A private project (`access_control`) is seen only by organization admins and owners
 * and by members granted access; everyone else gets a 404. Used with the caller's membership
 * (`organizationMemberships`) and grant (`projectAccessGrants`) joined on the project.
 */
export const projectVisible = or(
  eq(projects.accessControl, false),
  gte(organizationMemberships.level, MembershipLevel.admin),
  isNotNull(projectAccessGrants.userId),
);

/**
 * The same rule for a caller whose level in the project's organization is already known: no
 * join per row, so an organization's list reads only the page it returns.
 */
export function projectVisibleAtLevel(db: Database, userId: number, level: number): SQL | undefined {
  if (level >= MembershipLevel.admin) return undefined;
  return or(
    eq(projects.accessControl, false),
    exists(
      db
        .select({ granted: projectAccessGrants.projectId })
        .from(projectAccessGrants)
        .where(and(eq(projectAccessGrants.projectId, projects.id), eq(projectAccessGrants.userId, userId))),
    ),
  );
}

/** Joins that `projectVisible` reads, for a query that starts from `projects`. */
export const membershipOfCaller = (userId: number) =>
  and(
    eq(organizationMemberships.organizationId, projects.organizationId),
    eq(organizationMemberships.userId, userId),
  );
export const grantOfCaller = (userId: number) =>
  and(eq(projectAccessGrants.projectId, projects.id), eq(projectAccessGrants.userId, userId));

/** Key scoping as filters, for queries that pick or list projects. */
export function projectsInKeyScope(actor: Actor): SQL[] {
  const filters: SQL[] = [];
  if (actor.scopedOrganizations.length > 0) {
    filters.push(inArray(projects.organizationId, actor.scopedOrganizations));
  }
  if (actor.scopedTeams.length > 0) filters.push(inArray(projects.id, actor.scopedTeams));
  return filters;
}

/** A project id from a path: not a number is 404; outside the key's scoped teams is 403. */
export function parseProjectId(actor: Actor, value: string): number {
  if (!/^\d{1,15}$/.test(value)) throw notFound();
  const id = Number(value);
  assertProjectInKeyScope(actor, id);
  return id;
}

/**
 * Resolves `:project_id` (an environment id, or `@current`: the caller's first visible
 * project) with the caller's membership and rights in one query.
 */
export const resolveProject = createMiddleware<AppEnv>(async (c, next) => {
  const requested = c.req.param("project_id");
  if (requested === undefined) throw new Error("resolveProject needs :project_id");
  const actor = c.var.actor;
  const environmentId = requested === CURRENT ? undefined : parseProjectId(actor, requested);
  const project = await findProject(c.var.db, actor, environmentId);
  if (!project) throw notFound();
  assertOrganizationInKeyScope(actor, project.organizationId);
  c.set("project", project);
  await next();
});

async function findProject(
  db: Database,
  actor: Actor,
  environmentId: number | undefined,
): Promise<ProjectContext | undefined> {
  const filters = environmentId === undefined ? projectsInKeyScope(actor) : [eq(environments.id, environmentId)];
  const [row] = await db
    .select({
      environmentId: environments.id,
      projectId: projects.id,
      organizationId: projects.organizationId,
      membershipId: organizationMemberships.id,
      level: organizationMemberships.level,
    })
    .from(environments)
    .innerJoin(projects, eq(projects.id, environments.projectId))
    .innerJoin(organizationMemberships, membershipOfCaller(actor.userId))
    .leftJoin(projectAccessGrants, grantOfCaller(actor.userId))
    .where(and(projectVisible, ...filters))
    .orderBy(asc(projects.createdAt), asc(environments.id))
    .limit(1);
  return row;
}
