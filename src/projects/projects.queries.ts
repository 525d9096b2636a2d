import { and, count, eq, isNull, type Column, type SQL, sql } from "drizzle-orm";
import { accessControls, environments, organizationMemberships, organizations, projects } from "../db/schema";
import { effectiveProjectLevel } from "../platform/access-rules/project-level";
import { projectVisible, projectVisibleAtLevel } from "../platform/access-rules/project-visibility";
import { assertOrganizationInKeyScope } from "../platform/auth/key-scoping";
import {
  boundAs,
  type Database,
  isNotNullViolationOf,
  jsonObjectWithKeys,
  unchangedSinceRead,
  whileHolds,
} from "../platform/db";
import type { Actor } from "../platform/env";
import { newProjectTokens, nowIso, uuid7 } from "../platform/ids";
import { nameKey } from "../platform/names";
import { raisedVersion } from "../platform/conditional-requests";
import {
  counterOf,
  joinPage,
  type ListOrder,
  type Page,
  pageOf,
  selectCount,
  type Through,
} from "../platform/pagination";
import type { OrganizationRead } from "../platform/route-context";
import {
  callerInOrganization,
  callerMembershipsInScope,
  CURRENT,
  keyPolicyOf,
  membershipsOf,
  organizationRef,
} from "../platform/route-context/organization";
import { prepared } from "../platform/prepared";
import { assertKeyPolicyAllows, type KeyPolicy } from "../platform/auth/key-policy";
import { isDefaultRule } from "../platform/access-rules/member-rule";
import {
  currentProjectId,
  membershipOfCaller,
  parseProjectId,
  projectsHiddenFrom,
  projectsInKeyScope,
} from "../platform/route-context/project";
import { PROJECT_SETTINGS_KEYS, type ProjectInput, type ProjectUpdateInput } from "./projects.schema";
import { jsonWithinLimit, serializedBytes } from "../platform/input-limits";

export const MAX_PROJECTS_PER_ORGANIZATION = 2000;
/**
 * A project's settings in all, serialized: each may hold 64 KiB, and PATCH after PATCH they add up
 * in one row (D1 keeps a row to 2 MB). The largest body, 1 MiB.
 */
export const MAX_PROJECT_SETTINGS_BYTES = 1024 * 1024;
export const DEFAULT_PROJECT_NAME = "Default project";

/** The settings' `tags`, read out of them in SQL: a list item shows no other setting. */
const settingsTags = sql<string[]>`coalesce(json_extract(${projects.settings}, '$.tags'), '[]')`.mapWith(
  (value: string) => JSON.parse(value) as string[],
);

/**
 * What a list item (`toProjectListItem`) reads of a project, and what orders a list: not its
 * settings, which may hold 1 MiB (a page of projects, or a user's `@me`, would read each whole),
 * but their `tags`.
 */
export const projectListColumns = {
  id: projects.id,
  uuid: projects.uuid,
  organizationId: projects.organizationId,
  apiToken: projects.apiToken,
  name: projects.name,
  completedSnippetOnboarding: projects.completedSnippetOnboarding,
  hasCompletedOnboardingFor: projects.hasCompletedOnboardingFor,
  ingestedEvent: projects.ingestedEvent,
  isDemo: projects.isDemo,
  timezone: projects.timezone,
  accessControl: projects.accessControl,
  createdAt: projects.createdAt,
  tags: settingsTags,
};

/**
 * "Default project", else "Default project N" for the smallest N >= 2 not taken in the
 * organization, computed by the INSERT itself: parallel creates each see the rows inserted
 * before them (D1 runs one statement at a time), so none picks a name another just took.
 */
function defaultProjectName(organizationId: string): SQL<string> {
  const prefixLength = DEFAULT_PROJECT_NAME.length + 2;
  const defaultKey = DEFAULT_PROJECT_NAME.toLowerCase();
  const takenNumbers = sql`select case when ${projects.nameKey} = ${defaultKey} then 1
      else cast(substr(${projects.nameKey}, ${prefixLength}) as integer) end as n
    from ${projects}
    where ${projects.organizationId} = ${organizationId} and (${projects.nameKey} = ${defaultKey}
      or (${projects.nameKey} glob ${`${defaultKey} [1-9]*`}
        and substr(${projects.nameKey}, ${prefixLength}) not glob '*[^0-9]*'))`;
  const freeNumber = sql`(select min(candidate)
    from (select 1 as candidate union all select n + 1 from (${takenNumbers}))
    where candidate not in (select n from (${takenNumbers})))`;
  return sql<string>`(case when ${freeNumber} = 1 then ${DEFAULT_PROJECT_NAME}
    else ${`${DEFAULT_PROJECT_NAME} `} || ${freeNumber} end)`;
}

/**
 * The organization still has room: checked by the INSERT itself, so parallel creates cannot pass
 * it together (the trigger counts each insert before the next statement runs).
 */
export const belowProjectLimit = sql`${organizations.projectCount} < ${MAX_PROJECTS_PER_ORGANIZATION}`;

/** The organization, unless its deletion began: a write racing the DELETE adds nothing to it. */
export const liveOrganization = (organizationId: string) =>
  and(eq(organizations.id, organizationId), isNull(organizations.deletionScheduledAt));

/**
 * The statements that create a project and its first environment, which shares its id. The
 * project row is inserted only while the organization is below its project limit, with its
 * default name (when none is given) chosen in the same statement; nothing is inserted otherwise,
 * and `selectProject` then reads no row.
 *
 * `holds`: what the caller's right to write was judged on, checked again by the write itself (a
 * NOT NULL failure of `updated_at` when it no longer holds: `isCallerRightLost`).
 */
export function insertProjectStatements(db: Database, organizationId: string, input: ProjectInput, holds?: SQL) {
  const now = nowIso();
  const uuid = uuid7();
  const settings = Object.fromEntries(PROJECT_SETTINGS_KEYS.map((key) => [key, input[key]]));
  const name = input.name === undefined ? defaultProjectName(organizationId) : sql<string>`${input.name}`;
  // A default name is ASCII, where SQLite's lower() is `nameKey`; it is chosen by the statement itself.
  const key = input.name === undefined ? sql<string>`lower(${name})` : sql<string>`${nameKey(input.name)}`;
  const tokens = newProjectTokens();
  const insertProject = db.insert(projects).select(
    db
      .select({
        id: sql<number>`null`.as("id"),
        uuid: boundAs(uuid, projects.uuid),
        organizationId: organizations.id,
        name: name.as("name"),
        nameKey: key.as("name_key"),
        apiToken: boundAs(tokens.apiToken, projects.apiToken),
        liveEventsToken: boundAs(tokens.liveEventsToken, projects.liveEventsToken),
        timezone: boundAs(input.timezone, projects.timezone),
        accessControl: boundAs(input.access_control, projects.accessControl),
        isDemo: boundAs(input.is_demo, projects.isDemo),
        completedSnippetOnboarding: boundAs(input.completed_snippet_onboarding, projects.completedSnippetOnboarding),
        hasCompletedOnboardingFor: boundAs(input.has_completed_onboarding_for, projects.hasCompletedOnboardingFor),
        ingestedEvent: boundAs(false, projects.ingestedEvent),
        // Past the limit, null: the column refuses it, and the create answers 400 (`settingsTooLarge`).
        settings:
          serializedBytes(settings) <= MAX_PROJECT_SETTINGS_BYTES
            ? boundAs(settings, projects.settings)
            : sql<null>`null`.as("settings"),
        deletionScheduledAt: sql<null>`null`.as("deletion_scheduled_at"),
        createdAt: boundAs(now, projects.createdAt),
        updatedAt: holds ? whileHolds(now, holds).as("updated_at") : boundAs(now, projects.updatedAt),
        version: sql<number>`1`.as("version"),
      })
      .from(organizations)
      .where(and(liveOrganization(organizationId), belowProjectLimit)),
  );
  const insertEnvironment = db.insert(environments).select(
    db
      .select({
        id: projects.id,
        projectId: projects.id,
        organizationId: projects.organizationId,
        name: projects.name,
        createdAt: projects.createdAt,
        // A new environment has nothing yet; the triggers count from here.
        batchExportCount: sql<number>`0`.as("batch_export_count"),
        dashboardCount: sql<number>`0`.as("dashboard_count"),
      })
      .from(projects)
      .where(eq(projects.uuid, uuid)),
  );
  const selectProject = db.select().from(projects).where(eq(projects.uuid, uuid));
  const insertPrivacyRule = privacyRuleStatements(
    db,
    and(eq(projects.uuid, uuid), eq(projects.accessControl, true))!,
    true,
  );
  // No project made: the organization was at its limit, or deleted meanwhile (no row here then).
  const selectOrganization = db
    .select({ id: organizations.id })
    .from(organizations)
    .where(liveOrganization(organizationId));
  return { uuid, insertProject, insertEnvironment, selectProject, insertPrivacyRule, selectOrganization };
}

/**
 * The columns a PATCH sends still as read (its settings whole, when it sends one of them), unless it
 * is pinned to the version read (`If-Match`: 412 then). Else `timezone` is NULL
 * (`isProjectChangedMeanwhile`): its entry, worked out against the project read, misses no change.
 */
function sentAsRead(input: ProjectUpdateInput, read: typeof projects.$inferSelect, sentSettings: object) {
  const columns: [unknown, Column, unknown][] = [
    [input.name, projects.name, read.name],
    [input.timezone, projects.timezone, read.timezone],
    [input.access_control, projects.accessControl, read.accessControl],
    [input.is_demo, projects.isDemo, read.isDemo],
    [input.completed_snippet_onboarding, projects.completedSnippetOnboarding, read.completedSnippetOnboarding],
    [input.has_completed_onboarding_for, projects.hasCompletedOnboardingFor, read.hasCompletedOnboardingFor],
    [Object.keys(sentSettings).length > 0 ? sentSettings : undefined, projects.settings, read.settings],
  ];
  return unchangedSinceRead(columns.filter(([sent]) => sent !== undefined).map(([, column, value]) => [column, value]));
}

/** A project PATCH refused because a field it sends was changed meanwhile (`updateProjectStatements`). */
export const isProjectChangedMeanwhile = (error: unknown) => isNotNullViolationOf(error, projects.timezone);

/**
 * A PATCH of a project as statements of one atomic batch: the fields sent (settings merged key
 * by key in SQL) and the version raised (with `expected`, only from that version:
 * `raisedVersion`), the environment's name kept equal to the project's, and the project read back.
 */
export function updateProjectStatements(
  db: Database,
  read: typeof projects.$inferSelect,
  input: ProjectUpdateInput,
  expected?: number,
  holds?: SQL,
) {
  const projectId = read.id;
  const {
    name,
    completed_snippet_onboarding,
    is_demo,
    timezone,
    access_control,
    has_completed_onboarding_for,
    ...settings
  } = input;
  const sentSettings = Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
  const mergedSettings = jsonObjectWithKeys(projects.settings, sentSettings);
  const asRead = expected === undefined ? sentAsRead(input, read, sentSettings) : undefined;
  const updateProject = db
    .update(projects)
    .set({
      // Only while the project is not marked for deletion (a DELETE may land after the PATCH read
      // it): else NULL, which the column refuses, and the whole batch fails (`isProjectGone`).
      name: whileHolds(name ?? sql<string>`${projects.name}`, isNull(projects.deletionScheduledAt)),
      ...(name === undefined ? {} : { nameKey: nameKey(name) }),
      timezone: asRead ? whileHolds(timezone ?? sql<string>`${projects.timezone}`, asRead) : timezone,
      accessControl: access_control,
      isDemo: is_demo,
      completedSnippetOnboarding: completed_snippet_onboarding,
      hasCompletedOnboardingFor: has_completed_onboarding_for,
      settings: mergedSettings && jsonWithinLimit(mergedSettings, MAX_PROJECT_SETTINGS_BYTES),
      updatedAt: holds ? whileHolds(nowIso(), holds) : nowIso(),
      version: raisedVersion(projects.version, expected),
    })
    .where(eq(projects.id, projectId));
  const renameEnvironment =
    name === undefined ? undefined : db.update(environments).set({ name }).where(eq(environments.projectId, projectId));
  const keepPrivacyInStep =
    access_control === undefined ? undefined : privacyRuleStatements(db, eq(projects.id, projectId), access_control);
  const selectProject = db.select().from(projects).where(eq(projects.id, projectId));
  return { updateProject, renameEnvironment, keepPrivacyInStep, selectProject };
}

/**
 * A private project (`access_control`) is one whose default access rule is `none`: one way to
 * decide who sees it. Making the projects `where` selects private writes that rule (or turns
 * their default into `none`); making them open removes a `none` default.
 */
function privacyRuleStatements(db: Database, where: SQL, isPrivate: boolean) {
  if (!isPrivate) {
    return db
      .delete(accessControls)
      .where(
        and(
          eq(accessControls.resource, "project"),
          isDefaultRule,
          eq(accessControls.accessLevel, "none"),
          sql`${accessControls.resourceId} in (select cast(${projects.id} as text) from ${projects} where ${where})`,
        ),
      );
  }
  return db
    .insert(accessControls)
    .select(
      db
        .select({
          id: sql<string>`${uuid7()}`.as("id"),
          environmentId: projects.id,
          resource: sql<"project">`'project'`.as("resource"),
          resourceId: sql<string>`cast(${projects.id} as text)`.as("resource_id"),
          organizationMembershipId: sql<null>`null`.as("organization_membership_id"),
          roleId: sql<null>`null`.as("role_id"),
          accessLevel: sql<"none">`'none'`.as("access_level"),
          createdById: sql<null>`null`.as("created_by_id"),
          createdAt: projects.updatedAt,
          updatedAt: projects.updatedAt,
        })
        .from(projects)
        .where(where),
    )
    .onConflictDoUpdate({
      target: [accessControls.resource, accessControls.resourceId],
      targetWhere: isDefaultRule,
      set: { accessLevel: "none", updatedAt: sql`excluded.updated_at` },
    });
}

/** Projects the caller can see: member of the organization, and not hidden by an access rule. */
function visibleProjectsWhere(actor: Actor) {
  return and(projectVisible, ...projectsInKeyScope(actor));
}

/** Creation order (PostHog's), along the (organization, created_at, id) index. */
const byCreation: ListOrder = [
  [projects.createdAt, "asc"],
  [projects.id, "asc"],
];

/** An organization's project counter, less the projects the caller's rules hide from them (`projectsHiddenFrom`). */
const countedLess = (counter: SQL<number>, hidden: SQL | undefined) =>
  hidden ? sql<number>`(${counter} - (select count(*) from (${hidden})))` : counter;

/**
 * The organization's projects the caller sees, paged along one index with the visibility rule
 * tested on each row read (not on an admin's). Counted by the organization's counter less the
 * projects the caller's rules hide; a key scoped to some projects counts those.
 */
function projectPageStatements(db: Database, actor: Actor, requested: string, page: Page) {
  const organizationId = organizationRef(db, actor, requested);
  const caller = callerInOrganization(actor, organizationId);
  const scoped = projectsInKeyScope(actor);
  const where = and(
    eq(projects.organizationId, organizationId),
    isNull(projects.deletionScheduledAt),
    projectVisibleAtLevel(caller),
    ...scoped,
  );
  const counter = counterOf(organizations.projectCount, eq(organizations.id, organizationId));
  const total =
    scoped.length > 0 ? db.$count(projects, where) : countedLess(counter, projectsHiddenFrom(organizationId, caller));
  return [
    selectCount(db, total),
    db
      .select(projectListColumns)
      .from(projects)
      .innerJoin(...joinPage(db, byCreation, where, page)),
  ] as const;
}

/** Pages without a cursor (the first, or one at an offset), the ones nearly every client reads: prepared. */
const projectPageAtOffset = prepared((db: Database, actor: Actor, requested: string, limit: number, offset: number) =>
  projectPageStatements(db, actor, requested, { limit, offset }),
);

export async function listProjectsOfOrganization(read: OrganizationRead, actor: Actor, page: Page) {
  const { db, requested } = read;
  const statements =
    page.after || page.before
      ? projectPageStatements(db, actor, requested, page)
      : projectPageAtOffset(db, actor, requested, page.limit, page.offset);
  const [[value], rows] = await read.batch([...statements]);
  const listed = pageOf(byCreation, page, rows);
  return { count: value?.value ?? 0, projects: listed.rows, links: listed.links };
}

/**
 * The project `:id` names (a project id, or `@current` within the organization) in the organization
 * `:organization_id` names, with the caller's rights: prepared.
 */
export const selectProjectOfOrganization = prepared(
  (db: Database, actor: Actor, requested: string, project: number | typeof CURRENT) => {
    const inOrganization = eq(projects.organizationId, organizationRef(db, actor, requested));
    const picked = project === CURRENT ? currentProjectId(db, actor, inOrganization) : project;
    return selectVisibleProject(db, actor, [inOrganization, eq(projects.id, picked)]);
  },
);

/** A project path's `:id`: a project id (404 unless digits, 403 outside the key's scope) or `@current`. */
export const projectIdOfPath = (actor: Actor, id: string): number | typeof CURRENT =>
  id === CURRENT ? CURRENT : parseProjectId(actor, id);

/** The caller's membership of the organization of the row being read, as `projectsHiddenFrom` takes it. */
const membershipRow = {
  membershipId: sql<string>`${organizationMemberships.id}`,
  level: sql<number>`${organizationMemberships.level}`,
};

/**
 * How many projects the caller sees across their organizations: each organization's counter less
 * what the caller's rules hide there. A key scoped to some projects counts those.
 */
function visibleProjectCount(db: Database, actor: Actor): SQL<number> {
  if (actor.scopedTeams.length > 0) {
    return sql<number>`(${db
      .select({ value: count() })
      .from(projects)
      .innerJoin(membershipsOf(actor), membershipOfCaller(actor.userId))
      .where(visibleProjectsWhere(actor))})`;
  }
  const hidden = projectsHiddenFrom(sql`${organizationMemberships.organizationId}`, membershipRow);
  const perOrganization = countedLess(sql<number>`${organizations.projectCount}`, hidden);
  return sql<number>`(${db
    .select({ value: sql`coalesce(sum(${perOrganization}), 0)` })
    .from(organizationMemberships)
    .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
    .where(callerMembershipsInScope(actor))})`;
}

/**
 * Every project the caller sees, across their organizations, in creation order: read through the
 * caller's memberships, each organization's projects along its own index, at the caller's level
 * there.
 */
export async function listVisibleProjects(db: Database, actor: Actor, page: Page) {
  const where = and(callerMembershipsInScope(actor), projectVisible, ...projectsInKeyScope(actor));
  const through: Through = [
    organizationMemberships,
    eq(organizationMemberships.organizationId, projects.organizationId),
  ];
  const [[total], rows] = await db.batch([
    selectCount(db, visibleProjectCount(db, actor)),
    db
      .select(projectListColumns)
      .from(projects)
      .innerJoin(...joinPage(db, byCreation, where, page, through)),
  ]);
  const listed = pageOf(byCreation, page, rows);
  return { count: total?.value ?? 0, projects: listed.rows, links: listed.links };
}

/**
 * The project `filters` pick (by its id, or `currentProjectId` for `@current`) if the caller sees
 * it, with the caller's level: a statement to batch. A named project outside the key's scope is
 * found, then refused (403).
 */
export function selectVisibleProject(db: Database, actor: Actor, filters: SQL[]) {
  return db
    .select({
      project: projects,
      level: effectiveProjectLevel,
      organizationLevel: organizationMemberships.level,
      ...keyPolicyOf(actor),
    })
    .from(projects)
    .innerJoin(organizations, eq(organizations.id, projects.organizationId))
    .innerJoin(membershipsOf(actor), membershipOfCaller(actor.userId))
    .where(and(projectVisible, ...filters))
    .limit(1);
}

/**
 * `selectVisibleProject`, refused outside the key's scope and to a plain member's key where the organization forbids
 * them.
 */
export async function findVisibleProject(db: Database, actor: Actor, filters: SQL[]) {
  const [row] = await selectVisibleProject(db, actor, filters);
  return admitVisibleProject(actor, row);
}

/** The project of the environment a path names, as `selectVisibleProject` reads it. */
export const selectProjectOfEnvironment = (db: Database, actor: Actor, environmentId: number) =>
  selectVisibleProject(db, actor, [
    eq(
      projects.id,
      db.select({ id: environments.projectId }).from(environments).where(eq(environments.id, environmentId)),
    ),
  ]);

/** A row of `selectVisibleProject`, refused as `findVisibleProject` refuses it. */
export function admitVisibleProject<
  T extends {
    project: typeof projects.$inferSelect;
    level: number;
  } & KeyPolicy,
>(actor: Actor, row: T | undefined): T | undefined {
  if (!row) return undefined;
  assertOrganizationInKeyScope(actor, row.project.organizationId);
  assertKeyPolicyAllows(actor, row);
  return row;
}

/**
 * `:id` of a project route: a project id, or `@current` (the current one within the key's scope),
 * among the projects `within` selects if given.
 */
export function projectIdFilters(db: Database, actor: Actor, id: string): SQL[] {
  const project = projectIdOfPath(actor, id);
  return [eq(projects.id, project === CURRENT ? currentProjectId(db, actor) : project)];
}

/** A project write refused by its `holds`: the caller lost the right it was judged on meanwhile. */
export const isCallerRightLost = (error: unknown) => isNotNullViolationOf(error, projects.updatedAt);

/** A project's update that met the project marked for deletion meanwhile (`updateProjectStatements`). */
export const isProjectGone = (error: unknown) => isNotNullViolationOf(error, projects.name);
