import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { setMetric } from "hono/timing";
import { createDatabase, D1Meter, openSession, primarySession } from "./db";
import { isExplicitYes, type AppEnv } from "./env";

/** Sent with every answer that touched D1; sent back, it makes a read at least that fresh. */
const BOOKMARK_HEADER = "X-D1-Bookmark";

/**
 * Refusals that must read alike whatever lies behind them: an unknown id's, another organization's,
 * a project's hidden by a rule. A route's statements go in one batch with the membership that
 * refuses them, so they may have read rows the caller is refused: such an answer reports its
 * round trips alone, not the rows or the time they took.
 */
const REFUSALS = new Set([401, 403, 404]);

/**
 * Rows and time are told only where `EXPOSE_D1_COST` says so (local development, tests): a read
 * filtered by the caller's access rules reads the rows it leaves out too (a search, through its
 * index, matches hidden names), and what it read would spell them out.
 */
const costExposed = (env: AppEnv["Bindings"]) => isExplicitYes(env.EXPOSE_D1_COST);

/**
 * The request's reads at the primary database, which holds the latest write (the request's own
 * session may read a replica), counted in its cost as the others.
 */
export const primaryOfRequest = (c: Context<AppEnv>) => createDatabase(primarySession(c.env.DB), c.var.meter);

/**
 * Builds the request's database once, reports what it cost in `Server-Timing` (through hono's
 * `timing`, which must run before this), and names the charset of JSON answers.
 */
export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const meter = new D1Meter();
  const session = openSession(c.env.DB, c.req.method, c.req.header(BOOKMARK_HEADER));
  c.set("meter", meter);
  c.set("db", createDatabase(session, meter));
  await next();
  if (!costExposed(c.env) || REFUSALS.has(c.res.status) || meter.readBeyondCaller) {
    setMetric(c, "d1", `queries=${meter.queries}`);
  } else setMetric(c, "d1", meter.durationMs, meter.describe(), 0);
  const bookmark = session.getBookmark();
  if (bookmark) c.res.headers.set(BOOKMARK_HEADER, bookmark);
  if (c.res.headers.get("Content-Type") === "application/json") {
    c.res.headers.set("Content-Type", "application/json; charset=utf-8");
  }
});
