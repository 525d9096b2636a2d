import type { activityLog } from "../../db/schema";
import { canonicalRecord } from "./chain";

type EntryRow = typeof activityLog.$inferSelect;

export const EXPORT_FORMATS = ["ndjson", "csv"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/**
 * One exported entry: what its hash covers (`canonicalRecord`, stored values as they are), then
 * its `hash` and the `previous_hash` it was computed from, so that each line verifies on its own
 * and consecutive lines (by `seq`) chain. The order of the keys is the columns' of the CSV.
 */
export function exportRecord(row: EntryRow, previousHash: string | null) {
  return { ...canonicalRecord(row), hash: row.hash, previous_hash: previousHash };
}
type ExportRecord = ReturnType<typeof exportRecord>;

/** The columns, in the order of a record's keys (read off a record of no row, so they cannot drift). */
const COLUMNS = Object.keys(exportRecord({} as EntryRow, null)) as (keyof ExportRecord)[];

/**
 * A CSV cell that keeps the value's type: text always quoted (`""` inside), a number or a boolean
 * bare, null an empty bare cell. An empty string ("") and null (nothing) stay apart, so the
 * canonical JSON can be rebuilt exactly from the CSV.
 */
function csvCell(value: string | number | boolean | null): string {
  if (value === null) return "";
  if (typeof value === "string") return `"${value.replaceAll('"', '""')}"`;
  return String(value);
}

/** An export's lines: one JSON object per line (NDJSON), or CSV rows after a header. Each ends with "\n". */
export function formatLines(format: ExportFormat, records: ExportRecord[], withHeader: boolean): string {
  if (format === "ndjson") return records.map((record) => `${JSON.stringify(record)}\n`).join("");
  const rows = records.map((record) => `${COLUMNS.map((column) => csvCell(record[column])).join(",")}\n`);
  return (withHeader ? `${COLUMNS.join(",")}\n` : "") + rows.join("");
}

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  ndjson: "application/x-ndjson",
  csv: "text/csv; charset=utf-8",
};
