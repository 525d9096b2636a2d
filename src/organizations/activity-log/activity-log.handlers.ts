import type { RouteHandler } from "@hono/zod-openapi";
import { activityPageEnvelope, selectActivityPage } from "../../platform/activity-log/activity-log.queries";
import { chainStatements, sealChain, verdictOf, verifyChain } from "../../platform/activity-log/chain";
import { createDatabase } from "../../platform/db";
import type { AppEnv } from "../../platform/env";
import { organizationRead } from "../../platform/organization-context";
import type { listActivityLog, verifyActivityLog } from "./activity-log.routes";

export const listOrganizationActivityLog: RouteHandler<typeof listActivityLog, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const read = organizationRead(c);
  const [rows] = await read.batch([selectActivityPage(read.db, { organizationId: read.organizationId }, query)]);
  return c.json(activityPageEnvelope(c, query, rows), 200);
};

/**
 * Read at the primary with the membership, in one round trip. Entries not sealed yet (a write's
 * seal still running) are sealed first and the chain read again, so that the verdict covers them.
 */
export const verifyOrganizationActivityLog: RouteHandler<typeof verifyActivityLog, AppEnv> = async (c) => {
  const primary = createDatabase(c.env.DB.withSession("first-primary"), c.var.meter);
  const read = organizationRead(c, primary);
  const [rows, [anchor]] = await read.batch([...chainStatements(primary, read.organizationId)]);
  if (rows.every((row) => row.hash !== null)) return c.json(await verdictOf(rows, anchor), 200);
  await sealChain(primary, c.var.organization.id);
  return c.json(await verifyChain(primary, c.var.organization.id), 200);
};
