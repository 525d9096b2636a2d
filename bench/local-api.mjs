// The API and the floor Worker under `wrangler dev`, for the benchmarks that measure them as a
// client does (`bench/throughput.mjs`, `bench/profile.mjs`): each from its own state folder in a
// temporary directory (migrated, bootstrapped, a few projects and dashboards made through the
// API), on free ports, and every wrangler started stopped at the end, on an error and on Ctrl-C.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
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

export const work = mkdtempSync(path.join(os.tmpdir(), "throughput-"));
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

export const stopAll = () => Promise.all(servers.map(stop));
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
export async function projectConfig(overrides = {}) {
  const { experimental_readRawConfig } = await import("wrangler");
  const { rawConfig } = experimental_readRawConfig({ config: path.join(root, "wrangler.toml") });
  const { env: _environments, ...config } = rawConfig;
  const absolute = (relative) => path.resolve(root, relative);
  const written = {
    ...config,
    ...overrides,
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
export async function startProject(config, devArgs = []) {
  const persistTo = path.join(work, "project-state");
  const state = ["--persist-to", persistTo];
  wrangler(["d1", "migrations", "apply", "DB", "--local", ...state]);
  const setup = await bootstrap({ persistTo });
  const vars = localVars(work, { RATE_LIMIT_PER_HOUR: String(UNREACHABLE) });
  const url = await startDev(["--config", config.file, ...state, ...vars, ...devArgs], "project");
  return { ...setup, url };
}

/** The floor under `wrangler dev`, with its own state and the project's compatibility date. */
export async function startFloor(config, key, devArgs = []) {
  const floorConfig = path.join(root, "bench", "floor", "wrangler.toml");
  const state = ["--persist-to", path.join(work, "floor-state")];
  const url = await startDev(
    ["--config", floorConfig, "--compatibility-date", config.compatibilityDate, ...state, ...devArgs],
    "floor",
  );
  const answer = await fetch(`${url}/setup`, { method: "POST", headers: { Authorization: `Bearer ${key}` } });
  if (!answer.ok) throw new Error(`floor set-up: ${answer.status} ${await answer.text()}`);
  return { url };
}

/** A few projects and dashboards, made through the API as a client would. */
export async function seed(project) {
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

export const routes = ({ organization_id: organization, project_id: project }) => [
  { name: "GET /api/users/@me", path: "/api/users/@me" },
  { name: "GET /api/organizations/{id}/projects/{id}", path: `/api/organizations/${organization}/projects/${project}` },
  {
    name: "GET /api/organizations/{id}/projects?limit=100",
    path: `/api/organizations/${organization}/projects?limit=100`,
  },
  { name: "GET /api/environments/{id}/dashboards", path: `/api/environments/${project}/dashboards` },
];

/** One autocannon run: 2xx answers a second, their median latency, and whatever was not a 2xx. */
export async function measure(url, key, seconds, connections) {
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
