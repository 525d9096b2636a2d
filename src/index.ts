import { createApp } from "./app";
import type { Bindings } from "./platform/env";
import { enqueueAfterSeal } from "./organizations/webhooks/deliveries";
import { onActivitySealed } from "./platform/activity-log/after-response";
import { consumeQueue } from "./queues";
import { runScheduledTasks } from "./scheduled";

// The activity log is the webhooks' outbox: sealed entries become deliveries.
onActivitySealed(enqueueAfterSeal);

export { ApiKeyHourCounter } from "./platform/auth/rate-limit";

const app = createApp();

export default {
  fetch: app.fetch,
  scheduled: runScheduledTasks,
  queue: consumeQueue,
} satisfies ExportedHandler<Bindings, unknown>;
