import type { Context, Next } from "hono";
import { createMiddleware } from "hono/factory";
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

/**
 * A resolver for a write whose handler first reads what its path names (the row it changes):
 * `load` resolves the organization or project (`organizationRead`, `projectRead`) with those reads
 * in its round trip, so the write is the second and last. It runs as a middleware, before the
 * body is read, as every write's resolver does; the handler takes the rows from `results`.
 */
export function resolverWith<R>(load: (c: Context<AppEnv>) => Promise<R>) {
  const loaded = new WeakMap<Context<AppEnv>, R>();
  return {
    middleware: createMiddleware<AppEnv>(async (c, next) => {
      loaded.set(c, await load(c));
      await next();
    }),
    /** What the reads returned, for the request's handler. */
    results(c: Context<AppEnv>): R {
      if (!loaded.has(c)) throw new Error("the route does not run this resolver");
      return loaded.get(c) as R;
    },
  };
}
