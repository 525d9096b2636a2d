import { and, eq, inArray, isNotNull, isNull, lt, sql, type SQL } from "drizzle-orm";
import { invites } from "../../db/schema";
import { inJsonList, primaryDatabase } from "../../platform/db";
import {
  emailTransportConfigured,
  sendEmail,
  type EmailAttempt,
  type EmailMessage,
} from "../../platform/email-transport";
import type { Bindings } from "../../platform/env";
import { nowIso } from "../../platform/ids";
import { logLine } from "../../platform/log";
import { loadKeyring, unseal } from "../../platform/secrets";
import { outboxContext, sendInviteEmailMessages, type InviteEmailMessage } from "./invite-emails";
import { inviteOpens, isInviteExpired } from "./invites.queries";

/**
 * The delay before each attempt after the first (which is immediate): 30 s, 5 min, 30 min, 2 h.
 * Attempts are counted by Queues (`message.attempts`: 1 for the first).
 */
export const EMAIL_RETRY_DELAYS_SECONDS = [30, 5 * 60, 30 * 60, 2 * 3_600] as const;
/**
 * Attempts in all. The consumer's `max_retries` (wrangler.toml) is one less: after the last
 * attempt fails, its retry moves the message to the dead-letter queue, whose consumer marks the
 * e-mail failed.
 */
export const EMAIL_ATTEMPTS = EMAIL_RETRY_DELAYS_SECONDS.length + 1;

/** When the retry after the `attempt`-th attempt is due; none after the last (its message goes to the dead letters). */
export function retryDueAt(attempt: number, from = Date.now()) {
  const delaySeconds = EMAIL_RETRY_DELAYS_SECONDS[attempt - 1];
  return delaySeconds === undefined ? null : new Date(from + delaySeconds * 1000).toISOString();
}

/**
 * Sends one message's invite e-mail, then acks it, or retries it after the schedule's next delay
 * (past the last attempt, a retry without delay: Queues moves it to the dead-letter queue).
 * Idempotent: a message whose invite is gone (cancelled, replaced) or whose e-mail is no longer
 * pending is acked unsent. With the transport turned off since, the e-mail is `not_configured`.
 */
export async function deliverInviteEmail(env: Bindings, message: Message<InviteEmailMessage>) {
  const db = primaryDatabase(env);
  const { inviteId } = message.body;
  const [invite] = await db
    .select({
      status: invites.emailStatus,
      attempts: invites.emailAttempts,
      outbox: invites.emailOutbox,
      opens: sql<boolean>`${inviteOpens}`.mapWith(Boolean),
      createdAt: invites.createdAt,
    })
    .from(invites)
    .where(eq(invites.id, inviteId));
  if (!invite || invite.status !== "pending" || invite.outbox === null) return message.ack();
  const stillPending = and(eq(invites.id, inviteId), eq(invites.emailStatus, "pending"));
  // The invite opens nothing any more (its inviter left, its organization is being deleted, it
  // expired while its message waited): its e-mail, in the organization's name and with the
  // inviter's message, is not sent.
  if (!invite.opens || isInviteExpired(invite.createdAt)) {
    await db
      .update(invites)
      .set({ emailStatus: "failed", emailNextAttemptAt: null, emailOutbox: null, updatedAt: nowIso() })
      .where(stillPending);
    return message.ack();
  }
  // The transport was turned off after the e-mail was queued: nothing to send it with.
  if (!emailTransportConfigured(env)) {
    await db
      .update(invites)
      .set({ emailStatus: "not_configured", emailNextAttemptAt: null, emailOutbox: null, updatedAt: nowIso() })
      .where(stillPending);
    return message.ack();
  }
  const attempt = await sendSealedEmail(env, invite.outbox, inviteId);
  const now = nowIso();
  if (attempt.ok) {
    await db
      .update(invites)
      .set({
        emailStatus: "sent",
        emailAttempts: invite.attempts + 1,
        emailNextAttemptAt: null,
        emailOutbox: null,
        updatedAt: now,
      })
      .where(stillPending);
    return message.ack();
  }
  const delaySeconds = EMAIL_RETRY_DELAYS_SECONDS[message.attempts - 1];
  await db
    .update(invites)
    .set({
      emailAttempts: invite.attempts + 1,
      emailNextAttemptAt: retryDueAt(message.attempts, Date.parse(now)),
      updatedAt: now,
    })
    .where(stillPending);
  // The invite's id and how the transport answered; never the address or the message.
  logLine("error", {
    task: "invite e-mail",
    invite_id: inviteId,
    attempt: message.attempts,
    status: attempt.status,
    error: attempt.error,
  });
  if (delaySeconds === undefined) message.retry();
  else message.retry({ delaySeconds });
}

/**
 * Opens the sealed e-mail and sends it. An e-mail that does not open (sealed under a key since
 * taken out of the keyring) is a failed attempt like a refusal of the transport: retried on the
 * schedule, then failed, and logged by its error's name.
 */
async function sendSealedEmail(env: Bindings, outbox: string, inviteId: string): Promise<EmailAttempt> {
  let email: EmailMessage;
  try {
    email = JSON.parse(await unseal(await loadKeyring(env), outbox, outboxContext(inviteId))) as EmailMessage;
  } catch (error) {
    return { ok: false, status: null, error: error instanceof Error ? error.name : "unreadable" };
  }
  return sendEmail(env, email, inviteId);
}

/**
 * The dead-letter queue's consumer: e-mails whose attempts are exhausted are marked `failed`, in
 * one statement for the batch, each with a JSON line for the operator. The sealed e-mail is kept:
 * `POST .../invites/{id}/resend_email` sends it again. Only an e-mail whose last attempt failed
 * (none due) is: a dead letter delivered again after the e-mail was sent again, or one of a
 * message whose consumer kept throwing (a database outage; the cron sends its message again),
 * changes nothing.
 */
export async function recordInviteEmailDeadLetters(env: Bindings, inviteIds: string[]) {
  return inviteIds.length === 0
    ? 0
    : markFailed(env, inJsonList(invites.id, inviteIds), isNull(invites.emailNextAttemptAt));
}

async function markFailed(env: Bindings, ...which: SQL[]) {
  const failed = await primaryDatabase(env)
    .update(invites)
    .set({ emailStatus: "failed", emailNextAttemptAt: null, updatedAt: nowIso() })
    .where(and(...which, eq(invites.emailStatus, "pending")))
    .returning({ id: invites.id, organizationId: invites.organizationId, attempts: invites.emailAttempts });
  for (const invite of failed) {
    logLine("warn", {
      task: "invite e-mail dead letter",
      invite_id: invite.id,
      organization_id: invite.organizationId,
      attempts: invite.attempts,
    });
  }
  return failed.length;
}

/** Messages re-sent per cron run, for e-mails whose message seems lost. */
const SWEEP_LIMIT = 500;
/** A pending e-mail this late past its attempt time has lost its message. */
const LOST_AFTER_MS = 15 * 60_000;
/** An e-mail exhausted this long ago and still pending has lost its dead letter. */
const DEAD_LETTER_LOST_AFTER_MS = 60 * 60_000;

/**
 * The cron's part of at-least-once: pending e-mails long past their attempt time get their message
 * again (a duplicate finds the e-mail sent and is dropped), and an exhausted one whose dead letter
 * never arrived is marked failed, as its consumer would have.
 */
export async function sweepInviteEmails(env: Bindings) {
  const db = primaryDatabase(env);
  // Claimed as they are read (their attempt time moved to now), so that a run at the same time, or
  // the next one while the message waits on the queue, does not send a second message.
  const lostOnes = db
    .select({ id: invites.id })
    .from(invites)
    .where(
      and(
        eq(invites.emailStatus, "pending"),
        isNotNull(invites.emailNextAttemptAt),
        lt(invites.emailNextAttemptAt, new Date(Date.now() - LOST_AFTER_MS).toISOString()),
      ),
    )
    .limit(SWEEP_LIMIT);
  const lost = await db
    .update(invites)
    .set({ emailNextAttemptAt: nowIso() })
    .where(inArray(invites.id, lostOnes))
    .returning({ id: invites.id });
  await sendInviteEmailMessages(
    env,
    lost.map(({ id }) => id),
  );
  const exhaustedBefore = new Date(Date.now() - DEAD_LETTER_LOST_AFTER_MS).toISOString();
  const failed = await markFailed(env, isNull(invites.emailNextAttemptAt), lt(invites.updatedAt, exhaustedBefore));
  return { resent: lost.length, failed };
}
