import { createMiddleware } from "hono/factory";
import type { Actor, AppEnv } from "../env";
import { permissionDenied } from "../errors";

/**
 * Key scoping (`scoped_organizations`, `scoped_teams`) is a ceiling on what a key reaches, never
 * a widening. Every rule of it lives in this file: the route-level rule below, applied by
 * `apiRoute` to every authenticated route, and the per-id checks that `route-context/` (and
 * joining by invite) calls once it knows which organization or project a request is about.
 */

/** What a route acts on, read from its method and path; decides which keys may call it. */
type RouteReach =
  /** The calling key or user itself, which every key may read, however it is scoped. */
  | "caller"
  /** One project (environment) or the caller's projects: checked per project by `route-context/`. */
  | "project"
  /** An organization, or the user's account beyond one project. */
  | "organization"
  /** Creates an organization, which no scoped key can reach. */
  | "new-organization";

/** Reads that PostHog's clients make first with any key, to learn who they are and what they may do. */
const CALLER_ROUTES = new Set([
  "GET /api/users/@me",
  // The caller by their own uuid, or `@me` encoded (`%40me`, as PostHog's MCP server sends it);
  // another uuid is 404.
  "GET /api/users/{user_uuid}",
  "GET /api/personal_api_keys/@current",
  "GET /api/service_keys/@current",
]);

export function routeReach(method: string, path: string): RouteReach {
  const verb = method.toUpperCase();
  if (CALLER_ROUTES.has(`${verb} ${path}`)) return "caller";
  // A new project in the caller's current organization: an organization's act, as under its path.
  if (verb === "POST" && path === "/api/projects") return "organization";
  if (path.includes("{project_id}") || path === "/api/projects" || path.startsWith("/api/projects/")) return "project";
  if (verb === "POST" && path === "/api/organizations") return "new-organization";
  return "organization";
}

const PROJECT_SCOPED_KEY_DENIED = "API key with scoped projects are only supported on project-based views.";
const ORGANIZATION_OUT_OF_SCOPE = "API key does not have access to the requested organization";
const PROJECT_OUT_OF_SCOPE = "API key does not have access to the requested project";
const SCOPED_KEY_CANNOT_CREATE_ORGANIZATIONS = "API key with scoped organizations cannot create organizations.";

/** The route-level rule, before anything is looked up. */
function assertKeyReaches(actor: Actor, reach: RouteReach) {
  if (reach === "caller" || reach === "project") return;
  if (actor.scopedTeams.length > 0) throw permissionDenied(PROJECT_SCOPED_KEY_DENIED);
  if (reach === "new-organization" && actor.scopedOrganizations.length > 0) {
    throw permissionDenied(SCOPED_KEY_CANNOT_CREATE_ORGANIZATIONS);
  }
}

export const requireKeyReach = (reach: RouteReach) =>
  createMiddleware<AppEnv>(async (c, next) => {
    assertKeyReaches(c.var.actor, reach);
    await next();
  });

export function assertOrganizationInKeyScope(actor: Actor, organizationId: string) {
  if (actor.scopedOrganizations.length > 0 && !actor.scopedOrganizations.includes(organizationId)) {
    throw permissionDenied(ORGANIZATION_OUT_OF_SCOPE);
  }
}

/**
 * A thing named by id that the caller cannot find: to a key scoped to organizations it may lie in
 * another of its user's, so it is refused as those are (403), and the key learns nothing of them.
 */
export function assertKeyReachesAnyOrganization(actor: Actor) {
  if (actor.scopedOrganizations.length > 0) throw permissionDenied(ORGANIZATION_OUT_OF_SCOPE);
}

export function assertProjectInKeyScope(actor: Actor, projectId: number) {
  if (actor.scopedTeams.length > 0 && !actor.scopedTeams.includes(projectId)) {
    throw permissionDenied(PROJECT_OUT_OF_SCOPE);
  }
}

/** Moving a project to another organization with a key: an organization-level act on both, within its scope. */
export function assertKeyMayMoveProject(actor: Actor, from: string, to: string) {
  assertKeyReaches(actor, "organization");
  assertOrganizationInKeyScope(actor, from);
  assertOrganizationInKeyScope(actor, to);
}

/** Joining an organization by invite with a key: an organization-level act, within the key's scope. */
export function assertKeyMayJoin(actor: Actor, organizationId: string) {
  assertKeyReaches(actor, "organization");
  assertOrganizationInKeyScope(actor, organizationId);
}
