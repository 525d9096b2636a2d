import {
  and,
  eq,
  getTableColumns,
  getTableName,
  isNull,
  sql,
  type Column,
  type SQL,
  type SQLWrapper,
  type Table,
} from "drizzle-orm";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import { activityLog } from "../db/schema";

/**
 * Every query goes through the query builders: the relational API (`db.query`, which needs the
 * schema passed in) is not used, so the schema and drizzle's relations stay out of the bundle.
 */
export type Database = DrizzleD1Database & { $client: D1Database };

type Statement = BatchItem<"sqlite">;

/**
 * A value bound as the column would bind it (its JSON or boolean mapping), named as the column:
 * a selected field of an INSERT ... SELECT, whose SELECT checks a condition the insert needs.
 */
export const boundAs = <T>(value: T, column: Column) => sql<T>`${sql.param(value, column)}`.as(column.name);

/**
 * A read's one round trip: `db.batch`, or a context's (`organizationRead`, `projectRead`), which
 * adds the caller's membership to the batch and admits it before returning the results.
 */
export type ReadBatch = <T extends [Statement, ...Statement[]]>(statements: T) => Promise<BatchResponse<T>>;

/**
 * What the D1 work of one request cost: round trips (a batch is one), rows read and rows written,
 * as D1 reports them in each result's `meta`. Reported to the caller in `Server-Timing`.
 */
export class D1Meter {
  queries = 0;
  rowsRead = 0;
  rowsWritten = 0;
  durationMs = 0;
  /**
   * Some round trip read what the caller may not see (a `@current` guess that missed): the answer
   * reports its round trips alone, as a refusal does.
   */
  readBeyondCaller = false;

  record(results: D1Result[], startedAt: number) {
    this.queries += 1;
    this.durationMs += Date.now() - startedAt;
    for (const result of results) {
      this.rowsRead += result.meta?.rows_read ?? 0;
      this.rowsWritten += result.meta?.rows_written ?? 0;
    }
  }

  /** What `Server-Timing` says of the D1 work, so that cost is visible to callers and benchmarks. */
  describe() {
    return `queries=${this.queries} rows_read=${this.rowsRead} rows_written=${this.rowsWritten}`;
  }
}

const meteredStatements = new WeakMap<D1PreparedStatement, D1PreparedStatement>();

/**
 * `statement` (of `query`) recording its round trips in `meter`. Bound to more values than D1
 * takes, it is prepared again with numbered parameters (a list repeating the caller's ids in
 * every range it tests); statements numbered already (`prepared`) are bound as they are.
 */
function meterStatement(
  session: D1DatabaseSession,
  query: string,
  statement: D1PreparedStatement,
  meter: D1Meter,
): D1PreparedStatement {
  const bind = (values: unknown[]) => {
    if (values.length <= D1_MAX_BOUND_PARAMETERS) return statement.bind(...values);
    const numbered = numberParameters(query, values, keyOfValue);
    return session.prepare(numbered.sql).bind(...numbered.parameters);
  };
  const metered: D1PreparedStatement = {
    bind: (...values: unknown[]) => meterStatement(session, query, bind(values), meter),
    async run<T>() {
      const startedAt = Date.now();
      const result = await statement.run<T>();
      meter.record([result], startedAt);
      return result;
    },
    async all<T>() {
      const startedAt = Date.now();
      const result = await statement.all<T>();
      meter.record([result], startedAt);
      return result;
    },
    async first<T>(columnName?: string) {
      const { results } = await metered.all<Record<string, T>>();
      const [row] = results;
      if (row === undefined) return null;
      return columnName === undefined ? row : row[columnName];
    },
    /*
     * D1's raw() drops `meta`, so rows read would go uncounted. Arrays are rebuilt from all()'s
     * objects instead, in column order; `uniqueColumnNames` keeps every column in them.
     */
    async raw<T>(options?: { columnNames?: boolean }) {
      const { results } = await metered.all<Record<string, unknown>>();
      const rows = results.map((row) => Object.values(row));
      if (options?.columnNames) {
        const [first] = results;
        return [first ? Object.keys(first) : [], ...rows] as T[];
      }
      return rows as T[];
    },
  } as D1PreparedStatement;
  meteredStatements.set(metered, statement);
  return metered;
}

/**
 * D1 returns rows as objects keyed by column name, so a join's `"a"."id", "b"."id"` would keep
 * one `id` (drizzle's D1 batch reads rows that way too). As a FROM-clause subquery, SQLite names
 * the columns uniquely (`id`, `id:1`) in the same order; the ORDER BY is kept (no outer ORDER
 * BY, not a join) and rows read are unchanged (measured).
 */
function uniqueColumnNames(query: string): string {
  return /^\s*select\b/i.test(query) ? `select * from (${query})` : query;
}

/**
 * SQLite plans with the value of a LIMIT that is a bare bound parameter (`limit ?`), and so
 * compiles the statement again each time it is bound: for `@me`'s first statement that took as
 * long as the rest of its batch (measured, workerd's and Node's SQLite). As an expression
 * (`limit +?`, the same value) it is compiled once and reused.
 */
const limitsAsExpressions = (query: string) => query.replace(/\blimit \?/g, "limit +?");

/**
 * A D1 session that records every round trip in `meter`. Drizzle only prepares and batches, so
 * that is all the wrapper offers.
 */
function meterD1(session: D1DatabaseSession, meter: D1Meter): D1Database {
  return {
    prepare: (query: string) => {
      const text = limitsAsExpressions(uniqueColumnNames(query));
      return meterStatement(session, text, session.prepare(text), meter);
    },
    async batch<T>(statements: D1PreparedStatement[]) {
      const startedAt = Date.now();
      const unwrapped = statements.map((statement) => meteredStatements.get(statement) ?? statement);
      const results = await session.batch<T>(unwrapped);
      meter.record(results, startedAt);
      return results;
    },
  } as D1Database;
}

export function createDatabase(session: D1DatabaseSession, meter: D1Meter): Database {
  return drizzle(meterD1(session, meter));
}

/** Background work (queue consumers, the cron, passes after a response) reads what was just written: at the primary. */
export const primaryDatabase = (env: { DB: D1Database }) =>
  createDatabase(env.DB.withSession("first-primary"), new D1Meter());

/** D1's bookmarks: hex groups joined by dashes. Anything else a client sends is ignored. */
const BOOKMARK_PATTERN = /^[0-9a-f]{1,64}(-[0-9a-f]{1,64}){1,15}$/;

/** A session that starts at the primary database: what it reads is the latest write. */
export const primarySession = (database: D1Database) => database.withSession("first-primary");

/**
 * The request's D1 session (the Sessions API): a read may be served by a read replica, at least
 * as fresh as the bookmark the client sent back from an earlier response (`X-D1-Bookmark`), so a
 * client that follows bookmarks always reads its own writes. Writes start at the primary.
 */
export function openSession(database: D1Database, method: string, bookmark: string | undefined): D1DatabaseSession {
  if (!["GET", "HEAD", "OPTIONS"].includes(method)) return primarySession(database);
  if (bookmark !== undefined && BOOKMARK_PATTERN.test(bookmark)) return database.withSession(bookmark);
  return database.withSession("first-unconstrained");
}

/** D1 reports constraint failures only through the message (its own, or its cause's). */
const errorMessage = (error: unknown) =>
  error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : "";

function failedConstraint(error: unknown, kind: "UNIQUE" | "NOT NULL" | "FOREIGN KEY"): boolean {
  return errorMessage(error).includes(`${kind} constraint failed`);
}

export const isUniqueViolation = (error: unknown) => failedConstraint(error, "UNIQUE");

/**
 * Lets a batch take a value from a row that must still exist: no row, no value, no batch. Not an
 * activity entry refused because its project moved meanwhile (`isEntryProjectMoved`): that one is
 * the request's 409 wherever it happens, never a write's own refusal.
 */
export const isNotNullViolation = (error: unknown) =>
  failedConstraint(error, "NOT NULL") && !isEntryProjectMoved(error);

/** A column as SQLite's constraint messages name it. */
const qualifiedName = (column: Column) => `${getTableName(column.table)}.${column.name}`;

/**
 * An activity entry refused because the project it names moved to another organization meanwhile
 * (`organizationHeld`, src/platform/activity-log/record.ts): `onError` answers 409.
 */
export const isEntryProjectMoved = (error: unknown) =>
  errorMessage(error).includes(`NOT NULL constraint failed: ${qualifiedName(activityLog.organizationId)}`);

/** A NOT NULL failure of `column` alone: a batch with several `whileHolds` tells which refused. */
export const isNotNullViolationOf = (error: unknown, column: Column) =>
  errorMessage(error).includes(`NOT NULL constraint failed: ${qualifiedName(column)}`);

/** A UNIQUE failure of the index on exactly `columns`. */
export const isUniqueViolationOf = (error: unknown, ...columns: Column[]) =>
  errorMessage(error).includes(`UNIQUE constraint failed: ${columns.map(qualifiedName).join(", ")}`);

/**
 * A write naming a row that is gone: its checks passed, then a concurrent request deleted what it
 * names (its organization, a role, a member). The error handler answers 404.
 */
export const isForeignKeyViolation = (error: unknown) => failedConstraint(error, "FOREIGN KEY");

/**
 * D1 refused a value past its 2,000,000 bytes, bound or built by the statement (SQLITE_TOOBIG):
 * what a request sent grew past it once stored (a number written back longer, a whole snapshot).
 * Nothing of the batch is written; the error handler answers 400.
 */
export const isValueTooBig = (error: unknown) => /SQLITE_TOOBIG|string or blob too big/i.test(errorMessage(error));

/**
 * `value` while `condition` holds when the statement runs, else null: written into a NOT NULL
 * column, it fails the whole batch (`isNotNullViolation`) rather than pass a limit that a
 * concurrent request reached after this one read it.
 */
export const whileHolds = <T>(value: T, condition: SQL) => sql<T>`(select ${value} where ${condition})`;

/** `write`, or `refusal` when its batch failed on a NOT NULL (a `whileHolds` condition, or a row read gone). */
export async function refusedWhenNull<T>(write: Promise<T>, refusal: () => Error | Promise<Error>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    throw isNotNullViolation(error) ? await refusal() : error;
  }
}

/** D1 binds at most 100 parameters to one statement. */
export const D1_MAX_BOUND_PARAMETERS = 100;

/**
 * The statement with numbered parameters (`?1`, `?2`...), equal ones (by `keyOf`) bound once
 * however often the statement reads them: a statement that names the caller in every rule it
 * tests stays within D1's 100 bound parameters. The `?`s drizzle wrote are found outside quoted
 * strings and identifiers.
 */
export function numberParameters<P>(sql: string, parameters: P[], keyOf: (parameter: P, position: number) => string) {
  const slots: P[] = [];
  const slotOf = new Map<string, number>();
  const slot = (parameter: P, position: number) => {
    const key = keyOf(parameter, position);
    let number = slotOf.get(key);
    if (number === undefined) {
      number = slots.push(parameter);
      slotOf.set(key, number);
    }
    return number;
  };
  let next = 0;
  let text = "";
  let quote: string | null = null;
  for (const character of sql) {
    if (quote !== null) {
      if (character === quote) quote = null;
    } else if (character === "'" || character === '"') {
      quote = character;
    } else if (character === "?") {
      if (next >= parameters.length) throw new Error("a statement has more placeholders than parameters");
      text += `?${slot(parameters[next]!, next)}`;
      next += 1;
      continue;
    }
    text += character;
  }
  if (next !== parameters.length) throw new Error("a statement has fewer placeholders than parameters");
  return { sql: text, parameters: slots };
}

/** A bound value's identity: a string, number or null by its type and value; a blob is never shared. */
function keyOfValue(value: unknown, position: number) {
  return value === null || typeof value !== "object" ? `${typeof value} ${String(value)}` : `blob ${position}`;
}

/**
 * Rows for a multi-row insert, in chunks that each stay within D1's parameter limit (every
 * column of a row is bound). Insert each chunk as one statement of the same `db.batch`: still
 * one round trip, still atomic.
 */
export function chunkForInsert<T>(table: Table, rows: T[]): T[][] {
  const size = Math.max(1, Math.floor(D1_MAX_BOUND_PARAMETERS / Object.keys(getTableColumns(table)).length));
  const chunks: T[][] = [];
  for (let start = 0; start < rows.length; start += size) chunks.push(rows.slice(start, start + size));
  return chunks;
}

/** `column in (...)` for a list of any length: bound as one JSON parameter, not one each. */
export const inJsonList = (column: SQLWrapper, values: unknown[]) =>
  sql`${column} in (select value from json_each(${JSON.stringify(values)}))`;

/**
 * `column`, a JSON object, with the keys of `values` set to them, computed in SQL: two requests
 * setting different keys both land (no read-then-write), and a null is stored as null. Keys are
 * identifiers the caller's schema allows. Undefined when there is nothing to set.
 */
export function jsonObjectWithKeys(column: Column, values: Record<string, unknown>): SQL | undefined {
  const keys = Object.keys(values);
  if (keys.length === 0) return undefined;
  // One bound parameter, the values as one JSON object, whatever the number of keys (D1 binds at
  // most 100 per statement; the same value bound again counts once): each key's path is written
  // out, which only an identifier may be.
  const sent = JSON.stringify(values);
  const assignments = keys.map((key) => {
    if (!/^[A-Za-z0-9_]+$/.test(key)) throw new Error(`not an identifier: ${JSON.stringify(key)}`);
    const path = sql.raw(`'$.${key}'`);
    return sql`${path}, json(${sent} -> ${path})`;
  });
  // A function takes at most 127 arguments in SQLite: json_set within json_set, 50 keys apiece.
  let merged: SQL = sql`${column}`;
  for (let start = 0; start < assignments.length; start += 50) {
    merged = sql`json_set(${merged}, ${sql.join(assignments.slice(start, start + 50), sql`, `)})`;
  }
  return merged;
}

/**
 * No interactive transactions on D1: a write that depends on what was read (rules checked, a
 * config merged) is guarded by this instead, and matches nothing if another request changed
 * those columns meanwhile. The caller answers `changedMeanwhile()` then.
 */
export function unchangedSinceRead(columns: [Column, unknown][]) {
  return and(...columns.map(([column, value]) => (value === null ? isNull(column) : eq(column, value))));
}
