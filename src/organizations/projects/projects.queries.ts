import { and, asc, count, eq, like, type SQL } from "drizzle-orm";
import { environments, organizationMemberships, organizations, projectAccessGrants, projects } from "../../db/schema";
import { jsonObjectWithKeys, type Database } from "../../platform/db";
import type { Actor } from "../../platform/env";
import { nowIso, randomBase62, randomUrlSafeToken, uuid7 } from "../../platform/ids";
import type { Page } from "../../platform/pagination";
import { assertPersonalApiKeysAllowed } from "../../platform/organization-context";
import {
  currentProjectFirst,
  grantOfCaller,
  membershipOfCaller,
  projectsInKeyScope,
  projectVisible,
  projectVisibleAtLevel,
} from "../../platform/project-context";
import type { OrganizationContext } from "../../platform/env";
import { PROJECT_SETTINGS_KEYS, type ProjectInput, type ProjectUpdateInput } from "./projects.schema";

export const MAX_PROJECTS_PER_ORGANIZATION = 2000;
export const DEFAULT_PROJECT_NAME = "Default project";

/** The statements that create a project and its first environment, which shares its id. */
export function insertProjectStatements(
  db: Database,
  organizationId: string,
  input: ProjectInput & { name: string },
) {
  const now = nowIso();
  const uuid = uuid7();
  const settings = Object.fromEntries(PROJECT_SETTINGS_KEYS.map((key) => [key, input[key]]));
  const insertProject = db.insert(projects).values({
    uuid,
    organizationId,
    name: input.name,
    nameKey: input.name.toLowerCase(),
    apiToken: `phc_${randomBase62(43)}`,
    liveEventsToken: randomUrlSafeToken(24),
    timezone: input.timezone,
    accessControl: input.access_control,
    isDemo: input.is_demo,
    completedSnippetOnboarding: input.completed_snippet_onboarding,
    hasCompletedOnboardingFor: input.has_completed_onboarding_for,
    settings,
    createdAt: now,
    updatedAt: now,
  });
  const insertEnvironment = db.insert(environments).select(
    db
      .select({
        id: projects.id,
        projectId: projects.id,
        organizationId: projects.organizationId,
        name: projects.name,
        createdAt: projects.createdAt,
      })
      .from(projects)
      .where(eq(projects.uuid, uuid)),
  );
  const selectProject = db.select().from(projects).where(eq(projects.uuid, uuid));
  return { insertProject, insertEnvironment, selectProject };
}

/**
 * A PATCH of a project as statements of one atomic batch: the fields sent (settings merged key
 * by key in SQL), the environment's name kept equal to the project's, and the project read back.
 */
export function updateProjectStatements(db: Database, projectId: number, input: ProjectUpdateInput) {
  const { name, completed_snippet_onboarding, is_demo, timezone, access_control, has_completed_onboarding_for, ...settings } =
    input;
  const sentSettings = Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
  const updateProject = db
    .update(projects)
    .set({
      name,
      nameKey: name?.toLowerCase(),
      timezone,
      accessControl: access_control,
      isDemo: is_demo,
      completedSnippetOnboarding: completed_snippet_onboarding,
      hasCompletedOnboardingFor: has_completed_onboarding_for,
      settings: jsonObjectWithKeys(projects.settings, sentSettings),
      updatedAt: nowIso(),
    })
    .where(eq(projects.id, projectId));
  const renameEnvironment =
    name === undefined ? undefined : db.update(environments).set({ name }).where(eq(environments.projectId, projectId));
  const selectProject = db.select().from(projects).where(eq(projects.id, projectId));
  return { updateProject, renameEnvironment, selectProject };
}

/** How many projects the organization has, and its taken "Default project N" names. */
export async function readProjectQuota(db: Database, organizationId: string) {
  const [[total], defaultNames] = await db.batch([
    db.select({ value: count() }).from(projects).where(eq(projects.organizationId, organizationId)),
    db
      .select({ nameKey: projects.nameKey })
      .from(projects)
      .where(
        and(
          eq(projects.organizationId, organizationId),
          like(projects.nameKey, `${DEFAULT_PROJECT_NAME.toLowerCase()}%`),
        ),
      ),
  ]);
  return { total: total?.value ?? 0, takenNames: new Set(defaultNames.map((row) => row.nameKey)) };
}

export function nextDefaultProjectName(takenNames: Set<string>): string {
  for (let suffix = 1; ; suffix += 1) {
    const name = suffix === 1 ? DEFAULT_PROJECT_NAME : `${DEFAULT_PROJECT_NAME} ${suffix}`;
    if (!takenNames.has(name.toLowerCase())) return name;
  }
}

/** Projects the caller can see: member of the organization, and granted if private. */
function visibleProjectsWhere(actor: Actor, filters: SQL[]) {
  return and(projectVisible, ...projectsInKeyScope(actor), ...filters);
}

const byCreation = [asc(projects.createdAt), asc(projects.id)];

/** The organization's projects the caller sees; counted over, and paged along, one index. */
export async function listProjectsOfOrganization(
  db: Database,
  actor: Actor,
  organization: OrganizationContext,
  page: Page,
) {
  const where = and(
    eq(projects.organizationId, organization.id),
    projectVisibleAtLevel(db, actor.userId, organization.level),
    ...projectsInKeyScope(actor),
  );
  const [[total], rows] = await db.batch([
    db.select({ value: count() }).from(projects).where(where),
    db.select().from(projects).where(where).orderBy(...byCreation).limit(page.limit).offset(page.offset),
  ]);
  return { count: total?.value ?? 0, projects: rows };
}

/** Every project the caller sees, across their organizations. */
export async function listVisibleProjects(db: Database, actor: Actor, page: Page) {
  const where = visibleProjectsWhere(actor, []);
  const [[total], rows] = await db.batch([
    db
      .select({ value: count() })
      .from(projects)
      .innerJoin(organizationMemberships, membershipOfCaller(actor.userId))
      .leftJoin(projectAccessGrants, grantOfCaller(actor.userId))
      .where(where),
    db
      .select({ project: projects })
      .from(projects)
      .innerJoin(organizationMemberships, membershipOfCaller(actor.userId))
      .leftJoin(projectAccessGrants, grantOfCaller(actor.userId))
      .where(where)
      .orderBy(...byCreation)
      .limit(page.limit)
      .offset(page.offset),
  ]);
  return { count: total?.value ?? 0, projects: rows.map((row) => row.project) };
}

/** One visible project by id, or the current one (`@current`), with the caller's level: a statement to batch. */
export function selectVisibleProject(db: Database, actor: Actor, filters: SQL[]) {
  return db
    .select({
      project: projects,
      level: organizationMemberships.level,
      membersCanUsePersonalApiKeys: organizations.membersCanUsePersonalApiKeys,
    })
    .from(projects)
    .innerJoin(organizations, eq(organizations.id, projects.organizationId))
    .innerJoin(organizationMemberships, membershipOfCaller(actor.userId))
    .leftJoin(projectAccessGrants, grantOfCaller(actor.userId))
    .where(visibleProjectsWhere(actor, filters))
    .orderBy(...currentProjectFirst(db, actor))
    .limit(1);
}

/** `selectVisibleProject`, refused to a plain member's key where the organization forbids them. */
export async function findVisibleProject(db: Database, actor: Actor, filters: SQL[]) {
  const [row] = await selectVisibleProject(db, actor, filters);
  if (row) assertPersonalApiKeysAllowed({ membersCanUsePersonalApiKeys: row.membersCanUsePersonalApiKeys, level: row.level });
  return row;
}
