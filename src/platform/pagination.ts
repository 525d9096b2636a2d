import type { Context } from "hono";
import { z } from "@hono/zod-openapi";
import { asc, desc, eq, getTableColumns, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Database } from "./db";
import type { AppEnv } from "./env";
import { fromBase64Url, toBase64Url } from "./ids";
import { publicUrl } from "./public-url";

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

/**
 * `after`: the sort key of the row before the page, from the `next` link of the page before it
 * (`seekOrder`); `before`: the sort key of the row after the page, from the `previous` link of the
 * page after it. Each is used only when it was made for this very offset.
 */
export type Page = { limit: number; offset: number; after?: Cursor; before?: Cursor };

/** A sort key in a cursor: what a row's columns hold. */
type Cursor = (string | number | boolean)[];

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
    const valid = o === offset && Array.isArray(k) && k.every((part) => ["string", "number", "boolean"].includes(typeof part));
    return valid ? (k as Cursor) : undefined;
  } catch {
    return undefined;
  }
}

const encodeCursor = (offset: number, key: unknown[]) => toBase64Url(new TextEncoder().encode(JSON.stringify({ o: offset, k: key })));

export const paginated = <T extends z.ZodType>(item: T) =>
  z.object({
    count: z.number().int(),
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(item),
  });

function pageUrl(c: Context<AppEnv>, page: Page, cursor?: { name: "after" | "before"; value: string }): string {
  const request = new URL(c.req.url);
  const url = publicUrl(c, `${request.pathname}${request.search}`);
  url.searchParams.set("limit", String(page.limit));
  url.searchParams.set("offset", String(page.offset));
  url.searchParams.delete("after");
  url.searchParams.delete("before");
  if (cursor !== undefined) url.searchParams.set(cursor.name, cursor.value);
  return url.toString();
}

/** The sort keys of a page's first and last rows (`keyOfRow`), for the cursors of its links. */
export type PageKeys = { first: unknown[]; last: unknown[] };

export function keysOfPage<T extends Record<string, unknown>>(order: SeekOrder, rows: T[]): PageKeys | undefined {
  const [first] = rows;
  const last = rows.at(-1);
  return first && last ? { first: keyOfRow(order, first), last: keyOfRow(order, last) } : undefined;
}

/**
 * A page: absolute `next`/`previous` links that keep the other query parameters, or null. With
 * the sort keys of the page's first and last rows (`keysOfPage`), the links also carry cursors, so
 * that following them seeks from those rows instead of skipping `offset` rows: `next` past the
 * last row (a full page only), `previous` before the first (when a whole page lies before it).
 */
export function pageEnvelope<T>(c: Context<AppEnv>, page: Page, count: number, results: T[], keys?: PageKeys) {
  const hasNext = page.offset + page.limit < count;
  const hasPrevious = page.offset > 0;
  const nextOffset = page.offset + page.limit;
  const previousOffset = Math.max(0, page.offset - page.limit);
  const after = keys && results.length === page.limit ? { name: "after" as const, value: encodeCursor(nextOffset, keys.last) } : undefined;
  const before = keys && page.offset >= page.limit ? { name: "before" as const, value: encodeCursor(previousOffset, keys.first) } : undefined;
  return {
    count,
    next: hasNext ? pageUrl(c, { limit: page.limit, offset: nextOffset }, after) : null,
    previous: hasPrevious ? pageUrl(c, { limit: page.limit, offset: previousOffset }, before) : null,
    results,
  };
}

/**
 * A list's order along its index, each column in its direction, the last one unique (the id): a
 * page can then start right after a row, by its sort key, however deep it is. A list in
 * insertion order is ordered by its rows' positions (`positionOrder`).
 */
export type SeekOrder = { columns: [SQLiteColumn, "asc" | "desc"][]; sql: SQL[]; positions?: ListPositions; shards?: SortedList };

export const seekOrder = (columns: [SQLiteColumn, "asc" | "desc"][]): SeekOrder => ({
  columns,
  sql: columns.map(([column, direction]) => (direction === "desc" ? desc(column) : asc(column))),
});

/**
 * One list of `list_position_gaps`: its name there, whose list it is (the parent row's id), and
 * the parent's column counting the positions issued (`*_positions`).
 */
export type ListPositions = { list: string; owner: string | number | SQL; issued: SQLiteColumn };

/**
 * One list of `sorted_list_shards`: its name there, whose list it is (stored as text), and the
 * width of an entry of its shards (what its triggers write: see migrations/).
 */
export type SortedList = { list: string; owner: string | number | SQL; width: number };

/**
 * A list sorted by its `columns` (as its index is) whose ids `list` holds in order: every offset
 * reads a page and a few shards.
 */
export const shardedOrder = (columns: [SQLiteColumn, "asc" | "desc"][], list: SortedList): SeekOrder => ({
  ...seekOrder(columns),
  shards: list,
});

/**
 * A page's few rows in list order, by each row's sort key (`keyOf`: values compared in turn,
 * ascending), sorted here rather than by an ORDER BY, which D1 bills a row read per row sorted.
 * Text is compared as JavaScript does, by UTF-16 unit: a list sorted by a column (`shardedOrder`)
 * passes its `list_key`, the list's order as one ASCII text, which compares as SQLite does.
 */
export const inListOrder = <T>(rows: T[], keyOf: (row: T) => (string | number)[]): T[] =>
  rows.sort((a, b) => {
    const [left, right] = [keyOf(a), keyOf(b)];
    const differing = left.findIndex((value, index) => value !== right[index]);
    if (differing < 0) return 0;
    return left[differing]! < right[differing]! ? -1 : 1;
  });

/**
 * Oldest first (`asc`) or newest first (`desc`), by the rows' positions in `list`: every offset
 * reads a page. The query `onPage` filters must be limited to the page (`.limit(page.limit)`).
 */
export const positionOrder = (position: SQLiteColumn, direction: "asc" | "desc", list: ListPositions): SeekOrder => ({
  ...seekOrder([[position, direction]]),
  positions: list,
});

/** The sort key of a row of the order's table (`select()` of it): what a cursor carries. */
function keyOfRow(order: SeekOrder, row: Record<string, unknown>): unknown[] {
  return order.columns.map(([column]) => {
    const entry = Object.entries(getTableColumns(column.table)).find(([, candidate]) => candidate === column);
    if (!entry) throw new Error(`${column.name} is not a column of its table`);
    return row[entry[0]];
  });
}

/**
 * The condition selecting a page's rows. With a cursor for this offset, the page starts right
 * after (or ends right before) the cursor's row (`seekIds`). Without one, a list in insertion
 * order (`positionOrder`, with its `total` a counter) finds the position of the page's first row
 * (`atPosition`), a list sorted by a column (`shardedOrder`) finds its page's ids in its shards
 * (`shardedIds`), and every other list reads the page's ids first along its index alone (a
 * deferred join), so that an offset skips narrow index entries instead of whole rows and their
 * joins. `order` must be what the index holds, in its order; the outer query (or `inListOrder`)
 * orders its few rows the same way.
 */
export function onPage(
  db: Database,
  id: SQLiteColumn,
  where: SQL | undefined,
  order: SQL[] | SeekOrder,
  page: Page,
  total?: SQL<number>,
): SQL {
  if (!Array.isArray(order) && order.positions && total !== undefined && !cursorOf(order, page)) {
    return atPosition(id, where, order, order.positions, page, total);
  }
  return sql`${id} in (${pageIds(db, id, where, order, page, total)})`;
}

/** The cursor `page` carries for `order`, if any. */
function cursorOf(order: SeekOrder, page: Page) {
  const width = order.columns.length;
  if (page.after?.length === width) return { key: page.after, side: "after" as const };
  if (page.before?.length === width) return { key: page.before, side: "before" as const };
  return undefined;
}

/**
 * `onPage`'s page as a query of its ids (`"id"`), for a list not in insertion order: join the
 * list's rows to it, which reads each by id, where `id in (...)` would first build an index of
 * the ids, at a cost of rows read. The ids come in no order: order the joined rows.
 */
export function pageIds(db: Database, id: SQLiteColumn, where: SQL | undefined, order: SQL[] | SeekOrder, page: Page, total?: SQL<number>): SQL {
  if (!Array.isArray(order)) {
    const cursor = cursorOf(order, page);
    if (cursor) return seekIds(db, id, where, order, page.limit, cursor.key, cursor.side);
    if (total !== undefined && order.shards) return shardedIds(id, where, order, order.shards, page, total);
  }
  const sorted = Array.isArray(order) ? order : order.sql;
  return sql`${db.select({ id }).from(id.table).where(where).orderBy(...sorted).limit(page.limit).offset(page.offset)}`;
}

/** The join of a list's rows (by their `id`) to a query of page ids (`pageIds`, `pageIdsAcrossOwners`). */
export const joinPage = (ids: SQL, id: SQLiteColumn) => [sql`(${ids}) as "page"`, sql`${id} = "page"."id"`] as const;

/** At most `rows` ids of the rows `where` selects, in `sorted` order, after skipping `skipped`. */
const walk = (id: SQLiteColumn, where: SQL | undefined, sorted: SQL[], rows: SQL, skipped: SQL | number) =>
  sql`select * from (select ${id} as "id" from ${id.table} where ${where ?? sql`1`}
    order by ${sql.join(sorted, sql`, `)} limit ${rows} offset ${skipped})`;

/**
 * The position the page starts at, in the list's order, for the `rank`-th live row of the list
 * (1 the oldest): a descent of its Fenwick tree of gaps, one step per bit of the positions issued,
 * whatever the rank. Each step reads a row of the recursion and at most one node (a list without
 * deletions has none). A bit is taken while the live rows up to its node are fewer than `rank`;
 * nodes past the positions issued are not read. The top bit is bounded from the decimal digits d
 * of the positions issued (log2(10^d) < 10d/3: 16 at 10,000), which needs no math functions.
 * Past either end of the list the position is one no row has (0, or one past the last issued);
 * with a null `rank`, null.
 */
function positionOfRank({ list, owner, issued: column }: ListPositions, rank: SQL): SQL {
  const issued = counterOf(column, eq(parentIdOf(column), owner));
  // Owners are stored as text; D1 binds a number as a real, whose text would be "1.0".
  const ownerText = typeof owner === "number" ? String(owner) : owner;
  return sql`(${descend(list, sql`(select ${rank} as wanted, ${issued} as issued, cast(${ownerText} as text) as tree)`)})`;
}

/** The id column of the parent table whose `*_positions` column this is. */
function parentIdOf(issued: SQLiteColumn): SQLiteColumn {
  const id = getTableColumns(issued.table).id;
  if (!id) throw new Error(`${issued.name}'s table has no id`);
  return id;
}

/**
 * `positionOfRank`'s descent, from `start`: a query of one row, the rank (`wanted`), the
 * positions issued (`issued`) and the owner as text (`tree`), each read once and carried along.
 */
function descend(list: string, start: SQL): SQL {
  const size = sql`(1 << bit)`;
  const node = sql`(pos + ${size})`;
  const live = sql`(${size} - coalesce(gaps, 0))`;
  const taken = sql`(${node} <= issued and ${live} < wanted)`;
  // A list that never had a gap has no tree: its k-th row is at position k, with no descent.
  const gapped = sql`exists (select 1 from list_position_gaps where list = ${list} and owner = tree)`;
  return sql`with recursive descent(bit, pos, wanted, issued, tree) as (
      select case when gapped then length(issued) * 10 / 3 else -1 end, case when gapped then 0 else wanted - 1 end, wanted, issued, tree
      from (select *, ${gapped} as gapped from ${start})
      union all
      select bit - 1, pos + case when ${taken} then ${size} else 0 end, wanted - case when ${taken} then ${live} else 0 end, issued, tree
      from descent left join list_position_gaps on list = ${list} and owner = tree and node = ${node} and ${node} <= issued
      where bit >= 0
    ) select case when wanted >= 1 then pos + 1 when wanted is not null then 0 end from descent where bit < 0`;
}

/**
 * An offset without a cursor, in a list in insertion order whose `total` is one row (a counter;
 * null where it would not be): the position of the page's first row is found in the list's tree
 * of gaps (`positionOfRank`), and the list's own query reads on from there along the (owner,
 * position) index, without a deferred join: that query must be limited to the page (a positioned
 * order requires it). With a null total the bound is the list's end and the ids are those of a
 * walk from the start.
 */
function atPosition(id: SQLiteColumn, where: SQL | undefined, order: SeekOrder, positions: ListPositions, page: Page, total: SQL<number>) {
  const [[position, direction]] = order.columns as [[SQLiteColumn, "asc" | "desc"]];
  const ascending = direction === "asc";
  // Its rank from the oldest row; null with the total (a list the caller sees only part of).
  const rank = ascending ? sql`(${total} * 0 + ${page.offset + 1})` : sql`(${total} - ${page.offset})`;
  const bound = sql`coalesce(${positionOfRank(positions, rank)}, ${ascending ? 0 : Number.MAX_SAFE_INTEGER})`;
  const walked = walk(id, where, order.sql, sql`${page.limit}`, page.offset);
  const paged = sql`${position} ${sql.raw(ascending ? ">=" : "<=")} ${bound} and (${total} is not null or ${id} in (${walked}))`;
  return where ? sql`(${where} and ${paged})` : sql`(${paged})`;
}

/**
 * Lists in insertion order of several owners, read as one list (`order`: the owner column, then
 * the position): `list` and `issued` as in `ListPositions`, `size` the owners' counter of rows
 * (a column of the same table), `owners` a subquery (a query builder in `sql`) of the owners' ids
 * (`owner`), and `counted` SQL saying that those counters count what `where` selects.
 */
export type ListsOfOwners = Omit<ListPositions, "owner"> & { size: SQLiteColumn; owners: SQL; counted: SQL };

/**
 * The ids of a page (a query of `"id"`, to join the rows to) of several owners' lists in
 * insertion order read as one list, owner after owner by owner id, each by position.
 *
 * With a cursor, the page seeks from it (`seekIdsAcrossOwners`). Else, where `counted` holds, a running sum
 * of the sizes finds the owner holding the offset and the rank in its list, read once (`start`);
 * its tree of gaps gives the position (`descend`), and the page is read on from there, then from
 * the owners after it, each along the (owner, position) index: a page, at any offset. Where it
 * does not, the ids come from a walk from the start. Each way's LIMIT is 0 when the other is
 * taken, which SQLite checks before it reads. The ids come in no order: join the page's rows to
 * them (an `id in (...)` would first build an index of them, at a cost of rows read) and order
 * those few rows.
 */
export function pageIdsAcrossOwners(db: Database, id: SQLiteColumn, where: SQL | undefined, order: SeekOrder, lists: ListsOfOwners, page: Page): SQL {
  const [[ownerColumn], [position]] = order.columns as [[SQLiteColumn, "asc"], [SQLiteColumn, "asc"]];
  const cursor = cursorOf(order, page);
  if (cursor) return seekIdsAcrossOwners(id, where, [ownerColumn, position], lists.owners, page.limit, cursor);
  const { owners, counted, issued, size } = lists;
  const ownerId = parentIdOf(issued);
  const sizes = sql`select ${ownerId} as owner, ${size} as size, ${issued} as issued from ${issued.table} where ${ownerId} in ${owners}`;
  // min() picks the row its other columns come from (SQLite's rule for a bare min): no sort.
  const start = sql`select min(owner) as tree, ${page.offset} - (upto - size) + 1 as wanted, issued, size
    from (select owner, size, issued, sum(size) over (order by owner) as upto from (${sizes}))
    where upto > ${page.offset}`;
  const firstOwner = sql`(select tree from start)`;
  const firstPosition = sql`(${descend(lists.list, sql`start`)})`;
  const entries = (condition: SQL, sorted: SQL, limit: SQL) =>
    sql`select * from (select ${id} as "id" from ${id.table} where ${condition} order by ${sorted} limit case when ${counted} then ${limit} else 0 end)`;
  const inFirstOwner = entries(sql`${ownerColumn} = ${firstOwner} and ${position} >= ${firstPosition}`, sql`${position}`, sql`${page.limit}`);
  // The rest of the page, after the first owner's rows from the rank on; within the owners'
  // list, so that each owner before the first costs no entry of its list.
  const inLaterOwners = entries(
    sql`${ownerColumn} in (select owner from ${owners} where owner > ${firstOwner})`,
    sql`${ownerColumn}, ${position}`,
    // Past the last owner's end, start's row is empty (nulls): no rest.
    sql`coalesce((select max(0, ${page.limit} - (size - wanted + 1)) from start), 0)`,
  );
  const walked = walk(id, where, order.sql, sql`case when ${counted} then 0 else ${page.limit} end`, page.offset);
  return sql`with start as materialized (${start}) ${inFirstOwner} union all ${inLaterOwners} union all select "id" from (${walked})`;
}

/**
 * The `limit` ids after (or before) the row whose sort key is `cursor` (owner, position), in
 * lists of several owners: the rest of that owner's list, and the lists of the owners after it
 * (before it), found within the owners' list, so that no owner's entries are read to be skipped
 * (a range on the owner column would read every entry of the owners it skips). Each part reads
 * at most `limit` entries; the union is sorted and cut to `limit`.
 */
function seekIdsAcrossOwners(
  id: SQLiteColumn,
  where: SQL | undefined,
  [ownerColumn, position]: [SQLiteColumn, SQLiteColumn],
  owners: SQL,
  limit: number,
  cursor: { key: Cursor; side: "after" | "before" },
) {
  const [owner, at] = cursor.key.map((value, index) => sql.param(value, index === 0 ? ownerColumn : position));
  const after = cursor.side === "after";
  const direction = sql.raw(after ? "asc" : "desc");
  const past = sql.raw(after ? ">" : "<");
  const visible = where ? sql` and ${where}` : sql``;
  const entries = (condition: SQL, sorted: SQL) =>
    sql`select * from (select ${id} as "id", ${ownerColumn} as "owner", ${position} as "position" from ${id.table}
      where ${condition}${visible} order by ${sorted} limit ${limit})`;
  const inOwner = entries(sql`${ownerColumn} = ${owner} and ${position} ${past} ${at}`, sql`${position} ${direction}`);
  const inOthers = entries(sql`${ownerColumn} in (select owner from ${owners} where owner ${past} ${owner})`, sql`${ownerColumn} ${direction}, ${position} ${direction}`);
  return sql`select "id" from (${inOwner} union all ${inOthers}) order by "owner" ${direction}, "position" ${direction} limit ${limit}`;
}

/**
 * An offset without a cursor, in a list sorted by a column whose ids its shards hold in order
 * (`shardedOrder`), with its `total` a counter (null where it would not be, and then the ids are
 * those of a walk from the start): a running sum of the sizes of the list's shards finds the one
 * holding the offset, and the page's ids are a substring of its ids and those of the shard after
 * it (every shard but the first holds more than a page), read as a JSON array. The walk runs
 * only without a total (`coalesce` evaluates an argument only when those before it are null). The
 * ids come in list order, but a join does not promise to keep it: order the rows (`inListOrder`).
 */
function shardedIds(id: SQLiteColumn, where: SQL | undefined, order: SeekOrder, { list, owner, width }: SortedList, page: Page, total: SQL<number>) {
  // Owners are stored as text; D1 binds a number as a real, whose text would be "1.0".
  const ofList = sql`list = ${list} and owner = cast(${typeof owner === "number" ? String(owner) : owner} as text)`;
  // min() picks the row its other columns come from (SQLite's rule for a bare min): no sort.
  const holding = sql`select min(first_key) as first_key, before from (
      select first_key, size, sum(size) over (order by first_key) - size as before from sorted_list_shards where ${ofList}
    ) where before + size > ${page.offset}`;
  const ids = sql`(select ids from sorted_list_shards where ${ofList} and first_key = holding.first_key)
    || coalesce((select ids from sorted_list_shards where ${ofList} and first_key > holding.first_key order by first_key limit 1), '')`;
  // Entries are ",id": the page's start without its comma, to the end of its last entry.
  // Past the end (or in an empty list) the shards answer an empty page: null only without a total.
  const entries = sql`case when ${total} is not null then (select case when first_key is null then '[]'
    else '[' || substr(${ids}, (${page.offset} - before) * ${width} + 2, ${page.limit * width - 1}) || ']' end from (${holding}) as holding) end`;
  const walked = walk(id, where, order.sql, sql`${page.limit}`, page.offset);
  return sql`select value as "id" from json_each(coalesce(${entries}, (select json_group_array("id") from (${walked}))))`;
}

const opposite = (direction: "asc" | "desc") => (direction === "asc" ? "desc" : "asc");

/**
 * The `limit` ids after (or before) the row whose sort key is `cursor`, as the union of one index
 * range per column: rows tied with it on the columns before, and past it on this one. Before the
 * row, each column is walked the other way. Each range reads at most `limit` entries; the union
 * is sorted and cut to `limit`. (A row-value comparison would be one range, but SQLite neither
 * range-scans one that ends with a table's rowid nor mixes directions.)
 */
function seekIds(db: Database, id: SQLiteColumn, where: SQL | undefined, order: SeekOrder, limit: number, cursor: Cursor, side: "after" | "before") {
  const keys = order.columns.map(([column, listed], index) => {
    const direction = side === "after" ? listed : opposite(listed);
    return {
      column,
      alias: `key_${index}`,
      direction: sql.raw(direction),
      walk: direction === "desc" ? desc(column) : asc(column),
      value: sql.param(cursor[index], column),
      past: sql.raw(direction === "desc" ? "<" : ">"),
    };
  });
  const fields = Object.fromEntries([["id", sql`${id}`.as("id")], ...keys.map((key) => [key.alias, sql`${key.column}`.as(key.alias)])]);
  const ranges = keys.map((key, index) => {
    const tied = keys.slice(0, index).map((earlier) => sql`${earlier.column} = ${earlier.value}`);
    const condition = sql.join([...tied, sql`${key.column} ${key.past} ${key.value}`, ...(where ? [where] : [])], sql` and `);
    return sql`select * from (${db.select(fields).from(id.table).where(condition).orderBy(...keys.map((each) => each.walk)).limit(limit)})`;
  });
  const sorted = sql.join(keys.map((key) => sql`${sql.identifier(key.alias)} ${key.direction}`), sql`, `);
  return sql`select "id" from (${sql.join(ranges, sql` union all `)}) order by ${sorted} limit ${limit}`;
}

/**
 * A list's count as a statement of its batch, whatever computes it: the counter its triggers
 * keep (`counterOf`, one row) for the whole list, or `db.$count(...)` where the caller sees only
 * some of it (those rows are then read).
 */
export const selectCount = (db: Database, count: SQL<number>) => db.select({ value: count }).from(sql`(select 1)`);

/** A counter where `condition` says it counts what the caller sees (an admin's), else null. */
export const counterWhen = (condition: SQL, counter: SQL<number>) => sql<number>`case when ${condition} then ${counter} end`;

/** A counter column of the row `where` picks (a trigger-kept count: see migrations/). */
export const counterOf = (column: SQLiteColumn, where: SQL | undefined) =>
  sql<number>`(select ${column} from ${column.table} where ${where})`;
