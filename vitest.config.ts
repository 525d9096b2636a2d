import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

const root = new URL(".", import.meta.url).pathname;

/** Tests and benchmarks run alike: inside workerd, against local D1 with the migrations applied. */
// The timeout is generous: tests assert counts, never times, and a busy two-core runner may take
// several seconds over a test that writes thousands of rows.
export function workersConfig(include: string[], exclude: string[] = [], testTimeout = 15_000, maxWorkers?: number) {
  return defineConfig(async () => {
    const migrations = await readD1Migrations(`${root}migrations`);
    return {
      root,
      plugins: [
        cloudflareTest({
          main: "./src/index.ts",
          wrangler: { configPath: "./wrangler.toml" },
          miniflare: {
            // Test-only keys (base64 of 32 bytes); deployments set theirs with `wrangler secret put`.
            // One CORS origin allowed, so that CORS can be tested; wrangler.toml allows none.
            bindings: {
              TEST_MIGRATIONS: migrations,
              SECRETS_ENCRYPTION_KEY: "dGVzdCBrZXk6IHNlYWxzIHNlY3JldHMgaW4gdGVzdHM=",
              SECRETS_ENCRYPTION_OLD_KEYS: "Zm9ybWVyIHRlc3Qga2V5LCBmb3Igcm90YXRpb25zISE=",
              CORS_ORIGINS: "https://app.example.test",
              // As in local development: webhooks may deliver to http and loopback receivers.
              WEBHOOKS_ALLOW_INSECURE: "1",
            },
          },
        }),
      ],
      test: {
        include,
        exclude,
        testTimeout,
        maxWorkers,
        setupFiles: ["./test/apply-migrations.ts"],
        // The request log's JSON lines (one per request) would drown the test output.
        onConsoleLog: (log: string) => !log.startsWith('{"level":') || log.includes('"error"'),
      },
    };
  });
}

// Test files run two at a time at least: each spends much of its time waiting on workerd's D1 and
// queues, so on a two-core runner (where vitest would run one) the suite takes about 40% less time.
const TEST_WORKERS = Math.max(2, availableParallelism() - 1);

// test/browser and test/node drive a real `wrangler dev` from Node: vitest.node.config.ts.
export default workersConfig(["test/**/*.test.ts"], ["test/browser/**", "test/node/**"], undefined, TEST_WORKERS);
