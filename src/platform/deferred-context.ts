import type { Context, Next } from "hono";
import type { AppEnv } from "./env";
import { insufficientLevel } from "./errors";

/**
 * A route whose handler resolves its organization or project in its own first round trip (the
 * caller's membership read in the same `db.batch` as the data), instead of a resolver middleware's
 * query before it. The data is dropped unless the membership is admitted, and a successful answer
 * that never resolved the context is refused here as an error: no such route can answer without
 * the membership check, whatever its handler does.
 */
export async function deferContext(c: Context<AppEnv>, next: Next, context: "organization" | "project") {
  c.set("contextDeferred", true);
  await next();
  if (c.res.ok && c.get(context) === undefined) {
    throw new Error(`a deferred ${context} route answered without resolving the caller's ${context}`);
  }
}

/** The level the route declares (`apiRoute`'s `level`), checked when the context is known. */
export function assertMinimumLevel(c: Context<AppEnv>, level: number) {
  const minimum = c.get("minimumLevel");
  if (minimum !== undefined && level < minimum) throw insufficientLevel();
}
