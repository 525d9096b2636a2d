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
            bindings: {
              TEST_MIGRATIONS: migrations,
              // Test-only keys (base64 of 32 bytes); deployments set theirs with `wrangler secret put`.
              SECRETS_ENCRYPTION_KEY: "dGVzdCBrZXk6IHNlYWxzIHNlY3JldHMgaW4gdGVzdHM=",
              SECRETS_ENCRYPTION_OLD_KEYS: "Zm9ybWVyIHRlc3Qga2V5LCBmb3Igcm90YXRpb25zISE=",
            },
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
