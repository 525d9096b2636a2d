import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { and, count, desc, eq, isNull, sql } from "drizzle-orm";
import { organizationMemberships, organizations, personalApiKeyBlocks, personalApiKeys, projects } from "../db/schema";
import {
  assertLifetimeWithinPolicy,
  callingKeyLive,
  keyWouldOutliveLifetime,
  reachesOrganization,
  refusalOfGoneKey,
  scopingReaches,
} from "../platform/auth/key-policy";
import { API_KEY_PREFIX } from "../platform/auth/api-keys";
import {
  assertFutureExpiry,
  forgetCachedKey,
  forgetRevokedKey,
  newKeyValues,
  maskedKeyFields,
  rollValues,
  storedTime,
} from "../platform/auth/key-lifecycle";
import { keyRateLimits } from "../platform/auth/rate-limit";
import { currentEnvironmentGuessKey } from "../platform/route-context/current-environment-guess";
import { scopesGrant } from "../platform/auth/scopes";
import type { Actor, AppEnv } from "../platform/env";
import { changedOrGone, conflict, notFound, permissionDenied, validationError } from "../platform/errors";
import { uuid7 } from "../platform/ids";
import {
  inJsonList,
  isNotNullViolationOf,
  refusedWhenNull,
  unchangedSinceRead,
  whileHolds,
  type Database,
} from "../platform/db";
import { projectVisible } from "../platform/access-rules/project-visibility";
import { membershipOfCaller } from "../platform/route-context/project";
import { writeWithActivity } from "../platform/activity-log/resource-activity";
import {
  personalApiKeyActivity,
  personalApiKeyEntries,
  reachSeenBy,
  type ProjectOrganizations,
} from "./personal-api-keys.activity";
import type {
  createKey,
  deleteKey,
  listKeys,
  retrieveCurrentKey,
  retrieveKey,
  rollKey,
  updateKey,
} from "./personal-api-keys.routes";

type KeyRow = typeof personalApiKeys.$inferSelect;

/** As PostHog: a user holds at most this many keys, so that the list is one short array. */
export const MAX_KEYS_PER_USER = 10;

export function toPersonalApiKey(row: KeyRow) {
  return { ...maskedKeyFields(row), user_id: row.userId, scoped_organizations: row.scopedOrganizations };
}

const ownKey = (actor: Actor, id: string) => and(eq(personalApiKeys.id, id), eq(personalApiKeys.userId, actor.userId));

/**
 * The caller's keys its key may be shown: all of them, or, for a key scoped to organizations,
 * those that name no other organization nor another organization's project: their ids would tell
 * the user's other organizations and projects to a key that reaches none of them.
 */
function keysShownTo(actor: Actor) {
  const own = eq(personalApiKeys.userId, actor.userId);
  if (actor.scopedOrganizations.length === 0) return own;
  const within = JSON.stringify(actor.scopedOrganizations);
  return and(
    own,
    sql`not exists (select 1 from json_each(${personalApiKeys.scopedOrganizations})
      where value not in (select value from json_each(${within})))`,
    sql`not exists (select 1 from json_each(${personalApiKeys.scopedTeams}) as team
      join ${projects} on ${projects.id} = team.value
      where ${projects.organizationId} not in (select value from json_each(${within})))`,
  );
}
/**
 * The key's reach and lifetime as read: what `keyAndReach` judged the calling key against. A
 * write over the key holds it, so that a widening meanwhile (by a broader key) is not rolled,
 * changed or revoked by a key that may no longer act on it (409, as a moment later 404).
 */
const reachAsRead = (key: KeyRow) =>
  unchangedSinceRead([
    [personalApiKeys.scopes, key.scopes],
    [personalApiKeys.scopedOrganizations, key.scopedOrganizations],
    [personalApiKeys.scopedTeams, key.scopedTeams],
    [personalApiKeys.expiresAt, key.expiresAt],
  ]);

/** The caller's key `id`, when its key may be shown it (`keysShownTo`). */
const shownKey = (actor: Actor, id: string) => and(eq(personalApiKeys.id, id), keysShownTo(actor));

const ownKeyExists = (actor: Actor, id: string) =>
  sql`exists (select 1 from ${personalApiKeys} where ${ownKey(actor, id)})`;

/**
 * The caller's keys its key may be shown (`keysShownTo`), newest first along the (user,
 * created_at, id) index: at most `MAX_KEYS_PER_USER`.
 */
export const listPersonalApiKeys: RouteHandler<typeof listKeys, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const rows = await db
    .select()
    .from(personalApiKeys)
    .where(keysShownTo(actor))
    .orderBy(desc(personalApiKeys.createdAt), desc(personalApiKeys.id));
  return c.json(rows.map(toPersonalApiKey), 200);
};

export const retrievePersonalApiKey: RouteHandler<typeof retrieveKey, AppEnv> = async (c) => {
  const [row] = await c.var.db
    .select()
    .from(personalApiKeys)
    .where(shownKey(c.var.actor, c.req.valid("param").id));
  if (!row) throw notFound();
  return c.json(toPersonalApiKey(row), 200);
};

export const createPersonalApiKey: RouteHandler<typeof createKey, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const input = c.req.valid("json");
  const scopes = [...new Set(input.scopes)];
  const scopedOrganizations = [...new Set(input.scoped_organizations)];
  const scopedTeams = [...new Set(input.scoped_teams)];
  assertFutureExpiry(input.expires_at);
  const {
    memberOf: reachable,
    lifetimes,
    keyCount,
    projectOrganizations,
  } = await assertCallerBelongs(db, actor, scopedOrganizations, scopedTeams);
  const reach = { organizations: scopedOrganizations, teams: scopedTeams, projectOrganizations };
  assertWithinCallerKey(actor, scopes, reach, storedTime(input.expires_at));
  assertLifetimeWithinPolicy(input.expires_at ?? null, lifetimes);
  if (keyCount >= MAX_KEYS_PER_USER) throw tooManyKeys();

  const key = await newKeyValues(API_KEY_PREFIX, input.expires_at);
  const row: KeyRow = {
    id: uuid7(),
    userId: actor.userId,
    label: input.label,
    scopes,
    scopedOrganizations,
    scopedTeams,
    ...key.columns,
  };
  // The limit again, in the write: of concurrent creates, those past it fail whole.
  const held = keysHeldBy(actor.userId);
  const belowLimit = sql`${held} < ${MAX_KEYS_PER_USER}`;
  await refusedWhenNull(
    writeWithActivity(
      db,
      db.insert(personalApiKeys).values({
        ...row,
        userId: whileHolds(actor.userId, belowLimit),
        label: labelWhileNotBlocked(actor, [row], row.label),
        // The lifetime again, over the memberships when the write runs (a join may land meanwhile).
        maskValue: whileHolds(row.maskValue, sql`not ${keyWouldOutliveLifetime(actor.userId, row)}`),
      }),
      ...personalApiKeyEntries(c, "created", row, reachable, projectOrganizations),
    )
      .catch(refusedWhenBlocked(c))
      .catch(refusedWhenReachGrew),
    tooManyKeys,
  );
  return c.json({ ...toPersonalApiKey(row), value: key.value }, 201);
};

/** The user's keys, counted along the (user, created_at, id) index: `MAX_KEYS_PER_USER` rows at most. */
const keysHeldBy = (userId: number) =>
  sql<number>`(select count(*) from ${personalApiKeys} where ${personalApiKeys.userId} = ${userId})`;

const tooManyKeys = () =>
  validationError(
    "max_keys",
    `You can only have ${MAX_KEYS_PER_USER} personal API keys. Remove an existing key before creating a new one.`,
  );

/** The calling key itself: PostHog's clients read it to learn what they may do, and until when. */
export const retrieveCallingApiKey: RouteHandler<typeof retrieveCurrentKey, AppEnv> = async (c) => {
  const [row] = await c.var.db.select().from(personalApiKeys).where(ownKey(c.var.actor, c.var.actor.keyId));
  if (!row) throw notFound();
  return c.json({ ...toPersonalApiKey(row), owner_kind: "user" as const, rate_limits: keyRateLimits(c.env) }, 200);
};

/**
 * A key never mints, changes, rolls or revokes a key that could do more than itself: scopes are a
 * ceiling, and so are its organizations and its expiry (a value a roll replaced manages no key at
 * all: `managesKeys` on the route). A key scoped to projects never gets here: key routes are
 * organization-level.
 */
export function assertWithinCallerKey(actor: Actor, scopes: string[], reach: KeyReach, expiresAt: string | null) {
  if (actor.keyExpiresAt !== null && (expiresAt === null || expiresAt > actor.keyExpiresAt)) {
    throw permissionDenied("API key cannot grant access beyond its own expiry");
  }
  for (const scope of scopes) {
    if (!scopesGrant(actor.scopes, scope)) {
      throw permissionDenied(`API key cannot grant scope '${scope}' that it does not have itself`);
    }
  }
  const within = actor.scopedOrganizations;
  if (within.length > 0 && !organizationsOf(reach).every((id) => id !== undefined && within.includes(id))) {
    throw outsideScope();
  }
}

const outsideScope = () => permissionDenied("API key cannot grant access to organizations outside its own scope");

/**
 * What a key reaches: its organizations, else the organizations of its projects (`projectOrganizations`,
 * as read). `stored`: the key as it is stored, not as a body names it.
 */
type KeyReach = {
  organizations: string[];
  teams: number[];
  projectOrganizations: ProjectOrganizations;
  stored?: boolean;
};

/** The organizations a key reaches (undefined: a project not read); none named: all (refused to a scoped caller). */
function organizationsOf({ organizations, teams, projectOrganizations, stored }: KeyReach): (string | undefined)[] {
  if (organizations.length > 0) return organizations;
  if (teams.length === 0) return [undefined];
  const found = teams.map((id) => projectOrganizations.get(id));
  // A stored key's project deleted since reaches nothing (project ids are never reused).
  return stored ? found.filter((id) => id !== undefined) : found;
}

/** The organizations whose admins blocked the calling key: read with the key routes' own reads. */
const organizationsBlockingCaller = (db: Database, actor: Actor) =>
  db
    .select({ id: personalApiKeyBlocks.organizationId })
    .from(personalApiKeyBlocks)
    .where(eq(personalApiKeyBlocks.keyId, actor.keyId));

/**
 * A key an admin blocked in an organization makes, changes, rolls or revokes no key whose scoping
 * reaches it, even while its user is no longer a member (a key made then would reach it once they
 * are invited back): otherwise whoever holds a leaked key would undo the block with a new key, or
 * take another key's value.
 */
function assertNotBlockedIn(blocking: { id: string }[], reaches: (organizationId: string) => boolean) {
  if (blocking.some(({ id }) => reaches(id))) throw blockedIn();
}

const blockedIn = () =>
  permissionDenied("API key cannot act on keys that reach an organization whose admins revoked its access");

/** What a key's scoping names: the reach `scopingReaches` and `reachesOrganization` read. */
type Scoping = { scopedOrganizations: string[]; scopedTeams: number[] };

/**
 * A key's label as a write sets it (`label`, else the one it has), only while the calling key still
 * holds its value (`callingKeyLive`) and is blocked in no organization the keys `scopings` reach
 * when the write runs: `assertNotBlockedIn` judged the read, and a block landing meanwhile (in an
 * organization its user joined meanwhile, too) must stop the write too. Else NULL, which the
 * column refuses (`refusedWhenBlocked`).
 */
function labelWhileNotBlocked(actor: Actor, scopings: Scoping[], label?: string) {
  const holds = and(callingKeyLive(actor), notBlockedIn(actor, scopings))!;
  return whileHolds(label ?? sql<string>`${personalApiKeys.label}`, holds);
}

/** The calling key is blocked in no organization a key of `scopings` reaches when the statement runs. */
const notBlockedIn = (actor: Actor, scopings: Scoping[]) => {
  const reached = scopings.map((scoping) =>
    reachesOrganization(
      {
        scopedOrganizations: JSON.stringify(scoping.scopedOrganizations),
        scopedTeams: JSON.stringify(scoping.scopedTeams),
      },
      personalApiKeyBlocks.organizationId,
    ),
  );
  return sql<boolean>`not exists (select 1 from ${personalApiKeyBlocks}
    where ${personalApiKeyBlocks.keyId} = ${actor.keyId} and (${sql.join(reached, sql` or `)}))`;
};

/** A write `labelWhileNotBlocked` refused: 401 when the calling key lost its value meanwhile, else 403. */
const refusedWhenBlocked =
  (c: Context<AppEnv>) =>
  async (error: unknown): Promise<never> => {
    if (!isNotNullViolationOf(error, personalApiKeys.label)) throw error;
    throw (await refusalOfGoneKey(c.var.db, c.var.actor)) ?? blockedIn();
  };

/** A new key refused because its owner joined an organization meanwhile whose lifetime limit it outlives. */
async function refusedWhenReachGrew(error: unknown): Promise<never> {
  throw isNotNullViolationOf(error, personalApiKeys.maskValue)
    ? conflict("The organizations you belong to changed meanwhile (one limits key lifetimes). Try again.")
    : error;
}

/**
 * Only organizations the caller belongs to and projects the caller can see: a private project
 * the caller cannot see answers exactly like an id that does not exist, so ids cannot be probed.
 * `sent` says which lists a request sent: a stored one may name an organization or a project
 * deleted since, which reaches nothing and is skipped; every other it names is checked as a sent
 * one is. Returns the organizations the key reaches (its projects', else its own, else all the
 * caller's), whose activity logs record it, the lifetimes it is held to, and how many keys the caller holds.
 */
async function assertCallerBelongs(
  db: Database,
  actor: Actor,
  namedOrganizations: string[],
  teams: number[],
  sent = { organizations: true, teams: true },
) {
  // A key scoped to organizations learns nothing of the others: an organization outside them, or
  // no scoping at all, is refused before anything is read, and a project is found only within them.
  const within = actor.scopedOrganizations;
  const unscoped = namedOrganizations.length === 0 && teams.length === 0;
  if (within.length > 0 && (unscoped || namedOrganizations.some((id) => !within.includes(id)))) throw outsideScope();
  // No id named: a constant false, which SQLite answers without reading a row (an empty JSON
  // list would walk every row the caller can see).
  const [memberOf, existingOrganizations, visibleTeams, existingTeams, [holder], blocking] = await db.batch([
    db
      .select({ id: organizationMemberships.organizationId, lifetime: lifetimeOfOrganization })
      .from(organizationMemberships)
      .where(
        and(
          eq(organizationMemberships.userId, actor.userId),
          namedOrganizations.length > 0
            ? inJsonList(organizationMemberships.organizationId, namedOrganizations)
            : undefined,
        ),
      ),
    db
      .select({ id: organizations.id })
      .from(organizations)
      .where(
        namedOrganizations.length > 0
          ? and(inJsonList(organizations.id, namedOrganizations), isNull(organizations.deletionScheduledAt))
          : sql`0`,
      ),
    db
      .select({ id: projects.id, organizationId: projects.organizationId })
      .from(projects)
      .innerJoin(organizationMemberships, membershipOfCaller(actor.userId))
      .where(
        teams.length > 0
          ? and(
              projectVisible,
              inJsonList(projects.id, teams),
              within.length > 0 ? inJsonList(projects.organizationId, within) : undefined,
            )
          : sql`0`,
      ),
    db
      .select({ organizationId: projects.organizationId })
      .from(projects)
      .where(teams.length > 0 ? and(inJsonList(projects.id, teams), isNull(projects.deletionScheduledAt)) : sql`0`),
    db.select({ keyCount: count() }).from(personalApiKeys).where(eq(personalApiKeys.userId, actor.userId)),
    organizationsBlockingCaller(db, actor),
  ]);
  const organizationsToBelong = sent.organizations ? namedOrganizations.length : existingOrganizations.length;
  if (namedOrganizations.length > 0 && memberOf.length !== organizationsToBelong) {
    throw validationError(
      "invalid_input",
      "You must be a member of all organizations that you are scoping the key to.",
      "scoped_organizations",
    );
  }
  if (visibleTeams.length !== (sent.teams ? teams.length : existingTeams.length)) {
    // To a key scoped to organizations, a project outside them is answered as one not found: 403 alike.
    if (within.length > 0) throw outsideScope();
    throw validationError(
      "invalid_input",
      "You must be a member of all projects that you are scoping the key to.",
      "scoped_teams",
    );
  }
  const reaches = scopingReaches(
    namedOrganizations,
    teams.length === 0 ? null : existingTeams.map(({ organizationId }) => organizationId),
  );
  const reached = memberOf.filter(({ id }) => reaches(id));
  assertNotBlockedIn(blocking, reaches);
  return {
    memberOf: reached.map(({ id }) => id),
    lifetimes: reached.map(({ lifetime }) => lifetime),
    keyCount: holder?.keyCount ?? 0,
    projectOrganizations: organizationsOfProjects(visibleTeams),
  };
}

const organizationsOfProjects = (rows: { id: number; organizationId: string }[]): ProjectOrganizations =>
  new Map(rows.map(({ id, organizationId }) => [id, organizationId]));

/** A membership's organization's `api_key_max_lifetime_days`, read by its primary key. */
const lifetimeOfOrganization = sql<number | null>`(select ${organizations.apiKeyMaxLifetimeDays} from ${organizations}
  where ${organizations.id} = ${organizationMemberships.organizationId})`;

/**
 * One of the caller's keys its key may be shown (`keysShownTo`: else 404, as retrieving it), and
 * the organizations whose activity logs record a change to it: those it reaches (`scopingReaches`)
 * that the owner still belongs to. The calling key acts only on keys that do no more than
 * itself (it would otherwise take a broader key's value by rolling it) and that reach no
 * organization whose admins blocked it (unless `evenIfBlocked`: a key revoking itself).
 */
async function keyAndReach(db: Database, actor: Actor, id: string, { evenIfBlocked = false } = {}) {
  const [[key], memberships, blocking, projectsNamed] = await db.batch([
    db.select().from(personalApiKeys).where(shownKey(actor, id)),
    db
      .select({ id: organizationMemberships.organizationId, lifetime: lifetimeOfOrganization })
      .from(organizationMemberships)
      .where(eq(organizationMemberships.userId, actor.userId)),
    organizationsBlockingCaller(db, actor),
    db
      .select({
        id: projects.id,
        organizationId: projects.organizationId,
        live: sql<boolean>`${projects.deletionScheduledAt} is null`.mapWith(Boolean),
      })
      .from(projects)
      .where(
        sql`${projects.id} in (select value from json_each((select ${personalApiKeys.scopedTeams}
          from ${personalApiKeys} where ${shownKey(actor, id)})))`,
      ),
  ]);
  if (!key) throw notFound();
  const reach = {
    organizations: key.scopedOrganizations,
    teams: key.scopedTeams,
    projectOrganizations: organizationsOfProjects(projectsNamed),
    stored: true,
  };
  assertWithinCallerKey(actor, key.scopes, reach, key.expiresAt);
  // A project marked for deletion is reached no more (as the routes and the `api_keys` list read it).
  const liveProjectOrganizations = projectsNamed.filter(({ live }) => live).map(({ organizationId }) => organizationId);
  const reaches = scopingReaches(
    key.scopedOrganizations,
    key.scopedTeams.length === 0 ? null : liveProjectOrganizations,
  );
  const reached = memberships.filter(({ id }) => reaches(id));
  if (!evenIfBlocked) assertNotBlockedIn(blocking, reaches);
  return {
    key,
    reachable: reached.map(({ id }) => id),
    lifetimes: reached.map(({ lifetime }) => lifetime),
    projectOrganizations: reach.projectOrganizations,
  };
}

/** The key's fields an update compares, by their API names. */
const trackedFields = (key: KeyRow) => ({
  label: key.label,
  scopes: key.scopes,
  scoped_organizations: key.scopedOrganizations,
  scoped_teams: key.scopedTeams,
  expires_at: key.expiresAt,
});

/**
 * Changes what the key may do, never beyond its owner's reach (400 with `attr`, as at creation)
 * nor beyond the calling key (403). The update is guarded on the key's value, so that a roll
 * meanwhile answers 409 rather than leaving a stale cache entry behind.
 */
export const updatePersonalApiKey: RouteHandler<typeof updateKey, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const id = c.req.valid("param").id;
  const input = c.req.valid("json");
  assertFutureExpiry(input.expires_at);
  const { key, reachable: reachedBefore, projectOrganizations: namedBefore } = await keyAndReach(db, actor, id);
  const scopes = input.scopes ? [...new Set(input.scopes)] : key.scopes;
  const scopedOrganizations = input.scoped_organizations
    ? [...new Set(input.scoped_organizations)]
    : key.scopedOrganizations;
  const scopedTeams = input.scoped_teams ? [...new Set(input.scoped_teams)] : key.scopedTeams;
  const expiresAt = input.expires_at === undefined ? key.expiresAt : storedTime(input.expires_at);
  const {
    memberOf: reachedAfter,
    lifetimes,
    projectOrganizations: namedAfter,
  } = await assertCallerBelongs(db, actor, scopedOrganizations, scopedTeams, {
    organizations: input.scoped_organizations !== undefined,
    teams: input.scoped_teams !== undefined,
  });
  // Projects the body names, as the caller sees them; else the key's own, as stored (marked for deletion too).
  const reach =
    input.scoped_teams === undefined
      ? { organizations: scopedOrganizations, teams: scopedTeams, projectOrganizations: namedBefore, stored: true }
      : { organizations: scopedOrganizations, teams: scopedTeams, projectOrganizations: namedAfter };
  assertWithinCallerKey(actor, scopes, reach, expiresAt);
  const projectOrganizations = new Map([...namedBefore, ...namedAfter]);
  // Each organization the key reached before or reaches now learns of the change.
  const reachable = [...new Set([...reachedBefore, ...reachedAfter])];

  const after: KeyRow = {
    ...key,
    label: input.label ?? key.label,
    scopes,
    scopedOrganizations,
    scopedTeams,
    expiresAt,
  };
  // A new expiry or a new reach is held to the policy; a label or scopes change alone is not.
  const heldToLifetime =
    input.expires_at !== undefined || input.scoped_organizations !== undefined || input.scoped_teams !== undefined;
  if (heldToLifetime) assertLifetimeWithinPolicy(after.expiresAt, lifetimes);
  const before = trackedFields(key);
  const [updated] = await writeWithActivity(
    db,
    db
      .update(personalApiKeys)
      .set({
        label: labelWhileNotBlocked(actor, [key, after], after.label),
        scopes,
        scopedOrganizations,
        scopedTeams,
        expiresAt: after.expiresAt,
      })
      // Only over the key as read (its value, and every field the checks above were judged on): a
      // change landing meanwhile (a narrowing, a roll) is not undone but answered 409.
      .where(
        and(
          ownKey(actor, id),
          unchangedSinceRead([
            [personalApiKeys.secureValue, key.secureValue],
            [personalApiKeys.label, key.label],
          ]),
          reachAsRead(key),
          // And within the lifetime limits of the memberships when it runs (a join may land meanwhile).
          heldToLifetime ? sql`not ${keyWouldOutliveLifetime(actor.userId, after)}` : undefined,
        ),
      )
      .returning({ id: personalApiKeys.id }),
    ...reachable.map((organizationId) =>
      personalApiKeyActivity.changed(
        c,
        "updated",
        { organizationId, itemId: key.id, name: after.label },
        reachSeenBy(organizationId, before, projectOrganizations),
        reachSeenBy(organizationId, trackedFields(after), projectOrganizations),
      ),
    ),
  ).catch(refusedWhenBlocked(c));
  if (!updated) throw await changedOrGone(db, ownKeyExists(actor, id), "key");
  await forgetCachedKey(c.env, key);
  return c.json(toPersonalApiKey(after), 200);
};

/**
 * A new value, returned once. The value it replaces works `overlap_seconds` more (0: stops at
 * once); a value replaced by an earlier roll stops now. Every cached copy is deleted, so that
 * each edge reads the key's new state from D1.
 */
export const rollPersonalApiKey: RouteHandler<typeof rollKey, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const id = c.req.valid("param").id;
  const overlapSeconds = c.req.valid("json").overlap_seconds;
  const { key, reachable, lifetimes } = await keyAndReach(db, actor, id);
  assertLifetimeWithinPolicy(key.expiresAt, lifetimes);
  const { value, changes, context } = await rollValues(key, overlapSeconds, API_KEY_PREFIX);
  const after: KeyRow = { ...key, ...changes };
  const [rolled] = await writeWithActivity(
    db,
    db
      .update(personalApiKeys)
      .set({ ...changes, label: labelWhileNotBlocked(actor, [key]) })
      .where(
        and(
          ownKey(actor, id),
          eq(personalApiKeys.secureValue, key.secureValue),
          reachAsRead(key),
          // And within the lifetime limits of the organizations it reaches when it runs (one set meanwhile).
          sql`not ${keyWouldOutliveLifetime(actor.userId, key)}`,
        ),
      )
      .returning({ id: personalApiKeys.id }),
    ...reachable.map((organizationId) =>
      personalApiKeyActivity.record(c, "rolled", { organizationId, itemId: key.id, name: key.label, context }),
    ),
  ).catch(refusedWhenBlocked(c));
  if (!rolled) throw await changedOrGone(db, ownKeyExists(actor, id), "key");
  await forgetCachedKey(c.env, key);
  return c.json({ ...toPersonalApiKey(after), value }, 200);
};

/**
 * The key and the caller's organizations are read first (its entries name its label and go into
 * each organization it reached); the delete and its entries are then one atomic batch.
 */
export const deletePersonalApiKey: RouteHandler<typeof deleteKey, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const id = c.req.valid("param").id;
  // A key may always revoke itself, blocked or not: that gives no one anything, and a user whose
  // only key was blocked could otherwise never end it.
  const itself = id === actor.keyId;
  const { key, reachable, projectOrganizations } = await keyAndReach(db, actor, id, { evenIfBlocked: itself });
  // Only while the calling key is blocked in none of them, as judged: a block meanwhile refuses it too.
  const notBlocked = itself ? sql`1` : notBlockedIn(actor, [key]);
  const [deleted] = await writeWithActivity(
    db,
    db
      .delete(personalApiKeys)
      .where(and(ownKey(actor, id), notBlocked, reachAsRead(key)))
      .returning({
        secureValue: personalApiKeys.secureValue,
        previousSecureValue: personalApiKeys.previousSecureValue,
      }),
    ...personalApiKeyEntries(c, "revoked", key, reachable, projectOrganizations),
  );
  if (!deleted) {
    const row = await db.get<{ notBlocked: number }>(sql`select ${notBlocked} as "notBlocked"`);
    throw row?.notBlocked ? await changedOrGone(db, ownKeyExists(actor, id), "key") : blockedIn();
  }
  await forgetRevokedKey(c.env, deleted, currentEnvironmentGuessKey(key.id));
  return c.body(null, 204);
};
