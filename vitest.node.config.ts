import { defineConfig } from "vitest/config";

/**
 * Tests that need Node rather than workerd: a headless Chromium on /docs, the OpenAPI lint and a
 * generated client. One `wrangler dev` with fresh state serves them all (test/browser/global-setup.ts).
 */
export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts", "test/node/**/*.test.ts"],
    environment: "node",
    globalSetup: ["./test/browser/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
