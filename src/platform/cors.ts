import { cors } from "hono/cors";
import type { Context } from "hono";
import type { AppEnv } from "./env";

const allowedOrigins = (setting: string | undefined) =>
  (setting ?? "")
    .split(",")
    .map((origin) => origin.trim())
    .filter(Boolean);

/**
 * CORS for the origins in `CORS_ORIGINS` (comma-separated; empty: none). Preflights are answered
 * here, before authentication: a browser never sends the key with them.
 */
export const corsFromEnvironment = cors({
  origin: (origin, c: Context<AppEnv>) => (allowedOrigins(c.env.CORS_ORIGINS).includes(origin) ? origin : null),
  allowMethods: ["GET", "POST", "PATCH", "PUT", "DELETE"],
  // X-D1-Bookmark both ways: a browser client keeps read-your-writes by sending back what it got.
  // ETag out and If-Match / If-None-Match in: conditional requests; Idempotency-Key: safe retries.
  allowHeaders: [
    "Authorization",
    "Content-Type",
    "X-D1-Bookmark",
    "X-Request-Id",
    "Idempotency-Key",
    "If-Match",
    "If-None-Match",
  ],
  exposeHeaders: [
    "Server-Timing",
    "X-Request-Id",
    "Retry-After",
    "X-D1-Bookmark",
    "WWW-Authenticate",
    "ETag",
    "Idempotent-Replayed",
  ],
  maxAge: 600,
});
