import type { RouteHandler } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { activityLog } from "../../db/schema";
import {
  activityPageEnvelope,
  activityPageStatements,
  selectEntriesWithUsers,
  toActivityLogEntry,
} from "../../platform/activity-log/activity-log.queries";
import { chainStatements, sealChain, verdictOf, verifyChain } from "../../platform/activity-log/chain";
import { createDatabase } from "../../platform/db";
import type { AppEnv } from "../../platform/env";
import { notFound } from "../../platform/errors";
import { organizationRead } from "../../platform/organization-context";
import type { listActivityLog, retrieveActivityLogEntry, verifyActivityLog } from "./activity-log.routes";

export const listOrganizationActivityLog: RouteHandler<typeof listActivityLog, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const read = organizationRead(c);
  const [rows, counted] = await read.batch([
    ...activityPageStatements(read.db, { organizationId: read.organizationId }, query),
  ]);
  return c.json(activityPageEnvelope(c, query, rows, counted), 200);
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

/** An admin sees every entry of the organization, as in its log; another organization's id is 404. */
export const retrieveOrganizationActivityLogEntry: RouteHandler<typeof retrieveActivityLogEntry, AppEnv> = async (
  c,
) => {
  const read = organizationRead(c);
  const [[row]] = await read.batch([
    selectEntriesWithUsers(read.db).where(
      and(eq(activityLog.organizationId, read.organizationId), eq(activityLog.id, c.req.valid("param").id)),
    ),
  ]);
  if (!row) throw notFound();
  return c.json(toActivityLogEntry(row.entry, row.user), 200);
};
