import { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { jsonResponse, publicRoute } from "./route";
import { createRouter } from "./router";

const healthRoute = publicRoute({
  method: "get",
  path: "/healthz",
  operationId: "healthz_retrieve",
  tags: ["operations"],
  summary: "Liveness: answers once the database answers a trivial read; no key",
  responses: { 200: jsonResponse(z.object({ status: z.literal("ok") }), "The Worker and D1 answer") },
});

export const healthRouter = createRouter().openapi(healthRoute, async (c) => {
  await c.var.db.run(sql`SELECT 1`);
  return c.json({ status: "ok" as const }, 200);
});
