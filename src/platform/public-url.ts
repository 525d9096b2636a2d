import type { Context } from "hono";
import type { AppEnv } from "./env";

/**
 * The origin links are built on (`next`, `previous`, invite accept links, `servers`):
 * `PUBLIC_BASE_URL` when set, since behind a proxy the request's own URL may not be the one
 * callers use; else the request's origin.
 */
export function publicBaseUrl(c: Context<AppEnv>): string {
  const configured = c.env.PUBLIC_BASE_URL?.trim().replace(/\/+$/, "");
  return configured || new URL(c.req.url).origin;
}

/** An absolute link to `path` (with its query) on the public origin. */
export function publicUrl(c: Context<AppEnv>, path: string): URL {
  return new URL(path, `${publicBaseUrl(c)}/`);
}
