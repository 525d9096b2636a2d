import { and, asc, eq, getTableName, isNull, sql, type SQL } from "drizzle-orm";
import { QueryBuilder, type SQLiteColumn } from "drizzle-orm/sqlite-core";
import { organizationMemberships, organizations, projects, users } from "../../db/schema";
import { assertOrganizationInKeyScope } from "../auth/key-scoping";
import { inJsonList, isNotNullViolationOf, type Database } from "../db";
import type { Context } from "hono";
import type { Actor, AppEnv } from "../env";
import { insufficientLevel, notFound, permissionDenied } from "../errors";
import { prepared } from "../prepared";
import { assertKeyPolicyAllows, KEY_BLOCKED, keyBlockedIn, refusalOfGoneKey, type KeyPolicy } from "../auth/key-policy";
import { MembershipLevel } from "../levels";

export const CURRENT = "@current";

/** Builds statements that need no database: subqueries of others. */
const standalone = new QueryBuilder();

/** The organization's id for statements batched with the membership: `@current` is a subquery. */
export type OrganizationRef = string | SQL<string>;

/**
 * The caller's memberships as a table to select from or join, named as the table: a person's rows,
 * or, for a service key, one row of its own: admin of its organization (never owner), with no
 * membership id (no access rule names it) and the user id `Actor` gives it, which no user has,
 * while its organization is not being deleted (a person's memberships go with the DELETE; a
 * service key may be cached elsewhere, or made by a request racing it). Every statement that
 * reads the caller's membership reads it from here, so that a service key is the same admin on
 * every route that admits it.
 */
export function membershipsOf(actor: Actor) {
  if (actor.kind === "user") return organizationMemberships;
  return standalone
    .select({
      id: sql<string>`''`.as("id"),
      organizationId: sql<string>`${actor.organizationId}`.as("organization_id"),
      userId: sql<number>`${actor.userId}`.as("user_id"),
      level: sql<number>`${MembershipLevel.admin}`.as("level"),
    })
    .from(sql`(select 1)`)
    .where(
      sql`exists (select 1 from ${organizations} where ${organizations.id} = ${actor.organizationId}
        and ${organizations.deletionScheduledAt} is null)`,
    )
    .as(getTableName(organizationMemberships));
}

/** The caller's membership of the organization, as subqueries read once by the statement using them. */
export function callerInOrganization(actor: Actor, organizationId: OrganizationRef) {
  const ofCaller = and(
    eq(organizationMemberships.organizationId, organizationId),
    eq(organizationMemberships.userId, actor.userId),
  );
  const memberships = membershipsOf(actor);
  return {
    membershipId: sql<string>`(select ${organizationMemberships.id} from ${memberships} where ${ofCaller})`,
    level: sql<number>`(select ${organizationMemberships.level} from ${memberships} where ${ofCaller})`,
  };
}

/**
 * Whether the caller is an admin of the organization when the statement runs, not only when the
 * request was admitted: a write guarded on it cannot be made by someone demoted at the same moment.
 */
export const callerStillAdmin = (actor: Actor, organizationId: OrganizationRef) =>
  callerStillAtLeast(actor, organizationId, MembershipLevel.admin);

/**
 * Why a write held to the caller's level (`callerStillAtLeast`) was refused, for `refusedWhenNull`:
 * 404 once they are no longer a member (removed, or the organization deleted, meanwhile), as a
 * moment later; else 403. Read only on that path.
 */
export const levelLost = (c: Context<AppEnv>) => async () =>
  (await levelRefusal(c, MembershipLevel.member)) ?? insufficientLevel();

/**
 * Why a write held to the caller's level and to their key (`callingKeyLive`, a replaced value
 * within its overlap) was refused: 401 for a key no longer theirs, else `levelLost`'s 404 or 403.
 */
export const keyGoneOrLevelLost = (c: Context<AppEnv>) => async () =>
  (await refusalOfGoneKey(c.var.db, c.var.actor, { orReplaced: true })) ?? (await levelLost(c)());

/** A write held to the caller's level that a NOT NULL `column` refused (`whileHolds`): `levelLost`'s 404 or 403. */
export const refusedWhenLevelLost =
  (c: Context<AppEnv>, column: SQLiteColumn) =>
  async (error: unknown): Promise<never> => {
    throw isNotNullViolationOf(error, column) ? await levelLost(c)() : error;
  };

/**
 * Why the caller no longer holds `level` in the path's organization: 404 once no member, 403 for a
 * key an admin blocked there meanwhile or a lower level; undefined while they still hold it.
 */
export async function levelRefusal(c: Context<AppEnv>, level: number) {
  const { db, actor, organization } = c.var;
  // A raw select: drizzle's builder would strip the subquery's column qualifiers with one table.
  const row = await db.get<{ level: number | null; blocked: number }>(
    sql`select ${callerInOrganization(actor, organization.id).level} as "level",
      ${keyBlockedIn(actor, sql`${organization.id}`).getSQL()} as "blocked"`,
  );
  if (row?.level === null || row?.level === undefined) return notFound();
  if (row.blocked) return permissionDenied(KEY_BLOCKED);
  return row.level < level ? insufficientLevel() : undefined;
}

/**
 * The caller still holds at least `level` (the one a write's rules were judged on), as SQL; and a
 * personal key is not blocked there meanwhile, which would end its access to the organization.
 */
export const callerStillAtLeast = (actor: Actor, organizationId: OrganizationRef, level: number) =>
  sql<boolean>`(coalesce(${callerInOrganization(actor, organizationId).level} >= ${level}, 0)
    and not ${keyBlockedIn(actor, sql`${organizationId}`).getSQL()})`;

/**
 * An organization route's checks in two halves: what is checked before any query, and what the
 * membership found must satisfy. Retrieving an organization, which reads the membership with its
 * data, calls them itself.
 */
export function requestedOrganization(requested: string | undefined, actor: Actor): string {
  // A path naming none (`POST /api/projects`, as PostHog's web app creates a project) is about
  // the caller's current organization.
  if (requested === undefined) return CURRENT;
  if (requested !== CURRENT) assertOrganizationInKeyScope(actor, requested);
  return requested;
}

/** The membership found, admitted by the organization's key policy (`auth/key-policy.ts`), else 404. */
export function admitMember<T extends Omit<KeyPolicy, "organizationLevel"> & { level: number }>(
  actor: Actor,
  membership: T | undefined,
): T {
  if (!membership) throw notFound();
  assertKeyPolicyAllows(actor, { ...membership, organizationLevel: membership.level });
  return membership;
}

/** What `assertKeyPolicyAllows` reads of an organization, beside the caller's membership of it. */
export const keyPolicyOf = (actor: Actor) => ({
  membersCanUsePersonalApiKeys: organizations.membersCanUsePersonalApiKeys,
  personalApiKeyMaxScopes: organizations.personalApiKeyMaxScopes,
  keyBlocked: keyBlockedIn(actor, organizations.id),
});

/** An organization with the caller's membership: select it from memberships joined to organizations. */
const organizationWithMembership = (actor: Actor) => ({
  ...keyPolicyOf(actor),
  id: organizations.id,
  name: organizations.name,
  createdAt: organizations.createdAt,
  updatedAt: organizations.updatedAt,
  membershipId: organizationMemberships.id,
  level: organizationMemberships.level,
  membersCanInvite: organizations.membersCanInvite,
  logoMediaId: organizations.logoMediaId,
  isMemberJoinEmailEnabled: organizations.isMemberJoinEmailEnabled,
  enforce2fa: organizations.enforce2fa,
  allowPubliclySharedResources: organizations.allowPubliclySharedResources,
  activityLogRetentionDays: organizations.activityLogRetentionDays,
  shareLinkMaxLifetimeDays: organizations.shareLinkMaxLifetimeDays,
  apiKeyMaxLifetimeDays: organizations.apiKeyMaxLifetimeDays,
  version: organizations.version,
});

/** The caller's memberships (of `requested`, or any for `@current`) within the key's scope. */
export function callerMemberships(actor: Actor, requested: string): SQL | undefined {
  if (requested !== CURRENT)
    return and(eq(organizationMemberships.userId, actor.userId), eq(organizations.id, requested));
  return callerMembershipsInScope(actor);
}

/**
 * All the caller's memberships within the key's scope, as a condition on memberships alone (their
 * user index): a key scoped to organizations reaches those, and one scoped to projects reaches
 * their organizations alone.
 */
export function callerMembershipsInScope(actor: Actor): SQL | undefined {
  return and(
    eq(organizationMemberships.userId, actor.userId),
    actor.scopedOrganizations.length > 0
      ? inJsonList(organizationMemberships.organizationId, actor.scopedOrganizations)
      : undefined,
    actor.scopedTeams.length > 0
      ? sql`${organizationMemberships.organizationId} in (select ${projects.organizationId} from ${projects}
          where ${inJsonList(projects.id, actor.scopedTeams)})`
      : undefined,
  );
}

/**
 * The id of the organization `requested` names (`@current` included) if the caller is a member,
 * as a subquery other queries of the same round trip can use. `@current` is the organization the
 * user chose (PATCH `/api/users/@me`), else the first in creation order; a choice outside the
 * key's scope, or one the user has left, is not among their memberships, so the first one in
 * scope is picked. Organization ids are UUIDv7 (time first): creation order is id order, which
 * the user's (user, organization) index holds, so either pick reads an entry or two of it.
 */
export function callerOrganizationId(db: Database, actor: Actor, requested: string) {
  if (actor.kind === "service") {
    return db.select({ id: organizations.id }).from(organizations).where(serviceKeyOrganization(actor, requested));
  }
  const ofCaller = (organizationId?: SQL | string) =>
    db
      .select({ id: organizationMemberships.organizationId })
      .from(organizationMemberships)
      .where(
        and(
          callerMembershipsInScope(actor),
          organizationId === undefined ? undefined : eq(organizationMemberships.organizationId, organizationId),
        ),
      )
      .orderBy(asc(organizationMemberships.organizationId))
      .limit(1);
  if (requested !== CURRENT) return ofCaller(requested);
  const chosen = sql`(select ${users.currentOrganizationId} from ${users} where ${users.id} = ${actor.userId})`;
  return db.select({ id: sql<string>`coalesce((${ofCaller(chosen)}), (${ofCaller()}))` }).from(sql`(select 1)`);
}

/** The organization `requested` names, for statements batched with the membership: `@current` is a subquery. */
export const organizationRef = (db: Database, actor: Actor, requested: string): OrganizationRef =>
  requested === CURRENT ? sql<string>`(${callerOrganizationId(db, actor, CURRENT)})` : requested;

/** The caller's membership of the organization `requested` names (`@current` included), joined to it. */
export function callerMembershipOf(db: Database, actor: Actor, requested: string): SQL | undefined {
  if (requested !== CURRENT) return callerMemberships(actor, requested);
  return and(
    eq(organizationMemberships.userId, actor.userId),
    eq(organizationMemberships.organizationId, sql`(${callerOrganizationId(db, actor, CURRENT)})`),
  );
}

/**
 * A service key's organization, if `requested` names it (`@current` always does): a service key
 * reaches its own organization alone, and any other answers as one it is not a member of (404).
 * Nor one being deleted: the key went with its DELETE, but another location may have it cached.
 */
const serviceKeyOrganization = (actor: Actor, requested: string) =>
  and(
    eq(organizations.id, actor.organizationId ?? ""),
    isNull(organizations.deletionScheduledAt),
    requested === CURRENT ? undefined : eq(organizations.id, requested),
  );

/**
 * A service key's "membership": admin of its own organization (never owner), with no membership
 * row (`membershipId` empty: no access rule names it).
 */
const serviceKeyMembership = (actor: Actor) => ({
  ...organizationWithMembership(actor),
  membershipId: sql<string>`''`,
  level: sql<number>`${MembershipLevel.admin}`,
});

export const selectMembership = prepared((db: Database, actor: Actor, requested: string) => {
  if (actor.kind === "service") {
    return db.select(serviceKeyMembership(actor)).from(organizations).where(serviceKeyOrganization(actor, requested));
  }
  return (
    db
      .select(organizationWithMembership(actor))
      .from(organizationMemberships)
      .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
      // A membership a request racing the organization's DELETE added opens nothing.
      .where(and(callerMembershipOf(db, actor, requested), isNull(organizations.deletionScheduledAt)))
  );
});
