import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/*
 * `npm run deploy` with the project's own wrangler, against a stand-in for the Cloudflare API
 * (CLOUDFLARE_API_BASE_URL on 127.0.0.1): an account that keeps its queues, KV namespaces, D1
 * databases and R2 buckets and answers as the API does for what is missing. Unlike the stand-in
 * for wrangler (deploy-script.test.ts), this holds the script to what wrangler itself does on a
 * first deploy: which resources it provisions and which it expects to exist. The stand-in answers
 * no upload, so a deploy here ends at it. Nothing leaves this machine.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ACCOUNT = "0123456789abcdef0123456789abcdef";

type Account = {
  queues: string[];
  kv: { id: string; title: string }[];
  d1: { uuid: string; name: string }[];
  r2: string[];
  /** Whether creating a D1 database fails (the account's limit of databases, say). */
  d1CreateFails: boolean;
  requests: string[];
};

const envelope = (result: unknown, extra: object = {}) =>
  JSON.stringify({ success: true, errors: [], messages: [], result, ...extra });
const failure = (code: number, message: string) =>
  JSON.stringify({ success: false, errors: [{ code, message }], messages: [], result: null });

/** The Cloudflare API as far as a first `wrangler deploy` reaches it. */
function cloudflareApi(account: Account) {
  return http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://api");
      const route = url.pathname.replace(`/client/v4/accounts/${ACCOUNT}`, "");
      account.requests.push(`${req.method} ${route}`);
      const send = (status: number, text: string) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(text);
      };
      const list = (all: unknown[]) => {
        const items = Number(url.searchParams.get("page") ?? "1") > 1 ? [] : all;
        return send(
          200,
          envelope(items, {
            result_info: { page: 1, per_page: 100, count: items.length, total_count: all.length, total_pages: 1 },
          }),
        );
      };
      // The static assets: all already there, a completion token to deploy with.
      if (/^\/workers\/scripts\/[^/]+\/assets-upload-session$/.test(route))
        return send(200, envelope({ jwt: "completion-token", buckets: [] }));
      // No Worker yet.
      if (/^\/workers\/(services|scripts)\//.test(route))
        return send(404, failure(10007, "This Worker does not exist on your account."));
      if (route === "/workers/subdomain") return send(200, envelope({ subdomain: "example" }));
      if (route === "/queues" && req.method === "GET") {
        const names = url.searchParams.getAll("name");
        return list(
          account.queues
            .filter((name) => names.length === 0 || names.includes(name))
            .map((queue_name) => ({ queue_name, queue_id: queue_name })),
        );
      }
      if (route === "/queues" && req.method === "POST") {
        const { queue_name } = JSON.parse(body) as { queue_name: string };
        account.queues.push(queue_name);
        return send(200, envelope({ queue_name, queue_id: queue_name }));
      }
      const kvDelete = /^\/storage\/kv\/namespaces\/([^/]+)$/.exec(route);
      if (kvDelete && req.method === "DELETE") {
        account.kv = account.kv.filter((namespace) => namespace.id !== kvDelete[1]);
        return send(200, envelope(null));
      }
      if (route === "/storage/kv/namespaces" && req.method === "GET") return list(account.kv);
      if (route === "/storage/kv/namespaces" && req.method === "POST") {
        const { title } = JSON.parse(body) as { title: string };
        // "A 400 is returned if the account already owns a namespace with this title."
        if (account.kv.some((namespace) => namespace.title === title))
          return send(400, failure(10014, "a namespace with this account ID and title already exists"));
        const namespace = { id: `kv${account.kv.length + 1}`.padEnd(32, "0"), title };
        account.kv.push(namespace);
        return send(200, envelope(namespace));
      }
      const bucket = /^\/r2\/buckets\/([^/]+)$/.exec(route);
      if (bucket && req.method === "GET")
        return account.r2.includes(bucket[1]!)
          ? send(200, envelope({ name: bucket[1] }))
          : send(404, failure(10006, "The specified bucket does not exist."));
      if (route === "/r2/buckets" && req.method === "GET")
        return send(200, envelope({ buckets: account.r2.map((name) => ({ name })) }));
      if (route === "/r2/buckets" && req.method === "POST") {
        const { name } = JSON.parse(body) as { name: string };
        account.r2.push(name);
        return send(200, envelope({ name }));
      }
      const database = /^\/d1\/database\/([^/]+)$/.exec(route);
      if (database && req.method === "GET") {
        const found = account.d1.find((db) => db.name === decodeURIComponent(database[1]!) || db.uuid === database[1]);
        return found ? send(200, envelope(found)) : send(404, failure(7404, "The database could not be found"));
      }
      if (route === "/d1/database" && req.method === "GET") return list(account.d1);
      if (route === "/d1/database" && req.method === "POST") {
        if (account.d1CreateFails)
          return send(400, failure(7406, "You have reached the maximum number of D1 databases"));
        const { name } = JSON.parse(body) as { name: string };
        const db = { uuid: `00000000-0000-4000-8000-${String(account.d1.length + 1).padStart(12, "0")}`, name };
        account.d1.push(db);
        return send(200, envelope(db));
      }
      return send(404, failure(99999, `the stand-in does not answer ${req.method} ${route}`));
    });
  });
}

let directory: string;
let server: http.Server;
let account: Account;

beforeEach(async () => {
  directory = mkdtempSync(path.join(tmpdir(), "deploy-with-wrangler-"));
  account = { queues: [], kv: [], d1: [], r2: [], d1CreateFails: false, requests: [] };
  server = cloudflareApi(account);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});

afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(directory, { recursive: true, force: true });
});

/** `npm run deploy -- <args>` with the installed wrangler, logged in to the stand-in account. */
function runDeploy(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const { port } = server.address() as AddressInfo;
  const child = spawn(process.execPath, [path.join(ROOT, "scripts", "deploy.mjs"), ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
      WRANGLER: "",
      CLOUDFLARE_API_BASE_URL: `http://127.0.0.1:${port}/client/v4`,
      CLOUDFLARE_API_TOKEN: "stand-in-token",
      CLOUDFLARE_ACCOUNT_ID: ACCOUNT,
      SECRETS_DIR: path.join(directory, "secrets"),
      WRANGLER_LOG_PATH: path.join(directory, "logs"),
      API_URL: "",
    },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on("close", (status) => resolve({ status, stdout, stderr })));
}

describe("npm run deploy with the installed wrangler", () => {
  it("on a new account creates the dead-letter queues wrangler only checks, and provisions the rest", async () => {
    const { stdout, stderr } = await runDeploy(["--env", "staging"]);

    expect(stderr).not.toMatch(/Queue "[\w-]*" does not exist/);
    expect(stdout).toContain("Queue webhook-deliveries-dead-letters-staging: created");
    expect(account.queues.sort()).toEqual([
      "background-jobs-staging",
      "invite-emails-dead-letters-staging",
      "invite-emails-staging",
      "webhook-deliveries-dead-letters-staging",
      "webhook-deliveries-staging",
    ]);
    expect(account.kv.map((namespace) => namespace.title)).toEqual(["posthog-org-api-staging-api-key-cache"]);
    expect(account.d1.map((database) => database.name)).toEqual(["posthog-org-api-staging"]);
    // It got as far as uploading the Worker, which the stand-in does not answer.
    expect(account.requests).toContain("PUT /workers/scripts/posthog-org-api-staging");
  }, 120_000);

  it("runs again after a first deploy that stopped once wrangler had created the KV namespace", async () => {
    account.queues = ["webhook-deliveries-dead-letters-staging", "invite-emails-dead-letters-staging"];
    account.d1CreateFails = true;
    const first = await runDeploy(["--env", "staging"]);
    expect(first.status).toBe(1);
    expect(account.kv.map((namespace) => namespace.title)).toEqual(["posthog-org-api-staging-api-key-cache"]);

    account.d1CreateFails = false;
    const second = await runDeploy(["--env", "staging"]);

    expect(second.stderr).not.toMatch(/title already exists/);
    expect(second.stdout).toContain("KV namespace posthog-org-api-staging-api-key-cache: removed");
    expect(account.kv.map((namespace) => namespace.title)).toEqual(["posthog-org-api-staging-api-key-cache"]);
    expect(account.d1.map((database) => database.name)).toEqual(["posthog-org-api-staging"]);
  }, 180_000);
});
