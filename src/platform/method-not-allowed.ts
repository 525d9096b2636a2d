import type { Context } from "hono";
import { methodNotAllowed as honoMethodNotAllowed } from "hono/method-not-allowed";
import type { Router } from "./router";
import { ApiError, errorResponse, methodNotAllowed } from "./errors";

/**
 * A known path with a method it does not serve: 405 with `Allow` in PostHog's error body
 * (hono's middleware finds the methods; HEAD, which hono adds to every GET, goes unlisted as
 * PostHog lists it nowhere).
 */
export const answerMethodNotAllowed = (app: Router) =>
  honoMethodNotAllowed({
    app,
    onMethodNotAllowed: (c, methods) =>
      errorResponse(c, methodNotAllowed(c.req.method, methods.filter((method) => method !== "HEAD").sort())),
  });

export const endpointNotFound = (c: Context) => errorResponse(c, new ApiError(404, "not_found", "Endpoint not found."));
