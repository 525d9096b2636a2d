// A fresh local server for tests and the documentation check: its own temporary D1/KV state,
// migrated and bootstrapped, `wrangler dev` on a free port. The same steps as `npm start`.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { bootstrap } from "./bootstrap.mjs";
import { wrangler, wranglerInBackground } from "./wrangler.mjs";

const STARTUP_TIMEOUT_MS = 90_000;

export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once `url/healthz` answers 2xx; throws with the server's output when it exits or times out. */
export async function waitUntilHealthy(url, server) {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`wrangler dev exited:\n${server.output()}`);
    const healthy = await fetch(`${url}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (healthy) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`wrangler dev did not answer within ${STARTUP_TIMEOUT_MS / 1000} s:\n${server.output()}`);
}

/** `wrangler dev`'s arguments to listen on 127.0.0.1:`port`. */
export const localListen = (port) => ["--ip", "127.0.0.1", "--port", String(port)];

/**
 * `wrangler dev`'s `--env-file` of `vars`, after a throwaway key for the secrets the state seals
 * (as `npm start` writes one into .dev.vars) and webhooks allowed to loopback receivers: written,
 * owner-only, into `directory`, never on a command line, which any local user could read.
 */
export function localVars(directory, vars = {}) {
  const all = {
    SECRETS_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    WEBHOOKS_ALLOW_INSECURE: "1",
    EXPOSE_D1_COST: "1",
    ...vars,
  };
  const file = path.join(directory, "local.env");
  const lines = Object.entries(all).map(([name, value]) => `${name}=${JSON.stringify(value)}\n`);
  writeFileSync(file, lines.join(""), { mode: 0o600 });
  return ["--env-file", file];
}

/** Ends a server started in its own process group (`quiet` or `logTo`), and what it started. */
export function stopServer(server) {
  if (server.exitCode !== null) return Promise.resolve();
  const exited = new Promise((resolve) => server.once("exit", resolve));
  process.kill(-server.pid, "SIGTERM");
  return exited;
}

/**
 * Starts a server; `vars` become `--var NAME:value`. Resolves once `/healthz` answers, with
 * `url`, the bootstrap's `api_key`, `organization_id`, `project_id`, `user`, the state folder
 * (`persistTo`), and `stop()`.
 */
export async function startLocalServer({ vars = {} } = {}) {
  const persistTo = mkdtempSync(path.join(tmpdir(), "posthog-org-api-"));
  const state = ["--persist-to", persistTo];
  wrangler(["d1", "migrations", "apply", "DB", "--local", ...state]);
  const setup = await bootstrap({ persistTo });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = wranglerInBackground(["dev", ...localListen(port), ...state, ...localVars(persistTo, vars)], {
    quiet: true,
  });
  try {
    await waitUntilHealthy(url, server);
  } catch (error) {
    await stopServer(server);
    throw error;
  }
  return {
    ...setup,
    url,
    persistTo,
    async stop() {
      await stopServer(server);
      rmSync(persistTo, { recursive: true, force: true });
    },
  };
}
