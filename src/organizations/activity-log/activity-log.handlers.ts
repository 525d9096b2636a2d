import type { RouteHandler } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { activityLog, users } from "../../db/schema";
import {
  activityPageEnvelope,
  activityPageStatements,
  selectEntriesWithUsers,
  toActivityLogEntry,
} from "../../platform/activity-log/activity-log.queries";
import {
  archivedPage,
  selectPageSegments,
  selectSegments,
  verdictAcross,
  verifyChain,
  withUsers,
} from "../../platform/activity-log/archive";
import { chainStatements, sealChain } from "../../platform/activity-log/chain";
import { createDatabase } from "../../platform/db";
import type { AppEnv } from "../../platform/env";
import { notFound } from "../../platform/errors";
import { organizationRead } from "../../platform/route-context";
import { DEFAULT_PAGE_SIZE } from "../../platform/pagination";
import type { listActivityLog, retrieveActivityLogEntry, verifyActivityLog } from "./activity-log.routes";
import { thisRequestUrl } from "../../platform/public-url";

/**
 * A page from the entries kept here, in the membership's round trip with the segments below its
 * cursor; when those entries run out before the page is full, it goes on in the archived segments.
 */
export const listOrganizationActivityLog: RouteHandler<typeof listActivityLog, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const read = organizationRead(c);
  const [rows, counted, segments, [filterUser]] = await read.batch([
    ...activityPageStatements(read.db, { organizationId: read.organizationId }, query),
    selectPageSegments(read.db, read.organizationId, query.cursor),
    read.db
      .select({ id: users.id })
      .from(users)
      .where(eq(users.uuid, query.user ?? "")),
  ]);
  const requestUrl = thisRequestUrl(c);
  const wanted = (query.limit ?? DEFAULT_PAGE_SIZE) + 1 - rows.length;
  // Numbered pages read D1 alone; the cursor goes on into the archive.
  if (query.page !== undefined || wanted <= 0 || segments.length === 0) {
    return c.json(activityPageEnvelope(requestUrl, query, rows, counted), 200);
  }
  const filter = { ...query, userId: query.user === undefined ? undefined : (filterUser?.id ?? null) };
  const archived = await archivedPage(c.env.ACTIVITY_LOG_ARCHIVE, segments, filter, wanted);
  const archivedRows = await withUsers(read.db, archived.rows);
  return c.json(activityPageEnvelope(requestUrl, query, [...rows, ...archivedRows], counted, archived.resumeAt), 200);
};

/**
 * Read at the primary with the membership, in one round trip, then the archived segments from the
 * bucket. Entries not sealed yet (a write's seal still running) are sealed first and the chain read
 * again, so that the verdict covers them.
 */
export const verifyOrganizationActivityLog: RouteHandler<typeof verifyActivityLog, AppEnv> = async (c) => {
  const primary = createDatabase(c.env.DB.withSession("first-primary"), c.var.meter);
  const read = organizationRead(c, primary);
  const [rows, [anchor], segments] = await read.batch([
    ...chainStatements(primary, read.organizationId),
    selectSegments(primary, read.organizationId),
  ]);
  const bucket = c.env.ACTIVITY_LOG_ARCHIVE;
  if (rows.every((row) => row.hash !== null)) return c.json(await verdictAcross(bucket, segments, rows, anchor), 200);
  await sealChain(primary, c.var.organization.id);
  return c.json(await verifyChain(primary, bucket, c.var.organization.id), 200);
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
