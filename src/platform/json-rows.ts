import { getTableColumns, sql, type Column, type SQL, type Table } from "drizzle-orm";

/**
 * Rows of other tables as one value of a statement: `jsonRow` selects a row as a JSON object of
 * its columns (by column name), `rowFromJson` reads it back as drizzle reads a row, each column
 * through its own mapping (booleans, JSON text, timestamps). So a read that needs a user, a list
 * of their organizations and a project can be one statement, one result, instead of one each.
 */
export function jsonRow(table: Table): SQL {
  // Column names are the schema's own identifiers: written as literals, not bound parameters.
  const pairs = Object.values(getTableColumns(table)).map((column) => sql`${sql.raw(`'${column.name}'`)}, ${column}`);
  return sql`json_object(${sql.join(pairs, sql`, `)})`;
}

/** The rows of a subquery selecting JSON objects as `row` (`.as("row")`), as one JSON array, in its order. */
export const jsonRows = (rows: SQL | { getSQL(): SQL }) =>
  sql<string>`(select json_group_array(json("listed_rows"."row")) from (${rows}) as "listed_rows")`;

/** Each table's columns as `rowFromJson` walks them: the row's key, the column's name, the column. */
const columnLists = new WeakMap<Table, [string, string, Column][]>();

function columnsOf(table: Table) {
  let columns = columnLists.get(table);
  if (!columns) {
    columns = Object.entries(getTableColumns(table)).map(([key, column]) => [key, column.name, column]);
    columnLists.set(table, columns);
  }
  return columns;
}

/** A row `jsonRow` selected, as drizzle maps the table's rows. */
export function rowFromJson<T extends Table>(table: T, json: Record<string, unknown>): T["$inferSelect"] {
  const row: Record<string, unknown> = {};
  for (const [key, name, column] of columnsOf(table)) {
    const value = json[name];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as T["$inferSelect"];
}
