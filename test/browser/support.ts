import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext } from "playwright-core";
import { inject } from "vitest";
import { startLocalServer } from "../../scripts/local-server.mjs";

export { startLocalServer };

/**
 * Debian's package by default: no browser is ever downloaded (.ci/run installs it when missing).
 * `CHROMIUM_PATH` names another Chromium or Chrome binary (macOS, another distribution).
 */
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Git-ignored: screenshots and generated clients, kept for a person to look at. */
const OUTPUT_DIRECTORY = fileURLToPath(new URL("../.output/", import.meta.url));

export function outputPath(name: string): string {
  mkdirSync(OUTPUT_DIRECTORY, { recursive: true });
  return path.join(OUTPUT_DIRECTORY, name);
}

/**
 * The server the global set-up started for this run, its bootstrap key, its e-mail catcher, and
 * its state folder (for `npm run bootstrap -- --persist-to`).
 */
export function localServer() {
  return {
    url: inject("serverUrl"),
    apiKey: inject("apiKey"),
    mailUrl: inject("mailUrl"),
    statePath: inject("statePath"),
  };
}

export type OfflineBrowser = {
  context: BrowserContext;
  /** Requests to any other origin than the server's, which were refused. */
  refused: string[];
  close(): Promise<void>;
};

/**
 * Chromium with a fresh profile that may only reach `origin`: anything else is refused and
 * recorded, so that a page that needs the internet fails its test.
 */
export async function launchOfflineChromium(origin: string): Promise<OfflineBrowser> {
  const profile = mkdtempSync(path.join(tmpdir(), "chromium-profile-"));
  // Playwright sets the profile folder itself (--user-data-dir) through the persistent context.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  const refused: string[] = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`) || url.startsWith("data:")) return route.continue();
    refused.push(url);
    return route.abort("blockedbyclient");
  });
  return {
    context,
    refused,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
