import type { Context } from "hono";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "./env";
import { publicUrl } from "./public-url";

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export type Page = { limit: number; offset: number };

/**
 * Query parameters every paginated list documents: integers to a client. Read leniently, as
 * PostHog does: a value that is not a non-negative integer falls back to the default.
 */
export const PaginationQuery = z.object({
  limit: z.string().optional().openapi({
    type: "integer",
    minimum: 0,
    example: 20,
    description: "Number of results per page (default 100, at most 1000; larger is capped).",
  }),
  offset: z.string().optional().openapi({ type: "integer", minimum: 0, example: 0, description: "Index of the first result (default 0)." }),
});

function nonNegativeInteger(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) ? parsed : undefined;
}

export function readPage(c: Context): Page {
  const limit = nonNegativeInteger(c.req.query("limit"));
  const offset = nonNegativeInteger(c.req.query("offset"));
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
