import { createDatabase, D1Meter } from "./platform/db";
import type { Bindings } from "./platform/env";
import { loadKeyring } from "./platform/secrets";
import { resealBatchExportSecrets } from "./environments/batch-exports/destination-secrets";

/**
 * The cron trigger (`[triggers]` in wrangler.toml): re-seals batch export secrets still in
 * plaintext (rows written before they were encrypted) or sealed with a former key, a batch of
 * rows per run, until none is left.
 */
export async function runScheduledTasks(_controller: ScheduledController, env: Bindings) {
  const resealed = await resealBatchExportSecrets(createDatabase(env.DB.withSession("first-primary"), new D1Meter()), await loadKeyring(env));
  if (resealed > 0) console.log(`re-sealed the secrets of ${resealed} batch exports`);
}
