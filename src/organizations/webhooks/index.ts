import { createRouter } from "../../platform/router";
import {
  createOrganizationWebhook,
  deleteOrganizationWebhook,
  listOrganizationWebhooks,
  listWebhookDeliveries,
  retrieveOrganizationWebhook,
  rotateWebhookSecret,
  updateOrganizationWebhook,
} from "./webhooks.handlers";
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, retrieveWebhook, rotateSecret, updateWebhook } from "./webhooks.routes";

export const organizationWebhooksRouter = createRouter()
  .openapi(listWebhooks, listOrganizationWebhooks)
  .openapi(createWebhook, createOrganizationWebhook)
  .openapi(retrieveWebhook, retrieveOrganizationWebhook)
  .openapi(updateWebhook, updateOrganizationWebhook)
  .openapi(deleteWebhook, deleteOrganizationWebhook)
  .openapi(rotateSecret, rotateWebhookSecret)
  .openapi(listDeliveries, listWebhookDeliveries);
