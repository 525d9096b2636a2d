#!/usr/bin/env node
// `npm start [-- <wrangler dev arguments>]`: local D1 migrations, the first organization and key
// on a first run, then `wrangler dev` with the arguments given (127.0.0.1:$PORT, 8787, unless
// `--ip`/`--port` say otherwise; `--persist-to` is honoured by the migrations and set-up too).
// A screenful at most: wrangler's output is held back until the server answers (shown whole if it
// fails first), and the key and its curl line come last. Then wrangler's output (one line per
// request) flows as usual.
import "./toolchain.mjs";
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bootstrap, organizationCount, printWelcome } from "./bootstrap.mjs";
import { forgetLocalUrl, rememberLocalUrl } from "./local-url.mjs";
import { optionValue, root, wrangler, wranglerInBackground } from "./wrangler.mjs";

const STARTUP_TIMEOUT_MS = 90_000;

const args = process.argv.slice(2);
const port = optionValue(args, "port") ?? process.env.PORT ?? "8787";
const ip = optionValue(args, "ip") ?? "127.0.0.1";
const persistTo = optionValue(args, "persist-to");
const state = persistTo ? ["--persist-to", persistTo] : [];
const baseUrl = `http://${ip}:${port}`;

/**
 * Local settings (git-ignored): the encryption key for stored secrets (deployments use `wrangler
 * secret put`), and webhooks allowed to deliver to http and loopback receivers (never deployed).
 */
function ensureDevVars() {
  const devVars = join(root, ".dev.vars");
  if (!existsSync(devVars)) {
    writeFileSync(devVars, `SECRETS_ENCRYPTION_KEY="${randomBytes(32).toString("base64")}"\n`, { mode: 0o600 });
    console.log("Created .dev.vars with a local SECRETS_ENCRYPTION_KEY.");
  }
  if (!readFileSync(devVars, "utf8").includes("WEBHOOKS_ALLOW_INSECURE")) {
    appendFileSync(devVars, `WEBHOOKS_ALLOW_INSECURE="1"\n`);
  }
  if (!readFileSync(devVars, "utf8").includes("EXPOSE_D1_COST")) {
    appendFileSync(devVars, `EXPOSE_D1_COST="1"\n`);
  }
}

function migrateLocally() {
  const output = wrangler(["d1", "migrations", "apply", "DB", "--local", ...state]);
  const applied = new Set(output.match(/\b\d{4}_[\w-]+\.sql\b/g) ?? []);
  console.log(
    applied.size === 0 ? "Local D1: migrations up to date." : `Local D1: ${applied.size} migrations applied.`,
  );
}

/** `/healthz`'s answer once the server gives one; rejects when wrangler exits first (`closed`). */
async function firstAnswer(closed) {
  let exited;
  closed.then((code) => (exited = code));
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited !== undefined) throw new Error(`wrangler dev exited with code ${exited}`);
    // Not JSON: something else answers on that port; wrangler will say so as it exits.
    const answer = await fetch(`${baseUrl}/healthz`)
      .then((response) => response.json())
      .catch(() => undefined);
    if (answer) return answer;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`wrangler dev did not answer within ${STARTUP_TIMEOUT_MS / 1000} s`);
}

/**
 * Holds the server's output until `release()`, then lets it through; `showHeld()` prints what
 * was held back, for when the server failed before it answered.
 */
function holdOutput(server) {
  const held = [];
  let released = false;
  for (const [stream, target] of [
    [server.stdout, process.stdout],
    [server.stderr, process.stderr],
  ]) {
    stream.on("data", (chunk) => (released ? target.write(chunk) : held.push(chunk)));
  }
  return {
    release() {
      released = true;
    },
    showHeld() {
      if (!released) process.stderr.write(Buffer.concat(held));
      released = true;
    },
  };
}

ensureDevVars();
migrateLocally();
const welcome = organizationCount({ persistTo }) === 0 ? await bootstrap({ persistTo }) : undefined;

console.log(`Starting wrangler dev on ${baseUrl}…`);
const listen = [
  ...(optionValue(args, "ip") ? [] : ["--ip", ip]),
  ...(optionValue(args, "port") ? [] : ["--port", port]),
];
const server = wranglerInBackground(["dev", ...listen, ...args], { piped: true });
const output = holdOutput(server);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
// "close": after the output streams end, so that a failure's last lines are in what is shown.
const closed = new Promise((resolve) => server.on("close", resolve));

try {
  const health = await firstAnswer(closed);
  rememberLocalUrl(baseUrl, persistTo);
  console.log(`Ready: ${baseUrl} (the reference: ${baseUrl}/docs). Ctrl-C stops it; wrangler's log follows.`);
  if (health.status !== "ok") console.log(`/healthz: ${health.status}: ${(health.reasons ?? []).join("; ")}`);
} catch (error) {
  output.showHeld();
  console.error(`\n${error instanceof Error ? error.message : error}`);
}
// Even when the server failed: the key exists now, and is shown only here.
if (welcome) printWelcome(welcome, baseUrl);
else console.log("\nAlready set up. `npm run bootstrap` mints a new all-scopes key for the owner.\n");
output.release();
closed.then((code) => {
  forgetLocalUrl(persistTo);
  process.exit(code ?? 0);
});
