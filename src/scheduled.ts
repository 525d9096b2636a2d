import { sealOrganizations } from "./platform/activity-log/after-response";
import { organizationsWithUnsealedEntries } from "./platform/activity-log/chain";
import { pruneActivityLog, retentionDays } from "./platform/activity-log/retention";
import { createDatabase, D1Meter } from "./platform/db";
import type { Bindings } from "./platform/env";
import { loadKeyring } from "./platform/secrets";
import { resealBatchExportSecrets } from "./environments/batch-exports/destination-secrets";
import { sweepWebhooks } from "./organizations/webhooks/deliveries";
import { recomputeStaleNameKeys } from "./organizations/projects/project-name-keys";

/** Organizations whose chains one cron run seals, if their seal after the response was lost. */
const UNSEALED_ORGANIZATIONS_PER_RUN = 100;

/**
 * The cron trigger (`[triggers]` in wrangler.toml), every ten minutes:
 * - re-seals batch export secrets still in plaintext (rows written before they were encrypted) or
 *   sealed with a former key, a batch of rows per run, until none is left;
 * - seals activity-log entries whose seal after the response did not run;
 * - prunes activity-log entries older than `ACTIVITY_LOG_RETENTION_DAYS`;
 * - turns entries a lost pass left behind into webhook deliveries, and re-sends lost messages;
 * - recomputes project name keys an older `nameKey` computed, a batch of rows per run.
 */
export async function runScheduledTasks(_controller: ScheduledController, env: Bindings) {
  const db = createDatabase(env.DB.withSession("first-primary"), new D1Meter());
  const resealed = await resealBatchExportSecrets(db, await loadKeyring(env));
  if (resealed > 0) console.log(`re-sealed the secrets of ${resealed} batch exports`);
  await sealOrganizations(env, await organizationsWithUnsealedEntries(db, UNSEALED_ORGANIZATIONS_PER_RUN));
  const pruned = await pruneActivityLog(db, retentionDays(env.ACTIVITY_LOG_RETENTION_DAYS));
  if (pruned > 0) console.log(`pruned ${pruned} activity-log entries past retention`);
  const resent = await sweepWebhooks(env);
  if (resent > 0) console.log(`re-sent ${resent} webhook deliveries whose message was lost`);
  const rekeyed = await recomputeStaleNameKeys(db);
  if (rekeyed > 0) console.log(`recomputed the name keys of ${rekeyed} projects`);
}
