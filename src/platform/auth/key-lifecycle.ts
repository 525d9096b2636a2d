import type { Bindings } from "../env";
import { validationError } from "../errors";
import { nowIso } from "../ids";
import { errorFields, logLine } from "../log";
import { apiKeyCacheKey, mintApiKey } from "./api-keys";

/**
 * What personal and service keys share once they are stored: expiry, roll and revocation. A
 * key's row holds its value's hash, and during a roll's overlap the hash of the value it replaced.
 */
type StoredValues = {
  secureValue: string;
  previousSecureValue: string | null;
  previousValueExpiresAt: string | null;
};

/** An expiry must lie ahead: a key created or changed to be dead already is a mistake. */
export function assertFutureExpiry(expiresAt: string | null | undefined) {
  if (expiresAt && Date.parse(expiresAt) <= Date.now()) {
    throw validationError("invalid_input", "The expiry must be in the future.", "expires_at");
  }
}

/** Stored as `toISOString` writes it, so that expiries compare as text. */
export const storedTime = (value: string | null) => (value === null ? null : new Date(value).toISOString());

/** A stored key's fields every kind answers with, masked (never its value nor its hash). */
type KeyFields = StoredValues & {
  id: string;
  label: string;
  maskValue: string;
  createdAt: string;
  lastUsedAt: string | null;
  scopes: string[];
  scopedTeams: number[];
  expiresAt: string | null;
  lastRolledAt: string | null;
};

export const maskedKeyFields = (row: KeyFields) => ({
  id: row.id,
  label: row.label,
  mask_value: row.maskValue,
  created_at: row.createdAt,
  last_used_at: row.lastUsedAt,
  scopes: row.scopes,
  scoped_teams: row.scopedTeams,
  expires_at: row.expiresAt,
  last_rolled_at: row.lastRolledAt,
  previous_value_expires_at: previousValueExpiry(row),
});

/** A new key's value (returned once) and the columns that store it, never used nor rolled. */
export async function newKeyValues(prefix: string, expiresAt: string | null) {
  const minted = await mintApiKey(prefix);
  return {
    value: minted.value,
    columns: {
      secureValue: minted.secureValue,
      maskValue: minted.maskValue,
      createdAt: nowIso(),
      lastUsedAt: null,
      expiresAt: storedTime(expiresAt),
      lastRolledAt: null,
      previousSecureValue: null,
      previousValueExpiresAt: null,
    },
  };
}

/** While a roll's overlap lasts, when the replaced value stops working; null otherwise. */
const previousValueExpiry = (key: StoredValues) =>
  key.previousValueExpiresAt !== null && Date.parse(key.previousValueExpiresAt) > Date.now()
    ? key.previousValueExpiresAt
    : null;

/**
 * A roll of `key`: a new value (returned once), and the columns that store it. The value it
 * replaces works `overlapSeconds` more (0: stops at once); a value replaced by an earlier roll
 * stops now. `context` is what the roll's activity entry says.
 */
export async function rollValues(key: StoredValues, overlapSeconds: number, prefix: string) {
  const minted = await mintApiKey(prefix);
  const now = Date.now();
  const overlapEnds = overlapSeconds > 0 ? new Date(now + overlapSeconds * 1000).toISOString() : null;
  return {
    value: minted.value,
    changes: {
      secureValue: minted.secureValue,
      maskValue: minted.maskValue,
      lastRolledAt: new Date(now).toISOString(),
      previousSecureValue: overlapEnds === null ? null : key.secureValue,
      previousValueExpiresAt: overlapEnds,
    },
    context: { overlap_seconds: overlapSeconds, previous_value_expires_at: overlapEnds },
  };
}

/**
 * Every cached copy of the key, by each value it may still be presented with: the next request
 * reads D1. It follows a write that has landed: a delete KV fails is logged, not thrown (the entry
 * ends with its TTL, a minute), so that the request does not answer 500 for a change it made,
 * which a retry, even with its `Idempotency-Key`, would make again.
 */
export async function forgetCachedKey(env: Bindings, key: Pick<StoredValues, "secureValue" | "previousSecureValue">) {
  const values = [key.secureValue, key.previousSecureValue].filter((value): value is string => value !== null);
  await Promise.all(values.map((value) => forgetQuietly(env, apiKeyCacheKey(value))));
}

/** A revoked key: its cached copies, and its `@current` project guess (`currentEnvironmentGuessKey`). */
export async function forgetRevokedKey(
  env: Bindings,
  key: Pick<StoredValues, "secureValue" | "previousSecureValue">,
  guessKey: string,
) {
  await Promise.all([forgetCachedKey(env, key), forgetQuietly(env, guessKey)]);
}

const forgetQuietly = (env: Bindings, cacheKey: string) =>
  env.API_KEY_CACHE.delete(cacheKey).catch((error: unknown) =>
    logLine("error", { task: "forget cached key", error: errorFields(error) }),
  );
