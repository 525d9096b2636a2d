import { createRouter, type Router } from "../platform/router";

/**
 * An environment's resources are served under `/api/environments/:project_id` and, as PostHog
 * does, under `/api/projects/:project_id` too: the same definitions and handlers for both.
 */
const PROJECT_TREES = ["/api/environments", "/api/projects"] as const;
export type ProjectTree = (typeof PROJECT_TREES)[number];

/** One router serving a resource under every tree. */
export function underEveryTree(routerFor: (tree: ProjectTree) => Router): Router {
  return PROJECT_TREES.reduce((router, tree) => router.route("/", routerFor(tree)), createRouter());
}
