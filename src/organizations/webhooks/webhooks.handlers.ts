import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { sql } from "drizzle-orm";
import { webhooks } from "../../db/schema";
import { writeWithActivity } from "../../platform/activity-log/resource-activity";
import type { AppEnv } from "../../platform/env";
import { notFound } from "../../platform/errors";
import { nowIso, uuid7 } from "../../platform/ids";
import { pageEnvelope, readPage } from "../../platform/pagination";
import { loadKeyring, seal } from "../../platform/secrets";
import { assertReceiverUrl } from "./webhook-urls";
import { webhookActivity, webhookItem } from "./webhooks.activity";
import { currentHeadSeq, listDeliveriesPage, listWebhooksPage, ofOrganization, toWebhook, type WebhookRow } from "./webhooks.queries";
import type { createWebhook, deleteWebhook, listDeliveries, listWebhooks, retrieveWebhook, rotateSecret, updateWebhook } from "./webhooks.routes";

/** Each sealed secret is bound to its webhook: copied to another row, it does not open. */
export const secretContext = (webhookId: string) => `webhook:${webhookId}:secret`;

/** Standard Webhooks' secret form: `whsec_` and the base64 of 32 random bytes. */
function mintSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

async function sealedNewSecret(c: Context<AppEnv>, webhookId: string) {
  const secret = mintSecret();
  return { secret, sealedSecret: await seal(await loadKeyring(c.env), secret, secretContext(webhookId)) };
}

async function findWebhook(c: Context<AppEnv>, id: string): Promise<WebhookRow> {
  const [row] = await c.var.db.select().from(webhooks).where(ofOrganization(c.var.organization.id, id));
  if (!row) throw notFound();
  return row;
}

export const listOrganizationWebhooks: RouteHandler<typeof listWebhooks, AppEnv> = async (c) => {
  const page = readPage(c);
  const { count, results } = await listWebhooksPage(c.var.db, c.var.organization.id, page);
  return c.json(pageEnvelope(c, page, count, results), 200);
};

export const createOrganizationWebhook: RouteHandler<typeof createWebhook, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const url = assertReceiverUrl(input.url, c.env);
  const id = uuid7();
  const { secret, sealedSecret } = await sealedNewSecret(c, id);
  const organizationId = c.var.organization.id;
  const now = nowIso();
  const [row] = await writeWithActivity(
    c.var.db,
    c.var.db
      .insert(webhooks)
      .values({
        id,
        organizationId,
        url,
        events: input.events,
        enabled: input.enabled,
        description: input.description,
        sealedSecret,
        createdById: c.var.actor.userId,
        // Only what happens from now on is sent.
        lastEnqueuedSeq: sql`${currentHeadSeq(organizationId)}`,
        createdAt: now,
        updatedAt: now,
      })
      .returning(),
    webhookActivity.record(c, "created", webhookItem({ id, organizationId, url })),
  );
  return c.json({ ...toWebhook(row!), secret }, 201);
};

export const retrieveOrganizationWebhook: RouteHandler<typeof retrieveWebhook, AppEnv> = async (c) =>
  c.json(toWebhook(await findWebhook(c, c.req.valid("param").id)), 200);

export const updateOrganizationWebhook: RouteHandler<typeof updateWebhook, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const current = await findWebhook(c, c.req.valid("param").id);
  const url = input.url === undefined ? current.url : assertReceiverUrl(input.url, c.env);
  const after = { ...current, ...input, url, updatedAt: nowIso() };
  const [row] = await writeWithActivity(
    c.var.db,
    c.var.db
      .update(webhooks)
      .set({ url, events: after.events, enabled: after.enabled, description: after.description, updatedAt: after.updatedAt })
      .where(ofOrganization(current.organizationId, current.id))
      .returning(),
    webhookActivity.changed(c, "updated", webhookItem(after), toWebhook(current), toWebhook(after)),
  );
  if (!row) throw notFound();
  return c.json(toWebhook(row), 200);
};

export const deleteOrganizationWebhook: RouteHandler<typeof deleteWebhook, AppEnv> = async (c) => {
  const current = await findWebhook(c, c.req.valid("param").id);
  const [removed] = await writeWithActivity(
    c.var.db,
    c.var.db.delete(webhooks).where(ofOrganization(current.organizationId, current.id)).returning({ id: webhooks.id }),
    webhookActivity.record(c, "deleted", webhookItem(current)),
  );
  if (!removed) throw notFound();
  return c.body(null, 204);
};

export const rotateWebhookSecret: RouteHandler<typeof rotateSecret, AppEnv> = async (c) => {
  const current = await findWebhook(c, c.req.valid("param").id);
  const { secret, sealedSecret } = await sealedNewSecret(c, current.id);
  const [row] = await writeWithActivity(
    c.var.db,
    c.var.db
      .update(webhooks)
      .set({ sealedSecret, updatedAt: nowIso() })
      .where(ofOrganization(current.organizationId, current.id))
      .returning(),
    webhookActivity.record(c, "secret_rotated", webhookItem(current)),
  );
  if (!row) throw notFound();
  return c.json({ ...toWebhook(row), secret }, 200);
};

export const listWebhookDeliveries: RouteHandler<typeof listDeliveries, AppEnv> = async (c) => {
  const page = readPage(c);
  const result = await listDeliveriesPage(c.var.db, c.var.organization.id, c.req.valid("param").id, page);
  if (!result) throw notFound();
  return c.json(pageEnvelope(c, page, result.count, result.results), 200);
};
