import { createMiddleware } from "hono/factory";
import { createDatabase, D1Meter } from "./db";
import type { AppEnv } from "./env";

/**
 * Builds the request's database once, reports what it cost in `Server-Timing` (SPEC 13), and
 * names the charset of JSON answers (SPEC 1).
 */
export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const meter = new D1Meter();
  c.set("meter", meter);
  c.set("db", createDatabase(c.env.DB, meter));
  await next();
  c.res.headers.set("Server-Timing", meter.serverTiming());
  if (c.res.headers.get("Content-Type") === "application/json") {
    c.res.headers.set("Content-Type", "application/json; charset=utf-8");
  }
});
