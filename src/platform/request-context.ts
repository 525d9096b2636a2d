import { createMiddleware } from "hono/factory";
import { createDatabase, D1Meter } from "./db";
import type { AppEnv } from "./env";

/** Builds the request's database once, and reports what it cost in `Server-Timing` (SPEC 13). */
export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const meter = new D1Meter();
  c.set("meter", meter);
  c.set("db", createDatabase(c.env.DB, meter));
  await next();
  c.res.headers.set("Server-Timing", meter.serverTiming());
});
