import { resourceActivity } from "../../platform/activity-log/resource-activity";

/** Subscriptions are created, changed, deleted, their secret rotated; the secret never appears. */
export const webhookActivity = resourceActivity("Webhook", { fields: ["url", "events", "enabled", "description"] });

export const webhookItem = (webhook: { id: string; organizationId: string; url: string }) => ({
  organizationId: webhook.organizationId,
  itemId: webhook.id,
  name: webhook.url,
});
