import type { Context } from "hono";
import type { AppEnv, Bindings } from "./env";

/** `PUBLIC_BASE_URL` without trailing slashes; undefined when it is not set. */
export const configuredBaseUrl = (env: Bindings) => env.PUBLIC_BASE_URL?.trim().replace(/\/+$/, "") || undefined;

/**
 * The origin links are built on (`next`, `previous`, invite accept links): `PUBLIC_BASE_URL`
 * when set, since behind a proxy the request's own URL may not be the one callers use; else the
 * request's origin.
 */
function publicBaseUrl(c: Context<AppEnv>): string {
  return configuredBaseUrl(c.env) ?? new URL(c.req.url).origin;
}

/** An absolute link to `path` (with its query) on the public origin. */
export function publicUrl(c: Context<AppEnv>, path: string): URL {
  return new URL(path, `${publicBaseUrl(c)}/`);
}

/** This request's URL (path and query) on the public origin, for links to other pages of it. */
export function publicRequestUrl(c: Context<AppEnv>): URL {
  const request = new URL(c.req.url);
  return publicUrl(c, `${request.pathname}${request.search}`);
}
