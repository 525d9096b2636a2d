import { and, eq, getTableColumns, isNull, lt, sql, type SQL } from "drizzle-orm";
import { activityLog, activityLogAnchors, organizations, users, webhookDeliveries, webhooks } from "../../db/schema";
import { toUserBasic, userBasicColumns, type UserBasicRow } from "../../platform/user-basic";
import { activityStatement, type ActivityActor } from "../../platform/activity-log/record";
import { boundAs, type Database, whileHolds } from "../../platform/db";
import { nowIso } from "../../platform/ids";
import type { OrganizationRead } from "../../platform/route-context";
import type { OrganizationRef } from "../../platform/route-context/organization";
import { counterOf, joinPage, pageOf, selectCount, type ListOrder, type Page } from "../../platform/pagination";
import type { Webhook } from "./webhooks.schema";

export type WebhookRow = typeof webhooks.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;

export type UserRow = UserBasicRow;

export function toWebhook(row: WebhookRow, createdBy: UserRow | null): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    description: row.description,
    created_by: createdBy ? toUserBasic(createdBy) : null,
    // An overlap past its end, not dropped by the cron yet, is over all the same.
    previous_secret_expires_at:
      row.previousSecretExpiresAt !== null && Date.parse(row.previousSecretExpiresAt) > Date.now()
        ? row.previousSecretExpiresAt
        : null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** Webhooks with their creators (a user who is gone: null). */
export const selectWebhooksWithCreator = (db: Database) =>
  db
    .select({ webhook: webhooks, createdBy: userBasicColumns(users) })
    .from(webhooks)
    .leftJoin(users, eq(users.id, webhooks.createdById));

export const toDelivery = (row: DeliveryRow) => ({
  id: row.id,
  entry_id: row.entryId,
  event: row.event,
  status: row.status as "pending" | "succeeded" | "failed",
  attempts: row.attempts,
  last_status_code: row.lastStatusCode,
  last_error: row.lastError,
  next_attempt_at: row.nextAttemptAt,
  created_at: row.createdAt,
  updated_at: row.updatedAt,
});

/** The organization's last activity number, as SQL: a new webhook is sent what comes after it. */
const currentHeadSeq = (organizationId: string) => sql<number>`coalesce(
  (select ${activityLog.seq} from ${activityLog} where ${activityLog.organizationId} = ${organizationId}
    order by ${activityLog.seq} desc limit 1),
  (select ${activityLogAnchors.seq} from ${activityLogAnchors}
    where ${activityLogAnchors.organizationId} = ${organizationId}),
  0)`;

/** The organization's webhook `id`, unless its deletion is scheduled (it is gone to every route). */
export const ofOrganization = (organizationId: OrganizationRef, id: string) =>
  and(eq(webhooks.organizationId, organizationId), eq(webhooks.id, id), isNull(webhooks.deletionScheduledAt));

/** Whether the webhook is still there and not being deleted: a condition for a write of another table. */
export const webhookLive = (organizationId: OrganizationRef, id: string) =>
  sql`exists (select 1 from ${webhooks} where ${ofOrganization(organizationId, id)})`;

const newestFirst: ListOrder = [
  [webhooks.createdAt, "desc"],
  [webhooks.id, "desc"],
];

export const MAX_WEBHOOKS_PER_ORGANIZATION = 50;

type NewWebhook = Pick<
  WebhookRow,
  "id" | "organizationId" | "url" | "events" | "enabled" | "description" | "sealedSecret" | "createdById"
>;

/**
 * Inserts the webhook while the organization has fewer than `MAX_WEBHOOKS_PER_ORGANIZATION`:
 * the INSERT checks its counter itself, so parallel creates cannot pass the limit together.
 * Returns no row at the limit. Made only while `makerMay` holds when it runs: else its
 * organization is null, and the batch fails on that NOT NULL (`refusedWhenNull`).
 */
export function insertWebhookBelowLimit(db: Database, webhook: NewWebhook, now: string, makerMay: SQL) {
  const field = <K extends keyof NewWebhook>(key: K) => boundAs(webhook[key], webhooks[key]);
  return db
    .insert(webhooks)
    .select(
      db
        .select({
          id: field("id"),
          organizationId: whileHolds(organizations.id, makerMay).as("organization_id"),
          url: field("url"),
          events: field("events"),
          enabled: field("enabled"),
          description: field("description"),
          sealedSecret: field("sealedSecret"),
          previousSealedSecret: sql<string | null>`null`.as("previous_sealed_secret"),
          previousSecretExpiresAt: sql<string | null>`null`.as("previous_secret_expires_at"),
          createdById: field("createdById"),
          // Only what happens from now on is sent.
          lastEnqueuedSeq: sql<number>`${currentHeadSeq(webhook.organizationId)}`.as("last_enqueued_seq"),
          failingSince: sql<string | null>`null`.as("failing_since"),
          deliveryCount: sql<number>`0`.as("delivery_count"),
          deletionScheduledAt: sql<string | null>`null`.as("deletion_scheduled_at"),
          createdAt: boundAs(now, webhooks.createdAt),
          updatedAt: boundAs(now, webhooks.updatedAt),
        })
        .from(organizations)
        .where(
          and(
            eq(organizations.id, webhook.organizationId),
            lt(organizations.webhookCount, MAX_WEBHOOKS_PER_ORGANIZATION),
          ),
        ),
    )
    .returning();
}

/** A page of the organization's webhooks, newest first, with their count (the organization's counter). */
export async function listWebhooksPage(read: OrganizationRead, page: Page) {
  const { db, organizationId } = read;
  const ofOrg = and(eq(webhooks.organizationId, organizationId), isNull(webhooks.deletionScheduledAt));
  const counter = counterOf(organizations.webhookCount, eq(organizations.id, organizationId));
  const [[total], rows] = await read.batch([
    selectCount(db, counter),
    selectWebhooksWithCreator(db).innerJoin(...joinPage(db, newestFirst, ofOrg, page)),
  ]);
  const listed = pageOf(newestFirst, page, rows, (row) => row.webhook);
  return {
    count: total?.value ?? 0,
    results: listed.rows.map((row) => toWebhook(row.webhook, row.createdBy)),
    links: listed.links,
  };
}

const deliveriesNewestFirst: ListOrder = [
  [webhookDeliveries.createdAt, "desc"],
  [webhookDeliveries.id, "desc"],
];

/**
 * The webhook (of the organization) and a page of its deliveries, newest first, in one round trip.
 * With a `status`, the page is read along (webhook, status, created_at, id) and counted there
 * (the failed ones of a healthy webhook are few).
 */
export async function listDeliveriesPage(read: OrganizationRead, webhookId: string, page: Page, status?: string) {
  const { db, organizationId } = read;
  const ofWebhook = and(
    eq(webhookDeliveries.webhookId, webhookId),
    status === undefined ? undefined : eq(webhookDeliveries.status, status),
  );
  const count =
    status === undefined
      ? webhooks.deliveryCount
      : sql<number>`(select count(*) from ${webhookDeliveries} where ${ofWebhook})`;
  const [[webhook], rows] = await read.batch([
    db.select({ deliveryCount: count }).from(webhooks).where(ofOrganization(organizationId, webhookId)),
    db
      .select(getTableColumns(webhookDeliveries))
      .from(webhookDeliveries)
      .innerJoin(...joinPage(db, deliveriesNewestFirst, ofWebhook, page)),
  ]);
  if (!webhook) return undefined;
  const listed = pageOf(deliveriesNewestFirst, page, rows);
  return { count: webhook.deliveryCount, results: listed.rows.map(toDelivery), links: listed.links };
}

/** The service itself, as the log names it when it turns a webhook off. */
export const SYSTEM_ACTOR: ActivityActor = { userId: null, apiKeyId: null, isSystem: true, requestId: null };

/**
 * The webhook turned off by the service (while `condition`, read in the batch, holds), and the
 * log's `Webhook.disabled` saying why, appended only if this turned it off.
 */
export function disableWebhook(
  db: Database,
  webhook: Pick<WebhookRow, "id" | "organizationId" | "url">,
  context: Record<string, unknown>,
  { actor = SYSTEM_ACTOR, condition }: { actor?: ActivityActor; condition?: SQL } = {},
) {
  return [
    db
      .update(webhooks)
      .set({ enabled: false, updatedAt: nowIso() })
      .where(and(eq(webhooks.id, webhook.id), eq(webhooks.enabled, true), condition)),
    activityStatement(db, actor, {
      organizationId: webhook.organizationId,
      scope: "Webhook",
      activity: "disabled",
      itemId: webhook.id,
      name: webhook.url,
      context,
    }),
  ];
}
