import { createRouter } from "../../platform/router";
import {
  createOrganizationWebhook,
  deleteOrganizationWebhook,
  listOrganizationWebhooks,
  listWebhookDeliveries,
  recoverWebhookDeliveries,
  redeliverWebhookDelivery,
  retrieveOrganizationWebhook,
  testWebhookReceiver,
  rotateWebhookSecret,
  updateOrganizationWebhook,
} from "./webhooks.handlers";
import {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  recoverDeliveries,
  redeliverDelivery,
  retrieveWebhook,
  retryDelivery,
  rotateSecret,
  testWebhook,
  updateWebhook,
} from "./webhooks.routes";

export const organizationWebhooksRouter = createRouter()
  .openapi(listWebhooks, listOrganizationWebhooks)
  .openapi(createWebhook, createOrganizationWebhook)
  .openapi(retrieveWebhook, retrieveOrganizationWebhook)
  .openapi(updateWebhook, updateOrganizationWebhook)
  .openapi(deleteWebhook, deleteOrganizationWebhook)
  .openapi(rotateSecret, rotateWebhookSecret)
  .openapi(listDeliveries, listWebhookDeliveries)
  .openapi(redeliverDelivery, redeliverWebhookDelivery)
  .openapi(retryDelivery, redeliverWebhookDelivery)
  .openapi(testWebhook, testWebhookReceiver)
  .openapi(recoverDeliveries, recoverWebhookDeliveries);
