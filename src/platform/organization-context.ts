import { z } from "@hono/zod-openapi";
import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { organizationMemberships, organizations, users } from "../db/schema";
import { assertOrganizationInKeyScope } from "./auth/key-scoping";
import { assertMinimumLevel, deferContext, resolverWith } from "./deferred-context";
import type { Actor, AppEnv, OrganizationContext } from "./env";
import { notFound, permissionDenied } from "./errors";
import { isAdmin } from "./levels";
import { inJsonList, type Database, type ReadBatch } from "./db";
import { peekJsonBody } from "./request-body";

export const CURRENT = "@current";

/** The path parameter `resolveOrganization` reads, for every organization route's schema. */
export const OrganizationParams = z.object({
  organization_id: z.string().openapi({ description: "Organization id, or `@current`." }),
});

/**
 * Resolves `:organization_id` (or `@current`: the caller's chosen organization, else the first in
 * creation order, within the key's scope) and the caller's membership of it in one query. A
 * non-member gets 404, so that organization ids do not leak.
 */
export const resolveOrganization = createMiddleware<AppEnv>(async (c, next) => {
  const requested = requestedOrganization(c.req.param("organization_id"), c.var.actor);
  c.set("organization", admitMember(await findMembership(c.var.db, c.var.actor, requested)));
  await next();
});

/**
 * For a read: the key's scope is checked now, with no query; the handler then reads through
 * `organizationRead`, which sends the membership lookup in the same round trip as its data.
 */
export const deferOrganization = createMiddleware<AppEnv>(async (c, next) => {
  requestedOrganization(c.req.param("organization_id"), c.var.actor);
  await deferContext(c, next, "organization");
});

/** The organization's id for statements batched with the membership: `@current` is a subquery. */
export type OrganizationRef = string | SQL<string>;

type Statement = BatchItem<"sqlite">;

/** A read of a `deferOrganization` route: its statements and the membership, in one round trip. */
export type OrganizationRead = {
  db: Database;
  organizationId: OrganizationRef;
  /**
   * Runs the statements with the caller's membership and admits it (404, 403) before any result
   * is returned. The statements run before access is known: they must only read.
   */
  batch: ReadBatch;
};

/** `db`: another session of the database than the request's (the primary, say). */
export function organizationRead(c: Context<AppEnv>, db: Database = c.var.db): OrganizationRead {
  const { actor } = c.var;
  const requested = requestedOrganization(c.req.param("organization_id"), actor);
  return {
    db,
    organizationId: requested === CURRENT ? sql<string>`(${callerOrganizationId(db, actor, CURRENT)})` : requested,
    async batch<T extends [Statement, ...Statement[]]>(statements: T) {
      const [memberships, ...results] = await db.batch([selectMembership(db, actor, requested), ...statements]);
      const organization = admitMember((memberships as OrganizationContext[])[0]);
      assertMinimumLevel(c, organization.level);
      c.set("organization", organization);
      return results as BatchResponse<T>;
    },
  };
}

/** The caller's membership of the organization, as subqueries read once by the statement using them. */
export function callerInOrganization(userId: number, organizationId: OrganizationRef) {
  const ofCaller = and(
    eq(organizationMemberships.organizationId, organizationId),
    eq(organizationMemberships.userId, userId),
  );
  return {
    membershipId: sql<string>`(select ${organizationMemberships.id} from ${organizationMemberships} where ${ofCaller})`,
    level: sql<number>`(select ${organizationMemberships.level} from ${organizationMemberships} where ${ofCaller})`,
  };
}

/**
 * `resolveOrganization` for a write whose handler first reads what its path names (the row it
 * changes): those reads go in the resolver's round trip, so the write is the second and last.
 * The organization is resolved before the body is read, as every write's is.
 */
export const resolveOrganizationWith = <T extends [Statement, ...Statement[]]>(
  reads: (read: OrganizationRead, c: Context<AppEnv>) => T,
) =>
  resolverWith((c) => {
    const read = organizationRead(c);
    return read.batch(reads(read, c));
  });

/** `resolveProjectWithBody` for an organization: reads that depend on the body, with the membership. */
export const resolveOrganizationWithBody = <S extends z.ZodType, T extends [Statement, ...Statement[]]>(
  schema: S,
  reads: (read: OrganizationRead, c: Context<AppEnv>, body: z.output<S> | undefined) => T,
) =>
  resolverWith(async (c) => {
    const body = await peekJsonBody(c, schema);
    const read = organizationRead(c);
    return { body, results: await read.batch(reads(read, c, body)) };
  });

/**
 * `resolveOrganization` in two halves, for a read that fetches the membership in the same round
 * trip as its data (retrieving the organization): what is checked before any query, and what
 * the membership found must satisfy. Every organization route goes through both.
 */
export function requestedOrganization(requested: string | undefined, actor: Actor): string {
  if (requested === undefined) throw new Error("an organization route needs :organization_id");
  if (requested !== CURRENT) assertOrganizationInKeyScope(actor, requested);
  return requested;
}

export function admitMember<T extends { membersCanUsePersonalApiKeys: boolean; level: number }>(
  membership: T | undefined,
): T {
  if (!membership) throw notFound();
  assertPersonalApiKeysAllowed({
    membersCanUsePersonalApiKeys: membership.membersCanUsePersonalApiKeys,
    organizationLevel: membership.level,
  });
  return membership;
}

/**
 * The organization setting `members_can_use_personal_api_keys: false`: every request here comes
 * with a personal API key, so a plain member's requests on the organization are refused.
 */
export function assertPersonalApiKeysAllowed(membership: {
  membersCanUsePersonalApiKeys: boolean;
  organizationLevel: number;
}) {
  // The organization level: a project rule that makes a member that project's admin does not lift it.
  if (!membership.membersCanUsePersonalApiKeys && !isAdmin(membership.organizationLevel)) {
    throw permissionDenied("Your organization does not allow members using personal API keys.");
  }
}

/** An organization with the caller's membership: select it from memberships joined to organizations. */
const organizationWithMembership = {
  id: organizations.id,
  name: organizations.name,
  createdAt: organizations.createdAt,
  updatedAt: organizations.updatedAt,
  membershipId: organizationMemberships.id,
  level: organizationMemberships.level,
  membersCanInvite: organizations.membersCanInvite,
  membersCanUsePersonalApiKeys: organizations.membersCanUsePersonalApiKeys,
  logoMediaId: organizations.logoMediaId,
  isMemberJoinEmailEnabled: organizations.isMemberJoinEmailEnabled,
  enforce2fa: organizations.enforce2fa,
  allowPubliclySharedResources: organizations.allowPubliclySharedResources,
  activityLogRetentionDays: organizations.activityLogRetentionDays,
  shareLinkMaxLifetimeDays: organizations.shareLinkMaxLifetimeDays,
};

/** The caller's memberships (of `requested`, or any for `@current`) within the key's scope. */
export function callerMemberships(actor: Actor, requested: string): SQL | undefined {
  const conditions: (SQL | undefined)[] = [eq(organizationMemberships.userId, actor.userId)];
  if (requested !== CURRENT) conditions.push(eq(organizations.id, requested));
  else if (actor.scopedOrganizations.length > 0)
    conditions.push(inJsonList(organizations.id, actor.scopedOrganizations));
  return and(...conditions);
}

/** All the caller's memberships within the key's scope, as a condition on memberships alone (their user index). */
export function callerMembershipsInScope(actor: Actor): SQL | undefined {
  return and(
    eq(organizationMemberships.userId, actor.userId),
    actor.scopedOrganizations.length > 0
      ? inJsonList(organizationMemberships.organizationId, actor.scopedOrganizations)
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

/** The caller's membership of the organization `requested` names (`@current` included), joined to it. */
export function callerMembershipOf(db: Database, actor: Actor, requested: string): SQL | undefined {
  if (requested !== CURRENT) return callerMemberships(actor, requested);
  return and(
    eq(organizationMemberships.userId, actor.userId),
    eq(organizationMemberships.organizationId, sql`(${callerOrganizationId(db, actor, CURRENT)})`),
  );
}

function selectMembership(db: Database, actor: Actor, requested: string) {
  return db
    .select(organizationWithMembership)
    .from(organizationMemberships)
    .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
    .where(callerMembershipOf(db, actor, requested));
}

async function findMembership(db: Database, actor: Actor, requested: string): Promise<OrganizationContext | undefined> {
  const [row] = await selectMembership(db, actor, requested);
  return row;
}
