import type { RouteHandler } from "@hono/zod-openapi";
import { and, count, desc, eq, isNull, sql } from "drizzle-orm";
import type { Context } from "hono";
import { organizations, projects, serviceApiKeys } from "../db/schema";
import { assertWithinCallerKey } from "../personal-api-keys/personal-api-keys.handlers";
import { fieldsAfterPatch, writeWithActivity } from "../platform/activity-log/resource-activity";
import { SERVICE_KEY_PREFIX } from "../platform/auth/api-keys";
import {
  assertLifetimeWithinPolicy,
  assertServiceKeyWithinCeiling,
  callingKeyLive,
  refusalOfGoneKey,
} from "../platform/auth/key-policy";
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
import {
  inJsonList,
  isNotNullViolationOf,
  refusedWhenNull,
  unchangedSinceRead,
  whileHolds,
  type Database,
} from "../platform/db";
import type { AppEnv } from "../platform/env";
import { changedMeanwhile, changedOrGone, notFound, validationError } from "../platform/errors";
import { uuid7 } from "../platform/ids";
import { MembershipLevel } from "../platform/levels";
import { organizationRead } from "../platform/route-context";
import {
  callerStillAdmin,
  callerStillAtLeast,
  levelRefusal,
  refusedWhenLevelLost,
} from "../platform/route-context/organization";
import { currentEnvironmentGuessKey } from "../platform/route-context/current-environment-guess";
import { serviceKeyActivity } from "./service-keys.activity";
import type * as routes from "./service-keys.routes";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;
type KeyRow = typeof serviceApiKeys.$inferSelect;

/** An organization holds at most this many service keys, so that the list is one short array. */
const MAX_SERVICE_KEYS_PER_ORGANIZATION = 20;

function toServiceKey(row: KeyRow) {
  return { ...maskedKeyFields(row), organization_id: row.organizationId, created_by_id: row.createdById };
}

const keyOf = (organizationId: string, id: string) =>
  and(eq(serviceApiKeys.id, id), eq(serviceApiKeys.organizationId, organizationId));
const keyExists = (organizationId: string, id: string) =>
  sql`exists (select 1 from ${serviceApiKeys} where ${keyOf(organizationId, id)})`;

const entryContext = (key: Pick<KeyRow, "scopes" | "scopedTeams">) => ({
  scopes: key.scopes,
  scoped_teams: key.scopedTeams,
});

export const listOrganizationServiceKeys: Handler<"listServiceKeys"> = async (c) => {
  const read = organizationRead(c);
  const [rows] = await read.batch([
    read.db
      .select()
      .from(serviceApiKeys)
      .where(eq(serviceApiKeys.organizationId, read.organizationId))
      .orderBy(desc(serviceApiKeys.createdAt), desc(serviceApiKeys.id)),
  ]);
  return c.json(rows.map(toServiceKey), 200);
};

export const retrieveOrganizationServiceKey: Handler<"retrieveServiceKey"> = async (c) => {
  const read = organizationRead(c);
  const [[row]] = await read.batch([
    read.db
      .select()
      .from(serviceApiKeys)
      .where(
        and(eq(serviceApiKeys.id, c.req.param("id") ?? ""), eq(serviceApiKeys.organizationId, read.organizationId)),
      ),
  ]);
  if (!row) throw notFound();
  return c.json(toServiceKey(row), 200);
};

/**
 * Only the organization's own projects (400 with `attr` otherwise), and how many keys it holds.
 * An admin sees every project of the organization, so nothing here can be probed.
 */
async function assertProjectsOfOrganization(db: Database, organizationId: string, teams: number[]) {
  const [found, [held]] = await db.batch([
    db
      .select({ id: projects.id })
      .from(projects)
      // No project named: a constant false, which SQLite answers without reading a row.
      .where(
        teams.length > 0
          ? and(
              eq(projects.organizationId, organizationId),
              inJsonList(projects.id, teams),
              // One marked for deletion reaches nothing: named, it is as missing (a personal key's too).
              isNull(projects.deletionScheduledAt),
            )
          : sql`0`,
      ),
    db.select({ keys: count() }).from(serviceApiKeys).where(eq(serviceApiKeys.organizationId, organizationId)),
  ]);
  if (found.length !== teams.length) {
    throw validationError("invalid_input", "Every project must belong to the organization.", "scoped_teams");
  }
  return held?.keys ?? 0;
}

/**
 * A service key made, changed or rolled does no more than the calling key (its scopes, its
 * organizations, its expiry) nor, for a personal key held to it, the organization's scope ceiling.
 */
function assertWithinCaller(c: Context<AppEnv>, scopes: string[], expiresAt: string | null) {
  const { actor, organization } = c.var;
  const reach = { organizations: [organization.id], teams: [], projectOrganizations: new Map() };
  assertWithinCallerKey(actor, scopes, reach, expiresAt);
  assertServiceKeyWithinCeiling(actor, organization, scopes);
}

export const createOrganizationServiceKey: Handler<"createServiceKey"> = async (c) => {
  const { db, actor, organization } = c.var;
  const input = c.req.valid("json");
  const scopes = [...new Set(input.scopes)];
  const scopedTeams = [...new Set(input.scoped_teams)];
  assertFutureExpiry(input.expires_at);
  assertLifetimeWithinPolicy(input.expires_at ?? null, [organization.apiKeyMaxLifetimeDays]);
  assertWithinCaller(c, scopes, storedTime(input.expires_at));
  const held = await assertProjectsOfOrganization(db, organization.id, scopedTeams);
  if (held >= MAX_SERVICE_KEYS_PER_ORGANIZATION) throw tooManyServiceKeys();
  const key = await newKeyValues(SERVICE_KEY_PREFIX, input.expires_at);
  const row: KeyRow = {
    id: uuid7(),
    organizationId: organization.id,
    createdById: actor.userId,
    label: input.label,
    scopes,
    scopedTeams,
    ...key.columns,
  };
  // The limit again, in the write: of concurrent creates, those past it fail whole.
  const heldNow = db.$count(serviceApiKeys, eq(serviceApiKeys.organizationId, organization.id));
  const belowLimit = sql`${heldNow} < ${MAX_SERVICE_KEYS_PER_ORGANIZATION}`;
  const values = {
    ...row,
    organizationId: whileHolds(organization.id, belowLimit),
    label: labelWhileLevelHolds(c, row.label),
    maskValue: whileHolds(row.maskValue, keyPolicyAsRead(c)),
  };
  await refusedWhenNull(
    writeWithActivity(
      db,
      db.insert(serviceApiKeys).values(values),
      serviceKeyActivity.record(c, "created", {
        organizationId: organization.id,
        itemId: row.id,
        name: row.label,
        context: entryContext(row),
      }),
    )
      .catch(refusedWhenLevelChanged(c))
      .catch(refusedWhenPolicyChanged),
    tooManyServiceKeys,
  );
  return c.json({ ...toServiceKey(row), value: key.value }, 201);
};

/**
 * A key's label as a write sets it (`label`, else the one it has), only while the caller still
 * holds the level the checks were judged on when the write runs (an admin's, or an owner's, whom
 * the scope ceiling does not hold): a key made, widened or rolled by a caller demoted meanwhile
 * would outlive their demotion. Else NULL, which the column refuses (`refusedWhenLevelChanged`).
 */
const labelWhileLevelHolds = (c: Context<AppEnv>, label?: string) =>
  whileHolds(
    label ?? sql<string>`${serviceApiKeys.label}`,
    // And while the calling key holds its value: one revoked or rolled meanwhile makes no key.
    and(callingKeyLive(c.var.actor), callerStillAtLeast(c.var.actor, c.var.organization.id, c.var.organization.level))!,
  );

/**
 * The organization's key policy is still the one the checks read (`assertWithinCaller`,
 * `assertLifetimeWithinPolicy`) when the write runs: a tightening meanwhile refuses it (409).
 */
const keyPolicyAsRead = (c: Context<AppEnv>) => {
  const { id, personalApiKeyMaxScopes, apiKeyMaxLifetimeDays } = c.var.organization;
  const asRead = unchangedSinceRead([
    [organizations.id, id],
    [organizations.personalApiKeyMaxScopes, personalApiKeyMaxScopes],
    [organizations.apiKeyMaxLifetimeDays, apiKeyMaxLifetimeDays],
  ]);
  return sql`exists (select 1 from ${organizations} where ${asRead})`;
};

async function refusedWhenPolicyChanged(error: unknown): Promise<never> {
  throw isNotNullViolationOf(error, serviceApiKeys.maskValue) ? changedMeanwhile("organization's key policy") : error;
}

/**
 * A key write refused by `labelWhileLevelHolds`: 401 when the calling key lost its value meanwhile,
 * else 403, or 404 once the caller is no longer a member (`levelLost`).
 */
const refusedWhenLevelChanged =
  (c: Context<AppEnv>) =>
  async (error: unknown): Promise<never> => {
    if (isNotNullViolationOf(error, serviceApiKeys.label)) {
      const gone = await refusalOfGoneKey(c.var.db, c.var.actor);
      if (gone) throw gone;
    }
    return refusedWhenLevelLost(c, serviceApiKeys.label)(error);
  };

const tooManyServiceKeys = () =>
  validationError(
    "max_keys",
    `An organization can only have ${MAX_SERVICE_KEYS_PER_ORGANIZATION} service keys. ` +
      "Revoke one before creating another.",
  );

/** The key the path names, in the organization the route resolved. */
async function keyOfPath(c: Context<AppEnv>) {
  const [key] = await c.var.db
    .select()
    .from(serviceApiKeys)
    .where(keyOf(c.var.organization.id, c.req.param("id") ?? ""));
  if (!key) throw notFound();
  return key;
}

const trackedFields = (key: KeyRow) => ({
  label: key.label,
  scopes: key.scopes,
  scoped_teams: key.scopedTeams,
  expires_at: key.expiresAt,
});

/**
 * The key's reach and lifetime as read, which `assertWithinCaller` judged the calling key against:
 * a write over the key holds them, so that a key a broader one widened meanwhile is not changed or
 * rolled (its new value handed over) by a key that may no longer act on it (409).
 */
const reachAsRead = (key: KeyRow) =>
  unchangedSinceRead([
    [serviceApiKeys.scopes, key.scopes],
    [serviceApiKeys.scopedTeams, key.scopedTeams],
    [serviceApiKeys.expiresAt, key.expiresAt],
  ]);

/** Guarded on the key's value, so that a roll meanwhile answers 409 rather than leaving a stale cache entry. */
export const updateOrganizationServiceKey: Handler<"updateServiceKey"> = async (c) => {
  const { db, organization } = c.var;
  const input = c.req.valid("json");
  assertFutureExpiry(input.expires_at);
  const key = await keyOfPath(c);
  // The key as it is, then as it would be: a narrower key changes none that does more than it.
  assertWithinCaller(c, key.scopes, key.expiresAt);
  const scopes = input.scopes ? [...new Set(input.scopes)] : key.scopes;
  const scopedTeams = input.scoped_teams ? [...new Set(input.scoped_teams)] : key.scopedTeams;
  const expiresAt = input.expires_at === undefined ? key.expiresAt : storedTime(input.expires_at);
  assertWithinCaller(c, scopes, expiresAt);
  // Only a reach sent is checked: one whose project was deleted since still takes a new label or scopes.
  if (input.scoped_teams) await assertProjectsOfOrganization(db, organization.id, scopedTeams);
  const after: KeyRow = { ...key, label: input.label ?? key.label, scopes, scopedTeams, expiresAt };
  // A new expiry or a new reach is held to the policy, as a personal key's; a label or scopes change alone is not.
  if (input.expires_at !== undefined || input.scoped_teams !== undefined) {
    assertLifetimeWithinPolicy(after.expiresAt, [organization.apiKeyMaxLifetimeDays]);
  }
  const before = trackedFields(key);
  const [updated] = await writeWithActivity(
    db,
    db
      .update(serviceApiKeys)
      .set({ label: labelWhileLevelHolds(c, after.label), scopes, scopedTeams, expiresAt: after.expiresAt })
      // Only over the key as read (its value, and every field the checks above were judged on): a
      // change landing meanwhile (a narrowing, a roll) is not undone but answered 409.
      .where(
        and(
          keyOf(organization.id, key.id),
          keyPolicyAsRead(c),
          unchangedSinceRead([
            [serviceApiKeys.secureValue, key.secureValue],
            [serviceApiKeys.label, key.label],
          ]),
          reachAsRead(key),
        ),
      )
      .returning({ id: serviceApiKeys.id }),
    serviceKeyActivity.changed(
      c,
      "updated",
      { organizationId: organization.id, itemId: key.id, name: after.label },
      before,
      fieldsAfterPatch(before, trackedFields(after)),
    ),
  ).catch(refusedWhenLevelChanged(c));
  if (!updated) throw await changedOrGone(db, keyExists(organization.id, key.id), "key");
  await forgetCachedKey(c.env, key);
  return c.json(toServiceKey(after), 200);
};

/** The new value goes to the caller: only a key that may do what this one does may roll it. */
export const rollOrganizationServiceKey: Handler<"rollServiceKey"> = async (c) => {
  const { db, organization } = c.var;
  const key = await keyOfPath(c);
  assertWithinCaller(c, key.scopes, key.expiresAt);
  assertLifetimeWithinPolicy(key.expiresAt, [organization.apiKeyMaxLifetimeDays]);
  const { value, changes, context } = await rollValues(key, c.req.valid("json").overlap_seconds, SERVICE_KEY_PREFIX);
  const [rolled] = await writeWithActivity(
    db,
    db
      .update(serviceApiKeys)
      .set({ ...changes, label: labelWhileLevelHolds(c) })
      .where(
        and(
          keyOf(organization.id, key.id),
          eq(serviceApiKeys.secureValue, key.secureValue),
          reachAsRead(key),
          keyPolicyAsRead(c),
        ),
      )
      .returning({ id: serviceApiKeys.id }),
    serviceKeyActivity.record(c, "rolled", {
      organizationId: organization.id,
      itemId: key.id,
      name: key.label,
      context,
    }),
  ).catch(refusedWhenLevelChanged(c));
  if (!rolled) throw await changedOrGone(db, keyExists(organization.id, key.id), "key");
  await forgetCachedKey(c.env, key);
  return c.json({ ...toServiceKey({ ...key, ...changes }), value }, 200);
};

export const deleteOrganizationServiceKey: Handler<"deleteServiceKey"> = async (c) => {
  const { db, organization } = c.var;
  const key = await keyOfPath(c);
  // Only while the caller is still an admin (and their key not blocked) when the delete runs.
  const stillAdmin = callerStillAdmin(c.var.actor, organization.id);
  const [deleted] = await writeWithActivity(
    db,
    db
      .delete(serviceApiKeys)
      .where(and(keyOf(organization.id, key.id), stillAdmin))
      .returning({
        secureValue: serviceApiKeys.secureValue,
        previousSecureValue: serviceApiKeys.previousSecureValue,
      }),
    serviceKeyActivity.record(c, "revoked", {
      organizationId: organization.id,
      itemId: key.id,
      name: key.label,
      context: entryContext(key),
    }),
  );
  if (!deleted) throw (await levelRefusal(c, MembershipLevel.admin)) ?? notFound();
  await forgetRevokedKey(c.env, deleted, currentEnvironmentGuessKey(key.id));
  return c.body(null, 204);
};

/** The calling service key: what it acts as, and what it may do until when. */
export const retrieveCallingServiceKey: Handler<"retrieveCurrentServiceKey"> = async (c) => {
  const { db, actor } = c.var;
  // A personal key is no service key: 404 (its own description is at /api/personal_api_keys/@current).
  const [row] =
    actor.kind === "service" ? await db.select().from(serviceApiKeys).where(eq(serviceApiKeys.id, actor.keyId)) : [];
  if (!row) throw notFound();
  const limits = keyRateLimits(c.env);
  return c.json(
    { ...toServiceKey(row), owner_kind: "organization" as const, level: MembershipLevel.admin, rate_limits: limits },
    200,
  );
};
