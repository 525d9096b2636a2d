import { createMiddleware } from "hono/factory";
import { setMetric } from "hono/timing";
import { createDatabase, D1Meter } from "./db";
import type { AppEnv } from "./env";

/**
 * Builds the request's database once, reports what it cost in `Server-Timing` (through hono's
 * `timing`, which must run before this), and names the charset of JSON answers.
 */
export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const meter = new D1Meter();
  c.set("meter", meter);
  c.set("db", createDatabase(c.env.DB, meter));
  await next();
  setMetric(c, "d1", meter.durationMs, meter.describe(), 0);
  if (c.res.headers.get("Content-Type") === "application/json") {
    c.res.headers.set("Content-Type", "application/json; charset=utf-8");
  }
});
