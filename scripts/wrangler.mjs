// Runs the project's own wrangler CLI, non-interactively, without the Request.cf fetch that
// fails offline. `WRANGLER` names another command to run instead (the deploy script's test points
// it at a stub that records its calls).
import { spawn, spawnSync } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

export const root = fileURLToPath(new URL("..", import.meta.url));
const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };

const command = (args) =>
  process.env.WRANGLER ? [process.env.WRANGLER, args] : ["npx", ["--no-install", "wrangler", ...args]];

/**
 * Runs wrangler to the end and returns `{ status, stdout, stderr }` whatever the outcome. `input`
 * is written to its standard input (a secret for `wrangler secret put`, never an argument).
 */
export function runWrangler(args, { input } = {}) {
  const [file, fileArgs] = command(args);
  const result = spawnSync(file, fileArgs, {
    cwd: root,
    env: { ...env, CI: "true" },
    encoding: "utf8",
    input: input ?? "",
    stdio: "pipe",
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: result.status, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
}

/**
 * Runs wrangler and returns its standard output; throws when it fails. Its output is shown only
 * then: wrangler is verbose (banners, tables, hints) where these scripts need a line.
 */
export function wrangler(args, { input } = {}) {
  const result = runWrangler(args, { input });
  if (result.status !== 0) {
    process.stderr.write(`${result.stdout}\n${result.stderr}`);
    throw new Error(`wrangler ${args.join(" ")} failed with exit code ${result.status}`);
  }
  return result.stdout;
}

/** Results of `wrangler d1 execute --json`: one entry per statement. `args` may carry `--env`. */
export function d1Execute(args, location) {
  const output = wrangler(["d1", "execute", "DB", location, "--json", ...args]);
  return JSON.parse(output.slice(output.indexOf("[")));
}

/**
 * `quiet`: output kept in `output()` instead of shown, and the server in its own process group,
 * so that `stop()` ends wrangler and the workerd it started, and nothing else. `logTo`: the same,
 * but the output goes straight to that file (a server under load writes a line per request,
 * which this process then never reads). `piped`: output left to the caller on `stdout`/`stderr`,
 * the process in the terminal's group (Ctrl-C ends it).
 */
export function wranglerInBackground(args, { quiet = false, piped = false, logTo } = {}) {
  const [file, fileArgs] = command(args);
  const log = logTo === undefined ? undefined : openSync(logTo, "a");
  const quietStdio = log === undefined ? ["ignore", "pipe", "pipe"] : ["ignore", log, log];
  const child = spawn(file, fileArgs, {
    cwd: root,
    env,
    stdio: quiet || log !== undefined ? quietStdio : piped ? ["inherit", "pipe", "pipe"] : "inherit",
    detached: quiet || log !== undefined,
  });
  if (log !== undefined) closeSync(log);
  let output = "";
  if (quiet && log === undefined) {
    for (const stream of [child.stdout, child.stderr]) stream?.on("data", (chunk) => (output += chunk));
  }
  child.output = () => (log === undefined ? output : readFileSync(logTo, "utf8"));
  return child;
}

/**
 * A script's own options (node:util `parseArgs` options), strictly: an option it does not know,
 * or one without its value, stops it before it touches anything. So does one npm took for itself:
 * `npm run deploy --env production`, without `--`, leaves the script no `--env` (npm keeps it as
 * `npm_config_env`), and the script would otherwise go on for the top level.
 */
export function scriptOptions(script, options) {
  for (const name of Object.keys(options)) {
    if (process.env[`npm_config_${name.replaceAll("-", "_")}`] === undefined) continue;
    throw new Error(
      `npm took --${name} for itself: put \`--\` before the script's options (\`npm run ${script} -- --${name} …\`)`,
    );
  }
  try {
    return parseArgs({ args: process.argv.slice(2), options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    const known = Object.entries(options).map(([name, { type }]) => `--${name}${type === "string" ? " <value>" : ""}`);
    throw new Error(
      `${error instanceof Error ? error.message : error} (\`npm run ${script} -- [${known.join("] [")}]\`)`,
    );
  }
}

/** The value of `--name value` or `--name=value` in a wrangler argument list. */
export function optionValue(args, name) {
  const index = args.findIndex((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
  if (index === -1) return undefined;
  return args[index].includes("=") ? args[index].slice(args[index].indexOf("=") + 1) : args[index + 1];
}

/**
 * The `--env` argument for wrangler: the environment named, or the top level said explicitly
 * (`--env=`), which wrangler otherwise warns about once the config has environments.
 */
export const environmentArgs = (environment) => [`--env=${environment ?? ""}`];
