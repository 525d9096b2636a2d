import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { eventPayload } from "../../platform/activity-log/event-payload";
import type { AppEnv } from "../../platform/env";
import { organizationRead } from "../../platform/route-context";
import { DEFAULT_PAGE_SIZE } from "../../platform/pagination";
import { thisRequestUrl } from "../../platform/public-url";
import { feedStatements } from "./events.queries";
import type { listEvents } from "./events.routes";

/** This request's URL with `after` moved to the cursor: the same filters and limit. */
function feedUrl(c: Context<AppEnv>, cursor: number): string {
  const url = thisRequestUrl(c);
  url.searchParams.set("after", String(cursor));
  return url.toString();
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
    userId: c.var.actor.userId,
    after: Number(query.after ?? 0),
    limit,
    events: query.events,
  };
  const [rows, [range]] = await read.batch([...feedStatements(read.db, window)]);
  const { cursor, hasMore } = nextCursor(
    rows.map((row) => row.entry),
    limit,
    range ?? { start: window.after, end: null },
  );
  return c.json(
    {
      next: feedUrl(c, cursor),
      cursor: String(cursor),
      has_more: hasMore,
      results: rows.slice(0, limit).map((row) => eventPayload(row.entry, row.user)),
    },
    200,
  );
};
