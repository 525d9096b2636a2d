import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

const root = new URL(".", import.meta.url).pathname;

/** Tests and benchmarks run alike: inside workerd, against local D1 with the migrations applied. */
export function workersConfig(include: string[]) {
  return defineConfig(async () => {
    const migrations = await readD1Migrations(`${root}migrations`);
    return {
      root,
      plugins: [
        cloudflareTest({
          main: "./src/index.ts",
          wrangler: { configPath: "./wrangler.toml" },
          miniflare: {
            // One origin allowed, so that CORS can be tested; wrangler.toml allows none.
            bindings: { TEST_MIGRATIONS: migrations, CORS_ORIGINS: "https://app.example.test" },
          },
        }),
      ],
      test: {
        include,
        setupFiles: ["./test/apply-migrations.ts"],
      },
    };
  });
}

export default workersConfig(["test/**/*.test.ts"]);
