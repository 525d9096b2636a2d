#!/usr/bin/env node
// `npm run deploy [-- --env staging|production]`: one command for a whole deployment, safe to run
// again. It needs a logged-in wrangler (`npx wrangler login`) or CLOUDFLARE_API_TOKEN.
//   1. What `wrangler deploy` does not create itself: the dead-letter queues (wrangler creates a
//      queue a producer binds, and only checks that one merely consumed exists); and, while the
//      Worker does not exist yet, the API key cache an earlier first deploy left when it stopped
//      after creating it is removed (wrangler would refuse to create it again under its title).
//   2. D1's migrations: before the deploy when the database exists, so that new code never meets
//      an older schema; after it when this deploy is the one that creates the database.
//   3. `wrangler deploy`, which creates what does not exist yet (D1, KV, R2, the produced queues)
//      and links it.
//   4. SECRETS_ENCRYPTION_KEY, when the Worker has none: the one kept in .secrets/ (git-ignored,
//      owner-only) by an earlier deploy, else, while D1 holds no organization, 32 new random
//      bytes kept there: given to wrangler on its standard input and printed nowhere (rotating
//      the key needs the current one, and Cloudflare never gives a secret back). A database that
//      holds data sealed under a key that is lost gets no new one: the deploy stops and says so.
//   5. While D1 holds no organization: the first one, its owner and a key (scripts/bootstrap.mjs).
// wrangler's own output is shown only when a step fails.
import "./toolchain.mjs";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { bootstrap, organizationCount, printWelcome } from "./bootstrap.mjs";
import { publicAddress, readTarget } from "./deploy-target.mjs";
import { environmentArgs, root, runWrangler, scriptOptions, wrangler } from "./wrangler.mjs";

const SECRET = "SECRETS_ENCRYPTION_KEY";

/**
 * Whether what `args` asks wrangler about exists: true when it answers, false when its error is
 * `missing`'s; any other failure stops the deploy, with wrangler's output.
 */
function exists(args, missing) {
  const result = runWrangler(args);
  if (result.status === 0) return true;
  const output = `${result.stdout}\n${result.stderr}`;
  if (missing.test(output)) return false;
  process.stderr.write(output);
  throw new Error(`wrangler ${args.join(" ")} failed with exit code ${result.status}`);
}

/** The JSON wrangler printed after whatever it says first. */
const printedJson = (output) => JSON.parse(output.slice(output.indexOf("[")));

export const databaseExists = (target) => exists(["d1", "info", "DB", "--json", ...target], /Couldn't find/i);

export const workerExists = (target) =>
  exists(
    ["secret", "list", "--format", "json", ...target],
    /Worker "[^"]*"( \(env: [^)]*\))? not found|does not exist|\[code: 10007\]/i,
  );

/** Creates the queues no producer binds (the dead-letter queues) that do not exist yet. */
export function ensureQueues(target, names) {
  for (const name of names) {
    if (exists(["queues", "info", name, ...target], /does not exist/i)) continue;
    wrangler(["queues", "create", name, ...target]);
    console.log(`Queue ${name}: created (a dead-letter queue: wrangler deploy creates only the queues it sends to).`);
  }
}

/**
 * Before the Worker exists, a KV namespace under the title wrangler gives its API key cache was
 * left by a first deploy that stopped after creating it: nothing uses it (it held cached key
 * lookups for a minute at most), and wrangler refuses to create one of the same title, so it goes.
 */
export function removeLeftoverKeyCache(target, workerName) {
  const title = `${workerName}-api-key-cache`;
  const namespaces = printedJson(wrangler(["kv", "namespace", "list", ...target]));
  if (!namespaces.some((namespace) => namespace.title === title)) return;
  wrangler(["kv", "namespace", "delete", title, "--skip-confirmation", ...target]);
  console.log(`KV namespace ${title}: removed, left by a first deploy that stopped before the Worker existed.`);
}

/** Applies the migrations D1 lacks; returns the names applied. */
export function applyMigrations(target) {
  const output = wrangler(["d1", "migrations", "apply", "DB", "--remote", ...target]);
  return [...new Set(output.match(/\b\d{4}_[\w-]+\.sql\b/g) ?? [])];
}

/**
 * The commit being deployed, as the version's tag and message, so that `wrangler versions list`
 * says which commit each environment runs (promoting staging deploys that commit to production).
 * None outside a git checkout.
 */
function commitLabel() {
  const git = (args) => spawnSync("git", args, { cwd: root, encoding: "utf8" });
  const head = git(["rev-parse", "--short=12", "HEAD"]);
  if (head.status !== 0) return [];
  const commit = head.stdout.trim();
  const dirty = git(["status", "--porcelain", "--untracked-files=no"]).stdout.trim() !== "";
  return ["--tag", commit, "--message", `commit ${commit}${dirty ? " with uncommitted changes" : ""}`];
}

/** Deploys; returns the first URL wrangler reports (workers.dev), if any. */
export function deployWorker(target) {
  const output = wrangler(["deploy", ...commitLabel(), ...target]);
  const url = /^\s+(https:\/\/\S+?)\/?\s*$/m.exec(output)?.[1];
  const version = /Current Version ID:\s*(\S+)/.exec(output)?.[1];
  return { url, version };
}

/** Where a Worker's generated key is kept (`SECRETS_DIR` moves the folder, for the tests). */
const keyFile = (workerName) =>
  path.join(process.env.SECRETS_DIR ?? path.join(root, ".secrets"), `${workerName}.${SECRET}`);

/**
 * The key kept for this Worker, or a new one kept before it is used: a key once set is never
 * lost here, and a Worker created again over the same D1 gets the key that sealed its rows.
 */
function keptKey(file) {
  if (existsSync(file)) return { key: readFileSync(file, "utf8").trim(), kept: true };
  const key = randomBytes(32).toString("base64");
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: "wx" });
  return { key, kept: false };
}

/**
 * Sets the encryption key when the Worker has none; returns the file it came from, or null. A new
 * key only for a database that holds nothing sealed yet (`holdsData` false): over data sealed
 * under a key since lost, a new one would open none of it, and /healthz could not tell.
 */
export function ensureEncryptionKey(target, workerName, holdsData) {
  const secrets = printedJson(wrangler(["secret", "list", "--format", "json", ...target]));
  if (secrets.some((secret) => secret.name === SECRET)) return null;
  const file = keyFile(workerName);
  if (!existsSync(file) && holdsData()) {
    throw new Error(
      `the Worker has no ${SECRET}, and its database holds data sealed under one: put that key back ` +
        `(\`npx wrangler secret put ${SECRET}\`, or its file in ${path.relative(process.cwd(), file)}) and run again`,
    );
  }
  const { key, kept } = keptKey(file);
  wrangler(["secret", "put", SECRET, ...target], { input: key });
  return { file: path.relative(process.cwd(), file), kept };
}

function describeMigrations(applied) {
  if (applied.length === 0) return "D1 migrations: up to date.";
  return `D1 migrations: applied ${applied.length} (${applied[0]}${applied.length > 1 ? ` … ${applied.at(-1)}` : ""}).`;
}

/** Migrations before the deploy when D1 exists, after the deploy that creates it; the URL deployed to. */
function migrateAndDeploy(target) {
  const existed = databaseExists(target);
  if (existed) console.log(describeMigrations(applyMigrations(target)));
  const { url, version } = deployWorker(target);
  console.log(`Deployed${url ? ` to ${url}` : ""}${version ? `, version ${version}` : ""}.`);
  if (!existed) console.log(describeMigrations(applyMigrations(target)));
  return url;
}

function setKeyIfMissing(target, workerName, environment) {
  const key = ensureEncryptionKey(target, workerName, () => organizationCount({ remote: true, environment }) > 0);
  if (key?.kept) console.log(`${SECRET}: set from ${key.file}, kept from an earlier deploy.`);
  else if (key)
    console.log(
      `${SECRET}: set to 32 new random bytes, kept in ${key.file} (owner-only; store it safely: rotating needs it).`,
    );
}

/** The first organization and key, only while D1 holds none: the key is printed once, last. */
async function bootstrapIfEmpty(environment, baseUrl) {
  if (organizationCount({ remote: true, environment }) === 0) {
    printWelcome(await bootstrap({ remote: true, environment }), baseUrl);
  } else {
    console.log(
      `Already set up: ${baseUrl}. ` +
        `\`npm run bootstrap -- --remote${environment ? ` --env ${environment}` : ""}\` mints a new key for the owner.`,
    );
  }
}

/** Every step, in the order the module comment gives. */
export async function deploy(environment) {
  const target = environmentArgs(environment);
  const config = await readTarget(environment);
  console.log(
    `Deploying ${config.workerName}` +
      `${environment ? ` (--env ${environment})` : " (the top level; --env staging or production for those)"}.`,
  );
  if (!workerExists(target)) removeLeftoverKeyCache(target, config.workerName);
  ensureQueues(target, config.queuesOnlyConsumed);
  const url = migrateAndDeploy(target);
  setKeyIfMissing(target, config.workerName, environment);
  await bootstrapIfEmpty(environment, publicAddress(config, url));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    await deploy(scriptOptions("deploy", { env: { type: "string" } }).env);
  } catch (error) {
    console.error(`\nDeploy stopped: ${error instanceof Error ? error.message : error}`);
    process.exitCode = 1;
  }
}
