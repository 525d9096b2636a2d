import type { RouteHandler } from "@hono/zod-openapi";
import { etagOf } from "../../platform/conditional-requests";
import type { AppEnv } from "../../platform/env";
import { notFound } from "../../platform/errors";
import type { ProjectTree } from "../project-trees";
import { dashboardOfPath, editableDashboard, parseDashboardId, scopeOf } from "./dashboard-request";
import { toDashboard } from "./dashboard-response";
import { writeDashboardUpdate } from "./dashboards.handlers";
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
  if (row?.dashboard.deleted) throw notFound();
  const current = { row: editableDashboard(c, row), tiles };
  // Another dashboard's tile, or one removed, is not found on this one.
  if (!tiles.some(({ tile }) => tile.id === tileId)) throw notFound();
  const updated = await writeDashboardUpdate(c, current, { tiles: [{ ...change, id: tileId }] }, () => "");
  return c.json(toDashboard(updated, scopeOf(c).caller), 200, { ETag: etagOf(updated.row.dashboard) });
};
