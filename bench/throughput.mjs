#!/usr/bin/env node
// `npm run bench:throughput [-- --duration 5 --connections 10 --runs 3 --only @me --json out.json]`: requests a
// second of a few authenticated reads of the API under `wrangler dev`, side by side with a floor
// Worker (bench/floor/) that does only what every authenticated read must do. Floor and route runs
// alternate (A B A B), and each route's figures are medians of its runs and of the floor runs
// between them, so that a machine's drift weighs on both alike. Local figures: compare them
// within one run only (docs/development.md: Throughput). Every wrangler it starts is stopped at
// the end, on an error and on Ctrl-C.
import { rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";
import {
  measure as measureRoute,
  projectConfig,
  routes,
  seed,
  startFloor,
  startProject,
  stopAll,
  work,
} from "./local-api.mjs";

const { values: options } = parseArgs({
  options: {
    duration: { type: "string", default: process.env.THROUGHPUT_DURATION ?? "5" },
    connections: { type: "string", default: process.env.THROUGHPUT_CONNECTIONS ?? "10" },
    runs: { type: "string", default: process.env.THROUGHPUT_RUNS ?? "3" },
    // Routes whose name contains this text (`@me`, `dashboards`): trying a change on one read is quicker.
    only: { type: "string", default: "" },
    json: { type: "string" },
  },
});
const duration = Number(options.duration);
const connections = Number(options.connections);
const runs = Number(options.runs);
const measure = (url, key, seconds) => measureRoute(url, key, seconds, connections);
if (!(duration > 0) || !Number.isInteger(connections) || connections < 1 || !Number.isInteger(runs) || runs < 1) {
  console.error("--duration must be a positive number of seconds, --connections and --runs positive integers");
  process.exit(2);
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

function summary(samples) {
  return {
    perSecond: median(samples.map((sample) => sample.perSecond)),
    p50: median(samples.map((sample) => sample.p50)),
    failed: samples.reduce((sum, sample) => sum + sample.failed, 0),
    runs: samples,
  };
}

function printTable(rows) {
  const header = ["route", "floor req/s", "route req/s", "route/floor", "floor p50", "route p50", "non-2xx"];
  const cells = rows.map(({ route, floor, measured }) => [
    route,
    floor.perSecond.toFixed(1),
    measured.perSecond.toFixed(1),
    (measured.perSecond / floor.perSecond).toFixed(2),
    `${floor.p50.toFixed(1)} ms`,
    `${measured.p50.toFixed(1)} ms`,
    String(floor.failed + measured.failed),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((row) => row[column].length)));
  const line = (row) =>
    row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])));
  for (const row of [header, ...cells]) console.log(line(row).join("  "));
}

const load = () =>
  os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");

let failed = false;
try {
  console.log(
    `Throughput: ${runs} runs of ${duration} s per route and floor, alternating, ${connections} connections; ` +
      `${os.cpus().length} CPUs, load ${load()}.`,
  );
  console.log("Starting the project and the floor under wrangler dev (X_LOCAL_OBSERVABILITY=false)…");
  const config = await projectConfig();
  const project = await startProject(config);
  const [floor] = await Promise.all([startFloor(config, project.api_key), seed(project)]);
  const measured = routes(project).filter((route) => route.name.includes(options.only));
  if (measured.length === 0) throw new Error(`--only ${options.only}: no route's name contains it`);

  const warmUp = Math.min(1, duration);
  console.log(`Warming up (${warmUp} s each)…`);
  await measure(`${floor.url}/api/users/@me`, project.api_key, warmUp);
  for (const route of measured) await measure(`${project.url}${route.path}`, project.api_key, warmUp);

  const rows = [];
  for (const route of measured) {
    const floorRuns = [];
    const routeRuns = [];
    for (let run = 0; run < runs; run++) {
      floorRuns.push(await measure(`${floor.url}${route.path}`, project.api_key, duration));
      routeRuns.push(await measure(`${project.url}${route.path}`, project.api_key, duration));
    }
    const row = { route: route.name, floor: summary(floorRuns), measured: summary(routeRuns) };
    console.log(
      `${route.name}: floor ${floorRuns.map((r) => r.perSecond.toFixed(0)).join(", ")} req/s; ` +
        `route ${routeRuns.map((r) => r.perSecond.toFixed(0)).join(", ")} req/s`,
    );
    rows.push(row);
  }

  console.log(`\nMedians of ${runs} runs (2xx answers a second; load ${load()}):\n`);
  printTable(rows);
  console.log(
    "\nLocal wrangler dev figures: compare the columns of one run with each other, not across runs or machines.",
  );
  if (options.json) {
    const settings = { duration, connections, runs, cpus: os.cpus().length, node: process.version };
    writeFileSync(options.json, `${JSON.stringify({ settings, rows }, null, 2)}\n`);
  }
  if (rows.some((row) => row.floor.failed + row.measured.failed > 0)) {
    failed = true;
    console.error(`\nSome answers were not 2xx: the figures are not comparable. Logs: ${work}`);
  }
} catch (error) {
  failed = true;
  console.error(error instanceof Error ? error.message : error);
  console.error(`Logs: ${work}`);
} finally {
  await stopAll();
}
if (!failed) rmSync(work, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
