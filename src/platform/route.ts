import { createRoute, type RouteConfig, type z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { authenticate } from "./auth/authenticate";
import { assertScope, type Scope } from "./auth/scopes";
import type { AppEnv } from "./env";
import { ErrorBody } from "./errors";
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

const requireScope = (scope: Scope) =>
  createMiddleware<AppEnv>(async (c, next) => {
    assertScope(c.var.actor, scope);
    await next();
  });

type ApiRouteConfig = Omit<RouteConfig, "middleware" | "security"> & {
  /** The personal API key scope the route requires; authentication comes with it. */
  scope: Scope;
  /** Further checks, run in order after authentication and the scope check. */
  middleware?: MiddlewareHandler<AppEnv>[];
};

/**
 * An authenticated route: the scope is declared here, enforced here and published in the
 * OpenAPI document, so that no handler checks it by hand.
 */
export function apiRoute<const R extends ApiRouteConfig>(config: R) {
  const { scope, middleware = [], ...route } = config;
  return createRoute({
    ...route,
    security: [{ PersonalAPIKey: [scope] }],
    // Authentication, scope and access come before the body is read, as in DRF.
    middleware: [authenticate, requireScope(scope), ...middleware, ...readJsonBody] as const,
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
