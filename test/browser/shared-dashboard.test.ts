import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CaughtEmail } from "./mail-catcher";
import { launchOfflineChromium, localServer, outputPath, type OfflineBrowser } from "./support";

/**
 * The public page of a shared dashboard, as a person sees it: the run's local server of this
 * worker and headless Chromium, which may reach nothing but that server.
 */
const { url, apiKey, mailUrl } = localServer();
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

  it("asks an allow-listed link's visitor for an address, and opens it once from the e-mailed link", async () => {
    const project = await call("GET", "/api/projects/@current");
    const dashboard = await call("POST", `/api/projects/${project.id}/dashboards`, { name: "Team only" });
    const sharingPath = `/api/projects/${project.id}/dashboards/${dashboard.id}/sharing`;
    const viewer = `viewer-${Date.now()}@example.com`;
    const sharing = await call("PATCH", sharingPath, { enabled: true, allowed_emails: [viewer] });

    const page = await browser.context.newPage();
    const link = `${url}/shared/${sharing.access_token}`;
    expect((await page.goto(link))?.status()).toBe(200);
    expect(await page.getByRole("heading", { level: 1, name: "E-mail required" }).isVisible()).toBe(true);
    expect(await page.getByText("Team only").count()).toBe(0);
    await page.screenshot({ path: outputPath("shared-dashboard-email.png"), fullPage: true });
    await page.getByLabel("E-mail address").fill(viewer.toUpperCase());
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Send me a link" }).click()]);
    expect(await page.getByRole("heading", { level: 1, name: "Check your e-mail" }).isVisible()).toBe(true);

    // The local server's e-mail transport is the run's catcher; the queue's consumer sends within seconds.
    const emailTo = async () => {
      const caught = (await (await fetch(`${mailUrl}/messages`)).json()) as CaughtEmail[];
      return caught.find((email) => email.to === viewer);
    };
    await expect.poll(emailTo, { timeout: 30_000, interval: 500 }).toBeDefined();
    const oneTimeLink = (await emailTo())!.text.match(/http:\/\/\S+\?code=\S+/)![0];
    expect(oneTimeLink.startsWith(`${link}?code=`)).toBe(true);

    expect((await page.goto(oneTimeLink))?.status()).toBe(200);
    expect(await page.getByText("Team only").count()).toBe(0);
    await Promise.all([page.waitForURL(link), page.getByRole("button", { name: "View dashboard" }).click()]);
    expect(await page.getByRole("heading", { level: 1, name: "Team only" }).isVisible()).toBe(true);
    const [cookie] = await browser.context.cookies(link);
    expect(cookie).toMatchObject({ name: "posthog_sharing_token", httpOnly: true, sameSite: "Lax" });

    // The same link a second time, without the session, opens nothing.
    await browser.context.clearCookies();
    await page.goto(oneTimeLink);
    const [used] = await Promise.all([
      page.waitForNavigation(),
      page.getByRole("button", { name: "View dashboard" }).click(),
    ]);
    expect(used?.status()).toBe(401);
    expect(await page.getByRole("alert").textContent()).toBe(
      "This link has expired or was already used. Ask for a new one.",
    );
    expect(browser.refused).toEqual([]);
  });
});
