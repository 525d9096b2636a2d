import { z } from "@hono/zod-openapi";
import { MembershipLevel } from "../../platform/levels";
import { OrganizationParams } from "../../platform/route-context";
import { paginated, PaginationQuery } from "../../platform/pagination";
import { noStore } from "../../platform/response-headers";
import {
  apiRoute,
  changedMeanwhileResponse,
  conflictResponse,
  jsonBody,
  jsonResponse as json,
} from "../../platform/route";
import {
  DELIVERY_STATUSES,
  RecoverInput,
  Recovery,
  RotateSecretInput,
  TestResult,
  Webhook,
  WebhookCreateInput,
  WebhookDelivery,
  WebhookUpdateInput,
  WebhookWithSecret,
} from "./webhooks.schema";
import { webhookOfPath } from "./webhooks.request";

const WebhookParams = OrganizationParams.extend({ id: z.string().openapi({ description: "Webhook id." }) });
const DeliveryParams = WebhookParams.extend({
  delivery_id: z.string().openapi({ description: "Delivery id (its `webhook-id`)." }),
});

const collection = "/api/organizations/{organization_id}/webhooks";
const item = `${collection}/{id}` as const;

// Webhooks are for admins and owners, reading them included: they say where the organization's events go.
const common = { context: "organization" as const, level: MembershipLevel.admin, tags: ["webhooks"] };

/** Writes to the webhook in the path read it with the membership. */
const ofPath = { ...common, reads: webhookOfPath };

export const listWebhooks = apiRoute({
  ...common,
  method: "get",
  path: collection,
  scope: "webhook:read",
  serviceKeys: true,
  summary: "List the organization's webhooks, newest first (no secrets)",
  request: { params: OrganizationParams, query: PaginationQuery },
  responses: { 200: json(paginated(Webhook), "A page of webhooks") },
});

export const createWebhook = apiRoute({
  ...common,
  middleware: [noStore],
  method: "post",
  path: collection,
  // A subscription reads the activity log: a key that may not read it may not subscribe to it.
  scope: ["webhook:write", "activity_log:read"],
  serviceKeys: true,
  summary: "Subscribe a receiver to activity events; the signing secret is shown this once",
  request: { params: OrganizationParams, body: jsonBody(WebhookCreateInput) },
  responses: { 201: json(WebhookWithSecret, "The webhook, with its signing secret") },
});

export const retrieveWebhook = apiRoute({
  ...common,
  method: "get",
  path: item,
  scope: "webhook:read",
  serviceKeys: true,
  summary: "Retrieve a webhook (no secret)",
  request: { params: WebhookParams },
  responses: { 200: json(Webhook, "The webhook") },
});

export const updateWebhook = apiRoute({
  ...ofPath,
  method: "patch",
  path: item,
  // A subscription reads the activity log: a key that may not read it may not subscribe to it.
  scope: ["webhook:write", "activity_log:read"],
  serviceKeys: true,
  summary: "Change a webhook's URL, events, description, or turn it on or off",
  request: { params: WebhookParams, body: jsonBody(WebhookUpdateInput) },
  responses: { 200: json(Webhook, "The webhook"), 409: changedMeanwhileResponse },
});

export const deleteWebhook = apiRoute({
  ...ofPath,
  method: "delete",
  path: item,
  scope: "webhook:write",
  serviceKeys: true,
  summary: "Delete a webhook and its deliveries",
  request: { params: WebhookParams },
  responses: { 204: { description: "Deleted" } },
});

export const rotateSecret = apiRoute({
  ...ofPath,
  middleware: [noStore],
  method: "post",
  path: `${item}/rotate_secret`,
  scope: "webhook:write",
  serviceKeys: true,
  summary: "Replace the signing secret (shown this once); the old one signs too for `overlap_seconds`",
  request: { params: WebhookParams, body: jsonBody(RotateSecretInput) },
  responses: { 200: json(WebhookWithSecret, "The webhook, with its new signing secret") },
});

export const listDeliveries = apiRoute({
  ...common,
  method: "get",
  path: `${item}/deliveries`,
  scope: "webhook:read",
  serviceKeys: true,
  summary: "The webhook's deliveries, newest first: status, attempts, last response",
  request: {
    params: WebhookParams,
    query: PaginationQuery.extend({
      status: z.enum(DELIVERY_STATUSES).optional().openapi({ description: "Only deliveries in this state." }),
    }),
  },
  responses: { 200: json(paginated(WebhookDelivery), "A page of deliveries") },
});

/** A delivery sent again, at `redeliver` or, as operators also call it, `retry`: one action, two names. */
const sendDeliveryAgain = (action: "redeliver" | "retry") =>
  apiRoute({
    ...ofPath,
    method: "post",
    path: `${item}/deliveries/{delivery_id}/${action}`,
    scope: "webhook:write",
    serviceKeys: true,
    summary: `Send a delivery again (same \`webhook-id\`), with the retry schedule from its start${
      action === "retry" ? " (`redeliver` by another name)" : ""
    }`,
    request: { params: DeliveryParams },
    responses: { 202: json(WebhookDelivery, "The delivery, pending again") },
  });
export const redeliverDelivery = sendDeliveryAgain("redeliver");
export const retryDelivery = sendDeliveryAgain("retry");

export const testWebhook = apiRoute({
  ...ofPath,
  method: "post",
  path: `${item}/test`,
  scope: "webhook:write",
  serviceKeys: true,
  summary: "Post a signed `webhook.test` event to the receiver now, and say how it answered",
  request: { params: WebhookParams },
  responses: { 200: json(TestResult, "How the receiver answered") },
});

export const recoverDeliveries = apiRoute({
  ...ofPath,
  method: "post",
  path: `${item}/recover`,
  scope: "webhook:write",
  serviceKeys: true,
  summary: "Send again the failed deliveries created since a time: the first 100 at once, the rest in the background",
  request: { params: WebhookParams, body: jsonBody(RecoverInput) },
  responses: { 202: json(Recovery, "What will be sent again"), 409: conflictResponse },
});
