#!/usr/bin/env node
// `npm start [-- <wrangler dev arguments>]`: local D1 migrations, the first organization and key
// on a first run, then `wrangler dev` with the arguments given (127.0.0.1:$PORT, 8787, unless
// `--ip`/`--port` say otherwise; `--persist-to` is honoured by the migrations and set-up too).
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bootstrap, printWelcome } from "./bootstrap.mjs";
import { forgetLocalUrl, rememberLocalUrl } from "./local-url.mjs";
import { d1Execute, optionValue, root, wrangler, wranglerInBackground } from "./wrangler.mjs";

const args = process.argv.slice(2);
const port = optionValue(args, "port") ?? process.env.PORT ?? "8787";
const ip = optionValue(args, "ip") ?? "127.0.0.1";
const persistTo = optionValue(args, "persist-to");
const state = persistTo ? ["--persist-to", persistTo] : [];
const baseUrl = `http://${ip}:${port}`;

// Local settings (git-ignored): the encryption key for stored secrets (deployments use `wrangler
// secret put`), and webhooks allowed to deliver to http and loopback receivers (never deployed).
const devVars = join(root, ".dev.vars");
if (!existsSync(devVars)) {
  writeFileSync(devVars, `SECRETS_ENCRYPTION_KEY="${randomBytes(32).toString("base64")}"\n`, { mode: 0o600 });
  console.log("Created .dev.vars with a local SECRETS_ENCRYPTION_KEY.");
}
if (!readFileSync(devVars, "utf8").includes("WEBHOOKS_ALLOW_INSECURE")) {
  appendFileSync(devVars, `WEBHOOKS_ALLOW_INSECURE="1"\n`);
}

wrangler(["d1", "migrations", "apply", "DB", "--local", ...state]);
const count = "SELECT count(*) AS organizations FROM organizations";
const [{ results }] = d1Execute(["--command", count, ...state], "--local");
if (results[0].organizations === 0) {
  printWelcome(await bootstrap({ persistTo }), baseUrl);
} else {
  console.log("\nAlready set up. `npm run bootstrap` mints a new all-scopes key for the owner.\n");
}

const listen = [...(optionValue(args, "ip") ? [] : ["--ip", ip]), ...(optionValue(args, "port") ? [] : ["--port", port])];
const server = wranglerInBackground(["dev", ...listen, ...args]);
rememberLocalUrl(baseUrl, persistTo);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => {
  forgetLocalUrl(persistTo);
  process.exit(code ?? 0);
});
