import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/*
 * `npm run deploy` against a stand-in for wrangler (no account here): a script that records each
 * call and keeps a small account's state in a JSON file. Like Cloudflare, it has no database
 * until a deploy creates it, and refuses to migrate one that does not exist; so the order the
 * calls came in is checked by the stand-in as well as by the assertions.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DEPLOYED_URL = "https://posthog-org-api-staging.example.workers.dev";

type Account = {
  database: boolean;
  /** Whether the Worker exists: a deploy creates it. */
  worker: boolean;
  queues: string[];
  kv: { id: string; title: string }[];
  secrets: Record<string, string>;
  organizations: number;
  failDeploy?: boolean;
  /** A first deploy that stops after creating the KV namespace (a later resource failed). */
  failAfterKv?: boolean;
  calls: { args: string[]; sql?: string }[];
};

const STUB = String.raw`#!/usr/bin/env node
const fs = require("node:fs");
const file = process.env.STUB_ACCOUNT;
const account = JSON.parse(fs.readFileSync(file, "utf8"));
const args = process.argv.slice(2);
const firstOption = args.findIndex((arg) => arg.startsWith("-"));
const words = args.slice(0, firstOption === -1 ? args.length : firstOption).slice(0, 3).join(" ");
const option = (name) => args[args.indexOf(name) + 1];
const call = { args };
account.calls.push(call);
const save = () => fs.writeFileSync(file, JSON.stringify(account));
const fail = (message) => { save(); console.error("✘ [ERROR] " + message); process.exit(1); };
const json = (value) => { save(); console.log(JSON.stringify(value)); process.exit(0); };

const environment = (args.find((arg) => arg.startsWith("--env=")) ?? "--env=").slice("--env=".length);
const named = (name) => name + (environment ? "-" + environment : "");
if (words.startsWith("queues info")) {
  if (!account.queues.includes(args[2])) {
    fail('Queue "' + args[2] + '" does not exist. To create it, run: wrangler queues create ' + args[2]);
  }
  json({ queue_name: args[2] });
}
if (words.startsWith("queues create")) {
  account.queues.push(args[2]);
  json({ queue_name: args[2] });
}
if (words === "kv namespace list") json(account.kv);
if (words.startsWith("kv namespace delete")) {
  account.kv = account.kv.filter((namespace) => namespace.title !== args[3]);
  json({});
}
if (words === "d1 info DB") {
  if (!account.database) fail("Couldn't find a D1 DB named 'posthog-org-api-staging' (bound as 'DB') in the API.");
  json({ name: "posthog-org-api-staging" });
}
if (words === "d1 migrations apply") {
  if (!account.database) fail("Couldn't find a D1 DB named 'posthog-org-api-staging' (bound as 'DB') in the API.");
  save();
  console.log(
    "Migrations to be applied:\n│ 0000_initial.sql │\n│ 0016_sorted_list_shards.sql │\n" +
      "✅ 0000_initial.sql\n✅ 0016_sorted_list_shards.sql",
  );
  process.exit(0);
}
if (words === "deploy") {
  if (account.failDeploy) fail("A request to the Cloudflare API failed: Authentication error [code: 10000]");
  // As wrangler: the queues only consumed must exist; it creates the KV namespace of a new Worker.
  for (const queue of [named("webhook-deliveries-dead-letters"), named("invite-emails-dead-letters")]) {
    if (!account.queues.includes(queue)) fail('Queue "' + queue + '" does not exist.');
  }
  if (!account.worker) {
    const title = named("posthog-org-api") + "-api-key-cache";
    if (account.kv.some((namespace) => namespace.title === title)) fail("a namespace with this title already exists");
    account.kv.push({ id: "kv" + account.kv.length, title });
    if (account.failAfterKv) fail("You have reached the maximum number of D1 databases [code: 7406]");
  }
  account.worker = true;
  account.database = true;
  save();
  console.log(
    "Uploaded posthog-org-api-staging (2.10 sec)\nDeployed posthog-org-api-staging triggers (0.40 sec)\n" +
      "  ${DEPLOYED_URL}\n  schedule: */10 * * * *\nCurrent Version ID: 0c5e-version",
  );
  process.exit(0);
}
if (words === "secret list" && !account.worker) fail("This Worker does not exist on your account. [code: 10007]");
if (words === "secret list") json(Object.keys(account.secrets).map((name) => ({ name, type: "secret_text" })));
if (words.startsWith("secret put")) {
  account.secrets[args[2]] = fs.readFileSync(0, "utf8");
  save();
  console.log("✨ Success! Uploaded secret " + args[2]);
  process.exit(0);
}
if (words === "d1 execute DB" && args.includes("--command")) {
  json([{ results: [{ organizations: account.organizations }], success: true }]);
}
if (words === "d1 execute DB" && args.includes("--file")) {
  call.sql = fs.readFileSync(option("--file"), "utf8");
  account.organizations = 1;
  const owner = { organization_id: "0197-org", project_id: 1, user_uuid: "0197-user", user_email: "owner@example.com" };
  json([{ results: [] }, { results: [owner] }]);
}
fail("unexpected call: " + args.join(" "));
`;

let directory: string;
let accountFile: string;

function readAccount(): Account {
  return JSON.parse(readFileSync(accountFile, "utf8")) as Account;
}

/** `npm run deploy -- <args>`, or with `viaNpm`, `npm run deploy <args>` (npm then sees them first). */
function runDeploy(args: string[], account: Partial<Account> = {}, { viaNpm = false } = {}) {
  writeFileSync(accountFile, JSON.stringify({ ...readAccount(), ...account, calls: [] }));
  const [file, fileArgs] = viaNpm
    ? ["npm", ["run", "--silent", "deploy", ...args]]
    : [process.execPath, [path.join(ROOT, "scripts", "deploy.mjs"), ...args]];
  const result = spawnSync(file, fileArgs, {
    cwd: ROOT,
    env: {
      ...process.env,
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
      WRANGLER: path.join(directory, "wrangler"),
      STUB_ACCOUNT: accountFile,
      SECRETS_DIR: path.join(directory, "secrets"),
      API_URL: "",
    },
    encoding: "utf8",
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, account: readAccount() };
}

const keptKeyFile = () => path.join(directory, "secrets", "posthog-org-api-staging.SECRETS_ENCRYPTION_KEY");

/** Each call as its command words and the environment it targets: "deploy --env=staging". */
const commands = (account: Account) =>
  account.calls.map(({ args }) => {
    const firstOption = args.findIndex((arg) => arg.startsWith("-"));
    const words = args.slice(0, firstOption === -1 ? args.length : firstOption).slice(0, 3);
    const sql = args.includes("--command") ? " --command" : args.includes("--file") ? " --file" : "";
    return `${words.join(" ")}${sql} ${args.find((arg) => arg.startsWith("--env")) ?? "(no --env)"}`;
  });

beforeEach(() => {
  directory = mkdtempSync(path.join(tmpdir(), "deploy-script-"));
  accountFile = path.join(directory, "account.json");
  writeFileSync(
    accountFile,
    JSON.stringify({ database: false, worker: false, queues: [], kv: [], secrets: {}, organizations: 0, calls: [] }),
  );
  writeFileSync(path.join(directory, "wrangler"), STUB);
  chmodSync(path.join(directory, "wrangler"), 0o755);
});

afterEach(() => rmSync(directory, { recursive: true, force: true }));

describe("npm run deploy", () => {
  it("on a new account: deploys (creating D1), migrates, sets the key once, bootstraps, names the URL", () => {
    const { status, stdout, stderr, account } = runDeploy(["--env", "staging"]);

    expect(stderr).toBe("");
    expect(status).toBe(0);
    expect(commands(account)).toEqual([
      "secret list --env=staging",
      "kv namespace list --env=staging",
      "queues info webhook-deliveries-dead-letters-staging --env=staging",
      "queues create webhook-deliveries-dead-letters-staging --env=staging",
      "queues info invite-emails-dead-letters-staging --env=staging",
      "queues create invite-emails-dead-letters-staging --env=staging",
      "d1 info DB --env=staging",
      "deploy --env=staging",
      "d1 migrations apply --env=staging",
      "secret list --env=staging",
      "d1 execute DB --command --env=staging",
      "secret put SECRETS_ENCRYPTION_KEY --env=staging",
      "d1 execute DB --command --env=staging",
      "d1 execute DB --file --env=staging",
    ]);
    // The version names the commit, for promoting it from staging to production.
    const deployArgs = account.calls.find((call) => call.args[0] === "deploy")!.args;
    expect(deployArgs[deployArgs.indexOf("--tag") + 1]).toMatch(/^[0-9a-f]{12}$/);
    // 32 random bytes in base64, on wrangler's standard input only: never an argument, never shown.
    const key = account.secrets.SECRETS_ENCRYPTION_KEY!;
    expect(Buffer.from(key, "base64")).toHaveLength(32);
    expect(account.calls.flatMap((call) => call.args).join(" ")).not.toContain(key);
    expect(stdout).not.toContain(key);
    // Kept for rotations, which need the current key: owner-only, outside git.
    expect(readFileSync(keptKeyFile(), "utf8")).toBe(`${key}\n`);
    expect(statSync(keptKeyFile()).mode & 0o777).toBe(0o600);

    const apiKey = /Bearer (\S+)"/.exec(stdout)?.[1] ?? "";
    expect(stdout).toContain(`curl -H "Authorization: Bearer ${apiKey}" ${DEPLOYED_URL}/api/organizations/@current`);
    expect(stdout.trimEnd().split("\n").at(-1)).toContain(DEPLOYED_URL);
    expect(stdout).not.toContain("127.0.0.1");
    // Only the key's hash reaches D1.
    expect(account.calls.find((call) => call.sql)?.sql).not.toContain(apiKey);
  });

  it("run again: migrates before deploying, keeps the key, mints no key", () => {
    expect(runDeploy(["--env", "staging"]).status).toBe(0);
    const first = readAccount().secrets.SECRETS_ENCRYPTION_KEY;

    const { status, stdout, account } = runDeploy(["--env", "staging"]);

    expect(status).toBe(0);
    expect(commands(account)).toEqual([
      "secret list --env=staging",
      "queues info webhook-deliveries-dead-letters-staging --env=staging",
      "queues info invite-emails-dead-letters-staging --env=staging",
      "d1 info DB --env=staging",
      "d1 migrations apply --env=staging",
      "deploy --env=staging",
      "secret list --env=staging",
      "d1 execute DB --command --env=staging",
    ]);
    expect(account.secrets.SECRETS_ENCRYPTION_KEY).toBe(first);
    expect(stdout).not.toContain("Personal API key");
    expect(stdout).toContain(`Already set up: ${DEPLOYED_URL}.`);
  });

  it("gives a Worker created again the key kept from before, rather than a new one", () => {
    expect(runDeploy(["--env", "staging"]).status).toBe(0);
    const kept = readAccount().secrets.SECRETS_ENCRYPTION_KEY;

    const { status, stdout, account } = runDeploy(["--env", "staging"], { secrets: {} });

    expect(status).toBe(0);
    expect(account.secrets.SECRETS_ENCRYPTION_KEY).toBe(kept);
    expect(stdout).toContain("SECRETS_ENCRYPTION_KEY: set from");
    expect(stdout).not.toContain(kept);
  });

  it("runs again after a first deploy that stopped once wrangler had created the KV namespace", () => {
    const stopped = runDeploy(["--env", "staging"], { failAfterKv: true });
    expect(stopped.status).toBe(1);
    expect(stopped.account.kv.map((namespace) => namespace.title)).toEqual(["posthog-org-api-staging-api-key-cache"]);

    const { status, stdout, account } = runDeploy(["--env", "staging"], { failAfterKv: false });

    expect(status).toBe(0);
    expect(stdout).toContain("KV namespace posthog-org-api-staging-api-key-cache: removed");
    expect(account.kv.map((namespace) => namespace.title)).toEqual(["posthog-org-api-staging-api-key-cache"]);
    expect(account.secrets.SECRETS_ENCRYPTION_KEY).toBeDefined();
  });

  it("mints no new key over a database whose data was sealed under a key since lost", () => {
    expect(runDeploy(["--env", "staging"]).status).toBe(0);
    rmSync(keptKeyFile());

    const { status, stderr, account } = runDeploy(["--env", "staging"], { secrets: {} });

    expect(status).toBe(1);
    expect(stderr).toContain("the Worker has no SECRETS_ENCRYPTION_KEY, and its database holds data sealed under one");
    expect(account.secrets).toEqual({});
  });

  it("targets the top level explicitly without --env, and stops at a failed step showing wrangler's error", () => {
    const { status, stderr, account } = runDeploy([], { failDeploy: true });

    expect(status).toBe(1);
    expect(commands(account)).toEqual([
      "secret list --env=",
      "kv namespace list --env=",
      "queues info webhook-deliveries-dead-letters --env=",
      "queues create webhook-deliveries-dead-letters --env=",
      "queues info invite-emails-dead-letters --env=",
      "queues create invite-emails-dead-letters --env=",
      "d1 info DB --env=",
      "deploy --env=",
    ]);
    expect(stderr).toContain("Authentication error");
    expect(stderr).toMatch(/Deploy stopped: wrangler deploy .*--env= failed/);
    expect(account.secrets).toEqual({});
  });

  it("stops before any call when npm took --env for itself (no `--`), rather than deploying the top level", () => {
    for (const args of [["--env", "production"], ["--env=production"]]) {
      const { status, stderr, account } = runDeploy(args, {}, { viaNpm: true });

      expect([status, account.calls]).toEqual([1, []]);
      expect(stderr).toContain("npm took --env for itself: put `--` before the script's options");
    }
  });

  it("stops before any call on an option it does not know or --env without its value", () => {
    for (const [args, problem] of [
      [["--env"], "Option '--env <value>' argument missing"],
      [["--env", "staging", "--dry-run"], "Unknown option '--dry-run'"],
      [["staging"], "Unexpected argument 'staging'"],
    ] as const) {
      const { status, stderr, account } = runDeploy([...args]);

      expect([status, account.calls]).toEqual([1, []]);
      expect(stderr).toContain(`Deploy stopped: ${problem}`);
    }
  });
});
