import type { RouteHandler } from "@hono/zod-openapi";
import {
  deleteVisibleProject,
  duplicateName,
  patchVisibleProject,
  projectLimitReached,
} from "./organization-projects.handlers";
import { admitVisibleProject, findVisibleProject, listVisibleProjects, projectIdFilters } from "./projects.queries";
import { toProject, toProjectListItem } from "./projects.schema";
import { projectItem } from "./projects.activity";
import {
  isDestinationFull,
  isDestinationGone,
  isKeyLifetimeExceeded,
  isMoverLevelLost,
  moveProjectStatements,
  projectStillLive,
  selectDestination,
} from "./project-move";
import { projectOfEnvironmentPath } from "./organization-projects.request";
import { projectToMove } from "./project-move.request";
import { recordActivity } from "../platform/activity-log/record";
import { assertKeyPolicyAllows } from "../platform/auth/key-policy";
import { assertKeyMayMoveProject } from "../platform/auth/key-scoping";
import { etagOf, versionedAnswer } from "../platform/conditional-requests";
import { isUniqueViolation } from "../platform/db";
import type { AppEnv } from "../platform/env";
import { changedOrGone, notFound, validationError } from "../platform/errors";
import { isAdmin } from "../platform/levels";
import { pageEnvelope, readPage } from "../platform/pagination";
import type {
  changeProjectOrganization,
  deleteAccessibleProject,
  listAccessibleProjects,
  retrieveAccessibleProject,
  updateAccessibleProject,
} from "./accessible-projects.routes";

export const listProjects: RouteHandler<typeof listAccessibleProjects, AppEnv> = async (c) => {
  const page = readPage(c);
  const result = await listVisibleProjects(c.var.db, c.var.actor, page);
  return c.json(pageEnvelope(c, page, result.count, result.projects.map(toProjectListItem), result.links), 200);
};

export const retrieveProject: RouteHandler<typeof retrieveAccessibleProject, AppEnv> = async (c) => {
  const found = await findVisibleProject(
    c.var.db,
    c.var.actor,
    projectIdFilters(c.var.db, c.var.actor, c.req.valid("param").project_id),
  );
  if (!found) throw notFound();
  return versionedAnswer(c, found.project, toProject(found.project, found.level));
};

export const updateProject: RouteHandler<typeof updateAccessibleProject, AppEnv> = async (c) => {
  const updated = await patchVisibleProject(c, projectOfEnvironmentPath.results(c), c.req.valid("json"));
  return c.json(updated.project, 200, updated.etag);
};

export const deleteProject: RouteHandler<typeof deleteAccessibleProject, AppEnv> = async (c) => {
  const found = await findVisibleProject(
    c.var.db,
    c.var.actor,
    projectIdFilters(c.var.db, c.var.actor, c.req.valid("param").project_id),
  );
  await deleteVisibleProject(c, found);
  return c.body(null, 204);
};

/** PostHog's refusals of a move, word for word: the web app shows them. */
const NOT_IN_BOTH = "You must be an admin or owner of both the source and target organizations to move a project.";
const NOT_ADMIN_OF_BOTH = "You must be an admin of both the source and target organizations to move a project.";
const ALREADY_THERE = "Project is already in the target organization.";
const KEYS_OUTLIVE_LIMIT =
  "The target organization (api_key_max_lifetime_days) requires every personal API key that reaches it to " +
  "expire within its limit, and a key of one of its members scoped to this project does not.";

/** Why a move's batch was refused by one of the conditions it holds to (`moveProjectStatements`). */
function moveRefusal(error: unknown, name: string): Error | undefined {
  if (isMoverLevelLost(error)) return validationError("invalid_input", NOT_ADMIN_OF_BOTH);
  if (isDestinationGone(error)) return validationError("invalid_input", NOT_IN_BOTH);
  if (isDestinationFull(error)) return projectLimitReached();
  if (isKeyLifetimeExceeded(error)) return validationError("invalid_input", KEYS_OUTLIVE_LIMIT);
  if (isUniqueViolation(error)) return duplicateName(name);
  return undefined;
}

/**
 * A project the caller sees, moved to an organization they are an admin of, as PostHog moves it
 * (400s in its words); its entry is appended to both organizations' logs, and it is answered as
 * the new organization shows it.
 */
export const changeOrganization: RouteHandler<typeof changeProjectOrganization, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const to = c.req.valid("json").organization_id ?? "";
  const { row, peeked, destination: read } = projectToMove.results(c);
  // A body the reads could not peek at (streamed, say) names its destination only now.
  const [destination] = peeked === to ? [read] : await selectDestination(db, actor, to);
  const found = admitVisibleProject(actor, row);
  if (!found) throw notFound();
  const { project } = found;
  const from = project.organizationId;
  assertKeyMayMoveProject(actor, from, to);
  if (!destination) throw validationError("invalid_input", NOT_IN_BOTH);
  assertKeyPolicyAllows(actor, { ...destination, organizationLevel: destination.level });
  if (!isAdmin(found.organizationLevel) || !isAdmin(destination.level)) {
    throw validationError("invalid_input", NOT_ADMIN_OF_BOTH);
  }
  if (from === to) throw validationError("invalid_input", ALREADY_THERE);
  const move = moveProjectStatements(db, actor, project, to);
  const changes = [
    { type: "Project" as const, action: "changed" as const, field: "organization_id", before: from, after: to },
  ];
  const entry = (organizationId: string) =>
    recordActivity(c, {
      ...projectItem(organizationId, project.id, project.name),
      scope: "Project",
      activity: "updated",
      changes,
      projectLeft: organizationId === from,
    });
  const results = await db
    .batch([
      move.environments,
      move.exports,
      move.rules,
      move.kindRules,
      move.collaborators,
      move.project,
      move.counts,
      entry(from),
      entry(to),
      // Last: the entries are written only while the statement before them changed a row.
      move.mover,
    ])
    .catch((error: unknown) => {
      throw moveRefusal(error, project.name) ?? error;
    });
  const [moved] = results[5];
  if (!moved) throw await changedOrGone(db, projectStillLive(project.id), "project");
  return c.json(toProject(moved, destination.level), 200, { ETag: etagOf(moved) });
};
