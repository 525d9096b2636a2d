// Runs the project's own wrangler CLI, non-interactively, without the Request.cf fetch that
// fails offline.
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("..", import.meta.url));
const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };

export function wrangler(args, { capture = false } = {}) {
  const result = spawnSync("npx", ["--no-install", "wrangler", ...args], {
    cwd: root,
    env: { ...env, CI: "true" },
    encoding: "utf8",
    stdio: capture ? ["ignore", "pipe", "pipe"] : "inherit",
  });
  if (result.status !== 0) {
    if (capture) process.stderr.write(`${result.stdout}\n${result.stderr}`);
    throw new Error(`wrangler ${args.join(" ")} failed with exit code ${result.status}`);
  }
  return result.stdout;
}

/** Results of `wrangler d1 execute --json`: one entry per statement. */
export function d1Execute(args, location) {
  const output = wrangler(["d1", "execute", "DB", location, "--json", ...args], { capture: true });
  return JSON.parse(output.slice(output.indexOf("[")));
}

/**
 * `quiet`: output kept in `output()` instead of shown, and the server in its own process group,
 * so that `stop()` ends wrangler and the workerd it started, and nothing else.
 */
export function wranglerInBackground(args, { quiet = false } = {}) {
  const child = spawn("npx", ["--no-install", "wrangler", ...args], {
    cwd: root,
    env,
    stdio: quiet ? ["ignore", "pipe", "pipe"] : "inherit",
    detached: quiet,
  });
  let output = "";
  for (const stream of [child.stdout, child.stderr]) stream?.on("data", (chunk) => (output += chunk));
  child.output = () => output;
  return child;
}

/** The value of `--name value` or `--name=value` in a wrangler argument list. */
export function optionValue(args, name) {
  const index = args.findIndex((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
  if (index === -1) return undefined;
  return args[index].includes("=") ? args[index].slice(args[index].indexOf("=") + 1) : args[index + 1];
}
