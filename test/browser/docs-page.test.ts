import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchOfflineChromium, localServer, outputPath, type OfflineBrowser } from "./support";

const { url, apiKey } = localServer();
let browser: OfflineBrowser;

beforeAll(async () => {
  browser = await launchOfflineChromium(url);
});
afterAll(() => browser.close());

async function operationCount() {
  const document = (await (await fetch(`${url}/api/schema`)).json()) as { paths: Record<string, object> };
  return Object.values(document.paths).reduce((count, methods) => count + Object.keys(methods).length, 0);
}

/**
 * Swagger UI renders a long document virtually (only the operations near the viewport are in the
 * DOM), so the page is scrolled to its end and every operation seen on the way is collected.
 */
async function renderedOperationIds(page: Page) {
  const seen = new Set<string>();
  for (let step = 0; step < 400; step++) {
    for (const id of await page.locator(".opblock-summary-operation-id").allTextContents()) seen.add(id);
    const atEnd = await page.evaluate(() => {
      const before = window.scrollY;
      window.scrollBy(0, window.innerHeight / 2);
      return window.scrollY === before;
    });
    if (atEnd) break;
    await page.waitForTimeout(20);
  }
  return seen;
}

describe("GET /docs", () => {
  it("renders every operation of /api/schema offline, and tries a call with a key", async () => {
    const page = await browser.context.newPage();
    await page.goto(`${url}/docs`);
    await page.locator(".opblock").first().waitFor();
    const operationIds = await renderedOperationIds(page);
    expect(operationIds.size).toBe(await operationCount());
    expect(operationIds).toContain("organizations_members_list");
    await page.evaluate(() => window.scrollTo(0, 0));

    await page.getByRole("button", { name: "Authorize" }).first().click();
    await page.locator(".auth-container input").fill(apiKey);
    await page.locator(".auth-btn-wrapper .authorize").click();
    await page.locator(".btn-done").click();

    const operation = page.locator("#operations-users-users_retrieve");
    await operation.locator(".opblock-summary").click();
    await expect.poll(() => operation.getByText("Requires the scope").count()).toBeGreaterThan(0);
    await operation.getByRole("button", { name: "Try it out" }).click();
    await operation.getByRole("button", { name: "Execute" }).click();
    const status = operation.locator(".live-responses-table tr.response .response-col_status").first();
    await expect.poll(() => status.textContent()).toContain("200");
    expect(await operation.locator(".live-responses-table .microlight").first().textContent()).toContain(
      "owner@example.com",
    );

    await page.screenshot({ path: outputPath("docs.png"), fullPage: false });
    expect(browser.refused).toEqual([]);
  });
});
