import { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { isNotNullViolationOf } from "./db";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Context } from "hono";
import { ApiError, ErrorBody } from "./errors";

/**
 * A resource's `ETag` is its version, weak (`W/"3"`): the version changes with every change to
 * the resource, but a response also shows things the version does not cover (the caller's rights,
 * an insight's own fields), so the bytes may differ under the same tag.
 */
export const etagOf = (version: number) => `W/"${version}"`;

/** The versions a list of entity tags names (weak or strong alike); `*` names any; anything else none. */
function taggedVersions(header: string): number[] | "any" {
  if (header.trim() === "*") return "any";
  return header
    .split(",")
    .map((tag) => /^\s*(?:W\/)?"(\d{1,15})"\s*$/.exec(tag)?.[1])
    .filter((version) => version !== undefined)
    .map(Number);
}

export const preconditionFailed = () =>
  new ApiError(412, "precondition_failed", "The resource has changed since the version If-Match names.");

/**
 * The version an `If-Match` header requires the write to start from: undefined without one (or
 * with `*`), `current` when it names it; a 412 otherwise. The write must still check it in SQL,
 * since another may land between the read and it.
 */
export function expectedVersion(c: Context, current: number): number | undefined {
  const header = c.req.header("If-Match");
  if (header === undefined) return undefined;
  const versions = taggedVersions(header);
  if (versions === "any") return undefined;
  if (!versions.includes(current)) throw preconditionFailed();
  return current;
}

/** Whether `If-None-Match` names the current version: the caller's copy is fresh (304). */
export function isNotModified(c: Context, current: number): boolean {
  const header = c.req.header("If-None-Match");
  if (header === undefined) return false;
  const versions = taggedVersions(header);
  return versions === "any" || versions.includes(current);
}

/** A 304: the tag, no body. */
export const notModified = (c: Context, version: number) => c.body(null, 304, { ETag: etagOf(version) });

/**
 * The version a write of a versioned row sets: one more. With `expected` (the version `If-Match`
 * names), null unless the stored version is still `expected`: the column is NOT NULL, so a row
 * changed since fails the statement, and with it the whole batch (`failsOnStaleVersion`). The
 * check is the write's own, inside the batch's transaction: of two writers holding one tag,
 * exactly one passes, whatever they read before.
 */
export const raisedVersion = (version: SQLiteColumn, expected?: number) =>
  expected === undefined
    ? sql<number>`${version} + 1`
    : sql<number>`case when ${version} = ${expected} then ${version} + 1 end`;

/** `write`, whose batch `raisedVersion(version, ...)` failed: a 412, nothing written. */
export async function failsOnStaleVersion<T>(version: SQLiteColumn, write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    throw isNotNullViolationOf(error, version) ? preconditionFailed() : error;
  }
}

/** The OpenAPI of conditional requests on `resource`'s routes (docs/conditional-requests.md). */
export function conditionalRequestsOpenApi(resource: string) {
  const etag = {
    ETag: { schema: { type: "string" as const }, description: `The ${resource}'s version, weak: \`W/"3"\`.` },
  };
  return {
    etag,
    ifMatch: z.object({
      "if-match": z
        .string()
        .optional()
        .openapi({ description: 'Write only if the version is this one (`W/"3"`); 412 otherwise.' }),
    }),
    ifNoneMatch: z.object({
      "if-none-match": z.string().optional().openapi({ description: "304 when it names the current version." }),
    }),
    notModified: { description: "Not modified: `If-None-Match` names the current version", headers: etag },
    preconditionFailed: {
      description: "`If-Match` names another version than the stored one; nothing changed",
      content: { "application/json": { schema: ErrorBody } },
    },
  };
}

/** A `GET` of a versioned resource: 304 when `If-None-Match` names its version, else `body` with its `ETag`. */
export function versionedAnswer<C extends Context, T>(c: C, version: number, body: T) {
  if (isNotModified(c, version)) return notModified(c, version);
  return c.json(body, 200, { ETag: etagOf(version) });
}
