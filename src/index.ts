import { createApp } from "./app";
import type { Bindings } from "./platform/env";
import { enqueueAfterSeal } from "./organizations/webhooks/deliveries";
import { onActivitySealed } from "./platform/activity-log/after-response";
import { inLogScope, runScope } from "./platform/log";
import { consumeQueue } from "./queues";
import { runScheduledTasks } from "./scheduled";

// The activity log is the webhooks' outbox: sealed entries become deliveries.
onActivitySealed(enqueueAfterSeal);

export { ApiKeyHourCounter } from "./platform/auth/rate-limit";

const app = createApp();

// Each cron or queue run's log lines carry its own id, as a request's carry the request's.
export default {
  fetch: app.fetch,
  scheduled: (controller, env) =>
    inLogScope(runScope({ cron: controller.cron }), () => runScheduledTasks(controller, env)),
  queue: (batch, env) => inLogScope(runScope({ queue: batch.queue }), () => consumeQueue(batch, env)),
} satisfies ExportedHandler<Bindings, unknown>;
