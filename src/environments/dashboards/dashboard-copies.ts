import type { Context } from "hono";
import type { TileLayouts } from "../../db/schema";
import type { AppEnv } from "../../platform/env";
import { permissionDenied, validationError } from "../../platform/errors";
import { keyPolicyRefusal } from "../../platform/auth/key-policy";
import { isAdmin } from "../../platform/levels";
import { callerStillMayCopy, readDashboardToCopy } from "./dashboard-request";
import { rightsOn } from "./dashboard-response";
import { stackedLayouts } from "./dashboard-versions";
import type { DashboardScope, NewTile, NewTileContent, TileDisplay, TileRow } from "./dashboards.queries";
import type { CreateDashboardInput } from "./dashboards.schema";

/** How much of an insight's name a note names it by. */
const NOTE_NAME_LENGTH = 400;

export const NOT_ADMIN_IN_BOTH =
  "Copying a dashboard to another project needs admin rights in the organizations of both projects.";

/**
 * What stands in for an insight tile copied to another project without its insight: insights
 * belong to their project, and no query results are stored here to show instead.
 */
function insightNote(insight: NonNullable<TileRow["insight"]>): string {
  const name = (insight.name ?? insight.derivedName ?? "Untitled insight").slice(0, NOTE_NAME_LENGTH);
  return (
    `**${name}**\n\nThis tile showed an insight of the project this dashboard was copied from. ` +
    "Insights belong to their project, so it was not copied; copy the dashboard with " +
    "`duplicate_tiles: true` to copy its insights too."
  );
}

/**
 * What a copied tile shows: the same insight within its project, else a copy of it
 * (`duplicate_tiles`), else, in another project, a note naming it; always a copy of a text. A text
 * is edited through its tile, so a shared one would let whoever may edit the copy edit the original.
 */
export function copiedContent(
  { insight, text }: TileRow,
  duplicateContent: boolean,
  sameProject: boolean,
): NewTileContent {
  if (insight) {
    if (duplicateContent) {
      const name = insight.name === null ? null : `${insight.name} (Copy)`;
      return { insight: { name, description: insight.description, query: insight.query, tags: insight.tags } };
    }
    return sameProject ? { insightId: insight.id } : { text: { body: insightNote(insight) } };
  }
  if (!text) throw new Error("a tile shows an insight or a text");
  return { text: { body: text.body } };
}

const isPlaced = (layouts: TileLayouts) => Object.keys(layouts).length > 0;

/** A tile's colour and display settings, which its copies keep. */
export const copiedDisplay = ({ tile }: TileRow): TileDisplay => ({
  color: tile.color,
  showDescription: tile.showDescription,
  transparentBackground: tile.transparentBackground,
  filtersOverrides: tile.filtersOverrides,
});

/**
 * The live tiles of a dashboard as new tiles of another one, each where it was, with its colour
 * and display settings; a tile stored without a place goes on the grid's first free row.
 */
function copiedTiles(tiles: TileRow[], duplicateContent: boolean, sameProject: boolean): NewTile[] {
  const placed = tiles.map(({ tile }) => tile.layouts).filter(isPlaced);
  const free = stackedLayouts(placed, tiles.length - placed.length);
  let next = 0;
  return tiles.map((row) => ({
    content: copiedContent(row, duplicateContent, sameProject),
    layouts: isPlaced(row.tile.layouts) ? row.tile.layouts : free[next++]!,
    display: copiedDisplay(row),
  }));
}

/**
 * The source `use_dashboard` names, as the caller may copy it. One they cannot see (unknown,
 * deleted, in a project or organization hidden from them or outside the key's scope, hidden by a
 * `none` rule) is refused as PostHog refuses an unknown one, so that nothing tells them apart.
 * From another project, the caller must be an admin of both organizations (403).
 */
async function copyableSource(c: Context<AppEnv>, scope: DashboardScope, id: number) {
  const found = await readDashboardToCopy(c, id);
  const source = found?.row.source;
  const caller = { userId: scope.caller.userId, organizationLevel: source?.level ?? 0 };
  const visible =
    found !== undefined &&
    source !== undefined &&
    keyPolicyRefusal(c.var.actor, source) === undefined &&
    rightsOn(found.row, caller).userAccessLevel !== "none";
  if (!visible) throw validationError("invalid_input", "Invalid value provided", "use_dashboard");
  const sameProject = source.environmentId === scope.environmentId;
  if (!sameProject && !(isAdmin(source.organizationLevel) && isAdmin(c.var.project.organizationLevel))) {
    throw permissionDenied(NOT_ADMIN_IN_BOTH);
  }
  return { row: found.row, tiles: found.tiles, sameProject };
}

/**
 * A new dashboard as a copy of `id`: its tiles and variables; from another project also its
 * description, tags and filters (the body's own values win), as a transfer brings the whole
 * dashboard.
 */
export async function copyStartingPoint(
  c: Context<AppEnv>,
  scope: DashboardScope,
  input: CreateDashboardInput,
  id: number,
) {
  const { row, tiles, sameProject } = await copyableSource(c, scope, id);
  const { dashboard, source } = row;
  const where = { id: dashboard.id, environmentId: source.environmentId, organizationId: source.organizationId };
  return {
    // The copy is written only while the caller may still copy it, as judged above.
    heldWhile: callerStillMayCopy(c, where, sameProject),
    source: where,
    creationMode: "duplicate" as const,
    tiles: copiedTiles(tiles, input.duplicate_tiles ?? false, sameProject),
    name: "",
    description: sameProject ? "" : dashboard.description,
    tags: sameProject ? [] : dashboard.tags,
    filters: sameProject ? {} : dashboard.filters,
    variables: dashboard.variables,
    // The copy's log and history are read by whoever sees its project, who may not see the
    // source's (another organization's, or one hidden from them): the source's ids stay out.
    copiedFrom: sameProject ? undefined : { source_dashboard_id: null, source_project_id: null },
    summary: sameProject
      ? `Created as a copy of dashboard ${dashboard.id}`
      : "Created as a copy of a dashboard of another project",
  };
}
