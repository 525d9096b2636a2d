import { afterResponse } from "../platform/background";
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { every } from "hono/combine";
import { createMiddleware } from "hono/factory";
import { NONCE, secureHeaders } from "hono/secure-headers";
import { sharePasswordMatches } from "../environments/dashboards/sharing/share-password-hash";
import { primaryOfRequest } from "../platform/request-context";
import type { AppEnv } from "../platform/env";
import { assertAddressMayLookUp, countAsRefusal, refusal } from "../platform/auth/refused-keys";
import { ApiError, notAuthenticated, notFound, parseError, validationError } from "../platform/errors";
import { constantTimeEqual, nowIso, sha256Hex } from "../platform/ids";
import { emailAddress } from "../platform/input-limits";
import { limitBodySize, readJsonBody } from "../platform/request-body";
import { addressThrottled, anyRouteErrors, errorResponse, jsonResponse } from "../platform/route";
import { createRouter } from "../platform/router";
import { SharedDashboard, toSharedDashboard } from "./shared-dashboard";
import {
  sharedClosedPage,
  sharedDashboardPage,
  sharedEmailPage,
  sharedLinkSentPage,
  sharedNotFoundPage,
  sharedOpenLinkPage,
  sharedPasswordPage,
} from "./shared-page";
import {
  readSharedDashboard,
  readSharedTiles,
  type OpenedWith,
  recordSharedView,
  useViewerLink,
  type SharedDashboardRow,
} from "./shared.queries";
import {
  newShareSession,
  passwordCredential,
  SHARE_SESSION_COOKIE,
  SHARE_SESSION_SECONDS,
  shareSessionCredential,
  viewerCredential,
  type SessionCredential,
} from "./share-session";
import { issueViewerLinkAfterResponse, VIEWER_CODE_PARAMETER, VIEWER_LINK_MINUTES } from "./viewer-links";
import { countsAsView } from "./view-count";

const JSON_SUFFIX = ".json";

/**
 * A public page must not run anything it did not bring, nor tell other sites where it was read:
 * no script at all, styles only under this response's nonce, forms only to itself (the password and
 * e-mail forms), no referrer, never cached shared.
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
const invalidViewerLink = () =>
  new ApiError(401, "invalid_link", "This link has expired or was already used. Ask for a new one.");
const nowSeconds = () => Math.floor(Date.now() / 1000);

const isJsonRequest = (c: Context<AppEnv>) => (c.req.header("Content-Type") ?? "").includes("application/json");

/** The link the path names, or the answer for a link that does not open: unknown, paused or expired. */
async function openLink(c: Context<AppEnv>) {
  // A shared dashboard may be confidential (a password, an allow-list) and an unlock carries a session: never kept.
  c.header("Cache-Control", "no-store");
  const requested = c.req.param("access_token") ?? "";
  const jsonPath = requested.endsWith(JSON_SUFFIX);
  const accessToken = jsonPath ? requested.slice(0, -JSON_SUFFIX.length) : requested;
  // The `.json` form, or a JSON unlock: an API client is answered in JSON, a browser with a page.
  const asJson = jsonPath || (c.req.method === "POST" && isJsonRequest(c));
  assertAddressMayLookUp(c);
  // From the primary, never a read replica: one behind it would still open a link just refreshed,
  // paused or locked, which the owner expects to end at once (as a key read for a revocation).
  const primary = primaryOfRequest(c);
  const shared = await readSharedDashboard(primary, accessToken);
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
  return { shared, asJson, accessToken, nonce, primary };
}

/** A session's credential; a verified viewer's names the address it proved. */
type Credential = SessionCredential & { email?: string };

/**
 * The credentials a session on this link may have been opened with: its passwords, or its
 * allow-listed addresses; undefined for a link open to anyone who has it.
 */
function sessionCredentials({ sharing, passwords }: SharedDashboardRow): Credential[] | undefined {
  if (sharing.passwordRequired) return passwords.map(passwordCredential);
  if (sharing.allowedEmails === null) return undefined;
  const secret = sharing.viewerSessionSecret;
  return secret === null ? [] : sharing.allowedEmails.map((email) => viewerCredential(email, secret));
}

/** Sessions one request may present (a bearer token, then cookies of the name), tried at most. */
const SESSIONS_TRIED = 4;
const SESSION_COOKIES = new RegExp(`(?:^|;\\s*)${SHARE_SESSION_COOKIE}=([^;]+)`, "g");

/**
 * The sessions a request presents: the bearer token, which no cookie can displace, then every
 * cookie of the name in the order sent, up to the limit. All are tried: a stale cookie (of a
 * password since deleted), or one a sibling subdomain planted, does not shadow the visitor's own.
 */
function presentedSessions(c: Context<AppEnv>): string[] {
  const bearer = c.req.header("Authorization")?.match(/^Bearer (\S+)$/)?.[1];
  const cookies = [...(c.req.header("Cookie") ?? "").matchAll(SESSION_COOKIES)].map((match) => match[1]!);
  return [...(bearer === undefined ? [] : [bearer]), ...cookies].slice(0, SESSIONS_TRIED);
}

/**
 * Who may see the link: anyone (`viewer` null), a visitor one of whose sessions (a cookie, or its
 * value as a bearer token) is signed with one of the link's credentials (`viewer`: the address a
 * verified viewer proved), or, undefined, nobody yet.
 */
async function visitorOf(c: Context<AppEnv>, shared: SharedDashboardRow, accessToken: string) {
  const credentials = sessionCredentials(shared);
  if (credentials === undefined) return { viewer: null };
  for (const session of presentedSessions(c)) {
    const credential = await shareSessionCredential(session, accessToken, credentials, nowSeconds());
    if (credential) return { viewer: credential.email ?? null, credential };
  }
  return undefined;
}

/** What the visitor's session was checked against, for the locked link's second read to hold. */
const openedWith = ({ sharing }: SharedDashboardRow, credential: Credential): OpenedWith => ({
  accessToken: sharing.accessToken,
  ...(sharing.passwordRequired ? { passwordId: credential.id } : { email: credential.email }),
  viewerSecret: sharing.viewerSessionSecret,
});

const pagePathOf = (accessToken: string) => `/shared/${accessToken}`;

/** What a visitor without a session sees instead of the dashboard. */
function lockedPage(c: Context<AppEnv>, shared: SharedDashboardRow, accessToken: string, nonce: string) {
  if (shared.sharing.passwordRequired) return sharedPasswordPage(nonce, false);
  const code = c.req.query(VIEWER_CODE_PARAMETER);
  return code ? sharedOpenLinkPage(nonce, pagePathOf(accessToken), code) : sharedEmailPage(nonce, "none");
}

/** `GET /shared/:access_token` (a page) and `GET /shared/:access_token.json` (its data): no key. */
async function serveSharedDashboard(c: Context<AppEnv>) {
  const link = await openLink(c);
  if ("closed" in link) return link.closed;
  const { shared, asJson, accessToken, nonce, primary } = link;
  const visitor = await visitorOf(c, shared, accessToken);
  if (!visitor) {
    if (asJson) throw notAuthenticated();
    return c.html(lockedPage(c, shared, accessToken, nonce), 200);
  }
  // A locked link's tiles were left out of the link's read: its visitor has a session now.
  const tiles =
    visitor.credential === undefined
      ? shared.tiles
      : await readSharedTiles(primary, openedWith(shared, visitor.credential), nowIso());
  // The link stopped opening with the visitor's credential since it was read: as a refreshed link's old token does.
  if (!tiles) {
    if (asJson) throw notFound();
    return c.html(sharedNotFoundPage(nonce), 404);
  }
  // A view is a dashboard served; a HEAD (a link checker, a preview's probe) shows no one the dashboard.
  if (c.req.method === "GET" && countsAsView(c.req.header("CF-Connecting-IP"), shared.dashboard.id, visitor.viewer)) {
    afterResponse(c, "record share view", recordSharedView(c.var.db, shared.dashboard.id, nowIso(), visitor.viewer), {
      dashboard_id: shared.dashboard.id,
    });
  }
  const found = toSharedDashboard({ ...shared, tiles });
  return asJson ? c.json(found, 200) : c.html(sharedDashboardPage(found, nonce), 200);
}

/**
 * A JSON unlock's body passes the checks every route's body does (size, UTF-8, depth); a form's,
 * the same size limit (413).
 */
const checkedBody = createMiddleware<AppEnv>(async (c, next) =>
  every(...(isJsonRequest(c) ? readJsonBody : limitBodySize))(c, next),
);

/** A form hono cannot read (a multipart body without its boundary, or cut short) is the visitor's error. */
const unreadableForm = () => parseError("Form parse error - The body is not a well-formed form.");

/** What a visitor posted: the page's form, or PostHog's JSON; `field` reads a string field. */
async function postedFields(c: Context<AppEnv>) {
  const isJson = isJsonRequest(c);
  const body: unknown = isJson
    ? await c.req.json().catch(() => ({}))
    : await c.req.parseBody().catch((error: unknown) => {
        // The size limit's own answer (413) stands.
        if (error instanceof ApiError) throw error;
        throw unreadableForm();
      });
  const field = (name: string) => {
    const value = typeof body === "object" && body !== null ? (body as Record<string, unknown>)[name] : undefined;
    return typeof value === "string" ? value : undefined;
  };
  return { isJson, field };
}

type OpenedLink = Exclude<Awaited<ReturnType<typeof openLink>>, { closed: unknown }>;
type Posted = Awaited<ReturnType<typeof postedFields>>;

/**
 * A session for a day: an HttpOnly cookie scoped to the link, and as `shareToken` to a JSON
 * caller, who sends it back as a bearer token.
 */
async function openSession(c: Context<AppEnv>, accessToken: string, credential: SessionCredential, isJson: boolean) {
  const session = await newShareSession(accessToken, credential, nowSeconds());
  const pagePath = pagePathOf(accessToken);
  c.header(
    "Set-Cookie",
    `${SHARE_SESSION_COOKIE}=${session}; Max-Age=${SHARE_SESSION_SECONDS}; Path=${pagePath}; ` +
      "HttpOnly; Secure; SameSite=Lax",
  );
  return isJson ? c.json({ shareToken: session }, 200) : c.redirect(pagePath, 303);
}

/** A password for a protected link. Wrong: 401, counted against the address's refusals as a guessed token is. */
async function unlockWithPassword(c: Context<AppEnv>, { shared, accessToken, nonce }: OpenedLink, posted: Posted) {
  // Every attempt counts, right or wrong, before any password is tried: an address past its
  // limit (counted per location, across isolates) has no guess checked, the right one included.
  await countAsRefusal(c);
  const password = posted.field("password") ?? "";
  let matched: SharedDashboardRow["passwords"][number] | undefined;
  for (const stored of shared.passwords) {
    if (!matched && password !== "" && (await sharePasswordMatches(password, stored.passwordHash))) matched = stored;
  }
  if (!matched) {
    if (posted.isJson) throw incorrectPassword();
    return c.html(sharedPasswordPage(nonce, true), 401);
  }
  return openSession(c, accessToken, passwordCredential(matched), posted.isJson);
}

/**
 * An address for an allow-listed link: the same answer whether or not it is on the list, the
 * one-time link written and queued after the response. Every request counts against the
 * address's refusals, so that nobody sends e-mail without bound.
 */
async function requestViewerLink(c: Context<AppEnv>, link: OpenedLink, posted: Posted) {
  const { shared, accessToken, nonce } = link;
  const email = emailAddress().safeParse(posted.field("email") ?? "");
  if (!email.success) {
    if (posted.isJson) throw validationError("invalid_input", "Enter a valid e-mail address.", "email");
    return c.html(sharedEmailPage(nonce, "invalid_email"), 400);
  }
  await countAsRefusal(c);
  if (shared.sharing.allowedEmails?.includes(email.data))
    issueViewerLinkAfterResponse(c, shared, accessToken, email.data);
  return posted.isJson
    ? c.json({ detail: "If this address may view the dashboard, a link to it is on its way." }, 202)
    : c.html(sharedLinkSentPage(nonce, VIEWER_LINK_MINUTES), 200);
}

/**
 * A one-time link's code: used up by one conditional write, it opens a session for its address
 * while the address is still on the list. Unknown, used, expired: 401, counted as a refusal.
 */
async function unlockWithCode(c: Context<AppEnv>, { shared, accessToken, nonce }: OpenedLink, posted: Posted) {
  const code = posted.field(VIEWER_CODE_PARAMETER) ?? "";
  const [used] = code === "" ? [] : await useViewerLink(c.var.db, shared.dashboard.id, await sha256Hex(code), nowIso());
  const { allowedEmails, viewerSessionSecret } = shared.sharing;
  if (!used || viewerSessionSecret === null || !allowedEmails?.includes(used.email)) {
    const refused = await refusal(c, invalidViewerLink);
    if (posted.isJson || refused.status === 429) throw refused;
    return c.html(sharedEmailPage(nonce, "link_not_valid"), 401);
  }
  return openSession(c, accessToken, viewerCredential(used.email, viewerSessionSecret), posted.isJson);
}

/**
 * `POST /shared/:access_token`: a password for a protected link; an address, or a one-time link's
 * code, for an allow-listed one. A link open to all sends the visitor back to its page.
 */
async function unlockSharedDashboard(c: Context<AppEnv>) {
  const link = await openLink(c);
  if ("closed" in link) return link.closed;
  const posted = await postedFields(c);
  if (link.shared.sharing.passwordRequired) return unlockWithPassword(c, link, posted);
  if (link.shared.sharing.allowedEmails === null) return c.redirect(pagePathOf(link.accessToken), 303);
  return posted.field(VIEWER_CODE_PARAMETER) === undefined
    ? requestViewerLink(c, link, posted)
    : unlockWithCode(c, link, posted);
}

export const sharedRouter = createRouter();
sharedRouter.get("/shared/:access_token", publicPageHeaders, serveSharedDashboard);
sharedRouter.post("/shared/:access_token", publicPageHeaders, checkedBody, unlockSharedDashboard);
const page = { "text/html": { schema: z.string() } };
/** A page to a browser, the error body to a JSON client. */
const pageOrError = (description: string) => ({
  description,
  content: { ...page, ...errorResponse(description).content },
});
const ShareSession = z
  .object({ shareToken: z.string().openapi({ description: "The session, as a bearer token or cookie." }) })
  .openapi("ShareSession");
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
      content: { ...page, ...jsonResponse(SharedDashboard, "").content },
    },
    401: errorResponse(
      "JSON: password-protected or allow-listed, without a session (cookie or bearer `shareToken`). The page " +
        "answers 200 with its password or e-mail form; with `?code=` (a one-time link), a button that posts it",
    ),
    404: pageOrError("Unknown, refreshed, deleted, sharing off, or paused (JSON: also expired)"),
    410: { description: "Expired (the page)", content: page },
    429: addressThrottled,
    ...anyRouteErrors,
  },
});
sharedRouter.openAPIRegistry.registerPath({
  method: "post",
  path: "/shared/{access_token}",
  operationId: "shared_unlock",
  tags: ["sharing"],
  summary:
    "Unlock a link: a password (protected link), or an e-mail address then a one-time link's code (allow-listed)",
  description: "No key: a correct password or code opens a session for this link (a cookie, or a bearer `shareToken`).",
  security: [],
  request: {
    params: SharedParams,
    body: {
      content: {
        "application/json": {
          schema: z.object({
            password: z.string().optional().openapi({ description: "A password-protected link's password." }),
            email: z.string().optional().openapi({
              format: "email",
              description: "An allow-listed link: the address to send a one-time link to.",
            }),
            code: z.string().optional().openapi({ description: "An allow-listed link: the one-time link's `code`." }),
          }),
        },
      },
    },
  },
  responses: {
    200: {
      description: "JSON: `{shareToken}`, also set as a cookie (the form: the e-mail was taken)",
      content: { ...page, ...jsonResponse(ShareSession, "").content },
    },
    202: jsonResponse(
      z.object({ detail: z.string() }).openapi("LinkRequested"),
      "JSON `email`: the same answer whether or not the address is on the list",
    ),
    303: { description: "The form: the cookie is set" },
    400: pageOrError("`email` is not an e-mail address, or the body is not a well-formed form or JSON"),
    401: pageOrError("Incorrect password; or a one-time link unknown, used or expired"),
    404: pageOrError("As GET"),
    429: addressThrottled,
    ...anyRouteErrors,
  },
});
