import { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import journal from "../../migrations/meta/_journal.json";
import type { Database } from "./db";
import { jsonResponse, publicRoute } from "./route";
import { createRouter } from "./router";
import { keyringProblem } from "./secrets";

/**
 * The newest migration this code was written against. drizzle-kit's journal lists every file of
 * migrations/ in order, and the bundle carries it, so a Worker deployed before its migrations
 * were applied can tell. wrangler records each applied file by name (`<tag>.sql`).
 */
// The journal is never empty: the first migration creates the schema.
const NEWEST_MIGRATION = `${journal.entries.at(-1)!.tag}.sql`;

/** Why writes would fail against this database, or null. One query, one row (the name index). */
async function migrationProblem(db: Database): Promise<string | null> {
  let applied: string | null;
  try {
    const [row] = await db.all<{ newest: string | null }>(sql`SELECT max(name) AS newest FROM d1_migrations`);
    applied = row?.newest ?? null;
  } catch {
    // No d1_migrations table: nothing was ever applied (or D1 did not answer at all).
    applied = null;
  }
  if (applied === null) return `D1 migrations not applied: the code needs ${NEWEST_MIGRATION}`;
  // Names start with a zero-padded sequence number, so they sort in the order they apply.
  if (applied < NEWEST_MIGRATION)
    return `D1 migrations behind: the newest applied is ${applied}, the code needs ${NEWEST_MIGRATION}`;
  return null;
}

const Healthy = z.object({ status: z.literal("ok") });
const Unavailable = z.object({
  status: z.literal("unavailable"),
  reasons: z.array(z.string()).openapi({ example: ["SECRETS_ENCRYPTION_KEY is not set"] }),
});

const healthRoute = publicRoute({
  method: "get",
  path: "/healthz",
  operationId: "healthz_retrieve",
  tags: ["operations"],
  summary: "Readiness: D1 migrated as far as the code needs, the encryption key usable; no key",
  description: "For load balancers and uptime checks: 200 when writes can succeed, else 503 with the reasons.",
  responses: {
    200: jsonResponse(Healthy, "The Worker and D1 answer, and writes can succeed"),
    503: jsonResponse(
      Unavailable,
      "Writes would fail: each reason names what to fix (the encryption key, the D1 migrations)",
    ),
  },
});

export const healthRouter = createRouter().openapi(healthRoute, async (c) => {
  const problems = await Promise.all([keyringProblem(c.env), migrationProblem(c.var.db)]);
  const reasons = problems.filter((problem): problem is string => problem !== null);
  if (reasons.length > 0) return c.json({ status: "unavailable" as const, reasons }, 503);
  return c.json({ status: "ok" as const }, 200);
});
