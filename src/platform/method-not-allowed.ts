import type { Context } from "hono";
import type { RouterRoute } from "hono/types";
import { ApiError, errorResponse, methodNotAllowed } from "./errors";

type RouteMatcher = { pattern: RegExp; methods: Set<string> };

function compile(path: string): RegExp {
  const source = path
    .replace(/\/$/, "")
    .split("/")
    .map((segment) => {
      if (segment === "*") return ".*";
      if (segment.startsWith(":")) return "[^/]+";
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return new RegExp(`^${source}/?$`);
}

/**
 * Hono answers an unmatched method with "not found"; PostHog answers 405 with `Allow`. The
 * routes are read once from the finished app, so the list never drifts from the code.
 */
export function createNotFoundHandler(routes: () => RouterRoute[]) {
  let matchers: RouteMatcher[] | undefined;
  const build = () => {
    const byPath = new Map<string, RouteMatcher>();
    for (const route of routes()) {
      if (route.method === "ALL") continue;
      const matcher = byPath.get(route.path) ?? { pattern: compile(route.path), methods: new Set() };
      matcher.methods.add(route.method);
      byPath.set(route.path, matcher);
    }
    return [...byPath.values()];
  };

  return (c: Context) => {
    matchers ??= build();
    const allowed = new Set<string>();
    for (const matcher of matchers) {
      if (matcher.pattern.test(c.req.path)) for (const method of matcher.methods) allowed.add(method);
    }
    if (allowed.size > 0) return errorResponse(c, methodNotAllowed(c.req.method, [...allowed].sort()));
    return errorResponse(c, new ApiError(404, "not_found", "Endpoint not found."));
  };
}
