import { and, eq, not, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Context } from "hono";
import { organizationMemberships, webhooks } from "../../db/schema";
import { inJsonList, type Database } from "../../platform/db";
import type { AppEnv } from "../../platform/env";
import { isAdminInSql } from "../../platform/levels";
import { disableWebhook, SYSTEM_ACTOR } from "./webhooks.queries";

type Statement = BatchItem<"sqlite">;
type CreatedWebhook = { id: string; url: string };

const REASON = "Its creator is no longer an admin of the organization.";

/** The service, in the log, acting within the request that caused it. */
const systemActorOf = (c: Context<AppEnv>) => ({ ...SYSTEM_ACTOR, requestId: c.var.requestId ?? null });
const CLAIMED_REASON = "Its creator's account was taken over by the owner of its e-mail address.";

/** The webhooks `userId` made and has turned on, in the organizations `inOrganizations` picks. */
export const enabledWebhooksMadeBy = (userId: number | SQL, inOrganizations: SQL) =>
  and(inOrganizations, eq(webhooks.createdById, userId), eq(webhooks.enabled, true));

/**
 * No webhook of `enabled` beyond those read (`readIds`): one made or turned on since would stay
 * enabled after a write that turns the read ones off, which must not hold then (409, to be retried).
 */
export const noWebhookEnabledBeyond = (enabled: SQL | undefined, readIds: string[]) =>
  sql`not exists (select 1 from ${webhooks} where ${and(enabled, not(inJsonList(webhooks.id, readIds)))})`;

/** The enabled webhooks a user created in an organization: read with the membership a write changes. */
export const enabledWebhooksCreatedBy = (db: Database, organizationId: string | SQL, userId: number | SQL) =>
  db
    .select({ id: webhooks.id, url: webhooks.url })
    .from(webhooks)
    .where(enabledWebhooksMadeBy(userId, eq(webhooks.organizationId, organizationId)));

/**
 * A webhook receives every event of its organization, so it lives only as long as its creator
 * could create it: placed after a write that demotes or removes a member, these disable the
 * webhooks the member created if, once that write is done, they are no longer an admin, and
 * record `Webhook.disabled` by the system for each. A write that did not happen disables nothing;
 * the write holds only while `holds`: no webhook of theirs was made or turned on since they were read.
 */
export function disableWebhooksOfFormerAdmin(
  c: Context<AppEnv>,
  organizationId: string,
  creatorUserId: number,
  created: CreatedWebhook[],
): { consequences: Statement[]; holds: SQL } {
  const creatorLevel = sql`(select ${organizationMemberships.level} from ${organizationMemberships}
    where ${organizationMemberships.organizationId} = ${organizationId}
      and ${organizationMemberships.userId} = ${creatorUserId})`;
  // The organization's chain is sealed after the response: the membership change's own entry registered it.
  const actor = systemActorOf(c);
  const consequences = created.flatMap((webhook) =>
    disableWebhook(
      c.var.db,
      { ...webhook, organizationId },
      { reason: REASON },
      // Still theirs: one another admin turned on or redirected meanwhile answers to that admin now.
      { actor, condition: and(eq(webhooks.createdById, creatorUserId), sql`not ${isAdminInSql(creatorLevel)}`) },
    ),
  );
  const holds = noWebhookEnabledBeyond(
    enabledWebhooksMadeBy(creatorUserId, eq(webhooks.organizationId, organizationId)),
    created.map(({ id }) => id),
  );
  return { consequences, holds };
}

/**
 * The webhooks an account's earlier holder turned on, read before its owner claims it: turned off
 * by the claim (each while still that account's), each with `Webhook.disabled` by the system. They
 * send the organizations' events to receivers the earlier holder chose; the owner may turn them on
 * again. Their organizations' chains are sealed after the response: the claim's key entries there
 * registered them.
 */
export const disableWebhooksOfClaimedAccount = (
  c: Context<AppEnv>,
  userId: number,
  enabled: (CreatedWebhook & { organizationId: string })[],
): Statement[] => {
  const actor = systemActorOf(c);
  return enabled.flatMap((webhook) =>
    disableWebhook(
      c.var.db,
      webhook,
      { reason: CLAIMED_REASON },
      {
        actor,
        condition: eq(webhooks.createdById, userId),
      },
    ),
  );
};
