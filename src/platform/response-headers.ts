import { createMiddleware } from "hono/factory";
import type { RequestIdVariables } from "hono/request-id";
import { secureHeaders } from "hono/secure-headers";

/**
 * A caller's request id kept as sent: at most 255 letters, digits, `_`, `-` and `=` (hono's
 * `requestId` rule), beginning with a letter or a digit. The activity log records it, and a
 * spreadsheet opening an export would read a cell beginning with `=` or `-` as a formula.
 */
const CALLER_REQUEST_ID = /^[A-Za-z0-9][\w=-]{0,254}$/;

/** The request's id, the caller's (`CALLER_REQUEST_ID`) or a new UUID, as `requestId` and `X-Request-Id`. */
const requestIdentity = createMiddleware<{ Variables: RequestIdVariables }>(async (c, next) => {
  const sent = c.req.header("X-Request-Id");
  const id = sent !== undefined && CALLER_REQUEST_ID.test(sent) ? sent : crypto.randomUUID();
  c.set("requestId", id);
  c.header("X-Request-Id", id);
  await next();
});

/**
 * Headers every response carries: `X-Request-Id` (`requestIdentity`) and hono's secure headers,
 * `X-Content-Type-Options: nosniff` among them, so that no browser reads a JSON answer as
 * something else.
 */
export const responseHeaders = [requestIdentity, secureHeaders()] as const;

/**
 * For routes whose answer carries a secret (a key value, an invite token): no cache, shared or
 * private, may keep it. Add it to the route's `middleware`.
 */
export const noStore = createMiddleware(async (c, next) => {
  // Before the handler: the idempotency middleware, which runs inside this one, reads it to keep
  // no such answer.
  c.header("Cache-Control", "no-store");
  await next();
});

/**
 * For every authenticated route (`apiRoute`): an answer is its caller's alone. A browser may keep
 * it and revalidate it (its `ETag`), per key (`Vary: Authorization`: another key's request is
 * another entry, never answered from this one's); a shared cache keeps none (`private`), even of
 * a key sent in the query string. `noStore`, set first, stays.
 */
export const privateToCaller = createMiddleware(async (c, next) => {
  await next();
  if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", "private, no-cache");
  c.header("Vary", "Authorization", { append: true });
});
