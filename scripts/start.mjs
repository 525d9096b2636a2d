#!/usr/bin/env node
// `npm start`: local D1 migrations, the first organization and key on a first run, then the API
// on 127.0.0.1:$PORT (8787 by default).
import { randomBytes } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bootstrap, printWelcome } from "./bootstrap.mjs";
import { d1Execute, root, wrangler, wranglerInBackground } from "./wrangler.mjs";

const port = process.env.PORT ?? "8787";

// The local encryption key for stored secrets (git-ignored); deployments use `wrangler secret put`.
const devVars = join(root, ".dev.vars");
if (!existsSync(devVars)) {
  writeFileSync(devVars, `SECRETS_ENCRYPTION_KEY="${randomBytes(32).toString("base64")}"\n`, { mode: 0o600 });
  console.log("Created .dev.vars with a local SECRETS_ENCRYPTION_KEY.");
}

wrangler(["d1", "migrations", "apply", "DB", "--local"]);
const [{ results }] = d1Execute(["--command", "SELECT count(*) AS organizations FROM organizations"], "--local");
if (results[0].organizations === 0) {
  printWelcome(bootstrap(), `http://127.0.0.1:${port}`);
} else {
  console.log("\nAlready set up. `npm run bootstrap` mints a new all-scopes key for the owner.\n");
}

const server = wranglerInBackground(["dev", "--ip", "127.0.0.1", "--port", port]);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => process.exit(code ?? 0));
