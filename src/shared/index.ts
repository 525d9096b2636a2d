import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { NONCE, secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "../platform/env";
import { assertAddressMayLookUp, refusal } from "../platform/auth/refused-keys";
import { notFound } from "../platform/errors";
import { constantTimeEqual } from "../platform/ids";
import { jsonResponse } from "../platform/route";
import { createRouter } from "../platform/router";
import { SharedDashboard, toSharedDashboard } from "./shared-dashboard";
import { sharedDashboardPage, sharedNotFoundPage } from "./shared-page";
import { readSharedDashboard } from "./shared.queries";

const JSON_SUFFIX = ".json";

/**
 * A public page must not run anything it did not bring, nor tell other sites where it was read:
 * no script at all, styles only under this response's nonce, no referrer, never cached shared.
 */
const publicPageHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    styleSrc: [NONCE],
    imgSrc: ["data:"],
    baseUri: ["'none'"],
    formAction: ["'none'"],
    frameAncestors: ["'none'"],
  },
  referrerPolicy: "no-referrer",
  xContentTypeOptions: "nosniff",
});

/** `GET /shared/:access_token` (a page) and `GET /shared/:access_token.json` (its data): no key. */
async function serveSharedDashboard(c: Context<AppEnv>) {
  c.header("Cache-Control", "private, max-age=0");
  const requested = c.req.param("access_token") ?? "";
  const asJson = requested.endsWith(JSON_SUFFIX);
  const accessToken = asJson ? requested.slice(0, -JSON_SUFFIX.length) : requested;
  assertAddressMayLookUp(c);
  const shared = await readSharedDashboard(c.var.db, accessToken);
  // Found through the index, then compared in constant time: the index alone is not the check.
  const found = shared && constantTimeEqual(shared.accessToken, accessToken) ? toSharedDashboard(shared) : undefined;
  const nonce = c.get("secureHeadersNonce") ?? "";
  if (!found) {
    // Guessing tokens counts against the address's limit of refusals, as guessing keys does.
    const refused = await refusal(c, notFound);
    if (asJson || refused.status === 429) throw refused;
    return c.html(sharedNotFoundPage(nonce), 404);
  }
  return asJson ? c.json(found, 200) : c.html(sharedDashboardPage(found, nonce), 200);
}

export const sharedRouter = createRouter();
sharedRouter.get("/shared/:access_token", publicPageHeaders, serveSharedDashboard);
sharedRouter.openAPIRegistry.registerPath({
  method: "get",
  path: "/shared/{access_token}",
  operationId: "shared_retrieve",
  tags: ["sharing"],
  summary: "The public view of a shared dashboard: an HTML page, or its data as JSON with a `.json` suffix",
  security: [],
  request: {
    params: z.object({
      access_token: z.string().openapi({ description: "The token, optionally followed by `.json`." }),
    }),
  },
  responses: {
    200: {
      description: "The page (text/html), or with `.json` the dashboard's data, without any user or e-mail",
      content: { "text/html": { schema: z.string() }, ...jsonResponse(SharedDashboard, "").content },
    },
    404: { description: "Disabled, unknown, refreshed-away or deleted, or public sharing is off for the organization" },
  },
});
