import { workersConfig } from "../vitest.config";

export default workersConfig(["bench/**/*.bench.ts"]);
