import { createRoute, type RouteConfig, type z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { authenticate } from "./auth/authenticate";
import { requireKeyReach, routeReach } from "./auth/key-scoping";
import { assertScope, type Scope } from "./auth/scopes";
import type { AppEnv } from "./env";
import { ErrorBody, insufficientLevel } from "./errors";
import { readJsonBody } from "./request-body";

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorBody } },
});

/** The failures every authenticated route can answer, declared once. */
export const errorResponses = {
  400: errorResponse("Invalid input: the first error, naming the field in `attr`."),
  401: errorResponse("No key, or a bad or revoked key."),
  403: errorResponse("Missing scope, key out of scope, or insufficient access level."),
  404: errorResponse("Unknown id, or one the caller may not see."),
} as const;

const requireScope = (scope: Scope | null) =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (scope !== null) assertScope(c.var.actor, scope);
    await next();
  });

/**
 * The caller's level in the organization the route's resolver found: the organization in the
 * path, or the project's organization.
 */
const requireLevel = (minimum: number) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const level = c.get("organization")?.level ?? c.get("project")?.level;
    if (level === undefined) throw new Error("a route with a level needs resolveOrganization or resolveProject");
    if (level < minimum) throw insufficientLevel();
    await next();
  });

type ApiRouteConfig = Omit<RouteConfig, "middleware" | "security"> & {
  /** The personal API key scope the route requires; `null` lets every valid key call it. */
  scope: Scope | null;
  /** Resolvers and further checks, run in order after authentication, scope and key scoping. */
  middleware?: MiddlewareHandler<AppEnv>[];
  /** The organization level the caller needs (`MembershipLevel`), checked after `middleware`. */
  level?: number;
};

/**
 * An authenticated route. Its scope, the key scoping that its path implies and the level it
 * needs are declared here, enforced here and published in the OpenAPI document
 * (`x-minimum-level`), so that no handler checks them by hand.
 */
export function apiRoute<const R extends ApiRouteConfig>(config: R) {
  const { scope, middleware = [], level, ...route } = config;
  const levelCheck = level === undefined ? [] : [requireLevel(level)];
  return createRoute({
    ...route,
    ...(level === undefined ? {} : { "x-minimum-level": level }),
    security: [{ PersonalAPIKey: scope === null ? [] : [scope] }],
    // Authentication, scope and access come before the body is read, as in DRF.
    middleware: [
      authenticate,
      requireScope(scope),
      requireKeyReach(routeReach(route.method, route.path)),
      ...middleware,
      ...levelCheck,
      ...readJsonBody,
    ] as const,
    responses: { ...errorResponses, ...route.responses },
  });
}

type PublicRouteConfig = Omit<RouteConfig, "middleware" | "security"> & { middleware?: MiddlewareHandler<AppEnv>[] };

/** A route that needs no key (signing up, public shares). */
export function publicRoute<const R extends PublicRouteConfig>(config: R) {
  const { middleware = [], ...route } = config;
  return createRoute({ ...route, security: [], middleware: [...middleware, ...readJsonBody] as const });
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
