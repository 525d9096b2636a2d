import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { every } from "hono/combine";
import { createMiddleware } from "hono/factory";
import { NONCE, secureHeaders } from "hono/secure-headers";
import { sharePasswordMatches } from "../environments/dashboards/sharing/share-password-hash";
import type { AppEnv } from "../platform/env";
import { assertAddressMayLookUp, refusal } from "../platform/auth/refused-keys";
import { ApiError, notAuthenticated, notFound } from "../platform/errors";
import { constantTimeEqual, nowIso } from "../platform/ids";
import { readJsonBody } from "../platform/request-body";
import { jsonResponse } from "../platform/route";
import { createRouter } from "../platform/router";
import { SharedDashboard, toSharedDashboard } from "./shared-dashboard";
import { sharedClosedPage, sharedDashboardPage, sharedNotFoundPage, sharedPasswordPage } from "./shared-page";
import { readSharedDashboard, recordSharedView, type SharedDashboardRow } from "./shared.queries";
import { isShareSessionValid, newShareSession, SHARE_SESSION_COOKIE, SHARE_SESSION_SECONDS } from "./share-session";

const JSON_SUFFIX = ".json";

/**
 * A public page must not run anything it did not bring, nor tell other sites where it was read:
 * no script at all, styles only under this response's nonce, forms only to itself (the password
 * form), no referrer, never cached shared.
 */
const publicPageHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    styleSrc: [NONCE],
    imgSrc: ["data:"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
  referrerPolicy: "no-referrer",
  xContentTypeOptions: "nosniff",
});

const incorrectPassword = () => new ApiError(401, "incorrect_password", "Incorrect password.");
const nowSeconds = () => Math.floor(Date.now() / 1000);

const isJsonRequest = (c: Context<AppEnv>) => (c.req.header("Content-Type") ?? "").includes("application/json");

/** The link the path names, or the answer for a link that does not open: unknown, paused or expired. */
async function openLink(c: Context<AppEnv>) {
  c.header("Cache-Control", "private, max-age=0");
  const requested = c.req.param("access_token") ?? "";
  const jsonPath = requested.endsWith(JSON_SUFFIX);
  const accessToken = jsonPath ? requested.slice(0, -JSON_SUFFIX.length) : requested;
  // The `.json` form, or a JSON unlock: an API client is answered in JSON, a browser with a page.
  const asJson = jsonPath || (c.req.method === "POST" && isJsonRequest(c));
  assertAddressMayLookUp(c);
  const shared = await readSharedDashboard(c.var.db, accessToken);
  const nonce = c.get("secureHeadersNonce") ?? "";
  // Found through the index, then compared in constant time: the index alone is not the check.
  if (!shared || !constantTimeEqual(shared.sharing.accessToken, accessToken)) {
    // Guessing tokens counts against the address's limit of refusals, as guessing keys does.
    const refused = await refusal(c, notFound);
    if (asJson || refused.status === 429) throw refused;
    return { closed: c.html(sharedNotFoundPage(nonce), 404) };
  }
  // Expiry is exact to the second (ISO timestamps compare as text).
  const state = !shared.sharing.enabled
    ? "paused"
    : shared.sharing.expiresAt !== null && shared.sharing.expiresAt <= nowIso()
      ? "expired"
      : "open";
  if (state !== "open") {
    if (asJson) throw notFound();
    return { closed: c.html(sharedClosedPage(state, nonce), state === "expired" ? 410 : 404) };
  }
  return { shared, asJson, accessToken, nonce };
}

/** Whether the visitor may see a password-protected link: a session cookie, or its value as a bearer token. */
async function unlocked(c: Context<AppEnv>, shared: SharedDashboardRow, accessToken: string) {
  if (!shared.sharing.passwordRequired) return true;
  const bearer = c.req.header("Authorization")?.match(/^Bearer (\S+)$/)?.[1];
  const cookie = c.req.header("Cookie")?.match(new RegExp(`(?:^|;\\s*)${SHARE_SESSION_COOKIE}=([^;]+)`))?.[1];
  const session = cookie ?? bearer;
  return session !== undefined && isShareSessionValid(session, accessToken, shared.passwords, nowSeconds());
}

/** `GET /shared/:access_token` (a page) and `GET /shared/:access_token.json` (its data): no key. */
async function serveSharedDashboard(c: Context<AppEnv>) {
  const link = await openLink(c);
  if ("closed" in link) return link.closed;
  const { shared, asJson, accessToken, nonce } = link;
  if (!(await unlocked(c, shared, accessToken))) {
    if (asJson) throw notAuthenticated();
    return c.html(sharedPasswordPage(nonce, false), 200);
  }
  c.executionCtx.waitUntil(recordSharedView(c.var.db, shared.dashboard.id, nowIso()));
  const found = toSharedDashboard(shared);
  return asJson ? c.json(found, 200) : c.html(sharedDashboardPage(found, nonce), 200);
}

/** A JSON unlock's body passes the checks every route's body does (size, UTF-8, depth): 400 else. */
const checkedJsonBody = createMiddleware<AppEnv>(async (c, next) =>
  isJsonRequest(c) ? every(...readJsonBody)(c, next) : next(),
);

/** The password a visitor posted: the page's form, or PostHog's JSON `{"password": ...}`. */
async function postedPassword(c: Context<AppEnv>) {
  const isJson = isJsonRequest(c);
  const body: unknown = isJson ? await c.req.json().catch(() => ({})) : await c.req.parseBody();
  const password = typeof body === "object" && body !== null && "password" in body ? body.password : undefined;
  return { isJson, password: typeof password === "string" ? password : "" };
}

/**
 * `POST /shared/:access_token`: a password for a protected link. Right, a session for a day (an
 * HttpOnly cookie scoped to the link, and as `shareToken` to a JSON caller); wrong, 401, counted
 * against the address's refusals as a guessed token is.
 */
async function unlockSharedDashboard(c: Context<AppEnv>) {
  const link = await openLink(c);
  if ("closed" in link) return link.closed;
  const { shared, accessToken, nonce } = link;
  const pagePath = `/shared/${accessToken}`;
  if (!shared.sharing.passwordRequired) return c.redirect(pagePath, 303);
  const { isJson, password } = await postedPassword(c);
  let matched: SharedDashboardRow["passwords"][number] | undefined;
  for (const stored of shared.passwords) {
    if (!matched && password !== "" && (await sharePasswordMatches(password, stored.passwordHash))) matched = stored;
  }
  if (!matched) {
    const refused = await refusal(c, incorrectPassword);
    if (isJson || refused.status === 429) throw refused;
    return c.html(sharedPasswordPage(nonce, true), 401);
  }
  const session = await newShareSession(accessToken, matched, nowSeconds());
  c.header(
    "Set-Cookie",
    `${SHARE_SESSION_COOKIE}=${session}; Max-Age=${SHARE_SESSION_SECONDS}; Path=${pagePath}; ` +
      "HttpOnly; Secure; SameSite=Lax",
  );
  return isJson ? c.json({ shareToken: session }, 200) : c.redirect(pagePath, 303);
}

export const sharedRouter = createRouter();
sharedRouter.get("/shared/:access_token", publicPageHeaders, serveSharedDashboard);
sharedRouter.post("/shared/:access_token", publicPageHeaders, checkedJsonBody, unlockSharedDashboard);
const SharedParams = z.object({
  access_token: z.string().openapi({ description: "The token, optionally followed by `.json`." }),
});
sharedRouter.openAPIRegistry.registerPath({
  method: "get",
  path: "/shared/{access_token}",
  operationId: "shared_retrieve",
  tags: ["sharing"],
  summary: "The public view of a shared dashboard: an HTML page, or its data as JSON with a `.json` suffix",
  description: "No key: the token is the access. A password-protected link first needs `POST` with the password.",
  security: [],
  request: { params: SharedParams },
  responses: {
    200: {
      description: "The page (text/html), or with `.json` the dashboard's data, without any user or e-mail",
      content: { "text/html": { schema: z.string() }, ...jsonResponse(SharedDashboard, "").content },
    },
    401: { description: "JSON: password-protected, without a session (cookie or bearer `shareToken`)" },
    404: { description: "Unknown, refreshed, deleted, sharing off, or paused (JSON: also expired)" },
    410: { description: "Expired (the page)" },
  },
});
sharedRouter.openAPIRegistry.registerPath({
  method: "post",
  path: "/shared/{access_token}",
  operationId: "shared_unlock",
  tags: ["sharing"],
  summary: "Unlock a password-protected link (form or JSON `password`)",
  description: "No key: a correct password opens a session for this link (a cookie, or a bearer `shareToken`).",
  security: [],
  request: {
    params: SharedParams,
    body: { content: { "application/json": { schema: z.object({ password: z.string() }) } } },
  },
  responses: {
    200: { description: "JSON: `{shareToken}`, also set as a cookie" },
    303: { description: "The form: the cookie is set" },
    401: { description: "Incorrect password" },
    404: { description: "As GET" },
  },
});
