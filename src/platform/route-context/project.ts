import { and, asc, eq, min, sql, type SQL } from "drizzle-orm";
import { accessControls, environments, organizationMemberships, organizations, projects, users } from "../../db/schema";
import {
  kindRuleOfMember,
  resourcesRuledForRolesOf,
  type AccessControlledResourceName,
} from "../access-rules/member-rule";
import { effectiveProjectLevel } from "../access-rules/project-level";
import { projectVisible, projectVisibleAtLevel, type CallerMembership } from "../access-rules/project-visibility";
import { assertProjectInKeyScope } from "../auth/key-scoping";
import { inJsonList, type Database } from "../db";
import type { Actor, ProjectContext } from "../env";
import { changedMeanwhile, notFound, permissionDenied } from "../errors";
import { isAdminInSql } from "../levels";
import { prepared } from "../prepared";
import { KEY_BLOCKED, keyBlockedCondition, type KeyPolicy } from "../auth/key-policy";
import { callerOrganizationId, CURRENT, keyPolicyOf, membershipsOf, type OrganizationRef } from "./organization";

/**
 * The organization's projects that a member's rules hide from them, as a query of `id` (none for
 * an admin known as such). Only a private project (its default rule `none`, which
 * `access_control` mirrors) or one the member or one of their roles has a rule on (a project of
 * their organization) can be hidden: those few are read, along the private projects' index and the
 * member's rules, and each is tested by the rule itself. A list subtracts them from its counter.
 */
export function projectsHiddenFrom(organizationId: OrganizationRef, membership: CallerMembership): SQL | undefined {
  const visible = projectVisibleAtLevel(membership, sql`"candidate"."id"`);
  if (!visible) return undefined;
  // `= 1` as the partial index says it, so that SQLite reads the private ones along it.
  const privateOnes = sql`select ${projects.id} as "id" from ${projects}
    where ${projects.organizationId} = ${organizationId} and ${projects.accessControl} = 1`;
  const ruled = (whose: SQL) => sql`select cast(${accessControls.resourceId} as integer) as "id" from ${accessControls}
    where ${whose} and ${accessControls.resource} = 'project'`;
  const own = ruled(sql`${accessControls.organizationMembershipId} = ${membership.membershipId}`);
  const ofRoles = resourcesRuledForRolesOf("project", membership.membershipId);
  // One pass over every candidate (UNION ALL, then DISTINCT): a union of three would sort the
  // member's rules twice, whether or not they hold a role.
  return sql`select distinct "id" from (${privateOnes} union all ${own} union all ${ofRoles}) as "candidate"
    where not (${visible})`;
}

/** The join that `projectVisible` reads, for a query that starts from `projects`. */
export const membershipOfCaller = (userId: number) =>
  and(eq(organizationMemberships.organizationId, projects.organizationId), eq(organizationMemberships.userId, userId));

/** Key scoping as filters, for queries that pick or list projects. */
export function projectsInKeyScope(actor: Actor): SQL[] {
  const filters: SQL[] = [];
  if (actor.scopedOrganizations.length > 0) {
    filters.push(inJsonList(projects.organizationId, actor.scopedOrganizations));
  }
  if (actor.scopedTeams.length > 0) filters.push(inJsonList(projects.id, actor.scopedTeams));
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
 * The project `@current` picks, as a scalar subquery: the one the user chose (PATCH
 * `/api/users/@me`), else the first in creation order, among the projects of the current
 * organization the caller sees within the key's scope (and `within`, if given); null when they
 * see none there. So the current project and the current organization always agree: a choice
 * moved to another organization, outside the key's scope or made private is skipped. The choice
 * is read by its id, the first along the organization's creation index.
 */
export function currentProjectId(db: Database, actor: Actor, within?: SQL) {
  const currentOrganization = eq(projects.organizationId, sql`(${callerOrganizationId(db, actor, CURRENT)})`);
  const firstVisible = (filter?: SQL) =>
    db
      .select({ id: projects.id })
      .from(projects)
      .innerJoin(membershipsOf(actor), membershipOfCaller(actor.userId))
      .where(and(projectVisible, currentOrganization, filter, within, ...projectsInKeyScope(actor)))
      .orderBy(asc(projects.createdAt), asc(projects.id))
      .limit(1);
  const chosen = sql`(select ${users.currentProjectId} from ${users} where ${users.id} = ${actor.userId})`;
  return sql<number>`coalesce((${firstVisible(eq(projects.id, chosen))}), (${firstVisible()}))`;
}

/** The environment `@current` picks: the first of the current project. */
export const selectCurrentEnvironment = prepared((db: Database, actor: Actor) =>
  db
    .select({ id: min(environments.id) })
    .from(environments)
    .where(eq(environments.projectId, currentProjectId(db, actor))),
);

/**
 * The caller's membership id in the environment's organization, as SQL: for reads batched with
 * the project before the membership is known.
 */
export const membershipInEnvironment = (actor: Actor, environmentId: number) =>
  sql<string>`(select ${organizationMemberships.id} from ${membershipsOf(actor)}
    join ${environments} on ${environments.organizationId} = ${organizationMemberships.organizationId}
    where ${environments.id} = ${environmentId} and ${organizationMemberships.userId} = ${actor.userId})`;

/**
 * The caller's rule on every resource of a kind in the environment (`kindRuleOfMember`), or
 * null: for a read batched with the project.
 */
export const selectKindRuleOfCaller = <R extends AccessControlledResourceName>(
  db: Database,
  resource: R,
  actor: Actor,
  environmentId: number,
) =>
  db
    .select({ level: kindRuleOfMember(resource, environmentId, membershipInEnvironment(actor, environmentId)) })
    .from(sql`(select 1)`);

/** The caller's membership joined to the environment's project (`from` and `where` of a subquery). */
const callerAndProjectOf = (actor: Actor, environmentId: number) => sql`${membershipsOf(actor)}
    join ${environments} on ${environments.organizationId} = ${organizationMemberships.organizationId}
    join ${projects} on ${projects.id} = ${environments.projectId}
    where ${environments.id} = ${environmentId} and ${organizationMemberships.userId} = ${actor.userId}`;

/** The calling personal key is not blocked in the joined membership's organization (`auth/key-policy.ts`). */
const keyNotBlockedThere = (actor: Actor) =>
  sql`not ${keyBlockedCondition(actor, organizationMemberships.organizationId)}`;

/**
 * Whether the project is still in the organization the request read it in: a write held on it (an
 * activity entry naming it, a rule naming a member or role of that organization) lands on no
 * project moved meanwhile (`change_organization`). Refused: 409 (`refusalInEnvironment` with
 * `readIn`, or `onError` for an entry).
 */
export const projectStillIn = (projectId: number | SQL, organizationId: string) =>
  sql`exists (select 1 from ${projects}
    where ${projects.id} = ${projectId} and ${projects.organizationId} = ${organizationId})`;

const projectOfEnvironment = (environmentId: number) =>
  sql`(select ${environments.projectId} from ${environments} where ${environments.id} = ${environmentId})`;

/** `projectStillIn` of an environment's project: a write that reads another project than its path's holds it. */
export const environmentStillIn = (environmentId: number, organizationId: string) =>
  projectStillIn(projectOfEnvironment(environmentId), organizationId);

/**
 * Why a write held on the caller's rights in a project was refused: 404 when they no longer see
 * the project (their membership or its organization gone, a `none` rule, the project marked for
 * deletion, meanwhile: as a moment later), 409 when it moved out of `readIn` (the organization the
 * request read it in, where the write holds `projectStillIn`), 403 when an admin blocked the
 * calling key in the organization meanwhile, else `refusal`. Read only on that path.
 */
export async function refusalInEnvironment(
  db: Database,
  actor: Actor,
  environmentId: number,
  refusal: () => Error,
  readIn?: string,
) {
  const caller = callerAndProjectOf(actor, environmentId);
  const moved = readIn === undefined ? sql`0` : sql`not ${environmentStillIn(environmentId, readIn)}`;
  const row = await db.get<{ sees: number; blocked: number; moved: number }>(
    sql`select exists (select 1 from ${caller} and ${projectVisible}) as "sees",
      exists (select 1 from ${caller} and not ${keyNotBlockedThere(actor)}) as "blocked", ${moved} as "moved"`,
  );
  if (row?.moved) return changedMeanwhile("project");
  if (!row?.sees) return notFound();
  return row.blocked ? permissionDenied(KEY_BLOCKED) : refusal();
}

/**
 * The caller's level in the environment's project (`effectiveProjectLevel`) as SQL, for reads
 * batched with the project before the level is known. Null when the caller is not a member, the
 * project is being deleted, or the calling key is blocked in its organization: a write held on it
 * (a rule, the project's fields) lands on no project marked meanwhile, whose rows its deletion
 * removes, and by no key blocked meanwhile.
 */
export const projectLevelInEnvironment = (actor: Actor, environmentId: number) =>
  sql<number>`(select ${effectiveProjectLevel} from ${callerAndProjectOf(actor, environmentId)}
      and ${projects.deletionScheduledAt} is null and ${keyNotBlockedThere(actor)})`;

/**
 * Whether the caller still sees the environment's project when the statement runs
 * (`projectVisible`: a member, no `none` rule, not marked for deletion), not only when admitted,
 * with a key not blocked in its organization meanwhile. Refused: `refusalInEnvironment` says why.
 */
export const callerStillSeesProject = (actor: Actor, environmentId: number) =>
  sql`exists (select 1 from ${callerAndProjectOf(actor, environmentId)}
      and ${projectVisible} and ${keyNotBlockedThere(actor)})`;

/** Whether the caller is an admin of the environment's project when the statement runs, not when it was admitted. */
export const callerStillProjectAdmin = (actor: Actor, environmentId: number) =>
  isAdminInSql(projectLevelInEnvironment(actor, environmentId));

/** The project and the caller's rights in it, with what admitting them needs. */
export type SelectedProject = ProjectContext & KeyPolicy;

/**
 * An environment's project and the caller's rights in it, for a query joining `environments`,
 * `projects`, `organizations` and the caller's membership (`membershipOfCaller`).
 */
export const selectedProjectFields = (actor: Actor) => ({
  environmentId: environments.id,
  projectId: projects.id,
  organizationId: projects.organizationId,
  membershipId: organizationMemberships.id,
  level: effectiveProjectLevel,
  organizationLevel: organizationMemberships.level,
  ...keyPolicyOf(actor),
});

/** The requested environment (or the caller's current one) with the caller's rights: one query. */
export const selectProject = prepared((db: Database, actor: Actor, environmentId: number | undefined) => {
  const filter =
    environmentId === undefined ? eq(projects.id, currentProjectId(db, actor)) : eq(environments.id, environmentId);
  return db
    .select(selectedProjectFields(actor))
    .from(environments)
    .innerJoin(projects, eq(projects.id, environments.projectId))
    .innerJoin(organizations, eq(organizations.id, projects.organizationId))
    .innerJoin(membershipsOf(actor), membershipOfCaller(actor.userId))
    .where(and(projectVisible, filter))
    .orderBy(asc(environments.id))
    .limit(1);
});
