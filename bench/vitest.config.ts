import { workersConfig } from "../vitest.config";

// A bench makes hundreds of requests in one test: minutes on a busy machine, never an assertion on time.
export default workersConfig(["bench/**/*.bench.ts"], [], 300_000);
