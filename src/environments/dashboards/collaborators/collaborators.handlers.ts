import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../../platform/env";
import { notFound, validationError } from "../../../platform/errors";
import { isNotNullViolation, isNotNullViolationOf, isUniqueViolation, refusedWhenNull } from "../../../platform/db";
import { dashboardCollaborators } from "../../../db/schema";
import { uuid7 } from "../../../platform/ids";
import { projectLevel } from "../../../platform/access-rules/project-level";
import { projectVisibleTo } from "../../../platform/access-rules/project-visibility";
import { isAdmin } from "../../../platform/levels";
import { projectRead } from "../../../platform/route-context";
import type { ProjectTree } from "../../project-trees";
import { PrivilegeLevel, RestrictionLevel } from "../../../platform/access-rules/dashboard-rights";
import {
  callerStillEditorOf,
  editableDashboard,
  editRightLost,
  parseDashboardId,
  readScopeOf,
  scopeOf,
  visibleDashboard,
} from "../dashboard-request";
import { selectDashboard, type DashboardRow } from "../dashboards.queries";
import {
  deleteCollaborator,
  insertCollaborator,
  isUnlockedMeanwhile,
  selectCandidate,
  selectCollaborators,
  toCollaborator,
  type Candidate,
} from "./collaborators.queries";
import { collaborationOfPath, collaborationToAdd } from "./collaborators.request";
import type { collaboratorRoutes } from "./collaborators.routes";
import { collaboratorActivity, collaboratorItem } from "./collaborators.activity";

type CollaboratorRoutes = ReturnType<typeof collaboratorRoutes<ProjectTree>>;
type Handler<K extends keyof CollaboratorRoutes> = RouteHandler<CollaboratorRoutes[K], AppEnv>;

/** One round trip: the project, the dashboard and its collaborators are read in one batch. */
export const listDashboardCollaborators: Handler<"list"> = async (c) => {
  const dashboardId = parseDashboardId(c.req.valid("param").dashboard_id);
  const db = c.var.db;
  const [[dashboard], collaborators] = await projectRead(c, (environmentId) => [
    selectDashboard(db, readScopeOf(c, environmentId), dashboardId),
    selectCollaborators(db, environmentId, dashboardId),
  ]);
  visibleDashboard(c, dashboard);
  return c.json(collaborators.map(toCollaborator), 200);
};

const invalid = (detail: string, attr: string | null) => validationError("invalid_input", detail, attr);

const notLocked = () => invalid("Cannot add collaborators to a dashboard on the lowest restriction level.", null);

/** PostHog's checks on a new collaborator, in its order, each with its own message. */
function assertMayCollaborate(
  dashboard: DashboardRow["dashboard"],
  level: number,
  candidate: Candidate | undefined,
): asserts candidate is Candidate {
  if (dashboard.restrictionLevel <= RestrictionLevel.everyoneCanEdit) throw notLocked();
  if (level !== PrivilegeLevel.canEdit)
    throw invalid("Only edit access can be explicitly specified currently.", "level");
  // Someone outside the organization is answered as no one: the answer never tells who exists elsewhere.
  if (!candidate || candidate.organizationLevel === null) throw invalid("User does not exist.", "user_uuid");
  const { organizationLevel, projectRule } = candidate;
  if (!projectVisibleTo(organizationLevel, projectRule)) {
    throw invalid("Cannot add collaborators that have no access to the project.", "user_uuid");
  }
  const inherentAccess =
    candidate.user.id === dashboard.createdById || isAdmin(projectLevel(organizationLevel, projectRule));
  if (inherentAccess) {
    throw invalid(
      "Cannot add collaborators that already have inherent access (the dashboard owner or a project admins).",
      "user_uuid",
    );
  }
}

export const addDashboardCollaborator: Handler<"add"> = async (c) => {
  const { user_uuid: userUuid, level } = c.req.valid("json");
  const scope = scopeOf(c);
  const db = c.var.db;
  const { body, results } = collaborationToAdd.results(c);
  const [[row], [preloaded]] = results;
  const { dashboard } = editableDashboard(c, row);
  const [candidate] =
    body?.user_uuid === userUuid ? [preloaded] : await selectCandidate(db, scope.environmentId, userUuid);
  assertMayCollaborate(dashboard, level, candidate);
  const collaborator = { id: uuid7(), dashboardId: dashboard.id, userId: candidate.user.id, level };
  const entry = collaboratorActivity.record(
    c,
    "created",
    collaboratorItem(c.var.project, collaborator, candidate.user),
  );
  try {
    const created = await insertCollaborator(
      db,
      scope.environmentId,
      collaborator,
      entry,
      callerStillEditorOf(c, dashboard.id),
    );
    return c.json(toCollaborator(created), 201);
  } catch (error) {
    // The caller lost the edit right since the dashboard was read.
    if (isNotNullViolationOf(error, dashboardCollaborators.level)) throw await editRightLost(c);
    // Unlocked since the dashboard was read: as a moment later.
    if (isUnlockedMeanwhile(error)) throw notLocked();
    // The unique index decides, so that two concurrent adds cannot both succeed.
    if (isUniqueViolation(error)) throw invalid("User already is a collaborator.", "user_uuid");
    // Removed from the organization since the candidate was read.
    if (isNotNullViolation(error))
      throw invalid("Cannot add collaborators that have no access to the project.", "user_uuid");
    throw error;
  }
};

export const removeDashboardCollaborator: Handler<"remove"> = async (c) => {
  const [[row], [collaboration]] = collaborationOfPath.results(c);
  const { dashboard } = editableDashboard(c, row);
  if (dashboard.restrictionLevel <= RestrictionLevel.everyoneCanEdit) {
    throw invalid("Cannot remove collaborators from a dashboard on the lowest restriction level.", null);
  }
  if (!collaboration) throw notFound();
  const { collaborator, user } = collaboration;
  const entry = collaboratorActivity.record(c, "deleted", collaboratorItem(c.var.project, collaborator, user));
  const removed = await refusedWhenNull(
    deleteCollaborator(c.var.db, collaborator.id, entry, callerStillEditorOf(c, dashboard.id)),
    () => editRightLost(c),
  );
  if (!removed) throw notFound();
  return c.body(null, 204);
};
