import { sealOrganizations } from "./platform/activity-log/after-response";
import { organizationsWithUnsealedEntries } from "./platform/activity-log/chain";
import { archiveActivityLog, archiveCutoff, hotDays } from "./platform/activity-log/archive";
import { pruneActivityLog, pruneArchivedSegments, retentionDays } from "./platform/activity-log/retention";
import { runEach } from "./platform/background";
import { deleteExpiredIdempotencyKeys } from "./platform/idempotency";
import { logLine } from "./platform/log";
import { primaryDatabase } from "./platform/db";
import type { Bindings } from "./platform/env";
import { loadKeyring } from "./platform/secrets";
import { resealBatchExportSecrets } from "./environments/batch-exports/destination-secrets";
import { sweepWebhooks } from "./organizations/webhooks/deliveries";
import { pruneDeliveries } from "./organizations/webhooks/delivery-retention";
import { resealWebhookSecrets } from "./organizations/webhooks/webhook-secrets";
import { sweepInviteEmails } from "./organizations/invites/invite-email-queue";
import { sweepViewerLinks } from "./public-dashboards/viewer-link-emails";
import { resumeStalledExports } from "./organizations/activity-log/exports.job";
import { resumeStalledProjectDeletions } from "./projects/project-deletion";
import { resumeStalledOrganizationDeletions } from "./organizations/organization-deletion";
import { resumeStalledWebhookDeletions } from "./organizations/webhooks/webhook-deletion";

/** Organizations whose chains one cron run seals, if their seal after the response was lost. */
const UNSEALED_ORGANIZATIONS_PER_RUN = 100;

/**
 * The cron trigger (`[triggers]` in wrangler.toml), every ten minutes:
 * - re-seals batch export secrets still in plaintext (rows written before they were encrypted) or
 *   sealed with a former key, and webhook signing secrets sealed with a former key, a batch of
 *   rows per run, until none is left;
 * - seals activity-log entries whose seal after the response did not run;
 * - deletes activity-log entries, and archived segments, past retention (`ACTIVITY_LOG_RETENTION_DAYS`);
 * - moves the entries older than `ACTIVITY_LOG_HOT_DAYS` (still within retention) into segments in R2;
 * - turns entries a lost pass left behind into webhook deliveries, and re-sends lost messages;
 * - deletes finished webhook deliveries whose events were archived (they cannot be sent again);
 * - re-sends invite e-mails' lost messages, and marks failed those whose dead letter was lost;
 * - re-sends share links' one-time links whose message was lost, and deletes expired ones;
 * - resumes activity-log exports whose next step was lost;
 * - deletes idempotency keys past their day (or a dead request's lease), in bounded batches.
 * - resumes project and organization deletions whose next step was lost.
 */
export async function runScheduledTasks(_controller: ScheduledController, env: Bindings) {
  const db = primaryDatabase(env);
  const steps: [string, () => Promise<void>][] = [
    [
      "re-seal batch export secrets",
      async () => {
        const resealed = await resealBatchExportSecrets(db, await loadKeyring(env));
        if (resealed > 0) logLine("info", { task: "cron", done: `re-sealed the secrets of ${resealed} batch exports` });
      },
    ],
    [
      "re-seal webhook secrets",
      async () => {
        const resealed = await resealWebhookSecrets(db, await loadKeyring(env));
        if (resealed > 0) logLine("info", { task: "cron", done: `re-sealed the secrets of ${resealed} webhooks` });
      },
    ],
    [
      "seal activity log",
      async () => sealOrganizations(env, await organizationsWithUnsealedEntries(db, UNSEALED_ORGANIZATIONS_PER_RUN)),
    ],
    [
      "prune activity log",
      async () => {
        const maximumDays = retentionDays(env.ACTIVITY_LOG_RETENTION_DAYS);
        const segments = await pruneArchivedSegments(db, env.ACTIVITY_LOG_ARCHIVE, maximumDays);
        if (segments > 0)
          logLine("info", { task: "cron", done: `deleted ${segments} archived activity-log segments past retention` });
        const pruned = await pruneActivityLog(db, maximumDays);
        if (pruned > 0) logLine("info", { task: "cron", done: `pruned ${pruned} activity-log entries past retention` });
      },
    ],
    [
      "archive activity log",
      async () => {
        const days = hotDays(env.ACTIVITY_LOG_HOT_DAYS);
        const moved = await archiveActivityLog(db, env.ACTIVITY_LOG_ARCHIVE, days);
        if (moved > 0) logLine("info", { task: "cron", done: `archived ${moved} activity-log entries to segments` });
      },
    ],
    [
      "sweep webhooks",
      async () => {
        const resent = await sweepWebhooks(env);
        if (resent > 0)
          logLine("info", { task: "cron", done: `re-sent ${resent} webhook deliveries whose message was lost` });
      },
    ],
    [
      "prune webhook deliveries",
      async () => {
        const cutoff = archiveCutoff(hotDays(env.ACTIVITY_LOG_HOT_DAYS), new Date());
        const deleted = await pruneDeliveries(db, cutoff);
        if (deleted > 0)
          logLine("info", { task: "cron", done: `deleted ${deleted} finished webhook deliveries of archived events` });
      },
    ],
    [
      "sweep invite e-mails",
      async () => {
        const { resent, failed } = await sweepInviteEmails(env);
        if (resent > 0)
          logLine("info", { task: "cron", done: `re-sent ${resent} invite e-mails whose message was lost` });
        if (failed > 0) logLine("info", { task: "cron", done: `marked failed ${failed} exhausted invite e-mails` });
      },
    ],
    [
      "sweep share link one-time links",
      async () => {
        const { resent, deleted } = await sweepViewerLinks(env);
        if (resent > 0)
          logLine("info", { task: "cron", done: `re-sent ${resent} one-time links whose message was lost` });
        if (deleted > 0) logLine("info", { task: "cron", done: `deleted ${deleted} expired one-time links` });
      },
    ],
    [
      "resume activity-log exports",
      async () => {
        const resumed = await resumeStalledExports(env);
        if (resumed > 0) logLine("info", { task: "cron", done: `resumed ${resumed} stalled activity-log exports` });
      },
    ],
    [
      "delete expired idempotency keys",
      async () => {
        const deleted = await deleteExpiredIdempotencyKeys(db);
        if (deleted > 0) logLine("info", { task: "cron", done: `deleted ${deleted} expired idempotency keys` });
      },
    ],
    [
      "resume project deletions",
      async () => {
        const resumed = await resumeStalledProjectDeletions(env);
        if (resumed > 0) logLine("info", { task: "cron", done: `resumed ${resumed} stalled project deletions` });
      },
    ],
    [
      "resume organization deletions",
      async () => {
        const resumed = await resumeStalledOrganizationDeletions(env);
        if (resumed > 0) logLine("info", { task: "cron", done: `resumed ${resumed} stalled organization deletions` });
      },
    ],
    [
      "resume webhook deletions",
      async () => {
        const resumed = await resumeStalledWebhookDeletions(env);
        if (resumed > 0) logLine("info", { task: "cron", done: `resumed ${resumed} stalled webhook deletions` });
      },
    ],
  ];
  // In order (sealed entries are then swept), each on its own: one failing step skips no other.
  for (const step of steps)
    await runEach(
      "cron",
      [step],
      ([, run]) => run(),
      ([name]) => ({ step: name }),
    );
}
