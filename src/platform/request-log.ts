import { matchedRoutes } from "hono/route";
import { createMiddleware } from "hono/factory";
import type { Context } from "hono";
import type { Actor, AppEnv } from "./env";
import { errorFields, inLogScope } from "./log";

/**
 * The route pattern that answered (`/api/organizations/:organization_id`), never the raw path:
 * the route of the last handler run (a static path such as `/api/users/@me` also matches the
 * parameter route beside it, which never runs). Null when no route did (a 404 of the app).
 */
function routePattern(c: Context<AppEnv>): string | null {
  const answered = matchedRoutes(c)[c.req.routeIndex];
  return answered && answered.method !== "ALL" ? answered.path : null;
}

/** A failure's stack, for the failures the caller sees as 500 (`errorFields`: no bound value). */
function failure(c: Context<AppEnv>) {
  if (c.res.status < 500 || !c.error) return undefined;
  return errorFields(c.error);
}

/**
 * One JSON line per request, for Workers Logs: who (key and user ids) did what (method, route
 * pattern), how it went (status, duration, D1 cost). Never a key, a token, a header value or a
 * body: they carry secrets. Runs outside `requestContext`, so the D1 meter is complete.
 */
export const requestLog = createMiddleware<AppEnv>(async (c, next) => {
  const startedAt = Date.now();
  await next();
  const actor: Actor | undefined = c.var.actor;
  const meter = c.var.meter;
  const error = failure(c);
  const line = {
    level: error ? "error" : "info",
    request_id: c.var.requestId,
    method: c.req.method,
    route: routePattern(c),
    status: c.res.status,
    duration_ms: Date.now() - startedAt,
    d1: meter && {
      queries: meter.queries,
      rows_read: meter.rowsRead,
      rows_written: meter.rowsWritten,
      duration_ms: meter.durationMs,
    },
    key_id: actor?.keyId ?? null,
    user_id: actor?.userId ?? null,
    ...(error && { error }),
  };
  (error ? console.error : console.log)(JSON.stringify(line));
});

/** Every line logged while the request runs, and by the work it leaves behind, names the request. */
export const requestLogScope = createMiddleware<AppEnv>((c, next) => inLogScope({ request_id: c.var.requestId }, next));
