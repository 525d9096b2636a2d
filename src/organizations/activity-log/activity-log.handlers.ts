import type { RouteHandler } from "@hono/zod-openapi";
import { activityPageEnvelope, selectActivityPage } from "../../platform/activity-log/activity-log.queries";
import { sealChain, verifyChain } from "../../platform/activity-log/chain";
import { createDatabase } from "../../platform/db";
import type { AppEnv } from "../../platform/env";
import type { listActivityLog, verifyActivityLog } from "./activity-log.routes";

export const listOrganizationActivityLog: RouteHandler<typeof listActivityLog, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await selectActivityPage(c.var.db, { organizationId: c.var.organization.id }, query);
  return c.json(activityPageEnvelope(c, query, rows), 200);
};

/** Entries not sealed yet are sealed first, at the primary, so that the verdict covers all of them. */
export const verifyOrganizationActivityLog: RouteHandler<typeof verifyActivityLog, AppEnv> = async (c) => {
  const primary = createDatabase(c.env.DB.withSession("first-primary"), c.var.meter);
  await sealChain(primary, c.var.organization.id);
  return c.json(await verifyChain(primary, c.var.organization.id), 200);
};
