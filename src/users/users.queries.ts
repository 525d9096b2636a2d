import { and, asc, desc, eq, gt, notExists, sql } from "drizzle-orm";
import { invites, organizationMemberships, organizations, projects, users } from "../db/schema";
import { INVITE_VALIDITY_MS, inviteOpens } from "../organizations/invites/invites.queries";
import {
  organizationObjectFromJson,
  organizationObjectJson,
  visibleProjectsStatement,
} from "../organizations/organizations.queries";
import { toOrganizationBasic, toTeamBasic } from "../organizations/organizations.schema";
import { projectListColumns, selectVisibleProject } from "../projects/projects.queries";
import { inJsonList, jsonObjectWithKeys, type Database } from "../platform/db";
import { jsonWithinLimit } from "../platform/input-limits";
import { jsonRows } from "../platform/json-rows";
import { prepared } from "../platform/prepared";
import type { Actor } from "../platform/env";
import { callerMemberships, CURRENT } from "../platform/route-context/organization";
import { currentProjectId } from "../platform/route-context/project";
import { USER_PREFERENCE_KEYS, toCurrentUser, type CurrentUserUpdate, type PendingInvite } from "./users.schema";

/**
 * How many pending invites `@me` lists, the newest: anyone may invite an address, from as many
 * organizations as they make, and the list is one value of one statement, which D1 caps at 2 MB.
 */
const MAX_PENDING_INVITES = 100;

/**
 * The unexpired invites to the caller's e-mail (created since `unexpiredSince`) from organizations
 * they are not in (for a key scoped to organizations, among those), the newest
 * `MAX_PENDING_INVITES` newest first, along the index on the invite's e-mail, as JSON rows. None
 * while the address is not proven: an account made with an invite's handed-over token has an
 * address its inviter chose.
 */
function pendingInviteRows(db: Database, actor: Actor, unexpiredSince: string) {
  const email = db
    .select({ email: users.email })
    .from(users)
    .where(and(eq(users.id, actor.userId), eq(users.isEmailVerified, true)));
  const newest = db
    .select({
      row: sql`json_object('id', ${invites.id}, 'target_email', ${invites.targetEmail},
        'organization_id', ${invites.organizationId}, 'organization_name', ${organizations.name},
        'created_at', ${invites.createdAt})`.as("row"),
      createdAt: invites.createdAt,
      id: invites.id,
    })
    .from(invites)
    .innerJoin(organizations, eq(organizations.id, invites.organizationId))
    .where(
      and(
        eq(invites.targetEmail, sql`(${email})`),
        gt(invites.createdAt, unexpiredSince),
        inviteOpens,
        // A key scoped to some organizations learns of no other's invite; one scoped to projects, of
        // none (every invite listed is of an organization the user is not in, so holds none of them).
        actor.scopedTeams.length > 0
          ? sql`0`
          : actor.scopedOrganizations.length > 0
            ? inJsonList(invites.organizationId, actor.scopedOrganizations)
            : undefined,
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
    .orderBy(desc(invites.createdAt), desc(invites.id))
    .limit(MAX_PENDING_INVITES);
  // Newest first here (one level, which a nested re-sort cost @me a fifth of its throughput);
  // the answer lists them oldest first (`toCurrentUserObject`).
  return newest;
}

/**
 * Everything `/api/users/@me` shows, as statements of one round trip: the user's row, with the
 * current organization and their pending invites as JSON (one row, and 100 small ones at most);
 * their organizations (within the key's scope) with their level; the current project; and the
 * projects they see in the current organization. The organization and the project are picked
 * exactly as `@current` picks them in paths. Lists and whole project rows are read as rows: as one
 * JSON value, they would outgrow D1's limit on a value (2 MB) with many organizations or projects,
 * or a project's large settings. Prepared: built once per isolate and key shape.
 */
const currentUserStatements = prepared((db: Database, actor: Actor, unexpiredSince: string) => {
  const memberships = db
    .select({ organization: organizations, level: organizationMemberships.level })
    .from(organizationMemberships)
    .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
    .where(callerMemberships(actor, CURRENT))
    // Creation order: organization ids are UUIDv7 (time first), read along the user's membership index.
    .orderBy(asc(organizationMemberships.organizationId));
  // `currentProjectId` picks only a project the caller sees.
  const team = db
    .select({ project: projectListColumns })
    .from(projects)
    .where(eq(projects.id, currentProjectId(db, actor)));
  const user = db
    .select({
      user: users,
      organization: organizationObjectJson(db, actor, CURRENT),
      pendingInvites: jsonRows(pendingInviteRows(db, actor, unexpiredSince)),
    })
    .from(users)
    .where(eq(users.id, actor.userId));
  return [user, memberships, team, visibleProjectsStatement(db, actor, CURRENT)] as const;
});

type Reads = ReturnType<typeof currentUserStatements>;
type CurrentUserReads = [Awaited<Reads[0]>, Awaited<Reads[1]>, Awaited<Reads[2]>, Awaited<Reads[3]>];

function toCurrentUserObject([[row], memberships, [team], projectRows]: CurrentUserReads) {
  if (!row) return undefined;
  return toCurrentUser(row.user, {
    team: team ? toTeamBasic(team.project) : null,
    organization: organizationObjectFromJson(row.organization, projectRows) ?? null,
    organizations: memberships.map(({ organization, level }) => toOrganizationBasic(organization, level)),
    pending_invites: (JSON.parse(row.pendingInvites) as PendingInvite[]).reverse(),
  });
}

/** The caller as `/api/users/@me` shows them, after `changes` if any: one round trip either way. */
export async function readCurrentUser(db: Database, actor: Actor, changes: UserChanges = {}) {
  const [user, memberships, team, projectRows] = currentUserStatements(
    db,
    actor,
    new Date(Date.now() - INVITE_VALIDITY_MS).toISOString(),
  );
  if (Object.keys(changes).length === 0) {
    return toCurrentUserObject(await db.batch([user, memberships, team, projectRows]));
  }
  const [, ...read] = await db.batch([
    db.update(users).set(changes).where(eq(users.id, actor.userId)),
    user,
    memberships,
    team,
    projectRows,
  ]);
  return toCurrentUserObject(read);
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
    // Not held to the key's organizations here: one outside them is refused (403), not unknown.
    selectVisibleProject(db, actor, [eq(projects.id, projectId ?? -1)]),
  ]);
  return { organization: membership[0], project: project[0]?.project };
}

/** The columns a PATCH of `@me` sets; settings are merged key by key in SQL, so concurrent merges both land. */
export function userChanges(input: CurrentUserUpdate, current: { organizationId?: string; projectId?: number | null }) {
  const notificationSettings =
    input.notification_settings && jsonObjectWithKeys(users.notificationSettings, input.notification_settings);
  const changes = {
    firstName: input.first_name,
    lastName: input.last_name,
    roleAtOrganization: input.role_at_organization === undefined ? undefined : (input.role_at_organization ?? ""),
    themeMode: input.theme_mode,
    hedgehogConfig: input.hedgehog_config,
    preferences: jsonObjectWithKeys(users.preferences, preferencesSent(input)),
    notificationSettings: notificationSettings && jsonWithinLimit(notificationSettings),
    currentOrganizationId: current.organizationId,
    currentProjectId: current.projectId,
  };
  return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as UserChanges;
}
type UserChanges = Partial<typeof users.$inferInsert>;

const preferencesSent = (input: CurrentUserUpdate) =>
  Object.fromEntries(USER_PREFERENCE_KEYS.filter((key) => input[key] !== undefined).map((key) => [key, input[key]]));
