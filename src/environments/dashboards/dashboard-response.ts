import type { insights, texts } from "../../db/schema";
import { toUserBasic, type UserBasicRow } from "../../platform/user-basic";
import {
  dashboardRights,
  RestrictionLevel,
  type DashboardCaller,
  type DashboardRights,
} from "../../platform/access-rules/dashboard-rights";
import type { DashboardRow, DashboardWithTiles, ListedDashboardRow, TileRow } from "./dashboards.queries";
import type { Dashboard, DashboardListItem } from "./dashboards.schema";

type UserRow = UserBasicRow;

const toUser = (user: UserRow | null) => (user ? toUserBasic(user) : null);

/** The caller's rights on a dashboard row (whole, or as a list reads it). */
export function rightsOn(row: DashboardRow | ListedDashboardRow, caller: DashboardCaller): DashboardRights {
  return dashboardRights(
    {
      createdById: row.dashboard.createdById,
      restrictionLevel: row.dashboard.restrictionLevel,
      isCollaborator: row.isCollaborator,
      accessRule: row.accessRule,
    },
    caller,
  );
}

export function toDashboardListItem(
  row: DashboardRow | ListedDashboardRow,
  caller: DashboardCaller,
): DashboardListItem {
  const { dashboard } = row;
  const rights = rightsOn(row, caller);
  return {
    id: dashboard.id,
    name: dashboard.name,
    description: dashboard.description,
    pinned: dashboard.pinned,
    created_at: dashboard.createdAt,
    created_by: toUser(row.createdBy),
    is_shared: row.sharingEnabled,
    deleted: dashboard.deleted,
    creation_mode: dashboard.creationMode,
    // Write-only in PostHog: it acts once, at deletion, and always reads back false.
    delete_insights: false,
    tags: dashboard.tags,
    restriction_level: dashboard.restrictionLevel,
    effective_restriction_level: dashboard.restrictionLevel,
    effective_privilege_level: rights.effectivePrivilegeLevel,
    user_access_level: rights.userAccessLevel,
    access_control_version: dashboard.restrictionLevel > RestrictionLevel.everyoneCanEdit ? "v1" : "v2",
    team_id: dashboard.environmentId,
    last_accessed_at: dashboard.lastAccessedAt,
    last_viewed_at: null,
    last_refresh: null,
  };
}

export function toInsight(insight: typeof insights.$inferSelect) {
  return {
    id: insight.id,
    short_id: insight.shortId,
    name: insight.name,
    derived_name: insight.derivedName,
    description: insight.description,
    query: insight.query,
    created_at: insight.createdAt,
    updated_at: insight.updatedAt,
    favorited: insight.favorited,
    tags: insight.tags,
    deleted: insight.deleted,
  };
}

function toText(text: typeof texts.$inferSelect, createdBy: UserRow | null, lastModifiedBy: UserRow | null) {
  return {
    id: text.id,
    body: text.body,
    created_by: toUser(createdBy),
    last_modified_by: toUser(lastModifiedBy),
    last_modified_at: text.lastModifiedAt,
  };
}

/** Where a tile sits on the small-screen grid, PostHog's display order. */
function gridPosition(tile: TileRow): [number, number] {
  const small = tile.tile.layouts.sm;
  if (typeof small !== "object" || small === null) return [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
  const { x, y } = small as { x?: unknown; y?: unknown };
  return [typeof y === "number" ? y : Number.MAX_SAFE_INTEGER, typeof x === "number" ? x : Number.MAX_SAFE_INTEGER];
}

function byGridPosition(left: TileRow, right: TileRow) {
  const [leftY, leftX] = gridPosition(left);
  const [rightY, rightX] = gridPosition(right);
  return leftY - rightY || leftX - rightX || left.tile.id - right.tile.id;
}

/** Tiles in PostHog's display order: by their small-screen grid position. */
export const inLayoutOrder = (tiles: TileRow[]) => [...tiles].sort(byGridPosition);

export function toDashboard({ row, tiles }: DashboardWithTiles, caller: DashboardCaller): Dashboard {
  return {
    ...toDashboardListItem(row, caller),
    filters: row.dashboard.filters,
    variables: row.dashboard.variables,
    tiles: inLayoutOrder(tiles).map((tile, order) => ({
      id: tile.tile.id,
      layouts: tile.tile.layouts,
      color: tile.tile.color,
      insight: tile.insight ? toInsight(tile.insight) : null,
      text: tile.text ? toText(tile.text, tile.textCreator, tile.textModifier) : null,
      order,
      show_description: tile.tile.showDescription,
      transparent_background: tile.tile.transparentBackground,
      filters_overrides: tile.tile.filtersOverrides,
    })),
    breakdown_colors: row.dashboard.breakdownColors,
    data_color_theme_id: row.dashboard.dataColorThemeId,
    quick_filter_ids: row.dashboard.quickFilterIds,
    persisted_filters: null,
    persisted_variables: null,
  };
}
