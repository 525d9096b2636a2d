import { z } from "@hono/zod-openapi";
import { integerOrCurrentPathId } from "./path-ids";
import { and, asc, eq, gte, isNull, min, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { accessControls, environments, organizationMemberships, organizations, projects, users } from "../db/schema";
import { ruleOfMember } from "./access-controls/access-rules";
import { assertOrganizationInKeyScope, assertProjectInKeyScope } from "./auth/key-scoping";
import type { Actor, AppEnv, ProjectContext } from "./env";
import { notFound } from "./errors";
import { isAdminInSql, MembershipLevel } from "./levels";
import {
  assertPersonalApiKeysAllowed,
  callerOrganizationId,
  CURRENT,
  type OrganizationRef,
} from "./organization-context";
import { inJsonList, type Database } from "./db";
import { peekJsonBody } from "./request-body";
import { assertMinimumLevel, deferContext, resolverWith } from "./deferred-context";
import { guessCurrentEnvironment, rememberCurrentEnvironment } from "./current-environment-guess";

/** The path parameter `resolveProject` reads, for every environment route's schema. */
export const ProjectParams = z.object({
  project_id: integerOrCurrentPathId("Environment (project) id, or `@current`."),
});

/** The caller's access rule on the project (their own, else its default), with memberships joined. */
const projectRuleOfCaller = ruleOfMember("project", projects.id, organizationMemberships.id);

/**
 * `projectVisibleAtLevel` for the caller's membership (`organizationMemberships`) joined on the
 * project; a project scheduled for deletion is visible to no one.
 */
export const projectVisible = and(
  isNull(projects.deletionScheduledAt),
  or(
    gte(organizationMemberships.level, MembershipLevel.admin),
    sql`coalesce(${projectRuleOfCaller}, 'member') <> 'none'`,
  ),
);

/**
 * The caller's level in the project: their organization level, raised to admin by a project rule
 * of `admin`, as PostHog's `effective_membership_level`.
 */
export const effectiveProjectLevel = sql<number>`max(${organizationMemberships.level},
  case when ${projectRuleOfCaller} = 'admin' then ${MembershipLevel.admin} else 0 end)`;

/**
 * The caller's membership of the organization a statement reads: known (resolved before), or as
 * subqueries of the same round trip (`callerInOrganization`).
 */
export type CallerMembership = { membershipId: string | SQL; level: number | SQL };

/**
 * Who sees a project is decided by its access-control rules alone: a `none` rule (a private
 * project's default) hides it, and a member's own rule overrides the default. Organization admins
 * and owners see every project. `membership` is the caller's in the project's organization,
 * known or read once by a subquery: no join per row (an admin's rows test no rule). `projectId`:
 * the project's id in the query (its row's, unless given).
 */
export function projectVisibleAtLevel(
  membership: CallerMembership,
  projectId: SQLWrapper = projects.id,
): SQL | undefined {
  const ruleAllows = sql`coalesce(${ruleOfMember("project", projectId, membership.membershipId)}, 'member') <> 'none'`;
  if (typeof membership.level !== "number") return sql`(${isAdminInSql(membership.level)} or ${ruleAllows})`;
  return membership.level >= MembershipLevel.admin ? undefined : ruleAllows;
}

/**
 * The organization's projects that a member's rules hide from them, as a query of `id` (none for
 * an admin known as such). Only a private project (its default rule `none`, which
 * `access_control` mirrors) or one the member has a rule of their own on (a project of their
 * organization) can be hidden: those few are read, along the private projects' index and the
 * member's rules, and each is tested by the rule itself. A list subtracts them from its counter.
 */
export function projectsHiddenFrom(organizationId: OrganizationRef, membership: CallerMembership): SQL | undefined {
  const visible = projectVisibleAtLevel(membership, sql`"candidate"."id"`);
  if (!visible) return undefined;
  // `= 1` as the partial index says it, so that SQLite reads the private ones along it.
  const privateOnes = sql`select ${projects.id} as "id" from ${projects}
    where ${projects.organizationId} = ${organizationId} and ${projects.accessControl} = 1`;
  const ruled = sql`select cast(${accessControls.resourceId} as integer) as "id" from ${accessControls}
    where ${accessControls.organizationMembershipId} = ${membership.membershipId}
      and ${accessControls.resource} = 'project'`;
  return sql`select "id" from (${privateOnes} union ${ruled}) as "candidate" where not (${visible})`;
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
 * `/api/users/@me`), else the first of the current organization, else the first in creation
 * order, among the projects the caller sees within the key's scope (and `within`, if given).
 * Choices the key's scope or the project's privacy rule out are skipped, so the current project
 * and the current organization agree whenever the key allows it. No step sorts every project the
 * caller sees: the choice is read by its id, the current organization's first along its creation
 * index, and `coalesce` stops at the first step that finds one (the last step sorts, reached only
 * when the caller sees no project of the current organization).
 */
export function currentProjectId(db: Database, actor: Actor, within?: SQL) {
  const firstVisible = (filter: SQL | undefined) =>
    db
      .select({ id: projects.id })
      .from(projects)
      .innerJoin(organizationMemberships, membershipOfCaller(actor.userId))
      .where(and(projectVisible, filter, within, ...projectsInKeyScope(actor)))
      .orderBy(asc(projects.createdAt), asc(projects.id))
      .limit(1);
  const chosen = sql`(select ${users.currentProjectId} from ${users} where ${users.id} = ${actor.userId})`;
  return sql<number>`coalesce((${firstVisible(eq(projects.id, chosen))}),
    (${firstVisible(eq(projects.organizationId, sql`(${callerOrganizationId(db, actor, CURRENT)})`))}),
    (${firstVisible(undefined)}))`;
}

/**
 * Resolves `:project_id` (an environment id, or `@current`: the caller's current project) with
 * the caller's membership and rights in one query.
 */
export const resolveProject = createMiddleware<AppEnv>(async (c, next) => {
  const requested = requestedProject(c);
  const environmentId = requested === CURRENT ? undefined : parseProjectId(c.var.actor, requested);
  const [row] = await selectProject(c.var.db, c.var.actor, environmentId);
  const project = acceptProject(c, row);
  if (environmentId === undefined) rememberCurrentEnvironment(c, project.environmentId);
  await next();
});

type Statement = BatchItem<"sqlite">;
/** What a read sends with the project: none, for a write whose body names nothing to read. */
type Statements = [] | [Statement, ...Statement[]];

/**
 * For a read: the path's project id is checked now (404 when not a number, 403 outside the key's
 * scoped teams), with no query; the handler then reads through `projectRead`, which sends the
 * project and the caller's rights in the same round trip as its data.
 */
export const deferProject = createMiddleware<AppEnv>(async (c, next) => {
  const requested = requestedProject(c);
  if (requested !== CURRENT) parseProjectId(c.var.actor, requested);
  await deferContext(c, next, "project");
});

/** A read of a `deferProject` route: its statements and the project, in one round trip. */
export type ProjectRead = {
  db: Database;
  /**
   * Runs the statements `build` makes for the environment with the project and the caller's
   * rights, and admits them (404, 403) before any result is returned. The statements run before
   * access is known: they must only read. `build` may be called twice (`@current`, below).
   */
  batch<T extends Statements>(build: (environmentId: number) => T): Promise<BatchResponse<T>>;
};

/** The environment `@current` picks: the first of the current project. */
const selectCurrentEnvironment = (db: Database, actor: Actor) =>
  db
    .select({ id: min(environments.id) })
    .from(environments)
    .where(eq(environments.projectId, currentProjectId(db, actor)));

export function projectRead(c: Context<AppEnv>): ProjectRead {
  const { db, actor } = c.var;
  const requested = requestedProject(c);
  const named = requested === CURRENT ? undefined : parseProjectId(actor, requested);

  const admit = (rows: unknown) => assertMinimumLevel(c, acceptProject(c, (rows as SelectedProject[])[0]).level);

  async function readEnvironment<T extends Statements>(environmentId: number, build: (environmentId: number) => T) {
    const [rows, ...results] = await db.batch([selectProject(db, actor, environmentId), ...build(environmentId)]);
    admit(rows);
    return results as BatchResponse<T>;
  }

  return {
    db,
    async batch<T extends Statements>(build: (environmentId: number) => T) {
      if (named !== undefined) return readEnvironment(named, build);
      const guess = await guessCurrentEnvironment(c);
      let current: number | null | undefined;
      if (guess === undefined) {
        [{ id: current } = { id: null }] = await selectCurrentEnvironment(db, actor);
      } else {
        const [picked, rows, ...results] = await db.batch([
          selectCurrentEnvironment(db, actor),
          selectProject(db, actor, guess),
          ...build(guess),
        ]);
        current = picked[0]?.id;
        if (current === guess) {
          admit(rows);
          return results as BatchResponse<T>;
        }
      }
      if (current === null || current === undefined) throw notFound();
      rememberCurrentEnvironment(c, current);
      return readEnvironment(current, build);
    },
  };
}

/** `resolveOrganizationWith` for a project: the project and what the path names, in one round trip. */
export const resolveProjectWith = <T extends [Statement, ...Statement[]]>(
  reads: (db: Database, environmentId: number, c: Context<AppEnv>) => T,
) => resolverWith((c) => projectRead(c).batch((environmentId) => reads(c.var.db, environmentId, c)));

/**
 * `resolveProjectWith` for a write whose reads also depend on its body, as `schema` will read
 * it (`peekJsonBody`): `body` is undefined when that is not certain, and the handler then reads
 * what it needs itself (a round trip more). The handler compares `body` with the validated one.
 */
export const resolveProjectWithBody = <S extends z.ZodType, T extends Statements>(
  schema: S,
  reads: (db: Database, environmentId: number, c: Context<AppEnv>, body: z.output<S> | undefined) => T,
) =>
  resolverWith(async (c) => {
    const body = await peekJsonBody(c, schema);
    return { body, results: await projectRead(c).batch((environmentId) => reads(c.var.db, environmentId, c, body)) };
  });

/** `projectRead` for statements that need only the environment id. */
export const resolveProjectAndRead = <T extends [Statement, ...Statement[]]>(
  c: Context<AppEnv>,
  reads: (environmentId: number) => T,
) => projectRead(c).batch(reads);

/**
 * The caller's membership id in the environment's organization, as SQL: for reads batched with
 * the project before the membership is known.
 */
export const membershipInEnvironment = (userId: number, environmentId: number) =>
  sql<string>`(select ${organizationMemberships.id} from ${organizationMemberships}
    join ${environments} on ${environments.organizationId} = ${organizationMemberships.organizationId}
    where ${environments.id} = ${environmentId} and ${organizationMemberships.userId} = ${userId})`;

/**
 * The caller's level in the environment's project (`effectiveProjectLevel`) as SQL, for reads
 * batched with the project before the level is known. Null when the caller is not a member.
 */
export const projectLevelInEnvironment = (userId: number, environmentId: number) =>
  sql<number>`(select ${effectiveProjectLevel} from ${organizationMemberships}
    join ${environments} on ${environments.organizationId} = ${organizationMemberships.organizationId}
    join ${projects} on ${projects.id} = ${environments.projectId}
    where ${environments.id} = ${environmentId} and ${organizationMemberships.userId} = ${userId})`;

function requestedProject(c: Context<AppEnv>): string {
  const requested = c.req.param("project_id");
  if (requested === undefined) throw new Error("resolving a project needs :project_id");
  return requested;
}

type SelectedProject = ProjectContext & { membersCanUsePersonalApiKeys: boolean; organizationLevel: number };

function acceptProject(c: Context<AppEnv>, selected: SelectedProject | undefined): ProjectContext {
  if (!selected) throw notFound();
  assertOrganizationInKeyScope(c.var.actor, selected.organizationId);
  const { membersCanUsePersonalApiKeys, organizationLevel, ...project } = selected;
  assertPersonalApiKeysAllowed({ membersCanUsePersonalApiKeys, organizationLevel });
  c.set("project", project);
  return project;
}

/** The requested environment (or the caller's current one) with the caller's rights: one query. */
function selectProject(db: Database, actor: Actor, environmentId: number | undefined) {
  const filter =
    environmentId === undefined ? eq(projects.id, currentProjectId(db, actor)) : eq(environments.id, environmentId);
  return db
    .select({
      environmentId: environments.id,
      projectId: projects.id,
      organizationId: projects.organizationId,
      membershipId: organizationMemberships.id,
      level: effectiveProjectLevel,
      organizationLevel: organizationMemberships.level,
      membersCanUsePersonalApiKeys: organizations.membersCanUsePersonalApiKeys,
    })
    .from(environments)
    .innerJoin(projects, eq(projects.id, environments.projectId))
    .innerJoin(organizations, eq(organizations.id, projects.organizationId))
    .innerJoin(organizationMemberships, membershipOfCaller(actor.userId))
    .where(and(projectVisible, filter))
    .orderBy(asc(environments.id))
    .limit(1);
}
