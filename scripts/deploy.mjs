#!/usr/bin/env node
// `npm run deploy [-- --env staging|production]`: one command for a whole deployment, safe to run
// again. It needs a logged-in wrangler (`npx wrangler login`) or CLOUDFLARE_API_TOKEN.
//   1. D1's migrations: before the deploy when the database exists, so that new code never meets
//      an older schema; after it when this deploy is the one that creates the database.
//   2. `wrangler deploy`, which creates what does not exist yet (D1, KV, the queue) and links it.
//   3. SECRETS_ENCRYPTION_KEY, when the Worker has none: 32 random bytes, given to wrangler on
//      its standard input and printed nowhere.
//   4. While D1 holds no organization: the first one, its owner and a key (scripts/bootstrap.mjs).
// wrangler's own output is shown only when a step fails.
import "./toolchain.mjs";
import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
import { bootstrap, organizationCount, printWelcome } from "./bootstrap.mjs";
import { readTarget } from "./deploy-target.mjs";
import { environmentArgs, optionValue, runWrangler, wrangler } from "./wrangler.mjs";

const SECRET = "SECRETS_ENCRYPTION_KEY";

/** Whether the target's database exists; any failure other than "not found" stops the deploy. */
export function databaseExists(target) {
  const result = runWrangler(["d1", "info", "DB", "--json", ...target]);
  if (result.status === 0) return true;
  const output = `${result.stdout}\n${result.stderr}`;
  if (/Couldn't find/i.test(output)) return false;
  process.stderr.write(output);
  throw new Error(`wrangler d1 info failed with exit code ${result.status}`);
}

/** Applies the migrations D1 lacks; returns the names applied. */
export function applyMigrations(target) {
  const output = wrangler(["d1", "migrations", "apply", "DB", "--remote", ...target]);
  return [...new Set(output.match(/\b\d{4}_[\w-]+\.sql\b/g) ?? [])];
}

/** Deploys; returns the first URL wrangler reports (workers.dev), if any. */
export function deployWorker(target) {
  const output = wrangler(["deploy", ...target]);
  const url = /^\s+(https:\/\/\S+?)\/?\s*$/m.exec(output)?.[1];
  const version = /Current Version ID:\s*(\S+)/.exec(output)?.[1];
  return { url, version };
}

/** Sets the encryption key when the Worker has none; returns whether it did. */
export function ensureEncryptionKey(target) {
  const listed = wrangler(["secret", "list", "--format", "json", ...target]);
  const secrets = JSON.parse(listed.slice(listed.indexOf("[")));
  if (secrets.some((secret) => secret.name === SECRET)) return false;
  wrangler(["secret", "put", SECRET, ...target], { input: randomBytes(32).toString("base64") });
  return true;
}

function describeMigrations(applied) {
  if (applied.length === 0) return "D1 migrations: up to date.";
  return `D1 migrations: applied ${applied.length} (${applied[0]}${applied.length > 1 ? ` … ${applied.at(-1)}` : ""}).`;
}

/** Every step, in the order the module comment gives. */
export async function deploy(environment) {
  const target = environmentArgs(environment);
  const { workerName, publicBaseUrl } = await readTarget(environment);
  console.log(`Deploying ${workerName}${environment ? ` (--env ${environment})` : " (the top level; --env staging or production for those)"}.`);

  const existed = databaseExists(target);
  if (existed) console.log(describeMigrations(applyMigrations(target)));
  const { url, version } = deployWorker(target);
  console.log(`Deployed${url ? ` to ${url}` : ""}${version ? `, version ${version}` : ""}.`);
  if (!existed) console.log(describeMigrations(applyMigrations(target)));
  if (ensureEncryptionKey(target)) console.log(`${SECRET}: set to 32 new random bytes (shown nowhere; see docs/security.md to rotate it).`);

  const baseUrl = publicBaseUrl ?? url ?? `https://${workerName}.<your workers.dev subdomain>`;
  if (organizationCount({ remote: true, environment }) === 0) {
    printWelcome(await bootstrap({ remote: true, environment }), baseUrl);
  } else {
    console.log(`Already set up: ${baseUrl}. \`npm run bootstrap -- --remote${environment ? ` --env ${environment}` : ""}\` mints a new key for the owner.`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    await deploy(optionValue(process.argv.slice(2), "env"));
  } catch (error) {
    console.error(`\nDeploy stopped: ${error instanceof Error ? error.message : error}`);
    process.exitCode = 1;
  }
}
