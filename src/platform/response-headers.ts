import { createMiddleware } from "hono/factory";
import { requestId } from "hono/request-id";
import { secureHeaders } from "hono/secure-headers";

/**
 * Headers every response carries: `X-Request-Id` (the caller's when it is short and of plain
 * characters, else a new UUID) and hono's secure headers, `X-Content-Type-Options: nosniff`
 * among them, so that no browser reads a JSON answer as something else.
 */
export const responseHeaders = [requestId(), secureHeaders()] as const;

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
