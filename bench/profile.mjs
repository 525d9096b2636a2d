#!/usr/bin/env node
// `npm run bench:profile [-- --route @me --duration 5 --connections 10 --out profile.cpuprofile --floor]`:
// the Worker's CPU per request on one of the throughput reads, from a CPU profile taken through
// wrangler's inspector while autocannon loads the route (the same API under `wrangler dev` as
// `npm run bench:throughput`, not minified so that functions keep their names). Prints requests a
// second, CPU milliseconds per request (time the isolate was not idle, over the requests
// answered) and the functions that took the most of it; `--out` keeps the profile for DevTools.
// The profiler slows the isolate down: compare profiles with each other, not with throughput.
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { freePort } from "../scripts/local-server.mjs";
import { measure, projectConfig, routes, seed, startFloor, startProject, stopAll } from "./local-api.mjs";

const { values: options } = parseArgs({
  options: {
    route: { type: "string", default: "@me" },
    duration: { type: "string", default: "5" },
    connections: { type: "string", default: "10" },
    top: { type: "string", default: "25" },
    out: { type: "string" },
    floor: { type: "boolean", default: false },
  },
});
const duration = Number(options.duration);
const connections = Number(options.connections);
const top = Number(options.top);
if (!(duration > 0) || !Number.isInteger(connections) || connections < 1 || !Number.isInteger(top) || top < 0) {
  console.error("--duration must be a positive number of seconds, --connections and --top whole numbers");
  process.exit(2);
}

/** Runs `load` with the isolate's CPU profiler on; its result and the profile. */
async function profileDuring(inspectorPort, load) {
  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
  const target = targets.find((candidate) => candidate.webSocketDebuggerUrl);
  if (!target) throw new Error("wrangler's inspector lists no Worker to profile");
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  const waiting = new Map();
  socket.on("message", (data) => {
    const message = JSON.parse(String(data));
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  let lastId = 0;
  const send = (method, params = {}) =>
    new Promise((resolve) => {
      lastId += 1;
      waiting.set(lastId, resolve);
      socket.send(JSON.stringify({ id: lastId, method, params }));
    });
  try {
    await send("Profiler.enable");
    await send("Profiler.setSamplingInterval", { interval: 100 });
    await send("Profiler.start");
    const result = await load();
    const { result: stopped } = await send("Profiler.stop");
    return { result, profile: stopped.profile };
  } finally {
    socket.close();
  }
}

/** Milliseconds of CPU in the profile (all but idle), and each function's own share of them. */
function cpuOf(profile) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const own = new Map();
  let busy = 0;
  profile.samples.forEach((id, index) => {
    const { callFrame } = nodes.get(id);
    if (callFrame.functionName === "(idle)") return;
    const micros = profile.timeDeltas[index] ?? 0;
    busy += micros;
    const where = `${callFrame.url.split("/").pop()}:${callFrame.lineNumber + 1}`;
    const name = `${callFrame.functionName || "(anonymous)"} ${where}`;
    own.set(name, (own.get(name) ?? 0) + micros);
  });
  return { busyMs: busy / 1000, own: [...own].sort((a, b) => b[1] - a[1]) };
}

let failed = false;
try {
  // Not minified: the profile names the functions.
  const config = await projectConfig({ minify: false });
  const inspectorPort = await freePort();
  const inspector = ["--inspector-port", String(inspectorPort)];
  const project = await startProject(config, options.floor ? [] : inspector);
  await seed(project);
  const route = routes(project).find((candidate) => candidate.name.includes(options.route));
  if (!route) throw new Error(`no route of the throughput bench matches "${options.route}"`);
  // --floor: the floor Worker (bench/floor/) instead, answering the same request as it does.
  const base = options.floor ? (await startFloor(config, project.api_key, inspector)).url : project.url;
  const url = `${base}${route.path}`;
  await measure(url, project.api_key, 1, connections);
  const { result, profile } = await profileDuring(inspectorPort, () =>
    measure(url, project.api_key, duration, connections),
  );
  if (result.failed > 0) throw new Error(`${result.failed} answers were not 2xx`);
  const answered = Math.round(result.perSecond * duration);
  const { busyMs, own } = cpuOf(profile);
  const profiled = options.floor ? `the floor, as ${route.name}` : route.name;
  console.log(`${profiled}: ${result.perSecond.toFixed(1)} req/s under the profiler`);
  console.log(
    `CPU: ${(busyMs / answered).toFixed(2)} ms a request (${busyMs.toFixed(0)} ms over ${answered} requests)`,
  );
  if (top > 0) console.log(`\nOwn CPU, the ${top} largest:`);
  for (const [name, micros] of own.slice(0, top)) {
    console.log(`${((100 * micros) / 1000 / busyMs).toFixed(1).padStart(5)}%  ${name}`);
  }
  if (options.out) writeFileSync(options.out, JSON.stringify(profile));
} catch (error) {
  failed = true;
  console.error(error instanceof Error ? error.message : error);
} finally {
  await stopAll();
}
process.exit(failed ? 1 : 0);
