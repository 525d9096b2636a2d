import { eq, sql } from "drizzle-orm";
import { dashboardTiles, insights, texts } from "../../db/schema";
import type { ReadInBatch } from "../../platform/activity-log/record";
import { resourceActivity } from "../../platform/activity-log/resource-activity";
import type { ProjectContext } from "../../platform/env";
import type { DashboardRef, DashboardRow } from "./dashboards.queries";

/**
 * Dashboards are created (from nothing, a template or another dashboard: one entry, whatever
 * tiles come with it), updated, deleted and restored (PATCH `deleted`).
 */
export const dashboardActivity = resourceActivity("Dashboard", {
  fields: ["name", "description", "pinned", "tags", "restriction_level"],
});

/** Tiles are added, edited and removed by a dashboard's PATCH, and moved to another dashboard. */
export const tileActivity = resourceActivity("DashboardTile", {
  fields: ["layouts", "color", "text", "show_description", "transparent_background", "filters_overrides"],
});

/** A dashboard's tracked fields as the API names them. */
export const trackedDashboardFields = (dashboard: DashboardRow["dashboard"]) => ({
  name: dashboard.name,
  description: dashboard.description,
  pinned: dashboard.pinned,
  tags: dashboard.tags,
  restriction_level: dashboard.restrictionLevel,
});

/** `ref`: the dashboard's id, or SQL reading the id of the one created earlier in the batch. */
export const dashboardItem = (project: ProjectContext, ref: DashboardRef, name: string) => ({
  organizationId: project.organizationId,
  projectId: project.projectId,
  dashboardId: ref,
  itemId: ref,
  name,
});

/** How long a tile's name (its text's body) may be in an entry: enough to recognise it. */
const TILE_NAME_LENGTH = 200;

/** A tile of the batch's largest id: the one just inserted (AUTOINCREMENT, one transaction). */
export const newestTileId: ReadInBatch = sql`(select max(${dashboardTiles.id}) from ${dashboardTiles})`;

/**
 * A tile is named by what it shows (its insight's name, or the start of its text), read when the
 * entry is appended: a new tile's content is inserted in the same batch.
 */
export function tileItem(
  project: ProjectContext,
  dashboardId: number,
  tileId: number | ReadInBatch,
  context: Record<string, unknown>,
) {
  return {
    organizationId: project.organizationId,
    projectId: project.projectId,
    dashboardId,
    itemId: tileId,
    name: sql`select coalesce(${insights.name}, substr(${texts.body}, 1, ${TILE_NAME_LENGTH}))
      from ${dashboardTiles}
      left join ${insights} on ${eq(insights.id, dashboardTiles.insightId)}
      left join ${texts} on ${eq(texts.id, dashboardTiles.textId)}
      where ${dashboardTiles.id} = ${tileId}`,
    context,
  };
}
