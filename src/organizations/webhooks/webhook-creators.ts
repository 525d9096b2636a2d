import { and, eq, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Context } from "hono";
import { organizationMemberships, webhooks } from "../../db/schema";
import { recordActivity } from "../../platform/activity-log/record";
import type { Database } from "../../platform/db";
import type { AppEnv } from "../../platform/env";
import { nowIso } from "../../platform/ids";
import { isAdminInSql } from "../../platform/levels";

type Statement = BatchItem<"sqlite">;
export type CreatedWebhook = { id: string; url: string };

const REASON = "Its creator is no longer an admin of the organization.";

/** The enabled webhooks a user created in an organization: read with the membership a write changes. */
export const enabledWebhooksCreatedBy = (db: Database, organizationId: string | SQL, userId: number | SQL) =>
  db
    .select({ id: webhooks.id, url: webhooks.url })
    .from(webhooks)
    .where(and(eq(webhooks.organizationId, organizationId), eq(webhooks.createdById, userId), eq(webhooks.enabled, true)));

/**
 * A webhook receives every event of its organization, so it lives only as long as its creator
 * could create it: placed after a write that demotes or removes a member, these disable the
 * webhooks the member created if, once that write is done, they are no longer an admin, and
 * record `Webhook.disabled` by the system for each. A write that did not happen disables nothing.
 */
export function disableWebhooksOfFormerAdmin(
  c: Context<AppEnv>,
  organizationId: string,
  creatorUserId: number,
  created: CreatedWebhook[],
): Statement[] {
  const db = c.var.db;
  const creatorLevel = sql`(select ${organizationMemberships.level} from ${organizationMemberships}
    where ${organizationMemberships.organizationId} = ${organizationId} and ${organizationMemberships.userId} = ${creatorUserId})`;
  const system = { userId: null, apiKeyId: null, isSystem: true, requestId: c.var.requestId ?? null };
  return created.flatMap((webhook) => [
    db
      .update(webhooks)
      .set({ enabled: false, updatedAt: nowIso() })
      .where(and(eq(webhooks.id, webhook.id), eq(webhooks.enabled, true), sql`not ${isAdminInSql(creatorLevel)}`)),
    recordActivity(
      c,
      { organizationId, scope: "Webhook", activity: "disabled", itemId: webhook.id, name: webhook.url, context: { reason: REASON } },
      system,
    ),
  ]);
}
