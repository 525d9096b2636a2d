import { and, asc, count, eq, like, type SQL } from "drizzle-orm";
import { environments, organizationMemberships, projectAccessGrants, projects } from "../../db/schema";
import type { Database } from "../../platform/db";
import type { Actor } from "../../platform/env";
import { newProjectTokens, nowIso, uuid7 } from "../../platform/ids";
import type { Page } from "../../platform/pagination";
import {
  grantOfCaller,
  membershipOfCaller,
  projectsInKeyScope,
  projectVisible,
  projectVisibleAtLevel,
} from "../../platform/project-context";
import type { OrganizationContext } from "../../platform/env";
import { PROJECT_SETTINGS_KEYS, type ProjectInput } from "./projects.schema";

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
    ...newProjectTokens(),
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

/** One visible project by id, or the first visible one for `@current`, with the caller's level. */
export async function findVisibleProject(db: Database, actor: Actor, filters: SQL[]) {
  const [row] = await db
    .select({ project: projects, level: organizationMemberships.level })
    .from(projects)
    .innerJoin(organizationMemberships, membershipOfCaller(actor.userId))
    .leftJoin(projectAccessGrants, grantOfCaller(actor.userId))
    .where(visibleProjectsWhere(actor, filters))
    .orderBy(...byCreation)
    .limit(1);
  return row;
}
