import type { RouteHandler } from "@hono/zod-openapi";
import { and, eq, isNull, or, sql } from "drizzle-orm";
import { activityLog, environments, organizationMemberships } from "../../db/schema";
import {
  activityPageEnvelope,
  activityPageStatements,
  ofEnvironmentProject,
  selectEntriesWithUsers,
  toActivityLogEntry,
} from "../../platform/activity-log/activity-log.queries";
import { dashboardEntriesVisibleTo } from "../../platform/activity-log/visibility";
import type { Actor, AppEnv } from "../../platform/env";
import { isAdminInSql } from "../../platform/levels";
import { notFound } from "../../platform/errors";
import { projectRead } from "../../platform/route-context";
import { membershipsOf } from "../../platform/route-context/organization";
import { membershipInEnvironment, projectLevelInEnvironment } from "../../platform/route-context/project";
import { createRouter } from "../../platform/router";
import { underEveryTree, type ProjectTree } from "../project-trees";
import { projectActivityLogEntryRoute, projectActivityLogRoute } from "./activity-log.routes";
import { thisRequestUrl } from "../../platform/public-url";

/** The caller reading the environment's project log, as SQL batched with the project. */
const readerInEnvironment = (actor: Actor, environmentId: number) => ({
  userId: actor.userId,
  membershipId: membershipInEnvironment(actor, environmentId),
  projectLevel: projectLevelInEnvironment(actor, environmentId),
});

/** The project's entries the caller sees in its log. */
const visibleInProjectLog = (actor: Actor, environmentId: number) =>
  and(ofEnvironmentProject(environmentId), dashboardEntriesVisibleTo(readerInEnvironment(actor, environmentId)));

/**
 * `include_organization_scoped=1`: the entries of the environment's organization that name no
 * project, for its admins and owners only, as the organization's own log is theirs alone.
 */
const organizationEntriesForAdmin = (actor: Actor, environmentId: number) =>
  and(
    isNull(activityLog.projectId),
    sql`${activityLog.organizationId} = (select ${environments.organizationId} from ${environments}
      where ${environments.id} = ${environmentId})`,
    isAdminInSql(sql`(select ${organizationMemberships.level} from ${membershipsOf(actor)}
      where ${organizationMemberships.id} = ${membershipInEnvironment(actor, environmentId)})`),
  );

/**
 * The project and the page in one round trip; the page is dropped unless the project is the
 * caller's. Its entries are found by the project's organization, read in the same statement.
 */
const listProjectActivityLog: RouteHandler<ReturnType<typeof projectActivityLogRoute>, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const { actor } = c.var;
  const withOrganization = query.include_organization_scoped === "1";
  const [rows, counted] = await projectRead(c, (environmentId) => [
    ...activityPageStatements(
      c.var.db,
      {
        organizationId: sql`(select ${environments.organizationId} from ${environments}
          where ${environments.id} = ${environmentId})`,
        where: withOrganization
          ? or(visibleInProjectLog(actor, environmentId), organizationEntriesForAdmin(actor, environmentId))
          : visibleInProjectLog(actor, environmentId),
      },
      query,
    ),
  ]);
  return c.json(activityPageEnvelope(thisRequestUrl(c), query, rows, counted), 200);
};

/** The entry as the project's log would show it: another project's, or a hidden dashboard's, is 404. */
const retrieveProjectActivityLogEntry: RouteHandler<ReturnType<typeof projectActivityLogEntryRoute>, AppEnv> = async (
  c,
) => {
  const { actor } = c.var;
  const [[row]] = await projectRead(c, (environmentId) => [
    selectEntriesWithUsers(c.var.db).where(
      and(eq(activityLog.id, c.req.valid("param").id), visibleInProjectLog(actor, environmentId)),
    ),
  ]);
  if (!row) throw notFound();
  return c.json(toActivityLogEntry(row.entry, row.user), 200);
};

export const projectActivityLogRouter = underEveryTree((tree: ProjectTree) =>
  createRouter()
    .openapi(projectActivityLogRoute(tree), listProjectActivityLog)
    .openapi(projectActivityLogEntryRoute(tree), retrieveProjectActivityLogEntry),
);
