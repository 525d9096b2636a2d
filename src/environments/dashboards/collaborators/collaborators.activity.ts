import { resourceActivity } from "../../../platform/activity-log/resource-activity";
import type { ProjectContext } from "../../../platform/env";

/**
 * Collaborators are added and removed; only one level can be given (edit), so no route changes
 * it. An entry names the collaborator by e-mail.
 */
export const collaboratorActivity = resourceActivity("DashboardCollaborator", { fields: ["level"] });

export const collaboratorItem = (
  project: ProjectContext,
  collaborator: { id: string; dashboardId: number; level: number },
  user: { email: string; uuid: string },
) => ({
  organizationId: project.organizationId,
  projectId: project.projectId,
  dashboardId: collaborator.dashboardId,
  itemId: collaborator.id,
  name: user.email,
  context: { dashboard_id: collaborator.dashboardId, user_uuid: user.uuid, level: collaborator.level },
});
