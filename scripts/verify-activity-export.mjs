#!/usr/bin/env node
// Verifies an activity-log export offline: node scripts/verify-activity-export.mjs FILE [--contiguous]
// FILE is the download of GET /api/organizations/:id/activity_log/exports/:export_id/download,
// NDJSON or CSV (by its extension, or --csv). --contiguous: the export covers every scope, so a
// missing number is a failure too. Prints the verdict as JSON; exits 1 at the first bad line.
import { readFileSync } from "node:fs";
import { verifyExport } from "./activity-export-chain.mjs";

const args = process.argv.slice(2);
const file = args.find((arg) => !arg.startsWith("--"));
if (!file) {
  console.error("usage: node scripts/verify-activity-export.mjs FILE [--csv] [--contiguous]");
  process.exit(2);
}
const format = args.includes("--csv") || file.endsWith(".csv") ? "csv" : "ndjson";
const verdict = await verifyExport(readFileSync(file, "utf8"), { format, contiguous: args.includes("--contiguous") });
console.log(JSON.stringify(verdict));
if (!verdict.valid) {
  console.error(`${file}:${verdict.line}: ${verdict.reason}`);
  process.exit(1);
}
