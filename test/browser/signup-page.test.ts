import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CaughtEmail } from "./mail-catcher";
import { launchOfflineChromium, localServer, outputPath, type OfflineBrowser } from "./support";

/**
 * The page an invite e-mail links to, as the invitee sees it: the token arrives after `#`, and
 * leaves the browser only in the body of `POST /api/signup`.
 */
const { url, apiKey, mailUrl } = localServer();
let browser: OfflineBrowser;

beforeAll(async () => {
  browser = await launchOfflineChromium(url);
});
afterAll(() => browser.close());

/**
 * An invite to an organization of its own (the run's other tests count the first one's members):
 * the token its inviter is answered. `sendEmail`: it is e-mailed too, to the run's catcher.
 */
async function invite(targetEmail: string, sendEmail = false): Promise<string> {
  const headers = { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" };
  const created = await fetch(`${url}/api/organizations`, {
    method: "POST",
    headers,
    body: JSON.stringify({ name: "Invites by page" }),
  });
  const organization = (await created.json()) as { id: string };
  const response = await fetch(`${url}/api/organizations/${organization.id}/invites`, {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ target_email: targetEmail, send_email: sendEmail }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { token: string }).token;
}

describe("GET /signup/", () => {
  it("accepts the invite in its link, posting the token in a body only, and shows the first key once", async () => {
    const token = await invite(`page-${Date.now()}@example.com`);
    const page = await browser.context.newPage();
    const requested: { url: string; body: string | null }[] = [];
    page.on("request", (request) => requested.push({ url: request.url(), body: request.postData() }));

    await page.goto(`${url}/signup/#${token}`);
    // The token left the address bar as soon as the page read it.
    expect(page.url()).toBe(`${url}/signup/`);
    await page.getByLabel("First name").fill("Ada");
    await page.getByLabel("Last name").fill("Lovelace");
    await page.getByRole("button", { name: "Join the organization" }).click();

    const key = page.locator("#key-value");
    await key.waitFor();
    expect(await key.textContent()).toMatch(/^phx_[0-9A-Za-z]{44}$/);
    await page.screenshot({ path: outputPath("signup-page.png"), fullPage: true });
    const me = await (
      await fetch(`${url}/api/users/@me`, { headers: { Authorization: `Bearer ${await key.textContent()}` } })
    ).json();
    expect(me).toMatchObject({ first_name: "Ada", last_name: "Lovelace" });
    expect(requested.filter((request) => request.url.includes(token))).toEqual([]);
    expect(requested.filter((request) => request.body?.includes(token)).map((request) => request.url)).toEqual([
      `${url}/api/signup`,
    ]);

    // The same link again: the invite is used up, and the page says so.
    const again = await browser.context.newPage();
    await again.goto(`${url}/signup/#${token}`);
    await again.getByRole("button", { name: "Join the organization" }).click();
    await expect.poll(() => again.getByRole("status").textContent()).toBe("Not found.");
    expect(browser.refused).toEqual([]);
  });

  it("takes over, when asked, an account someone made for the address with the inviter's token", async () => {
    const address = `claimed-${Date.now()}@example.com`;
    const signup = await fetch(`${url}/api/signup`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token: await invite(address) }),
    });
    const squatterKey = ((await signup.json()) as { personal_api_key: { value: string } }).personal_api_key.value;
    await invite(address, true);
    // The queue's consumer sends within seconds, to the run's catcher.
    const mailedToken = async () => {
      const caught = (await (await fetch(`${mailUrl}/messages`)).json()) as CaughtEmail[];
      return /\/signup\/#(phi_[0-9A-Za-z]+)/.exec(caught.find((email) => email.to === address)?.text ?? "")?.[1];
    };
    await expect.poll(mailedToken, { timeout: 30_000, interval: 500 }).toBeDefined();
    const page = await browser.context.newPage();

    await page.goto(`${url}/signup/#${await mailedToken()}`);
    const join = page.getByRole("button", { name: "Join the organization" });
    const claim = page.getByLabel("I did not make that account: take it over (every key it has is revoked)");
    expect(await claim.isVisible()).toBe(false);
    await join.click();
    await expect.poll(() => page.getByRole("status").textContent()).toMatch(/^An account with this email address/);
    await page.screenshot({ path: outputPath("signup-page-account-exists.png"), fullPage: true });
    await claim.check();
    await join.click();

    const key = page.locator("#key-value");
    await key.waitFor();
    await page.screenshot({ path: outputPath("signup-page-claim.png"), fullPage: true });
    const meWith = (value: string | null) =>
      fetch(`${url}/api/users/@me`, { headers: { Authorization: `Bearer ${value}` } });
    const me = await meWith(await key.textContent());
    expect(await me.json()).toMatchObject({ email: address, is_email_verified: true });
    expect((await meWith(squatterKey)).status).toBe(401);
    expect(browser.refused).toEqual([]);
  });

  it("says so when the link holds no token, or a fragment no token could be", async () => {
    for (const fragment of ["", "#%E0%A4%A"]) {
      const page = await browser.context.newPage();
      await page.goto(`${url}/signup/${fragment}`);
      expect(await page.getByRole("status").textContent()).toBe(
        "This link holds no invite. Open the link from your invite e-mail as it is.",
      );
      expect(await page.getByRole("button", { name: "Join the organization" }).isVisible()).toBe(false);
      expect(page.url()).toBe(`${url}/signup/`);
    }
  });
});
