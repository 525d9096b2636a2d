import { deliverBatch, type DeliveryMessage } from "./organizations/webhooks/deliveries";
import { failExport, writeExportPart } from "./organizations/activity-log/exports.job";
import type { Bindings } from "./platform/env";
import type { BackgroundJob, StepOutcome } from "./platform/jobs";

/** The queues this Worker consumes (wrangler.toml), told apart by name; an environment's names keep these prefixes. */
const BACKGROUND_JOBS_QUEUE = "background-jobs";

/** Attempts of a step (the consumer's `max_retries` + 1): after the last, the job gives up. */
const STEP_ATTEMPTS = 6;

/** A job's step. */
function step(env: Bindings, job: BackgroundJob): Promise<StepOutcome> {
  switch (job.kind) {
    case "export_part":
      return writeExportPart(env, job);
  }
}

/** What giving up on a job records, after its step's last attempt failed. */
function giveUp(env: Bindings, job: BackgroundJob, error: Error): Promise<void> {
  switch (job.kind) {
    case "export_part":
      return failExport(env, job, error);
  }
}

async function runStep(env: Bindings, message: Message<BackgroundJob>) {
  try {
    const { retryAfterSeconds } = await step(env, message.body);
    if (retryAfterSeconds === undefined) message.ack();
    else message.retry({ delaySeconds: retryAfterSeconds });
  } catch (thrown) {
    const error = thrown instanceof Error ? thrown : new Error(String(thrown));
    console.error(JSON.stringify({ level: "error", task: "background job", job: message.body, attempt: message.attempts, error: { name: error.name, message: error.message, stack: error.stack } }));
    if (message.attempts < STEP_ATTEMPTS) return message.retry({ delaySeconds: 10 * message.attempts });
    await giveUp(env, message.body, error);
    message.ack();
  }
}

/** The queue handler: webhook deliveries, and background jobs' steps, each message on its own. */
export async function consumeQueue(batch: MessageBatch<unknown>, env: Bindings) {
  if (batch.queue.startsWith(BACKGROUND_JOBS_QUEUE)) {
    await Promise.all((batch as MessageBatch<BackgroundJob>).messages.map((message) => runStep(env, message)));
    return;
  }
  await deliverBatch(batch as MessageBatch<DeliveryMessage>, env);
}
