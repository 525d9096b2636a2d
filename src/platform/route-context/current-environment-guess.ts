import { afterResponse } from "../background";
import type { Context } from "hono";
import type { AppEnv } from "../env";

/**
 * The environment `@current` last resolved to, per key: a guess that lets an `@current` read go
 * in one round trip. The round trip also reads which environment `@current` picks now (with the
 * key's scope and the caller's rights); when that is not the guess, the results are dropped and
 * read again for the right one. So a stale guess costs a round trip, never a wrong answer, and
 * the guess grants nothing. Choosing in every statement instead would repeat a statement too
 * large to bind in each (D1 binds at most 100 values).
 *
 * The guess is kept in the isolate and in KV, so that an isolate that has not seen the key yet
 * starts from what another one learned (KV is read only then, beside no D1 query). It is written
 * to KV only when it changes (the user chose another project, or the key's first `@current`).
 */
const guesses = new Map<string, number>();
const MAX_GUESSES_IN_ISOLATE = 10_000;
const GUESS_TTL_SECONDS = 7 * 24 * 60 * 60;

export const currentEnvironmentGuessKey = (keyId: string) => `current_environment:${keyId}`;

/** The guess for the caller's key: this isolate's, else the one kept in KV, if any. */
export async function guessCurrentEnvironment(c: Context<AppEnv>): Promise<number | undefined> {
  const keyId = c.var.actor.keyId;
  const known = guesses.get(keyId);
  if (known !== undefined) return known;
  const stored = await c.env.API_KEY_CACHE.get(currentEnvironmentGuessKey(keyId));
  const environmentId = Number(stored);
  if (stored === null || !Number.isSafeInteger(environmentId)) return undefined;
  keepInIsolate(keyId, environmentId);
  return environmentId;
}

/** What `@current` resolved to, for the next read: written to KV when this isolate did not know it. */
export function rememberCurrentEnvironment(c: Context<AppEnv>, environmentId: number) {
  const keyId = c.var.actor.keyId;
  const known = guesses.get(keyId);
  keepInIsolate(keyId, environmentId);
  if (known === environmentId) return;
  // KV takes one write a second per key: a busy key's may be refused, and the next read guesses again.
  const put = c.env.API_KEY_CACHE.put(currentEnvironmentGuessKey(keyId), String(environmentId), {
    expirationTtl: GUESS_TTL_SECONDS,
  });
  afterResponse(c, "remember current environment", put);
}

function keepInIsolate(keyId: string, environmentId: number) {
  guesses.delete(keyId);
  if (guesses.size >= MAX_GUESSES_IN_ISOLATE) {
    const oldest = guesses.keys().next();
    if (!oldest.done) guesses.delete(oldest.value);
  }
  guesses.set(keyId, environmentId);
}
