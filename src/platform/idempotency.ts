import { and, eq, inArray, lte, sql } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { idempotencyKeys } from "../db/schema";
import type { Database } from "./db";
import type { AppEnv } from "./env";
import { ApiError, validationError } from "./errors";
import { constantTimeEqual, sha256Hex, uuid7 } from "./ids";
import { errorFields, logLine } from "./log";
import { fingerprint, type Keyring, loadKeyring, seal, unseal } from "./secrets";

export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** How long a success is answered again to the same key. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a running first request holds its key: a claim whose request died frees itself after it. */
const CLAIM_LEASE_MS = 2 * 60 * 1000;
/** Answers larger than this are not kept: a retry is told so, and nothing runs again. */
const MAX_KEPT_RESPONSE_BYTES = 64 * 1024;
/** Expired rows one statement deletes, and statements per cron run. */
const EXPIRED_PER_DELETE = 500;
const DELETES_PER_RUN = 20;

type Claim = { apiKeyId: string; keyHash: string; claim: string };
type KeptRow = typeof idempotencyKeys.$inferSelect;

const sealingContext = (apiKeyId: string, keyHash: string) => `idempotency:${apiKeyId}:${keyHash}`;

/** Claims the key, unless a request holds it or its answer is kept; either way, the row as it now stands. */
async function claimIdempotencyKey(
  db: Database,
  claim: Claim & { requestHash: string },
  now: number,
): Promise<KeptRow> {
  const nowIso = new Date(now).toISOString();
  const [, [row]] = await db.batch([
    db
      .insert(idempotencyKeys)
      .values({ ...claim, createdAt: nowIso, expiresAt: new Date(now + CLAIM_LEASE_MS).toISOString() })
      .onConflictDoUpdate({
        target: [idempotencyKeys.apiKeyId, idempotencyKeys.keyHash],
        set: {
          claim: sql`excluded.claim`,
          requestHash: sql`excluded.request_hash`,
          responseStatus: null,
          responseBody: null,
          createdAt: sql`excluded.created_at`,
          expiresAt: sql`excluded.expires_at`,
        },
        // Only a key whose answer or lease has expired is taken over.
        setWhere: lte(idempotencyKeys.expiresAt, nowIso),
      }),
    db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.apiKeyId, claim.apiKeyId), eq(idempotencyKeys.keyHash, claim.keyHash))),
  ]);
  return row!;
}

const heldBy = (claim: Claim) =>
  and(
    eq(idempotencyKeys.apiKeyId, claim.apiKeyId),
    eq(idempotencyKeys.keyHash, claim.keyHash),
    eq(idempotencyKeys.claim, claim.claim),
  );

/** Keeps the answer (already sealed, or null when too large) for a day. */
async function keepIdempotentResponse(
  db: Database,
  claim: Claim,
  response: { status: number; sealedBody: string | null },
  now: number,
) {
  await db
    .update(idempotencyKeys)
    .set({
      responseStatus: response.status,
      responseBody: response.sealedBody,
      expiresAt: new Date(now + IDEMPOTENCY_TTL_MS).toISOString(),
    })
    .where(heldBy(claim));
}

async function releaseIdempotencyKey(db: Database, claim: Claim) {
  await db.delete(idempotencyKeys).where(heldBy(claim));
}

/** Deletes expired keys, in bounded statements; returns how many. */
export async function deleteExpiredIdempotencyKeys(db: Database): Promise<number> {
  const nowIso = new Date().toISOString();
  let deleted = 0;
  for (let round = 0; round < DELETES_PER_RUN; round += 1) {
    const expired = db
      .select({ rowid: sql`rowid` })
      .from(idempotencyKeys)
      .where(lte(idempotencyKeys.expiresAt, nowIso))
      .orderBy(idempotencyKeys.expiresAt)
      .limit(EXPIRED_PER_DELETE);
    const result = await db.delete(idempotencyKeys).where(inArray(sql`rowid`, expired));
    const changes = result.meta.changes ?? 0;
    deleted += changes;
    if (changes < EXPIRED_PER_DELETE) break;
  }
  return deleted;
}

const keyReused = () =>
  new ApiError(
    422,
    "idempotency_key_reused",
    "This Idempotency-Key was already used with another request (method, path, body, or what @current stood for). " +
      "Use a new key.",
  );
const keyInUse = () =>
  new ApiError(
    409,
    "idempotency_key_in_use",
    "A request with this Idempotency-Key is still running. Retry later.",
    null,
    { "Retry-After": "1" },
  );
const responseNotKept = () =>
  new ApiError(
    409,
    "idempotency_response_not_kept",
    "The request with this Idempotency-Key succeeded, but its answer was not kept (it showed a secret, which is " +
      "shown only once, or it was over 64 KiB); it was not run again.",
  );

const responseUnreadable = () =>
  new ApiError(
    409,
    "idempotency_response_not_kept",
    "The request with this Idempotency-Key succeeded, but its answer was sealed with an encryption key since " +
      "retired; it was not run again.",
  );

/** A kept answer, opened; one sealed with a key no longer configured is not replayed, nor run again. */
async function unsealKept(keyring: Keyring, sealed: string, claim: Claim): Promise<string> {
  try {
    return await unseal(keyring, sealed, sealingContext(claim.apiKeyId, claim.keyHash));
  } catch (error) {
    logLine("error", { task: "idempotency key", key_id: claim.apiKeyId, error: errorFields(error) });
    throw responseUnreadable();
  }
}

function presentedKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (header.length === 0 || header.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw validationError(
      "invalid_idempotency_key",
      `The Idempotency-Key header must have 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`,
    );
  }
  return header;
}

/**
 * An answer that shows a secret (a key's value, an invite's token, a signing secret: those routes
 * answer `no-store`) is not kept: a replay goes to whoever presents the same key, which after a
 * roll includes its replaced value and after a block a key the handler would refuse now.
 */
const showsSecret = (response: Response) => response.headers.get("Cache-Control")?.includes("no-store") === true;

/**
 * Whether `stored`, a kept request's fingerprint, is `request`'s: under the key it was made with,
 * while the keyring holds it (a retry across a rotation of the encryption key still replays).
 */
async function sameRequest(keyring: Keyring, stored: string, request: string): Promise<boolean> {
  const keyId = stored.split(":")[0]!;
  const fingerprinted = await fingerprint(keyring, request, keyId);
  return fingerprinted !== null && constantTimeEqual(fingerprinted, stored);
}

/**
 * Stripe's `Idempotency-Key` on an authenticated POST: without the header nothing changes. With
 * it, the key is claimed before the handler runs; a success is kept (sealed) for a day, unless it
 * shows a secret, and answered again, with `Idempotent-Replayed: true`, to a retry of the same request by the same
 * personal API key; any failure releases the key. See docs/idempotency.md.
 */
export const idempotentRetries = createMiddleware<AppEnv>(async (c, next) => {
  const key = presentedKey(c.req.header(IDEMPOTENCY_KEY_HEADER));
  if (key === undefined) return next();
  const db = c.var.db;
  const keyring = await loadKeyring(c.env);
  const url = new URL(c.req.url);
  const body = JSON.stringify(await c.req.json());
  const claim = { apiKeyId: c.var.actor.keyId, keyHash: await sha256Hex(key), claim: uuid7() };
  // The resolved organization and project too: `@current` may name another one at a retry.
  const context = `${c.var.organization?.id ?? ""} ${c.var.project?.projectId ?? ""}`;
  const request = `${c.req.method} ${url.pathname}${url.search} ${context}\n${body}`;
  // Keyed: the body may hold a secret (a password), which a plain hash in a dump would let anyone test guesses of.
  const requestHash = (await fingerprint(keyring, request))!;
  const row = await claimIdempotencyKey(db, { ...claim, requestHash }, Date.now());

  if (row.claim !== claim.claim) {
    if (!(await sameRequest(keyring, row.requestHash, request))) throw keyReused();
    if (row.responseStatus === null) throw keyInUse();
    if (row.responseBody === null) throw responseNotKept();
    const text = await unsealKept(keyring, row.responseBody, claim);
    const headers = {
      [REPLAYED_HEADER]: "true",
      "Cache-Control": "no-store",
      ...(text === "" ? {} : { "Content-Type": "application/json" }),
    };
    return new Response(text === "" ? null : text, { status: row.responseStatus, headers });
  }

  await next();
  const status = c.res.status;
  try {
    if (status < 200 || status > 299) {
      await releaseIdempotencyKey(db, claim);
      return;
    }
    const text = await c.res.clone().text();
    const small = new TextEncoder().encode(text).byteLength <= MAX_KEPT_RESPONSE_BYTES;
    const kept = small && !showsSecret(c.res);
    const sealedBody = kept ? await seal(keyring, text, sealingContext(claim.apiKeyId, claim.keyHash)) : null;
    await keepIdempotentResponse(db, claim, { status, sealedBody }, Date.now());
  } catch (error) {
    // The request itself is done: its answer goes out; a retry meets the lease, then runs again.
    logLine("error", { task: "idempotency key", key_id: claim.apiKeyId, error: errorFields(error) });
  }
});
