import type { Context } from "hono";
import { resourceActivity } from "../../../platform/activity-log/resource-activity";
import type { AppEnv, ProjectContext } from "../../../platform/env";
import type { DashboardRow } from "../dashboards.queries";
import type { TrackedSharing } from "./sharing.queries";

/**
 * A dashboard's sharing is enabled, disabled, its settings updated, its token refreshed. The
 * access token is the link's secret: no entry carries it, not even masked.
 */
export const sharingActivity = resourceActivity("SharingConfiguration", {
  fields: ["settings", "expires_at", "password_required", "allowed_emails"],
});

/** The configuration has no id of its own in the API: it is the dashboard's, and named after it. */
export const sharingItem = (project: ProjectContext, dashboard: DashboardRow["dashboard"]) => ({
  organizationId: project.organizationId,
  projectId: project.projectId,
  dashboardId: dashboard.id,
  itemId: dashboard.id,
  name: dashboard.name,
  context: { dashboard_id: dashboard.id },
});

const tracked = ({ settings, expiresAt, passwordRequired, allowedEmails }: TrackedSharing) => ({
  settings,
  expires_at: expiresAt,
  password_required: passwordRequired,
  allowed_emails: allowedEmails,
});

/**
 * What a PATCH records, from the configuration as read (`sharingAsRead`) to `after`: enabling or
 * disabling it, and the change of its tracked fields.
 */
export function sharingEntries(
  c: Context<AppEnv>,
  dashboard: DashboardRow["dashboard"],
  before: TrackedSharing,
  after: TrackedSharing,
) {
  const item = sharingItem(c.var.project, dashboard);
  const entries = [
    after.enabled && !before.enabled ? sharingActivity.record(c, "enabled", item) : undefined,
    !after.enabled && before.enabled ? sharingActivity.record(c, "disabled", item) : undefined,
    sharingActivity.changed(c, "updated", item, tracked(before), tracked(after)),
  ];
  return entries.filter((entry) => entry !== undefined);
}
