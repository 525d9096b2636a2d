import type { Context } from "hono";
import type { SharingSettings } from "../../../db/schema";
import { resourceActivity } from "../../../platform/activity-log/resource-activity";
import type { AppEnv, ProjectContext } from "../../../platform/env";
import type { DashboardRow } from "../dashboards.queries";
import type { SharingRow } from "./sharing.queries";

/**
 * A dashboard's sharing is enabled, disabled, its settings updated, its token refreshed. The
 * access token is the link's secret: no entry carries it, not even masked.
 */
export const sharingActivity = resourceActivity("SharingConfiguration", { fields: ["settings"] });

/** The configuration has no id of its own in the API: it is the dashboard's, and named after it. */
export const sharingItem = (project: ProjectContext, dashboard: DashboardRow["dashboard"]) => ({
  organizationId: project.organizationId,
  projectId: project.projectId,
  dashboardId: dashboard.id,
  itemId: dashboard.id,
  name: dashboard.name,
  context: { dashboard_id: dashboard.id },
});

/**
 * What a PATCH records against the configuration as read (none yet: disabled, no settings):
 * enabling or disabling it, and its settings' change.
 */
export function sharingEntries(
  c: Context<AppEnv>,
  dashboard: DashboardRow["dashboard"],
  current: SharingRow | undefined,
  changes: { enabled?: boolean; settings?: SharingSettings },
) {
  const item = sharingItem(c.var.project, dashboard);
  const wasEnabled = current?.enabled ?? false;
  const settings = current?.settings ?? {};
  const entries = [
    changes.enabled === true && !wasEnabled ? sharingActivity.record(c, "enabled", item) : undefined,
    changes.enabled === false && wasEnabled ? sharingActivity.record(c, "disabled", item) : undefined,
    sharingActivity.changed(c, "updated", item, { settings }, { settings: changes.settings ?? settings }),
  ];
  return entries.filter((entry) => entry !== undefined);
}
