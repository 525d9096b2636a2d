import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { and, eq, or, sql, type SQL } from "drizzle-orm";
import { activityLog, environments, organizationMemberships } from "../../db/schema";
import {
  activityPageEnvelope,
  ofEnvironmentProject,
  selectEntriesWithUsers,
  toActivityLogEntry,
} from "../../platform/activity-log/activity-log.queries";
import {
  archivedEntry,
  pageAcrossArchive,
  pageStatements,
  selectSegmentsAroundId,
  type ArchiveReader,
  type PageReads,
} from "../../platform/activity-log/archived-reads";
import { dashboardEntriesVisibleTo } from "../../platform/activity-log/visibility";
import type { Actor, AppEnv } from "../../platform/env";
import { isAdmin, isAdminInSql } from "../../platform/levels";
import { notFound, permissionDenied } from "../../platform/errors";
import type { AccessLevelOf } from "../../platform/access-rules/member-rule";
import { membershipsOf } from "../../platform/route-context/organization";
import { projectRead } from "../../platform/route-context";
import {
  membershipInEnvironment,
  projectLevelInEnvironment,
  selectKindRuleOfCaller,
} from "../../platform/route-context/project";
import { createRouter } from "../../platform/router";
import { underEveryTree, type ProjectTree } from "../project-trees";
import { projectActivityLogEntryRoute, projectActivityLogRoute } from "./activity-log.routes";
import { thisRequestUrl } from "../../platform/public-url";

/** The environment's organization, as SQL read in the same statement as the environment. */
const organizationOfEnvironment = (environmentId: number) =>
  sql<string>`(select ${environments.organizationId} from ${environments} where ${environments.id} = ${environmentId})`;

/** The caller reading the environment's project log, as SQL batched with the project. */
const readerInEnvironment = (actor: Actor, environmentId: number) => ({
  userId: actor.userId,
  membershipId: membershipInEnvironment(actor, environmentId),
  projectLevel: projectLevelInEnvironment(actor, environmentId),
});

/**
 * The project's entries the caller sees in its log: those of its organization's log alone. A
 * project moved from another organization (`change_organization`) left its earlier entries in
 * that organization's log, which is that organization's to read.
 */
const visibleInProjectLog = (actor: Actor, environmentId: number) =>
  and(
    ofEnvironmentProject(environmentId),
    eq(activityLog.organizationId, organizationOfEnvironment(environmentId)),
    dashboardEntriesVisibleTo(readerInEnvironment(actor, environmentId)),
  );

/**
 * `include_organization_scoped=1`: the project's entries and those of its organization that name
 * no project, for its admins and owners only, as the organization's own log is theirs alone. Both
 * lie in order along the organization's (organization, seq) index, which the page walks: the unary
 * `+` keeps SQLite off the project's index, from which an OR of the two would read both sets whole
 * and sort them, for a member (who gets no organization entry) as for an admin.
 */
const withOrganizationEntries = (actor: Actor, environmentId: number) =>
  and(
    // No organization for a member, so that SQLite seeks nothing: they get none of its entries,
    // and their page is the project's own (`listProjectActivityLog` reads both).
    eq(
      activityLog.organizationId,
      sql`(select case when ${callerIsAdminThere(actor, environmentId)}
        then ${organizationOfEnvironment(environmentId)} end)`,
    ),
    or(
      and(
        sql`+${activityLog.projectId} = (select project_id from environments where id = ${environmentId})`,
        dashboardEntriesVisibleTo(readerInEnvironment(actor, environmentId)),
      ),
      sql`+${activityLog.projectId} is null`,
    ),
  );

/** The caller is an admin of the environment's organization, as SQL read in the same statement. */
const callerIsAdminThere = (actor: Actor, environmentId: number) =>
  isAdminInSql(sql`(select ${organizationMemberships.level} from ${membershipsOf(actor)}
    where ${organizationMemberships.id} = ${membershipInEnvironment(actor, environmentId)})`);

/**
 * Where the project's archived entries are, and which of them the caller sees: `where`, read in
 * SQL, on the entries of the project (and of none, `withOrganization`).
 */
const projectArchive = (c: Context<AppEnv>, where: SQL | undefined, withOrganization = false): ArchiveReader => ({
  bucket: c.env.ACTIVITY_LOG_ARCHIVE,
  db: c.var.db,
  where,
  of: (entry) => entry.projectId === c.var.project.projectId || (withOrganization && entry.projectId === null),
});

/**
 * As PostHog: a rule of `none` on the project's activity log (a rule on the kind `activity_log`,
 * the member's own, a role's or the default, the highest winning) keeps a member out of it; the
 * project's admins are never restricted.
 */
function assertMayReadLog(c: Context<AppEnv>, rule: AccessLevelOf<"activity_log"> | null) {
  if (rule === "none" && !isAdmin(c.var.project.level)) {
    throw permissionDenied("You do not have viewer access to this resource.");
  }
}

/**
 * The project and the page in one round trip; the page is dropped unless the project is the
 * caller's. Its entries are found by the project's organization, read in the same statement; past
 * those kept here, the page goes on in the organization's archive, with the same conditions.
 */
const listProjectActivityLog: RouteHandler<ReturnType<typeof projectActivityLogRoute>, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const { actor } = c.var;
  // A key scoped to projects reaches no organization-level entry, as the organization's log refuses it.
  const askedForOrganization = query.include_organization_scoped === "1" && actor.scopedTeams.length === 0;
  const pageOf = (environmentId: number, where: SQL | undefined) =>
    pageStatements(c.var.db, { organizationId: organizationOfEnvironment(environmentId), where }, query);
  // Asked for the organization's entries, the page along the organization's log (an admin's, read
  // only for one) and the project's own (a member's); which one is the caller's is read with them.
  const [[rule], [caller], ...reads] = await projectRead(c, (environmentId) => [
    selectKindRuleOfCaller(c.var.db, "activity_log", actor, environmentId),
    c.var.db.select({ isAdmin: sql<number>`${callerIsAdminThere(actor, environmentId)}` }).from(sql`(select 1)`),
    ...pageOf(environmentId, visibleInProjectLog(actor, environmentId)),
    ...(askedForOrganization ? pageOf(environmentId, withOrganizationEntries(actor, environmentId)) : []),
  ]);
  assertMayReadLog(c, rule?.level ?? null);
  const withOrganization = askedForOrganization && Boolean(caller?.isAdmin);
  const environmentId = c.var.project.environmentId;
  const visible = withOrganization
    ? withOrganizationEntries(actor, environmentId)
    : visibleInProjectLog(actor, environmentId);
  const archive = projectArchive(c, visible, withOrganization);
  // The project's page first, then the organization's when asked for: each as long as the other.
  const pageLength = askedForOrganization ? reads.length / 2 : reads.length;
  const page = await pageAcrossArchive(
    archive,
    query,
    (withOrganization ? reads.slice(pageLength) : reads.slice(0, pageLength)) as PageReads,
  );
  return c.json(activityPageEnvelope(thisRequestUrl(c), query, page.rows, page.counted, page.resumeAt), 200);
};

/**
 * The entry as the project's log would show it, kept here or archived (found by the time in its
 * id): another project's, or a hidden dashboard's, is 404.
 */
const retrieveProjectActivityLogEntry: RouteHandler<ReturnType<typeof projectActivityLogEntryRoute>, AppEnv> = async (
  c,
) => {
  const { actor } = c.var;
  const { id } = c.req.valid("param");
  const [[rule], [row], segments] = await projectRead(c, (environmentId) => [
    selectKindRuleOfCaller(c.var.db, "activity_log", actor, environmentId),
    selectEntriesWithUsers(c.var.db).where(and(eq(activityLog.id, id), visibleInProjectLog(actor, environmentId))),
    selectSegmentsAroundId(c.var.db, organizationOfEnvironment(environmentId), id),
  ]);
  assertMayReadLog(c, rule?.level ?? null);
  const visible = visibleInProjectLog(actor, c.var.project.environmentId);
  const found = row ?? (await archivedEntry(projectArchive(c, visible), segments, id));
  if (!found) throw notFound();
  return c.json(toActivityLogEntry(found), 200);
};

export const projectActivityLogRouter = underEveryTree((tree: ProjectTree) =>
  createRouter()
    .openapi(projectActivityLogRoute(tree), listProjectActivityLog)
    .openapi(projectActivityLogEntryRoute(tree), retrieveProjectActivityLogEntry),
);
