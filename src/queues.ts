import { eachMessage } from "./platform/background";
import { errorFields, logLine } from "./platform/log";
import { deliverBatch, recordDeadLetters, type DeliveryMessage } from "./organizations/webhooks/deliveries";
import { failExport, writeExportPart } from "./organizations/activity-log/exports.job";
import { recoverStep } from "./organizations/webhooks/recoveries";
import { deleteProjectStep } from "./projects/project-deletion";
import { deleteOrganizationStep } from "./organizations/organization-deletion";
import { deleteWebhookStep } from "./organizations/webhooks/webhook-deletion";
import { deliverInviteEmail, recordInviteEmailDeadLetters } from "./organizations/invites/invite-email-queue";
import type { InviteEmailMessage } from "./organizations/invites/invite-emails";
import { deliverViewerLinkEmail, recordViewerLinkDeadLetters } from "./public-dashboards/viewer-link-emails";
import type { ViewerLinkEmailMessage } from "./public-dashboards/viewer-links";
import type { Bindings } from "./platform/env";
import type { BackgroundJob, StepOutcome } from "./platform/jobs";

/** The queues this Worker consumes (wrangler.toml), told apart by name; an environment's names keep these prefixes. */
const BACKGROUND_JOBS_QUEUE = "background-jobs";
const DEAD_LETTERS_QUEUE = "webhook-deliveries-dead-letters";
const INVITE_EMAILS_QUEUE = "invite-emails";
const INVITE_EMAIL_DEAD_LETTERS_QUEUE = "invite-emails-dead-letters";

/** Attempts of a step (the consumer's `max_retries` + 1): after the last, the job gives up. */
const STEP_ATTEMPTS = 6;

/** A job's step. */
function step(env: Bindings, job: BackgroundJob): Promise<StepOutcome> {
  switch (job.kind) {
    case "export_part":
      return writeExportPart(env, job);
    case "recover_deliveries":
      return recoverStep(env, job);
    case "delete_project":
      return deleteProjectStep(env, job);
    case "delete_organization":
      return deleteOrganizationStep(env, job);
    case "delete_webhook":
      return deleteWebhookStep(env, job);
  }
}

/** What giving up on a job records, after its step's last attempt failed. */
function giveUp(env: Bindings, job: BackgroundJob, error: Error): Promise<void> {
  switch (job.kind) {
    case "export_part":
      return failExport(env, job, error);
    // The deliveries not reached stay failed: the recovery can be asked again.
    case "recover_deliveries":
      return Promise.resolve();
    // The project, organization or webhook stays hidden and scheduled: the cron resumes its deletion.
    case "delete_project":
    case "delete_organization":
    case "delete_webhook":
      return Promise.resolve();
  }
}

async function runStep(env: Bindings, message: Message<BackgroundJob>) {
  try {
    const { retryAfterSeconds } = await step(env, message.body);
    if (retryAfterSeconds === undefined) message.ack();
    else message.retry({ delaySeconds: retryAfterSeconds });
  } catch (thrown) {
    const error = thrown instanceof Error ? thrown : new Error(String(thrown));
    logLine("error", {
      task: "background job",
      job: message.body,
      attempt: message.attempts,
      error: errorFields(error),
    });
    if (message.attempts < STEP_ATTEMPTS) return message.retry({ delaySeconds: 10 * message.attempts });
    await giveUp(env, message.body, error);
    message.ack();
  }
}

/** The e-mail queue's messages: an invite's e-mail, or a share link's one-time link. */
type EmailQueueMessage = InviteEmailMessage | ViewerLinkEmailMessage;

const isViewerLinkEmail = (message: Message<EmailQueueMessage>): message is Message<ViewerLinkEmailMessage> =>
  "viewerLinkId" in message.body;

const deliverEmails = (batch: MessageBatch<EmailQueueMessage>, env: Bindings) =>
  eachMessage(
    "e-mail",
    batch.messages,
    (message) =>
      isViewerLinkEmail(message)
        ? deliverViewerLinkEmail(env, message)
        : deliverInviteEmail(env, message as Message<InviteEmailMessage>),
    (body) => ("viewerLinkId" in body ? { viewer_link_id: body.viewerLinkId } : { invite_id: body.inviteId }),
  );

/** The e-mails whose attempts are exhausted: each kind records its own, then the batch is acked. */
async function recordEmailDeadLetters(batch: MessageBatch<EmailQueueMessage>, env: Bindings) {
  const viewerLinkIds: string[] = [];
  const inviteIds: string[] = [];
  for (const { body } of batch.messages) {
    if ("viewerLinkId" in body) viewerLinkIds.push(body.viewerLinkId);
    else inviteIds.push(body.inviteId);
  }
  await Promise.all([recordInviteEmailDeadLetters(env, inviteIds), recordViewerLinkDeadLetters(env, viewerLinkIds)]);
  batch.ackAll();
}

/**
 * The batch without the messages whose body is not an object: this Worker never writes one, and no
 * retry can help it, so each is logged and acknowledged rather than failing the batch it came in.
 */
function withoutMalformed(received: MessageBatch<unknown>): MessageBatch<unknown> {
  const messages = received.messages.filter((message) => {
    if (typeof message.body === "object" && message.body !== null) return true;
    logLine("error", {
      task: "queue message",
      queue: received.queue,
      error: { name: "MalformedMessage", message: `a message body of type ${typeof message.body}` },
    });
    message.ack();
    return false;
  });
  if (messages.length === received.messages.length) return received;
  return {
    messages,
    queue: received.queue,
    metadata: received.metadata,
    retryAll: (options) => messages.forEach((message) => message.retry(options)),
    // Those left out are acknowledged already.
    ackAll: () => received.ackAll(),
  };
}

/**
 * The queue handler: webhook deliveries, e-mails (invites', share links'), their dead letters, and
 * background jobs' steps. A batch whose handling fails as a whole (a dead-letter batch's one
 * statement, when D1 cannot be reached) is one JSON line and its messages not yet settled again
 * later, as a throw would have them, but without the runtime's plain-text report of the error
 * (a failed query's values in it).
 */
export async function consumeQueue(received: MessageBatch<unknown>, env: Bindings) {
  const batch = withoutMalformed(received);
  try {
    await handleBatch(batch, env);
  } catch (error) {
    logLine("error", { task: "queue batch", messages: batch.messages.length, error: errorFields(error) });
    batch.retryAll();
  }
}

async function handleBatch(batch: MessageBatch<unknown>, env: Bindings) {
  // Before the e-mails: their dead-letter queue's name starts with theirs.
  if (batch.queue.startsWith(INVITE_EMAIL_DEAD_LETTERS_QUEUE)) {
    await recordEmailDeadLetters(batch as MessageBatch<EmailQueueMessage>, env);
    return;
  }
  if (batch.queue.startsWith(INVITE_EMAILS_QUEUE)) {
    await deliverEmails(batch as MessageBatch<EmailQueueMessage>, env);
    return;
  }
  // Before the deliveries: their dead-letter queue's name starts with theirs.
  if (batch.queue.startsWith(DEAD_LETTERS_QUEUE)) return recordDeadLetters(batch as MessageBatch<DeliveryMessage>, env);
  if (batch.queue.startsWith(BACKGROUND_JOBS_QUEUE)) {
    await Promise.all((batch as MessageBatch<BackgroundJob>).messages.map((message) => runStep(env, message)));
    return;
  }
  await deliverBatch(batch as MessageBatch<DeliveryMessage>, env);
}
