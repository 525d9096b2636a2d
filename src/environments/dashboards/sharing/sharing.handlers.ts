import type { RouteHandler } from "@hono/zod-openapi";
import type { SharingSettings } from "../../../db/schema";
import type { AppEnv } from "../../../platform/env";
import { permissionDenied, validationError } from "../../../platform/errors";
import { projectRead } from "../../../platform/route-context";
import type { ProjectTree } from "../../project-trees";
import type { Context } from "hono";
import { editableDashboard, parseDashboardId, readScopeOf, scopeOf, visibleDashboard } from "../dashboard-request";
import { rightsOn } from "../dashboard-response";
import { selectDashboard, type DashboardRow } from "../dashboards.queries";
import { newAccessToken, selectSharing, toSharingConfiguration, upsertSharing } from "./sharing.queries";
import { SHARING_SETTINGS_KEYS, sharingOfPath, type sharingRoutes } from "./sharing.routes";
import { sharingActivity, sharingEntries, sharingItem } from "./sharing.activity";

type SharingRoutes = ReturnType<typeof sharingRoutes<ProjectTree>>;
type Handler<K extends keyof SharingRoutes> = RouteHandler<SharingRoutes[K], AppEnv>;

/** The caller's access to the dashboard, which its sharing answers as `user_access_level`. */
const accessTo = (c: Context<AppEnv>, dashboard: DashboardRow) =>
  rightsOn(dashboard, scopeOf(c).caller).userAccessLevel;

/** One round trip once the configuration exists: project, dashboard and configuration in one batch. */
export const retrieveDashboardSharing: Handler<"retrieve"> = async (c) => {
  const dashboardId = parseDashboardId(c.req.valid("param").dashboard_id);
  const db = c.var.db;
  const [[dashboard], [sharing]] = await projectRead(c, (environmentId) => [
    selectDashboard(db, readScopeOf(c, environmentId), dashboardId),
    selectSharing(db, dashboardId),
  ]);
  const access = accessTo(c, visibleDashboard(c, dashboard));
  return c.json(toSharingConfiguration(sharing ?? (await upsertSharing(db, dashboardId)), access), 200);
};

const INVALID_SETTINGS = () => validationError("invalid_input", "Invalid settings format", "settings");

/** PostHog's settings keys only, each a boolean; anything else is dropped. */
function parseSettings(value: unknown): SharingSettings {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw INVALID_SETTINGS();
  const settings: SharingSettings = {};
  for (const key of SHARING_SETTINGS_KEYS) {
    const setting: unknown = (value as Record<string, unknown>)[key];
    if (setting === undefined) continue;
    if (typeof setting !== "boolean") throw INVALID_SETTINGS();
    settings[key] = setting;
  }
  return settings;
}

export const updateDashboardSharing: Handler<"update"> = async (c) => {
  const input = c.req.valid("json");
  const dashboardId = parseDashboardId(c.req.valid("param").dashboard_id);
  const db = c.var.db;
  const [[dashboard], [organization], [current]] = sharingOfPath.results(c);
  const editable = editableDashboard(c, dashboard);
  const { dashboard: shared } = editable;
  const settings = input.settings === undefined ? undefined : parseSettings(input.settings);
  if (input.enabled === true && !organization?.allowed) {
    throw permissionDenied("Public sharing is disabled for this organization.");
  }
  const entries = sharingEntries(c, shared, current, { enabled: input.enabled, settings });
  const sharing = await upsertSharing(db, dashboardId, { enabled: input.enabled, settings }, entries);
  return c.json(toSharingConfiguration(sharing, accessTo(c, editable)), 200);
};

/** A new token at once: PostHog keeps the old one for 5 minutes, but a refresh usually answers a leak. */
export const refreshDashboardSharing: Handler<"refresh"> = async (c) => {
  const dashboardId = parseDashboardId(c.req.valid("param").dashboard_id);
  const db = c.var.db;
  const [[dashboard]] = sharingOfPath.results(c);
  const editable = editableDashboard(c, dashboard);
  const { dashboard: shared } = editable;
  const entry = sharingActivity.record(c, "access_token_refreshed", sharingItem(c.var.project, shared));
  const sharing = await upsertSharing(db, dashboardId, { accessToken: newAccessToken() }, [entry]);
  return c.json(toSharingConfiguration(sharing, accessTo(c, editable)), 200);
};
