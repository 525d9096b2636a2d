import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchOfflineChromium, localServer, outputPath, type OfflineBrowser } from "./support";

/**
 * The public page of a shared dashboard, as a person sees it: the run's local server of this
 * worker and headless Chromium, which may reach nothing but that server.
 */
const { url, apiKey } = localServer();
const TEXT_BODY = 'Hello from a text tile <script>window.injected = true; document.title = "pwned"</script>';
let browser: OfflineBrowser;

beforeAll(async () => {
  browser = await launchOfflineChromium(url);
});
afterAll(() => browser.close());

async function call(method: string, apiPath: string, body?: unknown) {
  const response = await fetch(`${url}${apiPath}`, {
    method,
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.ok, `${method} ${apiPath}: ${response.status}`).toBe(true);
  return response.json();
}

describe("GET /shared/:access_token", () => {
  it("reads well on a desktop and a phone, shows markup as text, and dies with its token", async () => {
    const project = await call("GET", "/api/projects/@current");
    const dashboard = await call("POST", `/api/projects/${project.id}/dashboards`, {
      name: "Browser check",
      description: "Weekly product numbers, shared with the team.",
      use_template: "DEFAULT_APP",
    });
    const dashboardPath = `/api/projects/${project.id}/dashboards/${dashboard.id}`;
    await call("PATCH", dashboardPath, {
      tiles: [{ text: { body: TEXT_BODY }, layouts: { sm: { x: 0, y: 0, w: 6, h: 2 } } }],
    });
    const sharing = await call("PATCH", `${dashboardPath}/sharing`, { enabled: true });

    const page = await browser.context.newPage();
    const response = await page.goto(`${url}/shared/${sharing.access_token}`);
    expect(response?.status()).toBe(200);
    expect(await page.title()).toBe("Browser check");
    expect(await page.getByRole("heading", { level: 1, name: "Browser check" }).isVisible()).toBe(true);
    const textTile = page.getByText("Hello from a text tile");
    expect(await textTile.isVisible()).toBe(true);
    // The markup is shown as text, and never ran.
    expect(await textTile.textContent()).toBe(TEXT_BODY);
    expect(await page.evaluate(() => (window as { injected?: boolean }).injected)).toBeUndefined();
    await page.screenshot({ path: outputPath("shared-dashboard-desktop.png"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: outputPath("shared-dashboard-phone.png"), fullPage: true });

    await call("POST", `${dashboardPath}/sharing/refresh`);
    const dead = await page.goto(`${url}/shared/${sharing.access_token}`);
    expect(dead?.status()).toBe(404);
    expect(await page.getByRole("heading", { name: "Not found" }).isVisible()).toBe(true);
    expect(browser.refused).toEqual([]);
  });

  it("asks a protected link's password, refuses a wrong one, opens with the right one, then expires", async () => {
    const project = await call("GET", "/api/projects/@current");
    const dashboard = await call("POST", `/api/projects/${project.id}/dashboards`, { name: "Board only" });
    const sharingPath = `/api/projects/${project.id}/dashboards/${dashboard.id}/sharing`;
    const sharing = await call("PATCH", sharingPath, { enabled: true, password_required: true });
    await call("POST", `${sharingPath}/passwords`, { raw_password: "correct horse battery" });

    const page = await browser.context.newPage();
    const link = `${url}/shared/${sharing.access_token}`;
    expect((await page.goto(link))?.status()).toBe(200);
    expect(await page.getByRole("heading", { level: 1, name: "Password required" }).isVisible()).toBe(true);
    expect(await page.getByText("Board only").count()).toBe(0);
    await page.screenshot({ path: outputPath("shared-dashboard-password.png"), fullPage: true });

    await page.getByLabel("Password").fill("wrong horse battery");
    const [wrong] = await Promise.all([page.waitForNavigation(), page.getByRole("button").click()]);
    expect(wrong?.status()).toBe(401);
    expect(await page.getByRole("alert").textContent()).toBe("Incorrect password.");
    expect(await page.getByText("Board only").count()).toBe(0);

    await page.getByLabel("Password").fill("correct horse battery");
    await Promise.all([page.waitForURL(link), page.getByRole("button").click()]);
    expect(await page.getByRole("heading", { level: 1, name: "Board only" }).isVisible()).toBe(true);
    // The session is a cookie the page's script could not read, kept for this link only.
    const [cookie] = await browser.context.cookies(link);
    expect(cookie).toMatchObject({ name: "posthog_sharing_token", httpOnly: true, sameSite: "Lax" });
    expect(await page.evaluate(() => document.cookie)).toBe("");

    await call("PATCH", sharingPath, { expires_at: new Date(Date.now() - 1000).toISOString() });
    expect((await page.goto(link))?.status()).toBe(410);
    expect(await page.getByRole("heading", { level: 1, name: "This link has expired" }).isVisible()).toBe(true);
    expect(await page.getByText("Board only").count()).toBe(0);
    await page.screenshot({ path: outputPath("shared-dashboard-expired.png"), fullPage: true });
    expect(browser.refused).toEqual([]);
  });
});
