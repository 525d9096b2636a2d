import { and, eq, notLike, or } from "drizzle-orm";
import type { Context } from "hono";
import { webhooks } from "../../db/schema";
import { settledEach } from "../../platform/background";
import { unchangedSinceRead, type Database } from "../../platform/db";
import type { AppEnv } from "../../platform/env";
import { loadKeyring, seal, sealedUnderCurrentKey, unseal, type Keyring } from "../../platform/secrets";

/** Each sealed secret is bound to its webhook: copied to another row, it does not open. */
export const secretContext = (webhookId: string) => `webhook:${webhookId}:secret`;

/** Standard Webhooks' secret form: `whsec_` and the base64 of 32 random bytes. */
function mintSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

export async function sealedNewSecret(c: Context<AppEnv>, webhookId: string) {
  const secret = mintSecret();
  return { secret, sealedSecret: await seal(await loadKeyring(c.env), secret, secretContext(webhookId)) };
}

/** Webhooks per pass: a pass stays well within a scheduled run's limits, and the next one goes on. */
const RESEAL_BATCH_SIZE = 100;

/** A sealed secret of `webhookId` under the current key; null stays null. */
async function resealed(keyring: Keyring, webhookId: string, sealed: string | null) {
  if (sealed === null) return null;
  return seal(keyring, await unseal(keyring, sealed, secretContext(webhookId)), secretContext(webhookId));
}

/**
 * Re-seals, under the current key, the signing secrets (and a rotation's previous secret) sealed
 * with a former key, so that the former key can go. Only while former keys are configured:
 * without one, nothing sealed under another key would open anyway, and the pass reads nothing.
 * Each row is written only if its secrets have not changed since it was read. Returns how many
 * webhooks were re-sealed; 0 means none is left.
 */
export async function resealWebhookSecrets(db: Database, keyring: Keyring): Promise<number> {
  if (keyring.byId.size === 1) return 0;
  const current = sealedUnderCurrentKey(keyring);
  const rows = await db
    .select({ id: webhooks.id, sealedSecret: webhooks.sealedSecret, previous: webhooks.previousSealedSecret })
    .from(webhooks)
    .where(or(notLike(webhooks.sealedSecret, current), notLike(webhooks.previousSealedSecret, current)))
    .limit(RESEAL_BATCH_SIZE);
  // Sealed first: a drizzle statement is a thenable, and awaiting one would run it alone. A secret
  // that does not open (sealed under a key no longer configured) is logged and left: the others go on.
  const sealedRows = await settledEach(
    "re-seal webhook secret",
    rows,
    async (row) => ({
      row,
      sealedSecret: (await resealed(keyring, row.id, row.sealedSecret))!,
      previousSealedSecret: await resealed(keyring, row.id, row.previous),
    }),
    (row) => ({ webhook_id: row.id }),
  );
  const updates = sealedRows.map(({ row, ...sealed }) => {
    const unchanged = unchangedSinceRead([
      [webhooks.sealedSecret, row.sealedSecret],
      [webhooks.previousSealedSecret, row.previous],
    ]);
    return db
      .update(webhooks)
      .set(sealed)
      .where(and(eq(webhooks.id, row.id), unchanged));
  });
  const [first, ...rest] = updates;
  if (first) await db.batch([first, ...rest]);
  return rows.length;
}
