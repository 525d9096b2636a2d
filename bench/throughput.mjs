#!/usr/bin/env node
// `npm run bench:throughput [-- --duration 5 --connections 10 --runs 3 --json out.json]`: requests a
// second of a few authenticated reads of the API under `wrangler dev`, side by side with a floor
// Worker (bench/floor/) that does only what every authenticated read must do. Floor and route runs
// alternate (A B A B), and each route's figures are medians of its runs and of the floor runs
// between them, so that a machine's drift weighs on both alike. Local figures: compare them
// within one run only (docs/development.md: Throughput). Every wrangler it starts is stopped at
// the end, on an error and on Ctrl-C.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";

// Before scripts/wrangler.mjs reads the environment: wrangler's local tracing costs about 3 ms a
// request, in both Workers alike, and would hide the difference measured.
process.env.X_LOCAL_OBSERVABILITY = "false";
const { root, wrangler, wranglerInBackground } = await import("../scripts/wrangler.mjs");
const { freePort, localListen, localVars, stopServer, waitUntilHealthy } = await import("../scripts/local-server.mjs");
const { bootstrap } = await import("../scripts/bootstrap.mjs");

const PROJECTS = 10;
const DASHBOARDS = 10;
/** The limits raised out of reach: one key makes every request, where a client's would be throttled. */
const UNREACHABLE = 1_000_000_000;
const STOP_TIMEOUT_MS = 10_000;
const PORT_ATTEMPTS = 3;

const { values: options } = parseArgs({
  options: {
    duration: { type: "string", default: process.env.THROUGHPUT_DURATION ?? "5" },
    connections: { type: "string", default: process.env.THROUGHPUT_CONNECTIONS ?? "10" },
    runs: { type: "string", default: process.env.THROUGHPUT_RUNS ?? "3" },
    json: { type: "string" },
  },
});
const duration = Number(options.duration);
const connections = Number(options.connections);
const runs = Number(options.runs);
if (!(duration > 0) || !Number.isInteger(connections) || connections < 1 || !Number.isInteger(runs) || runs < 1) {
  console.error("--duration must be a positive number of seconds, --connections and --runs positive integers");
  process.exit(2);
}

const work = mkdtempSync(path.join(os.tmpdir(), "throughput-"));
/** Every wrangler started, from the moment it is spawned: all are stopped whatever happens. */
const servers = [];

/**
 * `wrangler dev` with `args` on a free port, once it answers; its url. A port found free can be
 * taken by another program before wrangler listens on it: then another port, a few times.
 */
async function startDev(args, name) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const logTo = path.join(work, `${name}-${attempt}.log`);
    const server = wranglerInBackground(["dev", ...args, ...localListen(port)], { logTo });
    servers.push(server);
    try {
      await waitUntilHealthy(`http://127.0.0.1:${port}`, server);
      return `http://127.0.0.1:${port}`;
    } catch (error) {
      await stop(server);
      if (attempt === PORT_ATTEMPTS || !server.output().includes("Address already in use")) throw error;
    }
  }
}

/** SIGTERM to the server's process group (wrangler and its workerd), SIGKILL if it lingers. */
async function stop(server) {
  if (server.exitCode !== null || server.signalCode !== null) return;
  let timer;
  const killed = new Promise((resolve) => {
    timer = setTimeout(() => {
      if (server.exitCode === null && server.signalCode === null) process.kill(-server.pid, "SIGKILL");
      resolve();
    }, STOP_TIMEOUT_MS);
  });
  try {
    await Promise.race([stopServer(server), killed]);
  } catch {
    // Gone already.
  } finally {
    clearTimeout(timer);
  }
}

const stopAll = () => Promise.all(servers.map(stop));
process.on("exit", () => {
  for (const server of servers) {
    if (server.exitCode !== null || server.signalCode !== null) continue;
    try {
      process.kill(-server.pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, async () => {
    console.error(`\n${signal}: stopping wrangler…`);
    await stopAll();
    rmSync(work, { recursive: true, force: true });
    process.exit(130);
  });
}

/**
 * The project's wrangler.toml as JSON, for `wrangler dev` only: paths made absolute (the file lives
 * in the work folder), no environments, and the per-key minute limiter's limit out of reach.
 */
async function projectConfig() {
  const { experimental_readRawConfig } = await import("wrangler");
  const { rawConfig } = experimental_readRawConfig({ config: path.join(root, "wrangler.toml") });
  const { env: _environments, ...config } = rawConfig;
  const absolute = (relative) => path.resolve(root, relative);
  const written = {
    ...config,
    main: absolute(config.main),
    d1_databases: config.d1_databases.map((database) => ({
      ...database,
      migrations_dir: absolute(database.migrations_dir),
    })),
    assets: { ...config.assets, directory: absolute(config.assets.directory) },
    alias: Object.fromEntries(
      Object.entries(config.alias ?? {}).map(([name, to]) => [name, to.startsWith(".") ? absolute(to) : to]),
    ),
    ratelimits: config.ratelimits.map((limiter) =>
      limiter.name === "API_KEY_MINUTE_LIMITER"
        ? { ...limiter, simple: { ...limiter.simple, limit: UNREACHABLE } }
        : limiter,
    ),
  };
  if (!config.ratelimits.some((limiter) => limiter.name === "API_KEY_MINUTE_LIMITER")) {
    throw new Error("wrangler.toml has no API_KEY_MINUTE_LIMITER to raise: update bench/throughput.mjs");
  }
  const file = path.join(work, "wrangler.json");
  writeFileSync(file, JSON.stringify(written, null, 2));
  return { file, compatibilityDate: config.compatibility_date };
}

/** The project under `wrangler dev`, with its own state: migrated, bootstrapped, then started. */
async function startProject(config) {
  const persistTo = path.join(work, "project-state");
  const state = ["--persist-to", persistTo];
  wrangler(["d1", "migrations", "apply", "DB", "--local", ...state]);
  const setup = await bootstrap({ persistTo });
  const vars = localVars({ RATE_LIMIT_PER_HOUR: String(UNREACHABLE) });
  const url = await startDev(["--config", config.file, ...state, ...vars], "project");
  return { ...setup, url };
}

/** The floor under `wrangler dev`, with its own state and the project's compatibility date. */
async function startFloor(config, key) {
  const floorConfig = path.join(root, "bench", "floor", "wrangler.toml");
  const state = ["--persist-to", path.join(work, "floor-state")];
  const url = await startDev(
    ["--config", floorConfig, "--compatibility-date", config.compatibilityDate, ...state],
    "floor",
  );
  const answer = await fetch(`${url}/setup`, { method: "POST", headers: { Authorization: `Bearer ${key}` } });
  if (!answer.ok) throw new Error(`floor set-up: ${answer.status} ${await answer.text()}`);
  return { url };
}

/** A few projects and dashboards, made through the API as a client would. */
async function seed(project) {
  const call = async (method, route, body) => {
    const response = await fetch(`${project.url}${route}`, {
      method,
      headers: { Authorization: `Bearer ${project.api_key}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
  };
  for (let index = 1; index < PROJECTS; index++) {
    await call("POST", `/api/organizations/${project.organization_id}/projects`, { name: `Project ${index}` });
  }
  for (let index = 0; index < DASHBOARDS; index++) {
    await call("POST", `/api/environments/${project.project_id}/dashboards`, { name: `Dashboard ${index}` });
  }
}

const routes = ({ organization_id: organization, project_id: project }) => [
  { name: "GET /api/users/@me", path: "/api/users/@me" },
  { name: "GET /api/organizations/{id}/projects/{id}", path: `/api/organizations/${organization}/projects/${project}` },
  {
    name: "GET /api/organizations/{id}/projects?limit=100",
    path: `/api/organizations/${organization}/projects?limit=100`,
  },
  { name: "GET /api/environments/{id}/dashboards", path: `/api/environments/${project}/dashboards` },
];

/** One autocannon run: 2xx answers a second, their median latency, and whatever was not a 2xx. */
async function measure(url, key, seconds) {
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    headers: { Authorization: `Bearer ${key}` },
  });
  return {
    perSecond: result["2xx"] / result.duration,
    p50: result.latency.p50,
    failed: result.non2xx + result.errors + result.timeouts,
  };
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
  const measured = routes(project);

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
