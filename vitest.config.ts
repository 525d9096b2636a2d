import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { globSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";

const root = new URL(".", import.meta.url).pathname;

/** The Worker under test, as workerd runs it, against local D1 with the migrations applied. */
async function workersPlugin() {
  const migrations = await readD1Migrations(`${root}migrations`);
  return cloudflareTest({
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
        // As in local development: Server-Timing tells rows read and written, which tests assert.
        EXPOSE_D1_COST: "1",
      },
    },
  });
}

/**
 * A project of workerd test files. `isolate: false` runs its files one after another in one
 * runtime (one per test worker), sharing its database: starting a runtime takes seconds, most of
 * a small file's time.
 */
// The timeout is generous: tests assert counts, never times, and a busy two-core runner may take
// several seconds over a test that writes thousands of rows.
async function workersProject(
  name: string,
  include: string[],
  exclude: string[],
  isolate: boolean,
  testTimeout: number,
) {
  return {
    plugins: [await workersPlugin()],
    test: {
      name,
      root,
      include,
      exclude,
      isolate,
      testTimeout,
      setupFiles: ["./test/apply-migrations.ts"],
    },
  } satisfies TestProjectInlineConfiguration;
}

/**
 * Files that read or act on the whole database get a runtime of their own: a digest of every
 * table ("the refused request changed nothing", which another file's background work would
 * change), a scheduled pass over every organization, or a spy on every D1 session of the runtime
 * (which another file's requests would also open). Found by what they call.
 */
const WHOLE_DATABASE = /databaseDigest|createScheduledController|support\/fuzz-writes|spyOn\(env\.DB, "withSession"\)/;

function wholeDatabaseFiles(include: string[], exclude: string[]) {
  return include
    .flatMap((pattern) => globSync(pattern, { cwd: root, exclude }))
    .filter((file) => WHOLE_DATABASE.test(readFileSync(`${root}${file}`, "utf8")));
}

/** Tests and benchmarks run alike: inside workerd, with every binding local. */
export function workersConfig(include: string[], exclude: string[] = [], testTimeout = 15_000, maxWorkers?: number) {
  return defineConfig(async () => {
    const ownRuntime = wholeDatabaseFiles(include, exclude);
    return {
      test: {
        maxWorkers,
        // The request log's JSON lines (one per request) would drown the test output.
        onConsoleLog: (log: string) => !log.startsWith('{"level":') || log.includes('"error"'),
        projects: [
          await workersProject("workerd", include, [...exclude, ...ownRuntime], false, testTimeout),
          await workersProject("workerd, own runtime", ownRuntime, exclude, true, testTimeout),
        ],
      },
    };
  });
}

// Test files run two at a time at least: each spends much of its time waiting on workerd's D1 and
// queues, so on a two-core runner (where vitest would run one) the suite takes about 40% less time.
const TEST_WORKERS = Math.max(2, availableParallelism() - 1);

// test/browser and test/node drive a real `wrangler dev` from Node: vitest.node.config.ts.
export default workersConfig(["test/**/*.test.ts"], ["test/browser/**", "test/node/**"], undefined, TEST_WORKERS);
