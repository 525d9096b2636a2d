import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { dashboardCollaborators, dashboards, environments, organizationMemberships, users } from "../../../db/schema";
import { RestrictionLevel } from "../../../platform/access-rules/dashboard-rights";
import { ruleOfMember } from "../../../platform/access-rules/member-rule";
import { isNotNullViolationOf, whileHolds, type Database } from "../../../platform/db";
import { nowIso } from "../../../platform/ids";
import { toUserBasic, userBasicColumns } from "../../../platform/user-basic";
import type { Collaborator } from "./collaborators.schema";

/** A dashboard's collaborators (or the one with `id`) with their users, oldest first: one query. */
export function selectCollaborators(db: Database, environmentId: number, dashboardId: number, id?: string) {
  return db
    .select({ collaborator: dashboardCollaborators, user: userBasicColumns(users) })
    .from(dashboardCollaborators)
    .innerJoin(users, eq(users.id, dashboardCollaborators.userId))
    .innerJoin(dashboards, eq(dashboards.id, dashboardCollaborators.dashboardId))
    .where(
      and(
        eq(dashboardCollaborators.dashboardId, dashboardId),
        eq(dashboards.environmentId, environmentId),
        id === undefined ? undefined : eq(dashboardCollaborators.id, id),
      ),
    )
    .orderBy(asc(dashboardCollaborators.addedAt), asc(dashboardCollaborators.id));
}

type CollaboratorRow = Awaited<ReturnType<typeof selectCollaborators>>[number];

export const toCollaborator = ({ collaborator, user }: CollaboratorRow): Collaborator => ({
  id: collaborator.id,
  dashboard_id: collaborator.dashboardId,
  user: toUserBasic(user),
  level: collaborator.level,
  added_at: collaborator.addedAt,
  updated_at: collaborator.updatedAt,
});

/**
 * The user a collaborator would be, with what decides whether they may be one: their level in
 * the environment's organization (null: not a member) and their access rule on its project.
 */
export function selectCandidate(db: Database, environmentId: number, userUuid: string) {
  const ofEnvironment = (column: typeof environments.projectId | typeof environments.organizationId) =>
    sql`(select ${column} from ${environments} where ${environments.id} = ${environmentId})`;
  return db
    .select({
      user: userBasicColumns(users),
      organizationLevel: organizationMemberships.level,
      projectRule: ruleOfMember("project", ofEnvironment(environments.projectId), organizationMemberships.id),
    })
    .from(users)
    .leftJoin(
      organizationMemberships,
      and(
        eq(organizationMemberships.userId, users.id),
        eq(organizationMemberships.organizationId, ofEnvironment(environments.organizationId)),
      ),
    )
    .where(eq(users.uuid, userUuid));
}

export type Candidate = Awaited<ReturnType<typeof selectCandidate>>[number];

type Statement = BatchItem<"sqlite">;

/**
 * Adds the collaborator, with its `entry` in the activity log, and reads it back with its user;
 * the unique index refuses a second one.
 */
export async function insertCollaborator(
  db: Database,
  environmentId: number,
  collaborator: { id: string; dashboardId: number; userId: number; level: number },
  entry: Statement,
  callerMayEdit: SQL,
) {
  const now = nowIso();
  // Only while the user is still a member: removed meanwhile, no collaboration outlives them (to
  // grant again on a later return). Else the user id is NULL, which the column refuses.
  const stillMember = sql`exists (select 1 from ${organizationMemberships} where ${organizationMemberships.userId} =
    ${collaborator.userId} and ${organizationMemberships.organizationId} =
    (select ${environments.organizationId} from ${environments} where ${environments.id} = ${environmentId}))`;
  const userId = whileHolds(collaborator.userId, stillMember);
  // And only while the caller may still edit the dashboard: else the level is NULL.
  const level = whileHolds(collaborator.level, callerMayEdit);
  // And only while the dashboard is still above the lowest restriction level, where collaborators
  // mean nothing and none can be removed: unlocked meanwhile, `added_at` is NULL (`isUnlockedMeanwhile`).
  const locked = sql`exists (select 1 from ${dashboards} where ${dashboards.id} = ${collaborator.dashboardId}
    and ${dashboards.restrictionLevel} > ${RestrictionLevel.everyoneCanEdit})`;
  const addedAt = whileHolds(now, locked);
  const [, , rows] = await db.batch([
    db.insert(dashboardCollaborators).values({ ...collaborator, userId, level, addedAt, updatedAt: now }),
    entry,
    selectCollaborators(db, environmentId, collaborator.dashboardId, collaborator.id),
  ]);
  const [created] = rows;
  if (!created) throw new Error("the new collaborator was not read back");
  return created;
}

/** A collaborator refused: its dashboard went to the lowest restriction level meanwhile (`insertCollaborator`). */
export const isUnlockedMeanwhile = (error: unknown) => isNotNullViolationOf(error, dashboardCollaborators.addedAt);

/** The user's collaboration on the dashboard, with the user: read with the dashboard, before removing it. */
export function selectCollaboration(db: Database, dashboardId: number, userUuid: string) {
  return db
    .select({ collaborator: dashboardCollaborators, user: userBasicColumns(users) })
    .from(dashboardCollaborators)
    .innerJoin(users, eq(users.id, dashboardCollaborators.userId))
    .where(and(eq(dashboardCollaborators.dashboardId, dashboardId), eq(users.uuid, userUuid)));
}

/**
 * Removes the collaboration, with its `entry`; false when it was gone already. Only while the
 * caller may still edit the dashboard: else the first statement fails the batch (NOT NULL of its
 * level).
 */
export async function deleteCollaborator(db: Database, collaboratorId: string, entry: Statement, callerMayEdit: SQL) {
  const [, removed] = await db.batch([
    db
      .update(dashboardCollaborators)
      .set({ level: whileHolds(sql`${dashboardCollaborators.level}`, callerMayEdit) })
      .where(eq(dashboardCollaborators.id, collaboratorId)),
    db
      .delete(dashboardCollaborators)
      .where(eq(dashboardCollaborators.id, collaboratorId))
      .returning({ id: dashboardCollaborators.id }),
    entry,
  ]);
  return removed.length > 0;
}
