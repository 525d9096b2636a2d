import { and, asc, eq, gt, notExists, sql } from "drizzle-orm";
import type { BatchResponse } from "drizzle-orm/batch";
import { invites, organizationMemberships, organizations, projects, users } from "../db/schema";
import { INVITE_VALIDITY_MS } from "../organizations/invites/invites.queries";
import { organizationObjectStatements, toOrganizationObject } from "../organizations/organizations.queries";
import { toOrganizationBasic, toTeamBasic } from "../organizations/organizations.schema";
import { selectVisibleProject } from "../projects/projects.queries";
import { jsonObjectWithKeys, type Database } from "../platform/db";
import { prepared } from "../platform/prepared";
import type { Actor } from "../platform/env";
import { callerMemberships, CURRENT } from "../platform/route-context/organization";
import { currentProjectId, projectsInKeyScope } from "../platform/route-context/project";
import { USER_PREFERENCE_KEYS, toCurrentUser, type CurrentUserUpdate } from "./users.schema";

/**
 * The unexpired invites to the caller's e-mail from organizations they are not in, oldest first,
 * along the index on the invite's e-mail.
 */
function pendingInvitesStatement(db: Database, actor: Actor, unexpiredSince: string) {
  const email = db.select({ email: users.email }).from(users).where(eq(users.id, actor.userId));
  return db
    .select({
      id: invites.id,
      target_email: invites.targetEmail,
      organization_id: invites.organizationId,
      organization_name: organizations.name,
      created_at: invites.createdAt,
    })
    .from(invites)
    .innerJoin(organizations, eq(organizations.id, invites.organizationId))
    .where(
      and(
        eq(invites.targetEmail, sql`(${email})`),
        gt(invites.createdAt, unexpiredSince),
        notExists(
          db
            .select({ id: organizationMemberships.id })
            .from(organizationMemberships)
            .where(
              and(
                eq(organizationMemberships.organizationId, invites.organizationId),
                eq(organizationMemberships.userId, actor.userId),
              ),
            ),
        ),
      ),
    )
    .orderBy(asc(invites.createdAt), asc(invites.id));
}

/**
 * Everything `/api/users/@me` shows, as statements of one batch: the user, their organizations
 * (within the key's scope), the current organization as a full object, and the current project,
 * both picked exactly as `@current` picks them in paths, and their pending invites (those created
 * since `unexpiredSince`). Prepared: built once per isolate and key shape.
 */
const currentUserStatements = prepared((db: Database, actor: Actor, unexpiredSince: string) => {
  return [
    db.select().from(users).where(eq(users.id, actor.userId)),
    db
      .select({ organization: organizations, level: organizationMemberships.level })
      .from(organizationMemberships)
      .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
      .where(callerMemberships(actor, CURRENT))
      // Creation order: organization ids are UUIDv7 (time first), read along the user's membership index.
      .orderBy(asc(organizationMemberships.organizationId)),
    ...organizationObjectStatements(db, actor, CURRENT),
    selectVisibleProject(db, actor, [eq(projects.id, currentProjectId(db, actor))]),
    pendingInvitesStatement(db, actor, unexpiredSince),
  ] as const;
});

type CurrentUserResults = BatchResponse<ReturnType<typeof currentUserStatements>>;

function toCurrentUserObject(results: CurrentUserResults) {
  const [[user], memberships, currentRows, currentProjects, [team], pendingInvites] = results;
  if (!user) return undefined;
  return toCurrentUser(user, {
    team: team ? toTeamBasic(team.project) : null,
    organization: toOrganizationObject([currentRows, currentProjects]) ?? null,
    organizations: memberships.map((row) => toOrganizationBasic(row.organization, row.level)),
    pending_invites: pendingInvites,
  });
}

/** The caller as `/api/users/@me` shows them, after `changes` if any: one round trip either way. */
export async function readCurrentUser(db: Database, actor: Actor, changes: UserChanges = {}) {
  const reads = currentUserStatements(db, actor, new Date(Date.now() - INVITE_VALIDITY_MS).toISOString());
  if (Object.keys(changes).length === 0) return toCurrentUserObject(await db.batch(reads));
  const [, ...results] = await db.batch([db.update(users).set(changes).where(eq(users.id, actor.userId)), ...reads]);
  return toCurrentUserObject(results);
}

/** Whether the caller is a member of the organization, and sees the project: one round trip. */
export async function findCurrentChoices(
  db: Database,
  actor: Actor,
  organizationId: string | undefined,
  projectId: number | undefined,
) {
  const [membership, project] = await db.batch([
    db
      .select({ id: organizationMemberships.organizationId })
      .from(organizationMemberships)
      .where(
        and(
          eq(organizationMemberships.userId, actor.userId),
          eq(organizationMemberships.organizationId, organizationId ?? ""),
        ),
      ),
    selectVisibleProject(db, actor, [eq(projects.id, projectId ?? -1), ...projectsInKeyScope(actor)]),
  ]);
  return { organization: membership[0], project: project[0]?.project };
}

/** The columns a PATCH of `@me` sets; settings are merged key by key in SQL, so concurrent merges both land. */
export function userChanges(input: CurrentUserUpdate, current: { organizationId?: string; projectId?: number | null }) {
  const changes = {
    firstName: input.first_name,
    lastName: input.last_name,
    roleAtOrganization: input.role_at_organization === undefined ? undefined : (input.role_at_organization ?? ""),
    themeMode: input.theme_mode,
    hedgehogConfig: input.hedgehog_config,
    preferences: jsonObjectWithKeys(users.preferences, preferencesSent(input)),
    notificationSettings:
      input.notification_settings && jsonObjectWithKeys(users.notificationSettings, input.notification_settings),
    currentOrganizationId: current.organizationId,
    currentProjectId: current.projectId,
  };
  return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as UserChanges;
}
type UserChanges = Partial<typeof users.$inferInsert>;

const preferencesSent = (input: CurrentUserUpdate) =>
  Object.fromEntries(USER_PREFERENCE_KEYS.filter((key) => input[key] !== undefined).map((key) => [key, input[key]]));
