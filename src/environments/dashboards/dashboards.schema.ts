import { z } from "@hono/zod-openapi";
import {
  boundedJson,
  boundedJsonObject,
  boundedText,
  idList,
  normalizeTags,
  tagList,
} from "../../platform/input-limits";
import { UserBasic } from "../../platform/user-basic";
import { ACCESS_LEVELS, RestrictionLevel } from "../../platform/access-rules/dashboard-rights";
import { visibleName } from "../../platform/names";
import { Timestamp } from "../../platform/timestamps";

const MAX_TEXT_BODY_LENGTH = 4000;
/** Live tiles on one dashboard: its read stays one bounded page. */
export const MAX_LIVE_TILES = 500;

const Tags = tagList().transform(normalizeTags);
const Layouts = z.record(z.string(), z.unknown());
const LayoutsInput = boundedJsonObject();
const RestrictionLevelInput = z
  .union([z.literal(RestrictionLevel.everyoneCanEdit), z.literal(RestrictionLevel.onlyCollaboratorsCanEdit)])
  .openapi({ description: "21: everyone in the project can edit; 37: only collaborators can edit." });

/** Fields both create and update take. */
const DashboardFields = {
  // PostHog's clients (its MCP server) may send null: as if not sent.
  name: visibleName(z.string().max(400))
    .nullable()
    .transform((name) => name ?? undefined)
    .optional(),
  description: boundedText().optional(),
  pinned: z.boolean().optional(),
  deleted: z.boolean().optional(),
  tags: Tags.optional(),
  restriction_level: RestrictionLevelInput.optional(),
  breakdown_colors: boundedJson(z.unknown())
    .optional()
    .openapi({ description: "Colours of breakdown values, as PostHog's app sets them; stored as given." }),
  data_color_theme_id: z.number().int().nullable().optional(),
  quick_filter_ids: idList(z.string().max(200)).nullable().optional(),
  delete_insights: z
    .boolean()
    .optional()
    .openapi({ description: "With `deleted: true`: also soft-delete insights no other live tile shows." }),
};

export const CreateDashboardInput = z
  .object({
    ...DashboardFields,
    use_template: z.string().optional().openapi({ description: "`DEFAULT_APP` or `WEBSITE_TRAFFIC`." }),
    use_dashboard: z.number().int().nullable().optional().openapi({ description: "Copy the tiles of this dashboard." }),
    duplicate_tiles: z
      .boolean()
      .optional()
      .openapi({ description: "With `use_dashboard`: copy the insights and texts too, not only the tiles." }),
  })
  // By hand: `use_template` and `use_dashboard` exclude each other, which an example built from types would not know.
  .openapi("CreateDashboard", {
    example: { name: "Revenue", description: "Monthly revenue by plan", pinned: true, tags: ["finance"] },
  });
export type CreateDashboardInput = z.infer<typeof CreateDashboardInput>;

const TextBody = z.string().refine((body) => [...body].length <= MAX_TEXT_BODY_LENGTH, {
  error: `Text body cannot exceed ${MAX_TEXT_BODY_LENGTH} characters`,
  params: { code: "max_length" },
});

export const TileInput = z.object({
  id: z
    .number()
    .int()
    .optional()
    .openapi({ description: "An existing tile of this dashboard; absent: a new text tile." }),
  text: z.object({ id: z.number().int().optional(), body: TextBody }).optional(),
  layouts: LayoutsInput.optional(),
  // PostHog's column is 400 characters.
  color: z.string().max(400).nullable().optional(),
  show_description: z.boolean().nullable().optional(),
  transparent_background: z.boolean().nullable().optional(),
  filters_overrides: boundedJsonObject().nullable().optional(),
  deleted: z.boolean().optional().openapi({ description: "`true` removes the tile." }),
});
export type TileInput = z.infer<typeof TileInput>;

/** One tile's change through its own path: a tile change without `id` (the path names the tile). */
export const UpdateTileInput = TileInput.omit({ id: true }).openapi("UpdateDashboardTile");

/** Each tile named once: two changes of one tile would be applied, counted and logged twice. */
const TileChanges = z
  .array(TileInput)
  .max(MAX_LIVE_TILES)
  .refine((tiles) => {
    const ids = tiles.flatMap((tile) => (tile.id === undefined ? [] : [tile.id]));
    return new Set(ids).size === ids.length;
  }, "tiles must name each tile ID once");

/**
 * PostHog's `duplicate_tiles`: tiles of this dashboard to copy onto it. Its web app sends each tile
 * whole, as it read it; only `id` and `layouts` are read.
 */
const DuplicateTiles = z
  .array(
    z.object({
      id: z.number().int().openapi({ description: "A live tile of this dashboard." }),
      layouts: LayoutsInput.optional().openapi({
        description: "Where the copy goes; absent or `{}`: the first free row.",
      }),
    }),
  )
  .max(MAX_LIVE_TILES);
export type DuplicateTiles = z.infer<typeof DuplicateTiles>;

export const UpdateDashboardInput = z
  .object({
    ...DashboardFields,
    tiles: TileChanges.optional(),
    duplicate_tiles: DuplicateTiles.optional().openapi({
      description: "Tiles of this dashboard to copy onto it: a copy of each insight (`<name> (Copy)`) or text.",
    }),
  })
  .openapi("UpdateDashboard");
export type UpdateDashboardInput = z.infer<typeof UpdateDashboardInput>;

/**
 * PostHog's `to_dashboard` (its web app's now), or `toDashboard` (as its clients sent it before):
 * the move reads `toDashboard`, and names the field as it was sent (`field`).
 */
export const MoveTileInput = z
  .object({
    tile: z.object({ id: z.number().int() }),
    to_dashboard: z
      .number()
      .int()
      .optional()
      .openapi({ description: "The dashboard of the same project to move the tile to (required, or `toDashboard`)." }),
    toDashboard: z.number().int().optional().openapi({ description: "`to_dashboard` as older clients send it." }),
  })
  .refine((move) => move.to_dashboard !== undefined || move.toDashboard !== undefined, {
    path: ["to_dashboard"],
    error: "This field is required.",
    params: { code: "required" },
  })
  .transform(({ tile, to_dashboard, toDashboard }) => ({
    tile,
    toDashboard: (to_dashboard ?? toDashboard) as number,
    field: to_dashboard === undefined ? "toDashboard" : "to_dashboard",
  }))
  .openapi("MoveTile");

/** PostHog's `copy_tile`: its names, in camel case, as its web app and MCP server send them. */
export const CopyTileInput = z
  .object({
    fromDashboardId: z
      .number()
      .int()
      .openapi({ description: "The dashboard of the same project the tile is on, not this one." }),
    tileId: z.number().int().openapi({ description: "The tile to copy: a live tile of `fromDashboardId`." }),
  })
  .openapi("CopyTile");
export type CopyTileInput = z.infer<typeof CopyTileInput>;

export const ReorderTilesInput = z
  .object({
    tile_order: z
      .array(z.number().int())
      .min(1)
      .max(MAX_LIVE_TILES)
      .openapi({ description: "Tile ids in the order wanted: top to bottom, left to right." }),
  })
  .openapi("ReorderTiles");

export const Insight = z
  .object({
    id: z.number().int(),
    short_id: z.string(),
    name: z.string().nullable(),
    derived_name: z.string().nullable(),
    description: z.string(),
    query: z.record(z.string(), z.unknown()).nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
    favorited: z.boolean(),
    tags: z.array(z.string()),
    deleted: z.boolean(),
  })
  .openapi("DashboardInsight");

export const Text = z
  .object({
    id: z.number().int(),
    body: z.string(),
    created_by: UserBasic.nullable(),
    last_modified_by: UserBasic.nullable(),
    last_modified_at: Timestamp,
  })
  .openapi("DashboardText");

const Tile = z
  .object({
    id: z.number().int(),
    layouts: Layouts,
    color: z.string().nullable(),
    insight: Insight.nullable(),
    text: Text.nullable(),
    order: z.number().int(),
    show_description: z.boolean().nullable(),
    transparent_background: z.boolean().nullable(),
    filters_overrides: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi("DashboardTile");

export const DashboardListItem = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    pinned: z.boolean(),
    created_at: Timestamp,
    created_by: UserBasic.nullable(),
    is_shared: z.boolean(),
    deleted: z.boolean(),
    creation_mode: z.enum(["default", "template", "duplicate"]),
    delete_insights: z.boolean(),
    tags: z.array(z.string()),
    restriction_level: z.number().int(),
    effective_restriction_level: z.number().int(),
    effective_privilege_level: z.number().int(),
    user_access_level: z.enum(ACCESS_LEVELS),
    access_control_version: z.enum(["v1", "v2"]),
    team_id: z.number().int().openapi({ description: "The environment's id." }),
    last_accessed_at: Timestamp.nullable().openapi({
      description: "When it was last retrieved; recorded at most once an hour.",
    }),
    last_viewed_at: Timestamp.nullable().openapi({
      description: "Always null: views are not recorded per user here (see `last_accessed_at`).",
    }),
    last_refresh: Timestamp.nullable().openapi({ description: "Always null: no cached results here." }),
  })
  .openapi("DashboardListItem");
export type DashboardListItem = z.infer<typeof DashboardListItem>;

export const Dashboard = DashboardListItem.extend({
  filters: z.record(z.string(), z.unknown()),
  variables: z.record(z.string(), z.unknown()),
  tiles: z.array(Tile),
  breakdown_colors: z.unknown(),
  data_color_theme_id: z.number().int().nullable(),
  quick_filter_ids: z.array(z.string()).nullable(),
  persisted_filters: z.record(z.string(), z.unknown()).nullable().openapi({ description: "Always null." }),
  persisted_variables: z.record(z.string(), z.unknown()).nullable().openapi({ description: "Always null." }),
}).openapi("Dashboard");
export type Dashboard = z.infer<typeof Dashboard>;
