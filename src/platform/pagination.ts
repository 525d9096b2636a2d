import type { Context } from "hono";
import { z } from "@hono/zod-openapi";
import { inArray, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Database } from "./db";
import type { AppEnv } from "./env";
import { publicUrl } from "./public-url";

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export type Page = { limit: number; offset: number };

/**
 * A parameter sent more than once reaches the validator as a list: accepted, then ignored.
 * Documented as an integer, which is what a client sends.
 */
const lenientParameter = (description: string, example: number) =>
  z.union([z.string(), z.array(z.string())]).optional().openapi({ type: "integer", minimum: 0, example, description });

/**
 * Query parameters every paginated list documents. Read leniently, as PostHog does: a value that
 * is not a non-negative integer falls back to the default.
 */
export const PaginationQuery = z.object({
  limit: lenientParameter("Number of results per page (default 100, at most 1000; larger is capped).", 20),
  offset: lenientParameter("Index of the first result (default 0).", 0),
});

/** The parameter's value when it was sent once as a non-negative integer; anything else falls back. */
function nonNegativeInteger(c: Context, name: string): number | undefined {
  const values = c.req.queries(name) ?? [];
  const [value] = values;
  if (values.length !== 1 || value === undefined || !/^\d+$/.test(value)) return undefined;
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) ? parsed : undefined;
}

export function readPage(c: Context): Page {
  const limit = nonNegativeInteger(c, "limit");
  const offset = nonNegativeInteger(c, "offset");
  return {
    limit: limit === undefined || limit === 0 ? DEFAULT_PAGE_SIZE : Math.min(limit, MAX_PAGE_SIZE),
    offset: offset ?? 0,
  };
}

export const paginated = <T extends z.ZodType>(item: T) =>
  z.object({
    count: z.number().int(),
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(item),
  });

function pageUrl(c: Context<AppEnv>, page: Page): string {
  const request = new URL(c.req.url);
  const url = publicUrl(c, `${request.pathname}${request.search}`);
  url.searchParams.set("limit", String(page.limit));
  url.searchParams.set("offset", String(page.offset));
  return url.toString();
}

/** A page: absolute `next`/`previous` links that keep the other query parameters, or null. */
export function pageEnvelope<T>(c: Context<AppEnv>, page: Page, count: number, results: T[]) {
  const hasNext = page.offset + page.limit < count;
  const hasPrevious = page.offset > 0;
  return {
    count,
    next: hasNext ? pageUrl(c, { limit: page.limit, offset: page.offset + page.limit }) : null,
    previous: hasPrevious
      ? pageUrl(c, { limit: page.limit, offset: Math.max(0, page.offset - page.limit) })
      : null,
    results,
  };
}

/**
 * A page's rows by their ids, the ids read first along the list's index alone (a deferred join):
 * an offset then skips narrow index entries instead of whole rows and their joins, and only the
 * page's rows are read and joined. `order` must be what the index holds, in its order; the outer
 * query orders its few rows the same way.
 */
export function onPage(db: Database, id: SQLiteColumn, where: SQL | undefined, order: SQL[], page: Page): SQL {
  const ids = db.select({ id }).from(id.table).where(where).orderBy(...order).limit(page.limit).offset(page.offset);
  return inArray(id, ids);
}

/**
 * A list's count as a statement of its batch, whatever computes it: the counter its triggers
 * keep (`counterOf`, one row) for the whole list, or `db.$count(...)` where the caller sees only
 * some of it (those rows are then read).
 */
export const selectCount = (db: Database, count: SQL<number>) => db.select({ value: count }).from(sql`(select 1)`);

/** A counter column of the row `where` picks (a trigger-kept count: see migrations/). */
export const counterOf = (column: SQLiteColumn, where: SQL | undefined) =>
  sql<number>`(select ${column} from ${column.table} where ${where})`;
