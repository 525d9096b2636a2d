import type { RouteHandler, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { and, eq, sql, type Column } from "drizzle-orm";
import { users, webhooks } from "../../db/schema";
import { writeWithActivity } from "../../platform/activity-log/resource-activity";
import { callerStillAdmin, keyGoneOrLevelLost, levelRefusal } from "../../platform/route-context/organization";
import { MembershipLevel } from "../../platform/levels";
import { personOf, type Actor, type AppEnv } from "../../platform/env";
import { callingKeyLive } from "../../platform/auth/key-policy";
import { changedOrGone, conflict, notFound, validationError } from "../../platform/errors";
import { refusedWhenNull, unchangedSinceRead, whileHolds } from "../../platform/db";
import { nowIso, uuid7 } from "../../platform/ids";
import { organizationRead } from "../../platform/route-context";
import { pageEnvelope, readPage } from "../../platform/pagination";
import { assertReceiverUrl } from "./webhook-urls";
import { sealedNewSecret } from "./webhook-secrets";
import { trackedWebhookFields, webhookActivity, webhookItem } from "./webhooks.activity";
import {
  insertWebhookBelowLimit,
  listDeliveriesPage,
  MAX_WEBHOOKS_PER_ORGANIZATION,
  listWebhooksPage,
  ofOrganization,
  toDelivery,
  toWebhook,
  webhookLive,
  type UserRow,
  type WebhookRow,
} from "./webhooks.queries";
import { redeliver, sendTestEvent } from "./deliveries";
import { recoverStep } from "./recoveries";
import type { WebhookUpdateInput } from "./webhooks.schema";
import type {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  redeliverDelivery,
  retrieveWebhook,
  recoverDeliveries,
  rotateSecret,
  testWebhook,
  updateWebhook,
} from "./webhooks.routes";
import { readWebhookOfPath, webhookOfPath } from "./webhooks.request";
import { sendFirstStep } from "../../platform/stepped-deletion";

/** The webhook the path names, with its creator, read with the membership (`webhookOfPath`). */
function webhookOfRequest(c: Context<AppEnv>): { webhook: WebhookRow; createdBy: UserRow | null } {
  const [[row]] = webhookOfPath.results(c);
  if (!row) throw notFound();
  return row;
}

export const listOrganizationWebhooks: RouteHandler<typeof listWebhooks, AppEnv> = async (c) => {
  const page = readPage(c);
  const { count, results, links } = await listWebhooksPage(organizationRead(c), page);
  return c.json(pageEnvelope(c, page, count, results, links), 200);
};

export const createOrganizationWebhook: RouteHandler<typeof createWebhook, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const url = assertReceiverUrl(input.url, c.env);
  const id = uuid7();
  const { secret, sealedSecret } = await sealedNewSecret(c, id);
  const organizationId = c.var.organization.id;
  const webhook = {
    id,
    organizationId,
    url,
    events: input.events,
    enabled: input.enabled,
    description: input.description,
    sealedSecret,
    createdById: personOf(c.var.actor),
  };
  const db = c.var.db;
  const makerMay = adminWithLiveKey(c.var.actor, organizationId);
  const [[row], , [creator]] = await refusedWhenNull(
    db.batch([
      insertWebhookBelowLimit(db, webhook, nowIso(), makerMay),
      // Appended only if the INSERT (below the limit) made the webhook.
      webhookActivity.record(c, "created", webhookItem({ id, organizationId, url })),
      db.select().from(users).where(eq(users.id, c.var.actor.userId)),
    ]),
    keyGoneOrLevelLost(c),
  );
  if (!row) {
    throw validationError(
      "max_webhooks",
      `An organization can have at most ${MAX_WEBHOOKS_PER_ORGANIZATION} webhooks.`,
    );
  }
  return c.json({ ...toWebhook(row, creator ?? null), secret }, 201);
};

export const retrieveOrganizationWebhook: RouteHandler<typeof retrieveWebhook, AppEnv> = async (c) => {
  const [[row]] = await readWebhookOfPath(c);
  if (!row) throw notFound();
  return c.json(toWebhook(row.webhook, row.createdBy), 200);
};

export const updateOrganizationWebhook: RouteHandler<typeof updateWebhook, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const { webhook: current, createdBy } = webhookOfRequest(c);
  const url = input.url === undefined ? current.url : assertReceiverUrl(input.url, c.env);
  // Whoever turns a webhook on (`enabled: true`, even over a webhook read as on: it may have been
  // turned off meanwhile), or points it at another receiver, answers for it from then on: it lives
  // as long as they are an admin, not as long as its first creator was (otherwise an admin who
  // redirected someone else's webhook to themselves would keep every event once removed).
  const answerable = input.enabled === true || url !== current.url;
  const db = c.var.db;
  const owner = answerable ? await userOrNull(db, personOf(c.var.actor)) : createdBy;
  const after = {
    ...current,
    ...input,
    url,
    createdById: answerable ? personOf(c.var.actor) : current.createdById,
    updatedAt: nowIso(),
  };
  // Only while the caller is still an admin: a demotion at the same moment must not leave it enabled.
  const update = db
    .update(webhooks)
    // Only what the request sends (the URL column carries the admin hold either way): a change of
    // another field landing meanwhile, another admin's, is not undone. A webhook turned off
    // meanwhile (its creator demoted, its receiver gone) stays off through a change of something else.
    .set({
      url: whileHolds(
        input.url === undefined ? sql<string>`${webhooks.url}` : url,
        adminWithLiveKey(c.var.actor, current.organizationId),
      ),
      events: input.events,
      enabled: input.enabled,
      description: input.description,
      createdById: answerable ? after.createdById : undefined,
      // Turned on or pointed elsewhere, its 3 days of failures start again: failures from before
      // (the ones that disabled it, or another receiver's) must not switch it off at the next one.
      failingSince: answerable ? null : undefined,
      updatedAt: after.updatedAt,
    })
    .where(and(ofOrganization(current.organizationId, current.id), sentFieldsAsRead(input, current, answerable)))
    .returning();
  const entry = webhookActivity.changed(
    c,
    "updated",
    webhookItem(after),
    trackedWebhookFields(toWebhook(current, createdBy)),
    trackedWebhookFields(toWebhook(after, owner)),
  );
  const [row] = await refusedWhenNull(writeWithActivity(db, update, entry), keyGoneOrLevelLost(c));
  if (!row) throw await changedOrGone(db, webhookLive(current.organizationId, current.id), "webhook");
  return c.json(toWebhook(row, owner), 200);
};

/**
 * A webhook sends the organization's every event where its maker chose: it is made, turned on or
 * pointed elsewhere only while the caller is an admin, and with a key still theirs (one revoked,
 * its account claimed included, that a location's cache still admits for a minute, does none of it).
 */
function adminWithLiveKey(actor: Actor, organizationId: string) {
  return and(callerStillAdmin(actor, organizationId), callingKeyLive(actor, { orReplaced: true }))!;
}

/**
 * What the PATCH sends is still as it read it, and so is the webhook's creator when it takes the
 * webhook over: its entry's "before" is what the write replaces. A field changed meanwhile (the
 * webhook turned off by a demotion or a gone receiver, another admin's redirect) is 409, to be
 * sent again; a change of a field it does not send is kept, not undone.
 */
function sentFieldsAsRead(input: z.output<typeof WebhookUpdateInput>, current: WebhookRow, answerable: boolean) {
  const columns: [unknown, Column, unknown][] = [
    [input.url, webhooks.url, current.url],
    [input.enabled, webhooks.enabled, current.enabled],
    [input.description, webhooks.description, current.description],
    [input.events, webhooks.events, current.events],
    [answerable || undefined, webhooks.createdById, current.createdById],
  ];
  return unchangedSinceRead(columns.filter(([sent]) => sent !== undefined).map(([, column, read]) => [column, read]));
}

/** Who turns a webhook on or redirects it (none for a service key), read only then: its creator from then on. */
async function userOrNull(db: AppEnv["Variables"]["db"], userId: number | null) {
  if (userId === null) return null;
  const [user] = await db.select().from(users).where(eq(users.id, userId));
  return user ?? null;
}

/**
 * The webhook is gone at once to every route and sends nothing more (scheduled, and disabled); its
 * deliveries, however many, and then its row go in background steps (`webhook-deletion.ts`).
 */
export const deleteOrganizationWebhook: RouteHandler<typeof deleteWebhook, AppEnv> = async (c) => {
  const { webhook: current } = webhookOfRequest(c);
  // Only while the caller is still an admin (and their key not blocked) when the delete runs.
  const stillAdmin = callerStillAdmin(c.var.actor, current.organizationId);
  const now = nowIso();
  const [removed] = await writeWithActivity(
    c.var.db,
    c.var.db
      .update(webhooks)
      .set({ deletionScheduledAt: now, enabled: false, updatedAt: now })
      .where(and(ofOrganization(current.organizationId, current.id), stillAdmin))
      .returning({ id: webhooks.id }),
    webhookActivity.record(c, "deleted", webhookItem(current)),
  );
  if (!removed) throw (await levelRefusal(c, MembershipLevel.admin)) ?? notFound();
  await sendFirstStep(c.env, { kind: "delete_webhook", webhookId: current.id });
  return c.body(null, 204);
};

/**
 * A new secret; with an overlap, the one it replaces is kept (sealed, as it was) to sign too until
 * the overlap ends, so that receivers can switch without losing a delivery. A rotation during an
 * overlap keeps only the secret it replaces.
 */
export const rotateWebhookSecret: RouteHandler<typeof rotateSecret, AppEnv> = async (c) => {
  const { overlap_seconds: overlap } = c.req.valid("json");
  const { webhook: current, createdBy } = webhookOfRequest(c);
  const { secret, sealedSecret } = await sealedNewSecret(c, current.id);
  const now = nowIso();
  const [row] = await refusedWhenNull(
    writeWithActivity(
      c.var.db,
      c.var.db
        .update(webhooks)
        .set({
          // Only while the caller is still an admin, with a key still theirs: a new signing secret is
          // a lasting credential, which a key revoked a moment ago must not take away with it.
          sealedSecret: whileHolds(sealedSecret, adminWithLiveKey(c.var.actor, current.organizationId)),
          // SQLite computes every SET from the row before the update: this is the replaced secret.
          previousSealedSecret: overlap > 0 ? sql`${webhooks.sealedSecret}` : null,
          previousSecretExpiresAt: overlap > 0 ? new Date(Date.parse(now) + overlap * 1000).toISOString() : null,
          updatedAt: now,
        })
        .where(ofOrganization(current.organizationId, current.id))
        .returning(),
      webhookActivity.record(c, "secret_rotated", { ...webhookItem(current), context: { overlap_seconds: overlap } }),
    ),
    keyGoneOrLevelLost(c),
  );
  if (!row) throw notFound();
  return c.json({ ...toWebhook(row, createdBy), secret }, 200);
};

export const listWebhookDeliveries: RouteHandler<typeof listDeliveries, AppEnv> = async (c) => {
  const page = readPage(c);
  const result = await listDeliveriesPage(
    organizationRead(c),
    c.req.valid("param").id,
    page,
    c.req.valid("query").status,
  );
  if (!result) throw notFound();
  return c.json(pageEnvelope(c, page, result.count, result.results, result.links), 200);
};

export const redeliverWebhookDelivery: RouteHandler<typeof redeliverDelivery, AppEnv> = async (c) => {
  const { delivery_id } = c.req.valid("param");
  const { webhook } = webhookOfRequest(c);
  // Only while the caller is still an admin and the webhook still live, as judged.
  const held = and(
    callerStillAdmin(c.var.actor, webhook.organizationId),
    webhookLive(webhook.organizationId, webhook.id),
  );
  const outcome = await redeliver(c.env, c.var.db, webhook.id, delivery_id, held);
  if (outcome === "refused") throw (await levelRefusal(c, MembershipLevel.admin)) ?? notFound();
  if (!outcome) throw notFound();
  return c.json(toDelivery(outcome), 202);
};

export const testWebhookReceiver: RouteHandler<typeof testWebhook, AppEnv> = async (c) =>
  c.json(await sendTestEvent(c.env, webhookOfRequest(c).webhook), 200);

/**
 * Failed deliveries created in [since, until) are sent again, 100 per step (`recoverStep`): the
 * first in the request, while the caller is still an admin and the webhook live, as judged; the
 * others in the background. The answer says what was asked. A disabled webhook sends nothing: 409.
 */
export const recoverWebhookDeliveries: RouteHandler<typeof recoverDeliveries, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const { webhook } = webhookOfRequest(c);
  if (!webhook.enabled) throw conflict("The webhook is disabled: enable it (PATCH) before recovering its deliveries.");
  const since = new Date(input.since).toISOString();
  const until = new Date(input.until ?? Date.now()).toISOString();
  const held = and(
    callerStillAdmin(c.var.actor, webhook.organizationId),
    webhookLive(webhook.organizationId, webhook.id),
  );
  const job = { kind: "recover_deliveries", webhookId: webhook.id, since, until, after: null } as const;
  const { refused } = await recoverStep(c.env, job, held);
  if (refused) throw (await levelRefusal(c, MembershipLevel.admin)) ?? notFound();
  return c.json({ webhook_id: webhook.id, since, until }, 202);
};
