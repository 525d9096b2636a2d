import type { D1Migration } from "@cloudflare/vitest-plugin";
import type { Bindings } from "../src/platform/env";

// `cloudflare:workers`' `env` and `exports` in the tests: the Worker's bindings (the generated
// worker-configuration.d.ts names the main module) and the migrations vitest.config.ts reads.
declare global {
  namespace Cloudflare {
    interface Env extends Bindings {
      TEST_MIGRATIONS: D1Migration[];
    }
  }
}
