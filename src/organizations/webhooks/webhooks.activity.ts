import { resourceActivity } from "../../platform/activity-log/resource-activity";

/**
 * Subscriptions are created, changed, deleted, their secret rotated; the secret never appears.
 * `created_by` (a user's uuid) is who answers for the webhook: it changes when another admin turns
 * it on or points it elsewhere.
 */
export const webhookActivity = resourceActivity("Webhook", {
  fields: ["url", "events", "enabled", "description", "created_by"],
});

/** A webhook's tracked fields: its answer, with the uuid of who answers for it. */
export const trackedWebhookFields = (webhook: { created_by: { uuid: string } | null }) => ({
  ...webhook,
  created_by: webhook.created_by?.uuid ?? null,
});

export const webhookItem = (webhook: { id: string; organizationId: string; url: string }) => ({
  organizationId: webhook.organizationId,
  itemId: webhook.id,
  name: webhook.url,
});
