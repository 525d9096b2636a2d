import type { Context } from "hono";
import { ApiError } from "./errors";

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
