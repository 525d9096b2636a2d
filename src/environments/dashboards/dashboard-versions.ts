import { z } from "@hono/zod-openapi";
import type { TileLayouts } from "../../db/schema";
import { Timestamp } from "../../platform/timestamps";
import { toUserBasic, UserBasic } from "../../platform/user-basic";
import type { DashboardSnapshot, TileSnapshot, VersionRow, VersionWithSnapshot } from "./dashboard-versions.queries";
import type { DashboardRow, TileRow } from "./dashboards.queries";
import type { TileInput, UpdateDashboardInput } from "./dashboards.schema";
import { unlessAsRead } from "../../platform/conditional-requests";
import { sameJson } from "../../platform/json-equality";

/** PostHog's grid: 12 columns on small screens and up (`sm`), one column of 6 below (`xs`). */
const TILE_WIDTH = 6;
const TILE_HEIGHT = 5;

const SnapshotTile = z
  .object({
    id: z.number().int(),
    insight_id: z.number().int().nullable(),
    text_id: z.number().int().nullable(),
    text: z.string().nullable().openapi({ description: "A text tile's body as it was." }),
    layouts: z.record(z.string(), z.unknown()),
    color: z.string().nullable(),
    show_description: z.boolean().nullable(),
    transparent_background: z.boolean().nullable(),
    filters_overrides: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi("DashboardVersionTile");

export const DashboardVersionItem = z
  .object({
    version: z.number().int(),
    created_at: Timestamp,
    created_by: UserBasic.nullable(),
    api_key_id: z.string().nullable().openapi({ description: "The personal API key the change came through." }),
    summary: z.string().openapi({ description: "What the change did, in one line." }),
  })
  .openapi("DashboardVersionItem");

export const DashboardVersion = DashboardVersionItem.extend({
  dashboard: z.object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    pinned: z.boolean(),
    tags: z.array(z.string()),
    restriction_level: z.number().int(),
    filters: z.record(z.string(), z.unknown()),
    variables: z.record(z.string(), z.unknown()),
    breakdown_colors: z.unknown(),
    data_color_theme_id: z.number().int().nullable(),
    quick_filter_ids: z.array(z.string()).nullable(),
    tiles: z.array(SnapshotTile).openapi({ description: "In layout order." }),
  }),
}).openapi("DashboardVersion");

const flag = (value: unknown) => (value === null || value === undefined ? null : Boolean(value));

/** A stored snapshot as the API shows it: SQLite's JSON has 0 and 1 for booleans. */
export function parseSnapshot(text: string): DashboardSnapshot {
  const stored = JSON.parse(text) as DashboardSnapshot;
  const tiles = stored.tiles.map(
    (tile): TileSnapshot => ({
      ...tile,
      show_description: flag(tile.show_description),
      transparent_background: flag(tile.transparent_background),
    }),
  );
  return { ...stored, pinned: Boolean(stored.pinned), tiles: tiles.sort(bySmallGrid) };
}

function smallGridPosition(layouts: TileLayouts): [number, number] {
  const small = layouts.sm as { x?: unknown; y?: unknown } | undefined;
  const at = (value: unknown) => (typeof value === "number" ? value : Number.MAX_SAFE_INTEGER);
  return typeof small === "object" && small !== null ? [at(small.y), at(small.x)] : [Infinity, Infinity];
}

function bySmallGrid(left: TileSnapshot, right: TileSnapshot) {
  const [leftY, leftX] = smallGridPosition(left.layouts);
  const [rightY, rightX] = smallGridPosition(right.layouts);
  return leftY - rightY || leftX - rightX || left.id - right.id;
}

export function toVersionItem({ version, createdBy }: VersionRow): z.infer<typeof DashboardVersionItem> {
  return {
    version: version.version,
    created_at: version.createdAt,
    created_by: createdBy ? toUserBasic(createdBy) : null,
    api_key_id: version.keyId,
    summary: version.summary,
  };
}

export function toVersion(row: VersionWithSnapshot): z.infer<typeof DashboardVersion> {
  return {
    ...toVersionItem(row),
    dashboard: { id: row.version.dashboardId, ...parseSnapshot(row.version.snapshot) },
  };
}

/** Where the grid's next free row starts, on each size: below the lowest tile. */
function freeRows(tiles: TileLayouts[]): { sm: number; xs: number } {
  const bottom = (layouts: TileLayouts, size: "sm" | "xs") => {
    const box = layouts[size] as { y?: unknown; h?: unknown } | undefined;
    if (typeof box !== "object" || box === null) return 0;
    const end = (typeof box.y === "number" ? box.y : 0) + (typeof box.h === "number" ? box.h : 0);
    // A layout past every grid (1e308 rows) does not push the next tile off it (to Infinity, stored as null).
    return Number.isFinite(end) ? end : 0;
  };
  return {
    sm: Math.max(0, ...tiles.map((layouts) => bottom(layouts, "sm"))),
    xs: Math.max(0, ...tiles.map((layouts) => bottom(layouts, "xs"))),
  };
}

/**
 * Layouts for tiles added without any, one below the other from the grid's first free row: half
 * the width on small screens and up, the whole width below.
 */
export function stackedLayouts(existing: TileLayouts[], count: number): TileLayouts[] {
  const start = freeRows(existing);
  return Array.from({ length: count }, (_, index) => ({
    sm: { x: 0, y: start.sm + index * TILE_HEIGHT, w: TILE_WIDTH, h: TILE_HEIGHT },
    xs: { x: 0, y: start.xs + index * TILE_HEIGHT, w: TILE_WIDTH, h: TILE_HEIGHT },
  }));
}

/** PostHog's `reorder_tiles`: two tiles a row on small screens and up, one a row below. */
export const reorderedLayouts = (index: number): TileLayouts => ({
  sm: {
    x: (index % 2) * TILE_WIDTH,
    y: Math.floor(index / 2) * TILE_HEIGHT,
    w: TILE_WIDTH,
    h: TILE_HEIGHT,
  },
  xs: { x: 0, y: index * TILE_HEIGHT, w: TILE_WIDTH, h: TILE_HEIGHT },
});

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`;

/** The dashboard fields a PATCH changes, as the API names them. */
function changedFields({ dashboard }: DashboardRow, input: UpdateDashboardInput): string[] {
  const fields: [string, unknown, unknown][] = [
    ["name", input.name, dashboard.name],
    ["description", input.description, dashboard.description],
    ["pinned", input.pinned, dashboard.pinned],
    ["tags", input.tags, dashboard.tags],
    ["restriction_level", input.restriction_level, dashboard.restrictionLevel],
    ["breakdown_colors", input.breakdown_colors, dashboard.breakdownColors],
    ["data_color_theme_id", input.data_color_theme_id, dashboard.dataColorThemeId],
    ["quick_filter_ids", input.quick_filter_ids, dashboard.quickFilterIds],
  ];
  return fields.filter(([, given, stored]) => given !== undefined && !sameJson(given, stored)).map(([name]) => name);
}

/** What a PATCH's tiles do, counted by kind. */
function tileChanges(tiles: TileRow[], changes: UpdateDashboardInput["tiles"] = []): string[] {
  const shown = new Map(tiles.map((row) => [row.tile.id, row]));
  let [added, removed, laidOut, edited, restyled] = [0, 0, 0, 0, 0];
  for (const change of changes) {
    const existing = change.id === undefined ? undefined : shown.get(change.id);
    if (!existing) {
      added += 1;
      continue;
    }
    if (change.deleted) {
      removed += 1;
      continue;
    }
    const { tile, text } = existing;
    if (change.layouts !== undefined && !sameJson(change.layouts, tile.layouts)) laidOut += 1;
    if (change.text && change.text.body !== text?.body) edited += 1;
    const display: [unknown, unknown][] = [
      [change.color, tile.color],
      [change.show_description, tile.showDescription],
      [change.transparent_background, tile.transparentBackground],
      [change.filters_overrides, tile.filtersOverrides],
    ];
    if (display.some(([given, stored]) => given !== undefined && !sameJson(given, stored))) restyled += 1;
  }
  const parts: [number, string][] = [
    [added, `added ${plural(added, "tile")}`],
    [removed, `removed ${plural(removed, "tile")}`],
    [laidOut, `moved or resized ${plural(laidOut, "tile")}`],
    [edited, `edited ${plural(edited, "text")}`],
    [restyled, `restyled ${plural(restyled, "tile")}`],
  ];
  return parts.filter(([count]) => count > 0).map(([, part]) => part);
}

/**
 * What a tile change changes of its tile as read, field by field: a new tile or a removal whole;
 * an edit without the values it sent as read; undefined when that leaves nothing.
 */
function tileChangeAsRead(shown: Map<number, TileRow>, change: TileInput): TileInput | undefined {
  const existing = change.id === undefined ? undefined : shown.get(change.id);
  if (!existing || change.deleted) return change;
  const { tile, text } = existing;
  const fields = {
    layouts: unlessAsRead(change.layouts, tile.layouts),
    color: unlessAsRead(change.color, tile.color),
    show_description: unlessAsRead(change.show_description, tile.showDescription),
    transparent_background: unlessAsRead(change.transparent_background, tile.transparentBackground),
    filters_overrides: unlessAsRead(change.filters_overrides, tile.filtersOverrides),
    text: change.text !== undefined && change.text.body !== text?.body ? change.text : undefined,
  };
  return Object.values(fields).some((value) => value !== undefined) ? { id: change.id, ...fields } : undefined;
}

/**
 * The part of a PATCH that changes the dashboard as read: what it meant to change, which is
 * applied again over a change that landed between its read and its write (`judgedOnLatest`). A
 * value sent as read (the deleted state, a restriction level, a tile's layouts) is no change then
 * either: it does not undo what landed meanwhile.
 */
export function changesAsRead(current: { row: DashboardRow; tiles: TileRow[] }, input: UpdateDashboardInput) {
  const changed = new Set(changedFields(current.row, input));
  const shown = new Map(current.tiles.map((row) => [row.tile.id, row]));
  const meant: UpdateDashboardInput = {
    ...Object.fromEntries(Object.entries(input).filter(([field]) => changed.has(field))),
    tiles: input.tiles?.flatMap((change) => tileChangeAsRead(shown, change) ?? []),
    duplicate_tiles: input.duplicate_tiles,
  };
  if (input.deleted !== undefined && input.deleted !== current.row.dashboard.deleted) {
    return { ...meant, deleted: input.deleted, delete_insights: input.delete_insights };
  }
  return meant;
}

/**
 * Whether a PATCH changes the dashboard itself as read (a field, or its deleted state), beyond
 * its tiles: such a change holds to the version read.
 */
export const changesDashboardItself = (row: DashboardRow, input: UpdateDashboardInput) =>
  changedFields(row, input).length > 0 || (input.deleted !== undefined && input.deleted !== row.dashboard.deleted);

/** A PATCH's version summary, or undefined when it changes nothing (no version then). */
export function updateSummary(current: { row: DashboardRow; tiles: TileRow[] }, input: UpdateDashboardInput) {
  const { deleted } = current.row.dashboard;
  const parts = [
    input.deleted === true && !deleted ? "deleted the dashboard" : undefined,
    input.deleted === false && deleted ? "restored the dashboard" : undefined,
    ...changedFields(current.row, input).map((field) => `changed ${field}`),
    ...tileChanges(current.tiles, input.tiles),
    input.duplicate_tiles?.length ? `duplicated ${plural(input.duplicate_tiles.length, "tile")}` : undefined,
  ].filter((part) => part !== undefined);
  if (parts.length === 0) return undefined;
  const line = parts.join(", ");
  return line.charAt(0).toUpperCase() + line.slice(1);
}
