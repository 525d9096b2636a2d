import type { Context } from "hono";
import type { AppEnv } from "../../platform/env";
import { organizationRead, routeReads } from "../../platform/route-context";
import { ofOrganization, selectWebhooksWithCreator } from "./webhooks.queries";

/** The webhook the path names, with its creator, read in the round trip that resolves the organization. */
export function readWebhookOfPath(c: Context<AppEnv>) {
  const read = organizationRead(c);
  const webhookId = c.req.param("id") ?? "";
  return read.batch([selectWebhooksWithCreator(read.db).where(ofOrganization(read.organizationId, webhookId))]);
}

/** A write's webhook, read before its body. */
export const webhookOfPath = routeReads(readWebhookOfPath);
