import { and, eq, inArray, isNotNull, isNull, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import {
  accessControls,
  batchExports,
  resourceAccessControls,
  dashboardCollaborators,
  dashboards,
  environments,
  organizationMemberships,
  organizations,
  projects,
  users,
} from "../db/schema";
import { keyOutlivesLifetimeThroughProject } from "../platform/auth/key-policy";
import { type Database, isNotNullViolationOf, whileHolds } from "../platform/db";
import type { Actor } from "../platform/env";
import { nowIso } from "../platform/ids";
import { callerStillAdmin, keyPolicyOf } from "../platform/route-context/organization";
import { belowProjectLimit, liveOrganization } from "./projects.queries";

/** The project as it was read, which the move is made from: nothing is written if it changed meanwhile. */
type ReadProject = { id: number; organizationId: string; version: number };

/** The caller's membership of the organization a project moves to, with its key policy; none if it is being deleted. */
export const selectDestination = (db: Database, actor: Actor, organizationId: string) =>
  db
    .select({ level: organizationMemberships.level, ...keyPolicyOf(actor) })
    .from(organizationMemberships)
    .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
    .where(and(eq(organizationMemberships.userId, actor.userId), liveOrganization(organizationId)));

/** Each condition a move holds to when it is written, and the NOT NULL column that refuses it when it does not. */
const moveHolds = (actor: Actor, project: ReadProject, to: string) => ({
  /** The caller still an admin of both (`updated_at`). */
  admin: and(callerStillAdmin(actor, project.organizationId), callerStillAdmin(actor, to))!,
  /** The destination not being deleted (`timezone`). */
  live: sql`exists (select 1 from ${organizations} where ${liveOrganization(to)})`,
  /** The destination below its project limit (`api_token`). */
  room: sql`exists (select 1 from ${organizations} where ${eq(organizations.id, to)} and ${belowProjectLimit})`,
  /** No key of a destination member scoped to the project outliving its lifetime limit (`live_events_token`). */
  keys: sql`not ${keyOutlivesLifetimeThroughProject(project.id, to)}`,
});

/**
 * The rules of a table of rules (on resources, or on kinds of them) in the project's environments
 * that name a member or a role: the old organization's, which the move leaves behind.
 */
const namedRules = (
  db: Database,
  rules: typeof accessControls | typeof resourceAccessControls,
  ofProject: SQLWrapper,
  asRead: SQL,
) =>
  db
    .delete(rules)
    .where(
      and(
        inArray(rules.environmentId, ofProject),
        or(isNotNull(rules.organizationMembershipId), isNotNull(rules.roleId)),
        asRead,
      ),
    );

/** The project, unless it was deleted meanwhile: what a move that matched nothing is told apart by. */
export const projectStillLive = (projectId: number) =>
  sql`exists (select 1 from ${projects}
    where ${projects.id} = ${projectId} and ${projects.deletionScheduledAt} is null)`;

export const isMoverLevelLost = (error: unknown) => isNotNullViolationOf(error, projects.updatedAt);
export const isDestinationGone = (error: unknown) => isNotNullViolationOf(error, projects.timezone);
export const isDestinationFull = (error: unknown) => isNotNullViolationOf(error, projects.apiToken);
export const isKeyLifetimeExceeded = (error: unknown) => isNotNullViolationOf(error, projects.liveEventsToken);

/**
 * The statements of a project's move to organization `to`, for one atomic batch. What moves with
 * it is written first, each only while the project is still as it was read (its organization,
 * version and liveness: the state the project's own UPDATE then changes, in the same
 * transaction), then the project itself, whose UPDATE refuses the whole batch (a NOT NULL column,
 * `moveHolds`) when a condition no longer holds, and then the organizations' counts. What moves:
 * its environments and batch exports (their organization, and the counts); what stays behind: the
 * access rules of the old organization's members and roles on it and its resources, of both
 * kinds (their memberships and roles are the old organization's), and the dashboard collaborators
 * who are not members of the new one.
 */
export function moveProjectStatements(db: Database, actor: Actor, project: ReadProject, to: string) {
  const from = project.organizationId;
  const asRead = sql`exists (select 1 from ${projects} where ${projects.id} = ${project.id}
    and ${projects.organizationId} = ${from} and ${projects.version} = ${project.version}
    and ${projects.deletionScheduledAt} is null)`;
  const ofProject = db.select({ id: environments.id }).from(environments).where(eq(environments.projectId, project.id));
  const liveExports = sql<number>`(select count(*) from ${batchExports}
    where ${batchExports.environmentId} in ${ofProject} and ${batchExports.deleted} = 0)`;
  const holds = moveHolds(actor, project, to);
  const now = nowIso();
  return {
    environments: db
      .update(environments)
      .set({ organizationId: to })
      .where(and(eq(environments.projectId, project.id), asRead)),
    exports: db
      .update(batchExports)
      .set({ organizationId: to })
      .where(and(inArray(batchExports.environmentId, ofProject), asRead)),
    rules: namedRules(db, accessControls, ofProject, asRead),
    kindRules: namedRules(db, resourceAccessControls, ofProject, asRead),
    collaborators: db.delete(dashboardCollaborators).where(
      and(
        inArray(
          dashboardCollaborators.dashboardId,
          db.select({ id: dashboards.id }).from(dashboards).where(inArray(dashboards.environmentId, ofProject)),
        ),
        sql`${dashboardCollaborators.userId} not in (select ${organizationMemberships.userId}
          from ${organizationMemberships} where ${organizationMemberships.organizationId} = ${to})`,
        asRead,
      ),
    ),
    project: db
      .update(projects)
      .set({
        organizationId: to,
        updatedAt: whileHolds(now, holds.admin),
        timezone: whileHolds(sql<string>`${projects.timezone}`, holds.live),
        apiToken: whileHolds(sql<string>`${projects.apiToken}`, holds.room),
        liveEventsToken: whileHolds(sql<string>`${projects.liveEventsToken}`, holds.keys),
        version: sql`${projects.version} + 1`,
      })
      .where(
        and(
          eq(projects.id, project.id),
          eq(projects.organizationId, from),
          eq(projects.version, project.version),
          isNull(projects.deletionScheduledAt),
        ),
      )
      .returning(),
    // Right after the project's UPDATE, and only if it moved the project (`changes()`): its room
    // in the destination was judged on the count before it.
    counts: db
      .update(organizations)
      .set({
        projectCount: sql`${organizations.projectCount} + (case when ${organizations.id} = ${to} then 1 else -1 end)`,
        batchExportCount: sql`${organizations.batchExportCount}
          + (case when ${organizations.id} = ${to} then 1 else -1 end) * ${liveExports}`,
      })
      .where(and(inArray(organizations.id, [from, to]), sql`changes() > 0`)),
    // A mover who moved their current project follows it: `@current` stays that project, in its new
    // organization (a retry of `@current/change_organization` names it still, and is replayed).
    mover: db
      .update(users)
      .set({ currentOrganizationId: to })
      .where(
        and(
          eq(users.id, actor.userId),
          eq(users.currentProjectId, project.id),
          sql`exists (select 1 from ${projects}
            where ${projects.id} = ${project.id} and ${projects.organizationId} = ${to})`,
        ),
      ),
  };
}
