import { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { isNotNullViolationOf } from "./db";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Context } from "hono";
import { ApiError, changedMeanwhile, ErrorBody } from "./errors";
import { sameJson } from "./json-equality";

/** A versioned resource: its id (a uuid or a number) and its version. */
export type Versioned = { id: string | number; version: number };

/**
 * A resource's `ETag` is its id and version, weak (`W/"12.3"`): the version changes with every
 * change to the resource, and the id tells resources apart where one URL names several over time
 * (`@current`, every new one at version 1). A response also shows things the version does not
 * cover (the caller's rights, an insight's own fields), so the bytes may differ under the same tag.
 */
export const etagOf = ({ id, version }: Versioned) => `W/"${id}.${version}"`;

/** The tags a list of entity tags names, as `etagOf` writes them (weak or strong alike); `*` any. */
function taggedVersions(header: string): string[] | "any" {
  if (header.trim() === "*") return "any";
  return header
    .split(",")
    .map((tag) => /^\s*(?:W\/)?"([^"]{1,64})"\s*$/.exec(tag)?.[1])
    .filter((tag) => tag !== undefined);
}

const namesResource = (versions: string[] | "any", resource: Versioned) =>
  versions === "any" || versions.includes(`${resource.id}.${resource.version}`);

export const preconditionFailed = () =>
  new ApiError(412, "precondition_failed", "The resource has changed since the version If-Match names.");

/**
 * The version an `If-Match` header requires the write to start from: undefined without one (or
 * with `*`), the resource's when it names it; a 412 otherwise (another version, or another
 * resource's tag). The write must still check it in SQL, since another may land between the read
 * and it.
 */
export function expectedVersion(c: Context, resource: Versioned): number | undefined {
  const header = c.req.header("If-Match");
  if (header === undefined) return undefined;
  const versions = taggedVersions(header);
  if (versions === "any") return undefined;
  if (!namesResource(versions, resource)) throw preconditionFailed();
  return resource.version;
}

/** Whether `If-None-Match` names the resource's current tag: the caller's copy is fresh (304). */
export function isNotModified(c: Context, resource: Versioned): boolean {
  const header = c.req.header("If-None-Match");
  return header !== undefined && namesResource(taggedVersions(header), resource);
}

/** A 304: the tag, no body. */
export const notModified = (c: Context, resource: Versioned) => c.body(null, 304, { ETag: etagOf(resource) });

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

/**
 * A write without `If-Match` that another write, landing between its read and it, made stale: it
 * held to what it read (the version, say) and so wrote nothing (`judgedOnLatest`).
 */
export class StaleRead extends Error {}

/** A value a write sent, unless it is the one read (undefined then: as if not sent): what it meant to change. */
export const unlessAsRead = <T>(sent: T | undefined, read: unknown) =>
  sent === undefined || sameJson(sent, read) ? undefined : sent;

/** Reads `judgedOnLatest` makes before it gives up with a 409. */
const READS_AT_MOST = 3;

/**
 * Last writer wins, without `If-Match`: `write` is judged on `read` and holds to it; when it
 * throws `StaleRead`, it is judged again (`again`) on `readAgain()`, as if the request had come
 * after the write that made it stale, so that its entry in the activity log says what it changed (nothing
 * when another wrote the same meanwhile). After `READS_AT_MOST` stale reads in a row, 409.
 */
export async function judgedOnLatest<Read, Result>(
  read: Read,
  readAgain: () => Promise<Read>,
  write: (read: Read, again: boolean) => Promise<Result>,
  what: string,
): Promise<Result> {
  for (let reads = 1; ; reads += 1) {
    try {
      return await write(read, reads > 1);
    } catch (error) {
      if (!(error instanceof StaleRead)) throw error;
      if (reads === READS_AT_MOST) throw changedMeanwhile(what);
    }
    read = await readAgain();
  }
}

/** The OpenAPI of conditional requests on `resource`'s routes (docs/conditional-requests.md). */
export function conditionalRequestsOpenApi(resource: string) {
  const etag = {
    ETag: {
      schema: { type: "string" as const },
      description: `The ${resource}'s id and version, weak: \`W/"12.3"\`.`,
    },
  };
  return {
    etag,
    ifMatch: z.object({
      "if-match": z
        .string()
        .optional()
        .openapi({ description: 'Write only if this is the resource\'s tag (`W/"12.3"`); 412 otherwise.' }),
    }),
    ifNoneMatch: z.object({
      "if-none-match": z.string().optional().openapi({ description: "304 when it names the resource's current tag." }),
    }),
    notModified: { description: "Not modified: `If-None-Match` names the current tag", headers: etag },
    preconditionFailed: {
      description: "`If-Match` names another version, or another resource, than the stored one; nothing changed",
      content: { "application/json": { schema: ErrorBody } },
    },
  };
}

/** A `GET` of a versioned resource: 304 when `If-None-Match` names its tag, else `body` with its `ETag`. */
export function versionedAnswer<C extends Context, T>(c: C, resource: Versioned, body: T) {
  if (isNotModified(c, resource)) return notModified(c, resource);
  return c.json(body, 200, { ETag: etagOf(resource) });
}
