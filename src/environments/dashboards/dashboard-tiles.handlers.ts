import type { RouteHandler } from "@hono/zod-openapi";
import { and } from "drizzle-orm";
import { etagOf, expectedVersion, judgedOnLatest } from "../../platform/conditional-requests";
import { personOf, type AppEnv } from "../../platform/env";
import { changedMeanwhile, notFound, validationError } from "../../platform/errors";
import type { ProjectTree } from "../project-trees";
import { copiedContent, copiedDisplay } from "./dashboard-copies";
import {
  callerStillMayCopy,
  dashboardOfPath,
  dashboardOfPathAgain,
  editableDashboard,
  parseDashboardId,
  readTileCopy,
  scopeOf,
} from "./dashboard-request";
import { rightsOn, toDashboard } from "./dashboard-response";
import { changesAsRead, stackedLayouts } from "./dashboard-versions";
import { versionStatements } from "./dashboard-versions.queries";
import { newestTileId, tileActivity, tileItem } from "./dashboards.activity";
import { authorOf, raiseTileWrite, withinTileLimit, writeDashboardUpdate } from "./dashboards.handlers";
import {
  insertTilesStatements,
  insightOnceGuard,
  isInsightShownTwice,
  tileLimitGuard,
  tileLiveOn,
  writeAndReadDashboard,
  type DashboardWithTiles,
  type NewTile,
} from "./dashboards.queries";
import type { dashboardRoutes } from "./dashboards.routes";

type UpdateTileRoute = ReturnType<typeof dashboardRoutes<ProjectTree>>["updateTile"];

/**
 * One tile's change through its own path: the dashboard's PATCH with that one tile in `tiles`, so
 * the same checks, entry and version; errors name the body's fields (`text.body`, not `tiles.0.text.body`).
 */
export const updateDashboardTile: RouteHandler<UpdateTileRoute, AppEnv> = async (c) => {
  const change = c.req.valid("json");
  const tileId = parseDashboardId(c.req.valid("param").tile_id);
  const [[row], tiles] = dashboardOfPath.results(c);
  const first = row && { row, tiles };
  const input = { tiles: [{ ...change, id: tileId }] };
  const update = (current: DashboardWithTiles | undefined, again: boolean) => {
    if (!current || current.row.dashboard.deleted) throw notFound();
    editableDashboard(c, current.row);
    // Another dashboard's tile, or one removed, is not found on this one (409 when it left meanwhile).
    if (!current.tiles.some(({ tile }) => tile.id === tileId)) throw again ? changedMeanwhile("dashboard") : notFound();
    return writeDashboardUpdate(c, current, again && first ? changesAsRead(first, input) : input, () => "");
  };
  const updated = await judgedOnLatest(first, () => dashboardOfPathAgain(c), update, "dashboard");
  return c.json(toDashboard(updated, scopeOf(c).caller), 200, { ETag: etagOf(updated.row.dashboard) });
};

type CopyTileRoute = ReturnType<typeof dashboardRoutes<ProjectTree>>["copyTile"];

const INSIGHT_ALREADY_THERE = "This insight is already on the destination dashboard.";

/**
 * PostHog's `copy_tile`: a new tile on the dashboard of the path showing what a tile of another
 * dashboard of the environment shows: the same insight, or a copy of its text (`copiedContent`),
 * with the tile's colour and display settings, on the first free row. The caller must see the
 * source (else 404, as an unknown one) and be able to edit the destination. The entry and the
 * version name neither the source nor its tile, which some who see the copy may not see.
 */
export const copyDashboardTile: RouteHandler<CopyTileRoute, AppEnv> = async (c) => {
  const copy = c.req.valid("json");
  const scope = scopeOf(c);
  const db = c.var.db;
  const destinationId = parseDashboardId(c.req.valid("param").id);
  const [[row], destinationTiles, [source], [tile]] = await readTileCopy(c, scope, destinationId, copy);
  if (row?.dashboard.deleted) throw notFound();
  const destination = editableDashboard(c, row);
  if (copy.fromDashboardId === destinationId) {
    throw validationError(
      "invalid_input",
      "Destination must be a different dashboard than the source.",
      "fromDashboardId",
    );
  }
  if (!source || rightsOn(source, scope.caller).userAccessLevel === "none" || !tile) throw notFound();
  const insightId = tile.insight?.id;
  if (insightId !== undefined && destinationTiles.some(({ insight }) => insight?.id === insightId)) {
    throw validationError("invalid_input", INSIGHT_ALREADY_THERE, "tileId");
  }
  const expected = expectedVersion(c, destination.dashboard);
  // Only while the caller may still see the source and the tile is still on it, as read: else 404.
  const held = {
    id: copy.fromDashboardId,
    environmentId: scope.environmentId,
    organizationId: c.var.project.organizationId,
  };
  const sourceHeld = and(callerStillMayCopy(c, held, true), tileLiveOn(copy.tileId, copy.fromDashboardId));
  const raise = raiseTileWrite(c, destination.dashboard, expected, sourceHeld);
  const [layouts] = stackedLayouts(
    destinationTiles.map((shown) => shown.tile.layouts),
    1,
  );
  const copied: NewTile = {
    content: copiedContent(tile, false, true),
    layouts: layouts!,
    display: copiedDisplay(tile),
  };
  const onDashboard = { dashboard_id: destinationId };
  const writes = [
    raise,
    ...insertTilesStatements(db, scope.environmentId, destinationId, personOf(c.var.actor), [copied]),
    tileActivity.record(c, "created", tileItem(c.var.project, destinationId, newestTileId, onDashboard)),
    tileLimitGuard(db, destinationId),
    ...(insightId === undefined ? [] : [insightOnceGuard(db, destinationId, insightId)]),
    ...versionStatements(db, destinationId, authorOf(c), "Added 1 tile (a copy)", expected),
  ];
  const written = writeAndReadDashboard(db, scope, destinationId, writes).catch((error: unknown) => {
    if (isInsightShownTwice(error)) throw validationError("invalid_input", INSIGHT_ALREADY_THERE, "tileId");
    throw error;
  });
  const updated = await withinTileLimit(c, "tileId", written);
  if (!updated) throw notFound();
  return c.json(toDashboard(updated, scope.caller), 200, { ETag: etagOf(updated.row.dashboard) });
};
