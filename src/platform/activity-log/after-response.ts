import { createMiddleware } from "hono/factory";
import { forEachOrganization, runEach } from "../background";
import { primaryDatabase } from "../db";
import type { AppEnv, Bindings } from "../env";
import { SEAL_BATCH, sealChain } from "./chain";
import { organizationsAppendedBy } from "./record";

/** What runs once entries are sealed (webhook deliveries are enqueued here). */
type SealedListener = (env: Bindings, organizationIds: string[]) => Promise<void>;
const sealedListeners: SealedListener[] = [];

export function onActivitySealed(listener: SealedListener) {
  sealedListeners.push(listener);
}

/**
 * Rounds of sealing one organization gets here: a request that appended more than a round's
 * entries (a member with hundreds of roles removed, a dashboard restored with its tiles) has them
 * all sealed after its response; beyond, the next write or cron run seals the rest.
 */
const SEAL_ROUNDS = 10;

/** Seals the chains of these organizations at the primary, then tells the listeners. */
export async function sealOrganizations(env: Bindings, organizationIds: string[]) {
  const db = primaryDatabase(env);
  await forEachOrganization("seal activity log", organizationIds, async (organizationId) => {
    for (let round = 0; round < SEAL_ROUNDS && (await sealChain(db, organizationId)) === SEAL_BATCH; round += 1);
  });
  await runEach(
    "after activity sealed",
    sealedListeners,
    (listener) => listener(env, organizationIds),
    () => ({}),
  );
}

/**
 * After a request that appended entries, their chains are sealed without holding the response
 * (`waitUntil`). A seal that does not happen here (the isolate stops) happens on the next write
 * to the organization or on the next cron run.
 */
export const sealAppendedActivity = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const organizationIds = organizationsAppendedBy(c);
  if (organizationIds.length > 0) c.executionCtx.waitUntil(sealOrganizations(c.env, organizationIds));
});
