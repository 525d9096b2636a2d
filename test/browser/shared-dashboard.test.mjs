// The public page of a shared dashboard, as a person sees it: a real local server of this worker
// (`wrangler dev` on a fresh state directory) and headless Chromium. Runs in Node (`npm test`),
// since the workerd test pool cannot launch a browser. Screenshots go to test/browser/output/.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { chromium } from "playwright-core";
import { bootstrap } from "../../scripts/bootstrap.mjs";
import { root, wrangler, wranglerInBackground } from "../../scripts/wrangler.mjs";

const OUTPUT = path.join(root, "test", "browser", "output");
const CHROMIUM = "/usr/bin/chromium";
// This machine's flags: no sandbox or GPU in containers, and nothing fetched from the network.
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const TEXT_BODY = 'Hello from a text tile <script>window.injected = true; document.title = "pwned"</script>';

const scratch = mkdtempSync(path.join(tmpdir(), "shared-dashboard-"));
let server;
let context;
let baseUrl;
let key;
let projectId;

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function waitForServer(url, deadline = Date.now() + 45_000) {
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the server did not answer ${url} in time`);
}

async function call(method, apiPath, body) {
  const response = await fetch(`${baseUrl}${apiPath}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.ok(response.ok, `${method} ${apiPath}: ${response.status}`);
  return response.json();
}

before(async () => {
  const state = path.join(scratch, "state");
  wrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", state], { capture: true });
  ({ api_key: key, project_id: projectId } = bootstrap({ persistTo: state }));
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  // Its own process group, so that stopping it stops wrangler's workerd child too.
  server = wranglerInBackground(["dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", state], {
    stdio: "ignore",
    detached: true,
  });
  await waitForServer(`${baseUrl}/api/schema`);
  context = await chromium.launchPersistentContext(path.join(scratch, "profile"), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
  });
  mkdirSync(OUTPUT, { recursive: true });
});

after(async () => {
  await context?.close();
  if (server?.pid) process.kill(-server.pid, "SIGTERM");
  rmSync(scratch, { recursive: true, force: true });
});

test("a shared dashboard reads well in a browser, shows markup as text, and dies with its token", { timeout: 90_000 }, async () => {
  const dashboard = await call("POST", `/api/projects/${projectId}/dashboards`, {
    name: "Browser check",
    description: "Weekly product numbers, shared with the team.",
    use_template: "DEFAULT_APP",
  });
  const dashboardPath = `/api/projects/${projectId}/dashboards/${dashboard.id}`;
  await call("PATCH", dashboardPath, { name: "Browser check", tiles: [{ text: { body: TEXT_BODY }, layouts: { sm: { x: 0, y: 0, w: 6, h: 2 } } }] });
  const sharing = await call("PATCH", `${dashboardPath}/sharing`, { enabled: true });

  const page = await context.newPage();
  const response = await page.goto(`${baseUrl}/shared/${sharing.access_token}`);
  assert.equal(response.status(), 200);
  assert.equal(await page.title(), "Browser check");
  assert.ok(await page.getByRole("heading", { level: 1, name: "Browser check" }).isVisible());
  const textTile = page.getByText("Hello from a text tile");
  assert.ok(await textTile.isVisible());
  // The markup is shown as text, and never ran.
  assert.equal(await textTile.textContent(), TEXT_BODY);
  assert.equal(await page.evaluate(() => window.injected), undefined);
  await page.screenshot({ path: path.join(OUTPUT, "shared-dashboard-desktop.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(OUTPUT, "shared-dashboard-phone.png"), fullPage: true });

  await call("POST", `${dashboardPath}/sharing/refresh`);
  const dead = await page.goto(`${baseUrl}/shared/${sharing.access_token}`);
  assert.equal(dead.status(), 404);
  assert.ok(await page.getByRole("heading", { name: "Not found" }).isVisible());
});
