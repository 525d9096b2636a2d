import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import * as schema from "../db/schema";

export type Database = DrizzleD1Database<typeof schema>;

/**
 * What the D1 work of one request cost: round trips (a batch is one), rows read and rows written,
 * as D1 reports them in each result's `meta`. Reported to the caller in `Server-Timing`.
 */
export class D1Meter {
  queries = 0;
  rowsRead = 0;
  rowsWritten = 0;
  durationMs = 0;

  record(results: D1Result[], startedAt: number) {
    this.queries += 1;
    this.durationMs += Date.now() - startedAt;
    for (const result of results) {
      this.rowsRead += result.meta?.rows_read ?? 0;
      this.rowsWritten += result.meta?.rows_written ?? 0;
    }
  }

  serverTiming() {
    return `d1;dur=${this.durationMs};desc="queries=${this.queries} rows_read=${this.rowsRead} rows_written=${this.rowsWritten}"`;
  }
}

const meteredStatements = new WeakMap<D1PreparedStatement, D1PreparedStatement>();

function meterStatement(statement: D1PreparedStatement, meter: D1Meter): D1PreparedStatement {
  const metered: D1PreparedStatement = {
    bind: (...values: unknown[]) => meterStatement(statement.bind(...values), meter),
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

/** A D1 binding that records every round trip in `meter`. */
export function meterD1(database: D1Database, meter: D1Meter): D1Database {
  return {
    prepare: (query: string) => meterStatement(database.prepare(uniqueColumnNames(query)), meter),
    async batch<T>(statements: D1PreparedStatement[]) {
      const startedAt = Date.now();
      const unwrapped = statements.map((statement) => meteredStatements.get(statement) ?? statement);
      const results = await database.batch<T>(unwrapped);
      meter.record(results, startedAt);
      return results;
    },
    exec: (query: string) => database.exec(query),
    dump: () => database.dump(),
    withSession: (constraint?: string) => database.withSession(constraint),
  } as D1Database;
}

export function createDatabase(database: D1Database, meter: D1Meter): Database {
  return drizzle(meterD1(database, meter), { schema });
}

/** D1 reports constraint failures only through the message. */
export function isUniqueViolation(error: unknown): boolean {
  const message = error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : "";
  return message.includes("UNIQUE constraint failed");
}
