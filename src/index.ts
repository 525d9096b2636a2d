import { createApp } from "./app";
import type { Bindings } from "./platform/env";
import { runScheduledTasks } from "./scheduled";

export { ApiKeyRateLimiter } from "./platform/auth/rate-limit";

const app = createApp();

export default {
  fetch: app.fetch,
  scheduled: runScheduledTasks,
} satisfies ExportedHandler<Bindings>;
