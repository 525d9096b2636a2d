import { afterResponse } from "../background";
import { eq, or } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { z } from "@hono/zod-openapi";
import { personalApiKeys, serviceApiKeys, users } from "../../db/schema";
import type { Actor, AppEnv } from "../env";
import { apiKeyExpired, notAuthenticated } from "../errors";
import { constantTimeEqual, nowIso, sha256Hex } from "../ids";
import { primaryOfRequest } from "../request-context";
import { peekJsonBody } from "../request-body";
import { apiKeyCacheKey, isServiceKey, isWellFormedApiKey, KEY_PARAMETER } from "./api-keys";
import { admitRequest, publishedHour } from "./rate-limit";
import { assertAddressMayLookUp, isKnownUnknown, refusal, rememberUnknown } from "./refused-keys";

/** Revocation deletes the entry; the TTL bounds staleness at other edges (KV's minimum). */
const API_KEY_CACHE_TTL_SECONDS = 60;
const LAST_USED_WRITE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * What KV keeps of a key, per value: `secureValue` is the hash of the value presented (the key's
 * current one, or the one a roll replaced), and `expiresAt` when that value stops working (for a
 * replaced value, the earlier of its overlap's end and the key's own expiry).
 */
type CachedKey = Omit<Actor, "keyExpiresAt"> & {
  secureValue: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
};

const BodyWithKey = z.object({ [KEY_PARAMETER]: z.string() });

/** Resolves the personal API key (see `presentedKey`) into `c.var.actor`. */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  c.set("actor", await authenticateRequest(c));
  await next();
});

/**
 * The caller the request's key belongs to, or 401. Exported for routes where a key is
 * optional (signing up by invite), which call it only when a key is sent.
 */
export async function authenticateRequest(c: Context<AppEnv>): Promise<Actor> {
  const value = await presentedKey(c);
  if (!isWellFormedApiKey(value)) throw await refusal(c);
  const secureValue = await sha256Hex(value);
  if (isKnownUnknown(secureValue)) throw await refusal(c);
  // What KV says of the key's hour is read beside the key, not after it.
  const [key, published] = await Promise.all([
    findKey(c, secureValue, isServiceKey(value)),
    publishedHour(c.env, secureValue),
  ]);
  // The lookup is by hash; the final comparison must not leak how much of it matched.
  if (!key || !constantTimeEqual(key.secureValue, secureValue)) throw await refusal(c);
  // Checked on every request, from KV too: the cached entry carries the expiry.
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= Date.now()) throw apiKeyExpired();
  const { lastUsedAt, expiresAt, ...rest } = key;
  const actor: Actor = { ...rest, keyExpiresAt: expiresAt };
  // Known before the limits are checked, so that the log line of a 429 names the key throttled.
  c.set("actor", actor);
  // Only a key that exists is counted: an unknown one never reaches a counter.
  await admitRequest(c, secureValue, published);

  if (!lastUsedAt || Date.now() - Date.parse(lastUsedAt) > LAST_USED_WRITE_INTERVAL_MS) {
    afterResponse(c, "record key use", recordUse(c.env, key));
  }
  return actor;
}

/**
 * Where PostHog looks, in its order: `Authorization: Bearer`, else the JSON body's
 * `personal_api_key` field, else the `personal_api_key` query parameter. The body is read only
 * when it is certain to be within the size limit (`peekJsonBody`); the request log never
 * records a query string.
 */
async function presentedKey(c: Context<AppEnv>): Promise<string> {
  const header = c.req.header("Authorization");
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw notAuthenticated();
    return match[1];
  }
  const body = await peekJsonBody(c, BodyWithKey);
  const value = body?.[KEY_PARAMETER] ?? c.req.query(KEY_PARAMETER);
  if (!value) throw notAuthenticated();
  return value;
}

/**
 * The key whose hash is `secureValue`, from KV, else from D1 (then cached), or null. A hash D1
 * did not hold is remembered (the caller asks `isKnownUnknown` first), and an address past its
 * limit of refused keys gets no more lookups: random keys cost at most a query each, not for long.
 */
async function findKey(c: Context<AppEnv>, secureValue: string, service: boolean): Promise<CachedKey | null> {
  const cached = await readCachedKey(c.env.API_KEY_CACHE, secureValue);
  if (cached) return cached;
  assertAddressMayLookUp(c);
  // From the primary, never a read replica: a replica behind it would still admit a key just
  // revoked (and cache it again), or refuse one just made.
  const loaded = await loadKey(primaryOfRequest(c), secureValue, service);
  if (!loaded) {
    rememberUnknown(secureValue);
    return null;
  }
  afterResponse(c, "cache key", cacheThenRecheck(c.env, loaded));
  return loaded;
}

/**
 * After the response, as no request needs it: a put can fail (KV takes one write a second per
 * key, and every location's entry of a busy key ends at once), and the next miss puts it again.
 */
async function cacheThenRecheck(env: AppEnv["Bindings"], key: CachedKey) {
  try {
    await cacheKey(env.API_KEY_CACHE, key);
  } finally {
    // Even after a put that failed: it may have landed.
    await forgetIfChanged(env, key);
  }
}

async function readCachedKey(cache: KVNamespace, secureValue: string) {
  return cache.get<CachedKey>(apiKeyCacheKey(secureValue), "json");
}

async function cacheKey(cache: KVNamespace, key: CachedKey) {
  await cache.put(apiKeyCacheKey(key.secureValue), JSON.stringify(key), {
    expirationTtl: API_KEY_CACHE_TTL_SECONDS,
  });
}

/** Where a key's value says it is stored: a personal key's table, or a service key's. */
const tableOf = (kind: Actor["kind"]) => (kind === "service" ? serviceApiKeys : personalApiKeys);

/** The stored value and its expiry, whichever of the row's two values `secureValue` is. */
function presented<T extends { current: string; previous: string | null; expiresAt: string | null }>(
  row: T & { previousValueExpiresAt: string | null },
  secureValue: string,
) {
  const { current, previous, expiresAt, previousValueExpiresAt, ...rest } = row;
  if (current === secureValue) return { ...rest, secureValue: current, expiresAt, replacedValue: false };
  return {
    ...rest,
    secureValue: previous ?? "",
    expiresAt: earlier(expiresAt, previousValueExpiresAt),
    replacedValue: true,
  };
}

async function loadKey(
  db: AppEnv["Variables"]["db"],
  secureValue: string,
  service: boolean,
): Promise<CachedKey | null> {
  return service ? loadServiceKey(db, secureValue) : loadPersonalKey(db, secureValue);
}

async function loadPersonalKey(db: AppEnv["Variables"]["db"], secureValue: string): Promise<CachedKey | null> {
  const [row] = await db
    .select({
      keyId: personalApiKeys.id,
      current: personalApiKeys.secureValue,
      previous: personalApiKeys.previousSecureValue,
      expiresAt: personalApiKeys.expiresAt,
      previousValueExpiresAt: personalApiKeys.previousValueExpiresAt,
      scopes: personalApiKeys.scopes,
      scopedOrganizations: personalApiKeys.scopedOrganizations,
      scopedTeams: personalApiKeys.scopedTeams,
      lastUsedAt: personalApiKeys.lastUsedAt,
      userId: users.id,
      userUuid: users.uuid,
    })
    .from(personalApiKeys)
    .innerJoin(users, eq(users.id, personalApiKeys.userId))
    .where(or(eq(personalApiKeys.secureValue, secureValue), eq(personalApiKeys.previousSecureValue, secureValue)))
    .limit(1);
  return row ? { ...presented(row, secureValue), kind: "user", organizationId: null } : null;
}

/** A service key acts as its organization, tied to no user (`Actor`). */
async function loadServiceKey(db: AppEnv["Variables"]["db"], secureValue: string): Promise<CachedKey | null> {
  const [row] = await db
    .select({
      keyId: serviceApiKeys.id,
      organizationId: serviceApiKeys.organizationId,
      current: serviceApiKeys.secureValue,
      previous: serviceApiKeys.previousSecureValue,
      expiresAt: serviceApiKeys.expiresAt,
      previousValueExpiresAt: serviceApiKeys.previousValueExpiresAt,
      scopes: serviceApiKeys.scopes,
      scopedTeams: serviceApiKeys.scopedTeams,
      lastUsedAt: serviceApiKeys.lastUsedAt,
    })
    .from(serviceApiKeys)
    .where(or(eq(serviceApiKeys.secureValue, secureValue), eq(serviceApiKeys.previousSecureValue, secureValue)))
    .limit(1);
  if (!row) return null;
  return { ...presented(row, secureValue), kind: "service", userId: 0, userUuid: "", scopedOrganizations: [] };
}

/** The earlier of two optional ISO timestamps (both in `toISOString` form, so compared as text). */
const earlier = (left: string | null, right: string | null) =>
  left === null ? right : right === null || left < right ? left : right;

/**
 * After the response: at most one write an hour per key, not metered into the response. The entry
 * is then made again from the key as D1 holds it (a roll or change meanwhile included), never from
 * the copy this request was admitted with; if that read fails, nothing is put back.
 */
async function recordUse(env: AppEnv["Bindings"], key: CachedKey) {
  const db = drizzle(env.DB);
  const table = tableOf(key.kind);
  const updated = await db
    .update(table)
    .set({ lastUsedAt: nowIso() })
    .where(eq(table.id, key.keyId))
    .returning({ id: table.id });
  if (updated.length === 0) return;
  const fresh = await loadKey(db, key.secureValue, key.kind === "service");
  if (!fresh) return env.API_KEY_CACHE.delete(apiKeyCacheKey(key.secureValue));
  await cacheThenRecheck(env, fresh);
}

/**
 * After a put of `cached`: a revocation, roll or change that landed between the read the entry
 * was made from and the put deleted the entry before the put wrote it back. Read the key again,
 * from the primary, and delete the entry when it no longer says what the key grants, so that no
 * stale key stays cached. After the response: the request in flight was admitted as it was read.
 */
async function forgetIfChanged(env: AppEnv["Bindings"], cached: CachedKey) {
  const entry = apiKeyCacheKey(cached.secureValue);
  let fresh: CachedKey | null;
  try {
    fresh = await loadKey(drizzle(env.DB), cached.secureValue, cached.kind === "service");
  } catch (error) {
    // Unchecked, the entry goes: a failure costs the next request a lookup, never a stale grant.
    await env.API_KEY_CACHE.delete(entry);
    throw error;
  }
  if (!fresh || grantsOf(fresh) !== grantsOf(cached)) await env.API_KEY_CACHE.delete(entry);
}

/** What a cached entry decides, as one comparable string. */
const grantsOf = (key: CachedKey) =>
  JSON.stringify([key.keyId, key.scopes, key.scopedOrganizations, key.scopedTeams, key.expiresAt, key.replacedValue]);
