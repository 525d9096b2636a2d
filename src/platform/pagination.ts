import type { Context } from "hono";
import { z } from "@hono/zod-openapi";
import { and, getTableColumns, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Database } from "./db";
import type { AppEnv } from "./env";
import { fromBase64Url, toBase64Url } from "./ids";
import { thisRequestUrl } from "./public-url";

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

/**
 * `after`: the sort key of the row before the page, from the `next` link of the page before it;
 * `before`: the sort key of the row after the page, from the `previous` link of the page after it.
 * Each is used only when it was made for this very offset.
 */
export type Page = { limit: number; offset: number; after?: Cursor; before?: Cursor };

/** A sort key in a cursor: what a row's columns hold. */
type Cursor = (string | number | boolean)[];

/**
 * A parameter sent more than once reaches the validator as a list: accepted, then ignored.
 * Documented as an integer, which is what a client sends.
 */
const lenientParameter = (description: string, example: number) =>
  z
    .union([z.string(), z.array(z.string())])
    .optional()
    .openapi({ type: "integer", minimum: 0, example, description });

/**
 * Query parameters every paginated list documents. Read leniently, as PostHog does: a value that
 * is not a non-negative integer falls back to the default.
 */
export const PaginationQuery = z.object({
  limit: lenientParameter("Number of results per page (default 100, at most 1000; larger is capped).", 20),
  offset: lenientParameter("Index of the first result (default 0).", 0),
});

/**
 * A page size read as `limit` is (`readPage`), for a list that validates its query with a schema:
 * a whole number above 0, capped at 1000; anything else (sent twice, not a number) is undefined,
 * the default.
 */
export const lenientPageSize = (description: string) =>
  lenientParameter(description, 20).transform((value) => {
    const size = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : 0;
    return size > 0 ? Math.min(size, MAX_PAGE_SIZE) : undefined;
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
  const offset = nonNegativeInteger(c, "offset") ?? 0;
  return {
    limit: limit === undefined || limit === 0 ? DEFAULT_PAGE_SIZE : Math.min(limit, MAX_PAGE_SIZE),
    offset,
    after: readCursor(c.req.query("after"), offset),
    before: readCursor(c.req.query("before"), offset),
  };
}

/** A cursor is `{"o": offset, "k": [sort key]}` in base64url JSON; anything else is ignored. */
function readCursor(value: string | undefined, offset: number): Cursor | undefined {
  if (!value || value.length > 1024) return undefined;
  try {
    const cursor: unknown = JSON.parse(new TextDecoder().decode(fromBase64Url(value)));
    if (typeof cursor !== "object" || cursor === null) return undefined;
    const { o, k } = cursor as { o?: unknown; k?: unknown };
    const valid =
      o === offset && Array.isArray(k) && k.every((part) => ["string", "number", "boolean"].includes(typeof part));
    return valid ? (k as Cursor) : undefined;
  } catch {
    return undefined;
  }
}

const encodeCursor = (offset: number, key: unknown[]) =>
  toBase64Url(new TextEncoder().encode(JSON.stringify({ o: offset, k: key })));

export const paginated = <T extends z.ZodType>(item: T) =>
  z.object({
    count: z.number().int(),
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(item),
  });

function pageUrl(c: Context<AppEnv>, page: Page, cursor?: { name: "after" | "before"; value: string }): string {
  const url = thisRequestUrl(c);
  url.searchParams.set("limit", String(page.limit));
  url.searchParams.set("offset", String(page.offset));
  url.searchParams.delete("after");
  url.searchParams.delete("before");
  if (cursor !== undefined) url.searchParams.set(cursor.name, cursor.value);
  return url.toString();
}

/**
 * A list's order along its index, after the owner's columns: each column in its direction, the
 * last one the id, so that every row has its own sort key and a page can start right after one.
 */
export type ListOrder = [SQLiteColumn, "asc" | "desc"][];

/** The id column: the order's last. */
const idOf = (order: ListOrder) => order.at(-1)![0];

/** A cursor `page` carries for `order`: the sort key of the row the page starts after or ends before. */
type Seek = { key: Cursor; side: "after" | "before" };

function cursorOf(order: ListOrder, page: Page): Seek | undefined {
  const width = order.length;
  if (page.after?.length === width) return { key: page.after, side: "after" };
  if (page.before?.length === width) return { key: page.before, side: "before" };
  return undefined;
}

/**
 * A join the list's rows are read through, when its owner is not one row but several: the
 * caller's memberships for `GET /api/projects`, each organization's projects along its own index
 * (SQLite reads each one only as far as the page needs).
 */
export type Through = [SQLiteTable, SQL];

/**
 * What restricts a list's query to its page, and one more row: the extra row says whether a page
 * lies beyond (`pageOf`, which also puts the rows in order). Join it
 * (`innerJoin(...joinPage(...))`): the page's ids (`pageIds`) as a table `"page"`, each row read
 * by its id.
 */
export const joinPage = (db: Database, order: ListOrder, where: SQL | undefined, page: Page, through?: Through) =>
  [sql`(${pageIds(db, order, where, page, through)}) as "page"`, sql`${idOf(order)} = "page"."id"`] as const;

/**
 * The ids of a page and of the row after it, as a query of `"id"`, read along the list's index
 * alone (no row, no join): without a cursor for this offset, from the list's start, skipping
 * `offset` entries (D1 counts each one skipped as a row read); with one, from the cursor's row,
 * whatever its depth. The page's own ids come first, the extra one last.
 */
export function pageIds(db: Database, order: ListOrder, where: SQL | undefined, page: Page, through?: Through): SQL {
  const seek = cursorOf(order, page);
  if (seek) return ordered(order, rangesPast(db, order, where, seek, through), seek.side, page.limit);
  return ordered(order, [entries(db, order, where, "after", through)], "after", page.limit, page.offset);
}

/** The order's columns walked toward `side`: each one's alias in `entries`, its direction and comparison. */
function keysOf(order: ListOrder, side: Seek["side"]) {
  return order.map(([column, listed], index) => {
    const direction = side === "after" ? listed : listed === "asc" ? "desc" : "asc";
    return {
      column,
      alias: `key_${index}`,
      direction: sql.raw(direction),
      past: sql.raw(direction === "desc" ? "<" : ">"),
    };
  });
}

/** The index entries `where` selects: each row's id and sort key (`key_0`...). */
function entries(db: Database, order: ListOrder, where: SQL | undefined, side: Seek["side"], through?: Through) {
  const keys = keysOf(order, side);
  const fields = Object.fromEntries([
    ["id", sql`${idOf(order)}`.as("id")],
    ...keys.map((key) => [key.alias, sql`${key.column}`.as(key.alias)]),
  ]);
  const table = db.select(fields).from(idOf(order).table);
  return (through ? table.innerJoin(...through) : table).where(where).getSQL();
}

/**
 * Sets of entries (`entries`) as one, walked toward `side` and cut to the page's `limit` and one
 * more (the extra row tells whether there is a next page) after `offset`. The sum is SQLite's, so
 * that the statement binds the limit as sent (a prepared statement binds it).
 * Each set is a range of the index in that order, so SQLite merges them, reading each only as far
 * as the page needs.
 */
const ordered = (order: ListOrder, sets: SQL[], side: Seek["side"], limit: number | SQL, offset = 0) =>
  sql`${sql.join(sets, sql` union all `)}
    order by ${sql.join(
      keysOf(order, side).map((key) => sql`${sql.identifier(key.alias)} ${key.direction}`),
      sql`, `,
    )}
    limit ${limit} + 1 offset ${offset}`;

/**
 * The entries past the cursor's row (walked the other way before it): one range of the index
 * where a row-value comparison is one (one direction throughout, and a last column that is not
 * the table's rowid, which SQLite does not range-scan in a row value); else one range per column,
 * merged: rows tied with the cursor's on the columns before, and past it on this one.
 */
function rangesPast(db: Database, order: ListOrder, where: SQL | undefined, seek: Seek, through?: Through) {
  return rangeConditions(order, seek).map((condition) => entries(db, order, and(condition, where), seek.side, through));
}

/** What puts a row past the cursor's row, as `rangesPast`'s ranges: one, or one per column. */
function rangeConditions(order: ListOrder, seek: Seek): SQL[] {
  const values = order.map(([column], index) => sql.param(seek.key[index], column));
  const keys = keysOf(order, seek.side);
  if (isOneRange(order)) {
    return [
      sql`(${sql.join(
        keys.map((key) => key.column),
        sql`, `,
      )}) ${keys[0]!.past} (${sql.join(values, sql`, `)})`,
    ];
  }
  return keys.map((key, index) => {
    const tied = keys.slice(0, index).map((earlier, at) => sql`${earlier.column} = ${values[at]}`);
    return sql.join([...tied, sql`${key.column} ${key.past} ${values[index]}`], sql` and `);
  });
}

/**
 * `pageIds` for rows `where` reads by id rather than along the list's index (a few candidates,
 * sorted): past a cursor, one set whose rows are tested against each range, so that `where` is
 * written once in the statement, not once per range (D1 binds at most 100 parameters). Read only
 * where `when` holds, if given (a condition the same for every row: SQLite tests a WHERE term on
 * each row it reads, but a LIMIT once, before reading any).
 */
export function pageIdsAmong(db: Database, order: ListOrder, where: SQL | undefined, page: Page, when?: SQL): SQL {
  // -1: no row at all (`ordered` reads one more than the limit).
  const limit = when ? sql`(case when ${when} then ${page.limit} else -1 end)` : page.limit;
  const seek = cursorOf(order, page);
  if (!seek) return ordered(order, [entries(db, order, where, "after")], "after", limit, page.offset);
  const past = sql`(${sql.join(
    rangeConditions(order, seek).map((condition) => sql`(${condition})`),
    sql` or `,
  )})`;
  return ordered(order, [entries(db, order, and(past, where), seek.side)], seek.side, limit);
}

function isOneRange(order: ListOrder) {
  const id = idOf(order);
  const rowid = id.primary && id.columnType === "SQLiteInteger";
  return !rowid && order.every(([, direction]) => direction === order[0]![1]);
}

/** What a page's links need besides its offset: whether a page follows, and its edge rows' sort keys. */
export type PageLinks = { hasNext: boolean; hasPrevious?: boolean; first?: unknown[]; last?: unknown[] };

/**
 * The page among the rows read through `joinPage`, in list order, and its links: the extra row,
 * when there is one, is past the page's end (or, before a cursor, its start). `rowOf` picks the
 * list's table's row out of a joined one. The few rows are put in order here: an ORDER BY would
 * cost a row read per row sorted.
 */
export function pageOf<T>(order: ListOrder, page: Page, rows: T[], rowOf: (row: T) => object = (row) => row as object) {
  const keyed = rows.map((row) => ({ row, key: keyOfRow(order, rowOf(row)) }));
  keyed.sort((a, b) => compareKeys(order, a.key, b.key));
  const backward = cursorOf(order, page)?.side === "before";
  const extra = keyed.length > page.limit;
  const kept = !extra ? keyed : backward ? keyed.slice(1) : keyed.slice(0, page.limit);
  // Before a cursor, the cursor's row follows the page.
  // Before a cursor, the extra row lies before the page: rows added there meanwhile keep `previous`.
  const links: PageLinks = {
    hasNext: backward || extra,
    hasPrevious: backward && extra,
    first: kept[0]?.key,
    last: kept.at(-1)?.key,
  };
  return { rows: kept.map(({ row }) => row), links };
}

/** The sort key of a row of the order's table (`select()` of it): what a cursor carries. */
function keyOfRow(order: ListOrder, row: object): unknown[] {
  return order.map(([column]) => {
    const entry = Object.entries(getTableColumns(column.table)).find(([, candidate]) => candidate === column);
    if (!entry) throw new Error(`${column.name} is not a column of its table`);
    return (row as Record<string, unknown>)[entry[0]];
  });
}

/** Two sort keys compared as SQLite orders them: numbers (and booleans) by value, text by its UTF-8 bytes. */
function compareKeys(order: ListOrder, left: unknown[], right: unknown[]): number {
  for (const [index, [, direction]] of order.entries()) {
    const [a, b] = [sortable(left[index]), sortable(right[index])];
    if (a === b) continue;
    const ascending = typeof a === "number" && typeof b === "number" ? a - b : compareText(String(a), String(b));
    return direction === "asc" ? ascending : -ascending;
  }
  return 0;
}

const sortable = (value: unknown) => (typeof value === "boolean" ? Number(value) : value);

/** By code point, which orders text as its UTF-8 bytes do (JavaScript's `<` compares UTF-16 units). */
function compareText(a: string, b: string): number {
  const [left, right] = [[...a], [...b]];
  for (let index = 0; index < Math.min(left.length, right.length); index += 1) {
    const difference = left[index]!.codePointAt(0)! - right[index]!.codePointAt(0)!;
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

/**
 * A page: absolute `next`/`previous` links that keep the other query parameters, or null. The
 * links carry cursors from the page's edge rows (`pageOf`), so that following them reads a page
 * from those rows instead of skipping `offset` rows: `next` past the last row,
 * `previous` before the first (when a whole page lies before it). An empty page read before a
 * cursor (every row before it went) leads to the list's first page.
 */
export function pageEnvelope<T>(c: Context<AppEnv>, page: Page, count: number, results: T[], links: PageLinks) {
  // Empty with a page after it: read before a cursor, and no row precedes that cursor's row now.
  if (results.length === 0 && links.hasNext) {
    return { count, next: pageUrl(c, { limit: page.limit, offset: 0 }), previous: null, results };
  }
  const nextOffset = page.offset + page.limit;
  const previousOffset = Math.max(0, page.offset - page.limit);
  // Even on a short page (one reached by `previous` after rows before it went): offset alone would skip.
  const after = links.last ? { name: "after" as const, value: encodeCursor(nextOffset, links.last) } : undefined;
  const before =
    links.first && page.offset >= page.limit
      ? { name: "before" as const, value: encodeCursor(previousOffset, links.first) }
      : undefined;
  return {
    count,
    next: links.hasNext ? pageUrl(c, { limit: page.limit, offset: nextOffset }, after) : null,
    previous:
      page.offset > 0 || links.hasPrevious ? pageUrl(c, { limit: page.limit, offset: previousOffset }, before) : null,
    results,
  };
}

/**
 * A list's count as a statement of its batch, whatever computes it: the counter its triggers
 * keep (`counterOf`, one row), or that counter less what the caller may not see.
 */
export const selectCount = (db: Database, count: SQL<number>) => db.select({ value: count }).from(sql`(select 1)`);

/** A counter column of the row `where` picks (a trigger-kept count: see migrations/). */
export const counterOf = (column: SQLiteColumn, where: SQL | undefined) =>
  sql<number>`(select ${column} from ${column.table} where ${where})`;
