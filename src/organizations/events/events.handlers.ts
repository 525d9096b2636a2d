import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { readSegment, withUsers, type SegmentRow } from "../../platform/activity-log/archive";
import { eventPayload } from "../../platform/activity-log/event-payload";
import type { AppEnv } from "../../platform/env";
import { organizationRead } from "../../platform/route-context";
import { DEFAULT_PAGE_SIZE } from "../../platform/pagination";
import { thisRequestUrl } from "../../platform/public-url";
import { feedSegments, feedStatements, SEGMENTS_PER_READ, visibleArchivedIds, type FeedWindow } from "./events.queries";
import type { listEvents } from "./events.routes";

/** This request's URL with `after` moved to the cursor: the same filters and limit. */
function feedUrl(c: Context<AppEnv>, cursor: number): string {
  const url = thisRequestUrl(c);
  url.searchParams.set("after", String(cursor));
  return url.toString();
}

/**
 * The range's archived entries the caller sees and asked for, in order, with users; `readEnd`, the
 * last number this read covers (short of the range when its segments were more than one read
 * takes: `clipped`), and `end`, the last archived number read.
 */
async function archivedRange(c: Context<AppEnv>, window: FeedWindow, segments: SegmentRow[], start: number) {
  const rangeEnd = start + window.limit + 1;
  const clipped = segments.length === SEGMENTS_PER_READ && segments.at(-1)!.lastSeq < rangeEnd;
  const readEnd = clipped ? segments.at(-1)!.lastSeq : rangeEnd;
  if (segments.length === 0) return { rows: [], readEnd, end: null, clipped };
  const contents = await Promise.all(segments.map((segment) => readSegment(c.env.ACTIVITY_LOG_ARCHIVE, segment)));
  const entries = contents
    .flatMap((content) => content.rows)
    .filter((entry) => entry.seq > start && entry.seq <= readEnd && entry.hash !== null);
  const visible = entries.length === 0 ? [] : await visibleArchivedIds(c.var.db, window, entries);
  const ids = new Set(visible.map((row) => row.id));
  return {
    rows: await withUsers(
      c.var.db,
      entries.filter((entry) => ids.has(entry.id)),
    ),
    readEnd,
    end: entries.at(-1)?.seq ?? null,
    clipped,
  };
}

/**
 * Where the next read starts: after the last event listed when the page is full, else after the
 * last entry of the range read (events the filters or visibility left out are passed, not
 * re-read), else where this read started (nothing new yet).
 */
function nextCursor(listed: { seq: number }[], limit: number, range: { start: number; end: number | null }) {
  if (listed.length > limit) return { cursor: listed[limit - 1]!.seq, hasMore: true };
  const cursor = range.end ?? range.start;
  return { cursor, hasMore: cursor === range.start + limit + 1 };
}

export const listOrganizationEvents: RouteHandler<typeof listEvents, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const read = organizationRead(c);
  const window = {
    organizationId: read.organizationId,
    actor: c.var.actor,
    after: Number(query.after ?? 0),
    limit,
    events: query.events,
  };
  const [kept, [range], segments] = await read.batch([
    ...feedStatements(read.db, window),
    feedSegments(read.db, window),
  ]);
  const archived = await archivedRange(c, window, segments, range?.start ?? window.after);
  const rows = [...archived.rows, ...kept.filter((row) => row.entry.seq <= archived.readEnd)];
  const ends = [archived.end, range?.end ?? null].filter(
    (end): end is number => end !== null && end <= archived.readEnd,
  );
  const next = nextCursor(
    rows.map((row) => row.entry),
    limit,
    { start: range?.start ?? window.after, end: ends.length === 0 ? null : Math.max(...ends) },
  );
  const { cursor } = next;
  const hasMore = next.hasMore || archived.clipped;
  return c.json(
    {
      next: feedUrl(c, cursor),
      cursor: String(cursor),
      has_more: hasMore,
      results: rows.slice(0, limit).map(eventPayload),
    },
    200,
  );
};
