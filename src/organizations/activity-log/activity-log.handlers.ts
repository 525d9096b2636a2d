import type { RouteHandler } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { activityLog } from "../../db/schema";
import {
  activityPageEnvelope,
  selectEntriesWithUsers,
  toActivityLogEntry,
} from "../../platform/activity-log/activity-log.queries";
import { selectSegments, verdictAcross, verifyChain } from "../../platform/activity-log/archive";
import {
  archivedEntry,
  pageAcrossArchive,
  pageStatements,
  selectSegmentsAroundId,
} from "../../platform/activity-log/archived-reads";
import { chainStatements, sealChain, type ChainVerdict } from "../../platform/activity-log/chain";
import { primaryOfRequest } from "../../platform/request-context";
import type { AppEnv } from "../../platform/env";
import { notFound } from "../../platform/errors";
import { organizationRead } from "../../platform/route-context";
import type { listActivityLog, retrieveActivityLogEntry, verifyActivityLog } from "./activity-log.routes";
import { thisRequestUrl } from "../../platform/public-url";

/**
 * A page from the entries kept here, in the membership's round trip with the segments below its
 * cursor; when those entries run out before the page is full, it goes on in the archived segments.
 */
export const listOrganizationActivityLog: RouteHandler<typeof listActivityLog, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const read = organizationRead(c);
  const reads = await read.batch([...pageStatements(read.db, { organizationId: read.organizationId }, query)]);
  const page = await pageAcrossArchive({ bucket: c.env.ACTIVITY_LOG_ARCHIVE, db: read.db }, query, reads);
  return c.json(activityPageEnvelope(thisRequestUrl(c), query, page.rows, page.counted, page.resumeAt), 200);
};

/**
 * Read at the primary with the membership, in one round trip, then the archived segments from the
 * bucket. Entries not sealed yet (a write's seal still running) are sealed first and the chain read
 * again, so that the verdict covers them. A break is reported only when a fresh read finds it too:
 * segment retention moves the anchor past a segment before deleting its object, so an object found
 * missing may belong to a segment that left the chain between the two reads.
 */
export const verifyOrganizationActivityLog: RouteHandler<typeof verifyActivityLog, AppEnv> = async (c) => {
  const primary = primaryOfRequest(c);
  const read = organizationRead(c, primary);
  const [rows, [anchor], segments] = await read.batch([
    ...chainStatements(primary, read.organizationId),
    selectSegments(primary, read.organizationId),
  ]);
  const bucket = c.env.ACTIVITY_LOG_ARCHIVE;
  const organizationId = c.var.organization.id;
  let verdict: ChainVerdict;
  if (rows.every((row) => row.hash !== null)) {
    verdict = await verdictAcross(bucket, segments, rows, anchor);
  } else {
    // Every entry still unsealed, a pass of at most `SEAL_BATCH` at a time: a backlog is no broken chain.
    while ((await sealChain(primary, organizationId)) > 0);
    verdict = await verifyChain(primary, bucket, organizationId);
  }
  if (!verdict.valid) verdict = await verifyChain(primary, bucket, organizationId);
  return c.json(verdict, 200);
};

/**
 * An admin sees every entry of the organization, as in its log, kept here or archived (found by the
 * time in its id); another organization's id is 404.
 */
export const retrieveOrganizationActivityLogEntry: RouteHandler<typeof retrieveActivityLogEntry, AppEnv> = async (
  c,
) => {
  const { id } = c.req.valid("param");
  const read = organizationRead(c);
  const [[row], segments] = await read.batch([
    selectEntriesWithUsers(read.db).where(
      and(eq(activityLog.organizationId, read.organizationId), eq(activityLog.id, id)),
    ),
    selectSegmentsAroundId(read.db, read.organizationId, id),
  ]);
  const found = row ?? (await archivedEntry({ bucket: c.env.ACTIVITY_LOG_ARCHIVE, db: read.db }, segments, id));
  if (!found) throw notFound();
  return c.json(toActivityLogEntry(found), 200);
};
