import { createRoute, type RouteConfig, type z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { authenticate } from "./auth/authenticate";
import { REPLACED_VALUE_REFUSED } from "./auth/key-policy";
import { requireKeyReach, routeReach } from "./auth/key-scoping";
import { assertScope, type Scope } from "./auth/scopes";
import type { AppEnv } from "./env";
import { ErrorBody, permissionDenied } from "./errors";
import { idempotentRetries } from "./idempotency";
import { readJsonBody } from "./request-body";
import { requireContext, type ContextKind, type RouteReads } from "./route-context";
import { privateToCaller } from "./response-headers";

/** An error answer in the shared error body, for a route's `responses`. */
export const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorBody } },
});

/** What any route can answer, with or without a key. */
export const anyRouteErrors = {
  413: errorResponse("The body is larger than 1 MiB."),
  415: errorResponse("A body whose Content-Type is not JSON."),
  500: errorResponse("An unexpected error; the body never carries a stack trace."),
} as const;

/** The failures every authenticated route can answer, declared once. */
export const errorResponses = {
  400: errorResponse("Invalid input: the first error, naming the field in `attr`."),
  401: errorResponse("No key, or a bad or revoked key."),
  403: errorResponse("Missing scope, key out of scope, or insufficient access level."),
  404: errorResponse("Unknown id, or one the caller may not see."),
  429: {
    ...errorResponse("Too many requests with this key; retry after `Retry-After` seconds."),
    headers: {
      "Retry-After": { description: "Seconds until the window frees.", schema: { type: "integer" as const } },
    },
  },
  ...anyRouteErrors,
} as const;

/** Routes without a key: the address is past its limit of refused secrets (tokens, passwords, codes). */
export const addressThrottled = {
  ...errorResponse("Too many refused attempts from this address; retry after `Retry-After` seconds."),
  headers: errorResponses[429].headers,
};

const VERB_BY_METHOD: Record<string, string> = {
  post: "create",
  put: "update",
  patch: "partial_update",
  delete: "destroy",
};

const isPathParameter = (segment: string) => segment.startsWith("{") || segment.startsWith("@");

/**
 * PostHog's operation ids (DRF's): the path's literal segments after `/api`, then the verb.
 * `GET /api/organizations/{organization_id}/members` is `organizations_members_list`,
 * `POST .../invites/bulk` is `organizations_invites_bulk_create`; a GET ending in an id (or
 * `@me`, `@current`) retrieves, any other GET lists.
 */
function operationIdFor(method: string, path: string): string {
  const segments = path.split("/").filter(Boolean);
  if (segments[0] === "api") segments.shift();
  const names = segments.filter((segment) => !isPathParameter(segment));
  const verb =
    method === "get" ? (isPathParameter(segments.at(-1) ?? "") ? "retrieve" : "list") : VERB_BY_METHOD[method];
  return [...names, verb].join("_");
}

const requireScopes = (scopes: readonly Scope[]) =>
  createMiddleware<AppEnv>(async (c, next) => {
    for (const scope of scopes) assertScope(c.var.actor, scope);
    // The organization's key policy is checked against them once the organization is known (route-context/).
    c.set("actor", { ...c.var.actor, requestScopes: scopes });
    await next();
  });

/** A route's scopes as a list: none, one, or all of several. */
const scopesOf = (scope: ApiRouteConfig["scope"]): readonly Scope[] =>
  scope === null ? [] : typeof scope === "string" ? [scope] : scope;

/** Why a service key is refused: it acts as an organization, and this route is a person's (docs/keys.md). */
export const SERVICE_KEY_REFUSED =
  "Service keys act as an organization, not as a person: this route needs a personal API key.";

/** Routes admit service keys only by declaring it: a new route is a person's until it is reviewed for them. */
const admitServiceKeys = (admitted: boolean) =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (c.var.actor.kind === "service" && !admitted) throw permissionDenied(SERVICE_KEY_REFUSED);
    await next();
  });

const LEVEL_NAMES: Record<number, string> = { 8: "an admin or owner", 15: "an owner" };

/** What the operation's description says it needs, before the route's own description. */
function requirementsOf(scopes: readonly Scope[], level: number | undefined): string {
  const named = scopes.map((scope) => `\`${scope}\``).join(" and ");
  const key =
    scopes.length === 0 ? "Any valid key may call it." : `Requires the scope${scopes.length > 1 ? "s" : ""} ${named}.`;
  return level === undefined
    ? key
    : `${key} The caller must be ${LEVEL_NAMES[level] ?? `at level ${level}`} of the organization.`;
}

/** What a route acts on (`route-context/`): none, or the organization or project of its path. */
type ContextConfig =
  | { context?: undefined; level?: undefined; reads?: undefined }
  | {
      context: ContextKind;
      /** The organization level the caller needs (`MembershipLevel`; a project's may be raised by its rule). */
      level?: number;
      /** A write's reads of what its path or body names, in the round trip that resolves the context. */
      reads?: RouteReads<unknown>;
    };

/**
 * A route that makes, changes, rolls, revokes or blocks a key refuses a value a roll replaced:
 * whoever held a leaked one could otherwise roll the key again and keep the only value that works,
 * or cut other keys off (the organization's key policy refuses it too: `keyPolicyChangeJudgedOnRead`).
 */
const refuseReplacedValue = createMiddleware<AppEnv>(async (c, next) => {
  if (c.var.actor.replacedValue) throw permissionDenied(REPLACED_VALUE_REFUSED);
  await next();
});

type ApiRouteConfig = Omit<RouteConfig, "middleware" | "security"> &
  ContextConfig & {
    /**
     * The personal API key scope the route requires, or scopes it requires all of (a webhook's
     * subscription reads the activity log too); `null` lets every valid key call it.
     */
    scope: Scope | readonly [Scope, ...Scope[]] | null;
    /**
     * Whether an organization's service key may call it (as that organization, at admin level).
     * Routes that act on people, ownership or keys never do (docs/keys.md, "Service keys").
     */
    serviceKeys?: boolean;
    /** Whether it makes, changes, rolls, revokes or blocks a key: a value a roll replaced may not call it. */
    managesKeys?: boolean;
    /** Further checks, run in order after authentication, scope, key scoping and the context. */
    middleware?: MiddlewareHandler<AppEnv>[];
  };

/**
 * An authenticated route. Its scope, the key scoping that its path implies and the level it
 * needs are declared here, enforced here and published in the OpenAPI document
 * (`x-minimum-level`), so that no handler checks them by hand.
 */
export function apiRoute<const R extends ApiRouteConfig>(config: R) {
  const { scope, middleware = [], context, level, reads, serviceKeys = false, managesKeys = false, ...route } = config;
  const contextCheck = context === undefined ? [] : [requireContext(context, level, route.method !== "get", reads)];
  const scopes = scopesOf(scope);
  return createRoute({
    ...route,
    ...(level === undefined ? {} : { "x-minimum-level": level }),
    ...(serviceKeys ? { "x-service-keys": true } : {}),
    ...(managesKeys ? { "x-manages-keys": true } : {}),
    operationId: route.operationId ?? operationIdFor(route.method, route.path),
    description: [requirementsOf(scopes, level), route.description].filter(Boolean).join("\n\n"),
    security: [{ PersonalAPIKey: [...scopes] }],
    // Authentication, scope and access come before the body is read, as in DRF.
    middleware: [
      privateToCaller,
      authenticate,
      requireScopes(scopes),
      requireKeyReach(routeReach(route.method, route.path)),
      admitServiceKeys(serviceKeys),
      ...(managesKeys ? [refuseReplacedValue] : []),
      ...contextCheck,
      ...middleware,
      ...readJsonBody,
      ...(route.method === "post" ? [idempotentRetries] : []),
    ] as const,
    responses: {
      ...errorResponses,
      ...(writesOnProject(route.method, route.path, context) ? { 409: projectMovedResponse } : {}),
      ...route.responses,
    },
  });
}

/**
 * A write on a project, or on what is in it: its project may move to another organization between
 * its read and its write (`change_organization`), which refuses it with 409 (src/platform/errors.ts).
 */
const writesOnProject = (method: string, path: string, context: ContextKind | undefined) =>
  method !== "get" &&
  (context === "project" ||
    /^\/api\/(environments\/\{|projects\/\{|organizations\/\{organization_id\}\/projects\/\{)/.test(path));

const projectMovedResponse = errorResponse(
  "Changed by another request meanwhile (the project moved to another organization); try again.",
);

/** A route without a key says what it does in its description, as a route with one says its scope. */
type PublicRouteConfig = Omit<RouteConfig, "middleware" | "security"> & {
  description: string;
  middleware?: MiddlewareHandler<AppEnv>[];
};

/** A route that needs no key (signing up, public shares). */
export function publicRoute<const R extends PublicRouteConfig>(config: R) {
  const { middleware = [], ...route } = config;
  return createRoute({
    ...route,
    operationId: route.operationId ?? operationIdFor(route.method, route.path),
    security: [],
    middleware: [...middleware, ...readJsonBody] as const,
    responses: { ...anyRouteErrors, ...route.responses },
  });
}

export const jsonResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

/** A required JSON body: the schema always runs, so its defaults always apply. */
export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { "application/json": { schema } },
});

export const conflictResponse = errorResponse("Conflicts with an existing resource.");

/** A write held on what it read: another request changed it meanwhile (`changedMeanwhile`); try again. */
export const changedMeanwhileResponse = errorResponse("Changed by another request meanwhile; try again.");
