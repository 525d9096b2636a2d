import { and, eq, gt, inArray, isNotNull, lt, lte, sql } from "drizzle-orm";
import { shareViewerLinks } from "../db/schema";
import { EMAIL_RETRY_DELAYS_SECONDS, retryDueAt } from "../organizations/invites/invite-email-queue";
import { inJsonList, primaryDatabase, type Database } from "../platform/db";
import { emailTransportConfigured, sendEmail, type EmailMessage } from "../platform/email-transport";
import type { Bindings } from "../platform/env";
import { nowIso } from "../platform/ids";
import { logLine } from "../platform/log";
import { loadKeyring, unseal } from "../platform/secrets";
import { readViewerLinkEmail } from "./shared.queries";
import { viewerLinkOutboxContext, type ViewerLinkEmailMessage } from "./viewer-links";

/** Drops a link's e-mail, sent or no longer worth sending: the row no longer holds the token, even sealed. */
const dropOutbox = (db: Database, viewerLinkId: string) =>
  db
    .update(shareViewerLinks)
    .set({ emailOutbox: null, emailNextAttemptAt: null })
    .where(and(eq(shareViewerLinks.id, viewerLinkId), isNotNull(shareViewerLinks.emailOutbox)));

/**
 * Sends one message's one-time link, then acks it, or retries it on the invites' schedule (past
 * the last attempt, Queues moves it to the dead-letter queue). Idempotent: a link whose e-mail was
 * sent, or that was used, expired or deleted meanwhile, is acked unsent; a link expired before its
 * e-mail could go, or whose address may no longer view the dashboard (taken off the list, the
 * link paused, expired or closed), has its e-mail dropped.
 */
export async function deliverViewerLinkEmail(env: Bindings, message: Message<ViewerLinkEmailMessage>) {
  const db = primaryDatabase(env);
  const { viewerLinkId } = message.body;
  const now = nowIso();
  const link = await readViewerLinkEmail(db, viewerLinkId, now);
  if (!link || link.outbox === null) return message.ack();
  if (link.expiresAt <= now || !link.mayView || !emailTransportConfigured(env)) {
    await dropOutbox(db, viewerLinkId);
    return message.ack();
  }
  const keyring = await loadKeyring(env);
  const email = JSON.parse(await unseal(keyring, link.outbox, viewerLinkOutboxContext(viewerLinkId))) as EmailMessage;
  const attempt = await sendEmail(env, email, viewerLinkId);
  if (attempt.ok) {
    await dropOutbox(db, viewerLinkId);
    return message.ack();
  }
  // The link's id and how the transport answered; never the address or the message.
  logLine("error", {
    task: "share link e-mail",
    viewer_link_id: viewerLinkId,
    attempt: message.attempts,
    status: attempt.status,
    error: attempt.error,
  });
  const delaySeconds = EMAIL_RETRY_DELAYS_SECONDS[message.attempts - 1];
  // While the message waits for its retry, the cron does not take it for lost.
  await db
    .update(shareViewerLinks)
    .set({ emailNextAttemptAt: retryDueAt(message.attempts) })
    .where(and(eq(shareViewerLinks.id, viewerLinkId), isNotNull(shareViewerLinks.emailOutbox)));
  if (delaySeconds === undefined) message.retry();
  else message.retry({ delaySeconds });
}

/** The dead-letter queue's consumer for one-time links: their e-mails are dropped, each logged. */
export async function recordViewerLinkDeadLetters(env: Bindings, viewerLinkIds: string[]) {
  if (viewerLinkIds.length === 0) return;
  const dropped = await primaryDatabase(env)
    .update(shareViewerLinks)
    .set({ emailOutbox: null, emailNextAttemptAt: null })
    .where(and(inJsonList(shareViewerLinks.id, viewerLinkIds), isNotNull(shareViewerLinks.emailOutbox)))
    .returning({ id: shareViewerLinks.id, dashboardId: shareViewerLinks.dashboardId });
  for (const link of dropped) {
    logLine("warn", { task: "share link e-mail dead letter", viewer_link_id: link.id, dashboard_id: link.dashboardId });
  }
}

/** Rows one cron run re-sends (one `sendBatch`). */
const SWEEP_LIMIT = 100;
/**
 * Expired links one cron run deletes: anyone with an allow-listed link may ask for them, 30 a
 * minute from each client address (300 between two runs), so a run clears what 30 addresses at
 * their limit write meanwhile, and the table does not grow with the requests.
 */
const EXPIRED_DELETED_PER_RUN = 10_000;
/** An unsent e-mail this late past its attempt time has lost its message. */
const LOST_AFTER_MS = 2 * 60_000;

/**
 * The cron's part: one-time links still unexpired whose e-mail waits long past its attempt time
 * get their message again (a duplicate finds the e-mail sent and is dropped), and expired links
 * are deleted, with the address they name.
 */
export async function sweepViewerLinks(env: Bindings) {
  const db = primaryDatabase(env);
  const now = nowIso();
  // Claimed as they are read (their attempt time moved to now), so that a run at the same time, or
  // the next one while the message waits on the queue or for its retry, does not send a second.
  const lostOnes = db
    .select({ id: shareViewerLinks.id })
    .from(shareViewerLinks)
    .where(
      and(
        gt(shareViewerLinks.expiresAt, now),
        isNotNull(shareViewerLinks.emailOutbox),
        // A link written by code from before the attempt time has none: it was due when asked for.
        lt(
          sql`coalesce(${shareViewerLinks.emailNextAttemptAt}, ${shareViewerLinks.createdAt})`,
          new Date(Date.now() - LOST_AFTER_MS).toISOString(),
        ),
      ),
    )
    .limit(SWEEP_LIMIT);
  const lost = await db
    .update(shareViewerLinks)
    .set({ emailNextAttemptAt: now })
    .where(inArray(shareViewerLinks.id, lostOnes))
    .returning({ id: shareViewerLinks.id });
  if (lost.length > 0) {
    await env.INVITE_EMAILS.sendBatch(lost.map(({ id }) => ({ body: { viewerLinkId: id } })));
  }
  const expired = db
    .select({ id: shareViewerLinks.id })
    .from(shareViewerLinks)
    .where(lte(shareViewerLinks.expiresAt, now))
    .limit(EXPIRED_DELETED_PER_RUN);
  const deleted = await db
    .delete(shareViewerLinks)
    .where(inArray(shareViewerLinks.id, expired))
    .returning({ id: shareViewerLinks.id });
  return { resent: lost.length, deleted: deleted.length };
}
