import { z } from "@hono/zod-openapi";
import { conditionalRequestsOpenApi } from "../../platform/conditional-requests";
import { dashboardPathId, integerPathId } from "../../platform/path-ids";
import { booleanQuery } from "../../platform/input-limits";
import { SearchQuery } from "../../platform/text-search";
import { paginated, PaginationQuery } from "../../platform/pagination";
import { ProjectParams } from "../../platform/route-context";
import type { ProjectTree } from "../project-trees";
import { creationReads, dashboardOfPath, tileToCopy, tileToMove, versionToRestore } from "./dashboard-request";
import { DashboardVersion, DashboardVersionItem } from "./dashboard-versions";
import { apiRoute, changedMeanwhileResponse, jsonBody, jsonResponse as json } from "../../platform/route";
import {
  CopyTileInput,
  CreateDashboardInput,
  Dashboard,
  DashboardListItem,
  MoveTileInput,
  ReorderTilesInput,
  UpdateDashboardInput,
  UpdateTileInput,
} from "./dashboards.schema";

export const DashboardParams = ProjectParams.extend({ id: dashboardPathId });
const VersionParams = DashboardParams.extend({ version: integerPathId("Version number.") });
const TileParams = DashboardParams.extend({ tile_id: integerPathId("A live tile of the dashboard.") });

const conditional = conditionalRequestsOpenApi("dashboard");
const { etag, ifMatch, preconditionFailed } = conditional;

const ListQuery = PaginationQuery.extend({
  pinned: booleanQuery("Only pinned dashboards (`true`, or `1`) or only the others (`false`, or `0`)."),
  search: SearchQuery.openapi({
    description:
      "Part of the name or of the description's first 1,000 characters, ignoring case " +
      "(its first 200 characters are searched).",
  }),
  tags: z.string().optional().openapi({ description: "Comma-separated tags; dashboards with any of them." }),
});

/** The dashboard routes of one tree; `tree` only changes the path. */
export function dashboardRoutes<T extends ProjectTree>(tree: T) {
  const collection = `${tree}/{project_id}/dashboards` as const;
  const item = `${collection}/{id}` as const;
  const common = { context: "project" as const, tags: ["dashboards"] };
  return {
    list: apiRoute({
      ...common,
      method: "get",
      path: collection,
      scope: "dashboard:read",
      serviceKeys: true,
      summary: "List the environment's dashboards, pinned first, then by name",
      request: { params: ProjectParams, query: ListQuery },
      responses: {
        200: json(paginated(DashboardListItem), "A page of dashboards (without tiles, filters, variables)"),
      },
    }),
    create: apiRoute({
      ...common,
      reads: creationReads,
      method: "post",
      path: collection,
      scope: "dashboard:write",
      serviceKeys: true,
      summary: "Create a dashboard, empty, from a template or as a copy of another",
      request: { params: ProjectParams, body: jsonBody(CreateDashboardInput) },
      responses: { 201: json(Dashboard, "The dashboard") },
    }),
    retrieve: apiRoute({
      ...common,
      method: "get",
      path: item,
      scope: "dashboard:read",
      serviceKeys: true,
      summary: "Retrieve a dashboard with its tiles",
      request: {
        params: DashboardParams,
        headers: conditional.ifNoneMatch,
      },
      responses: {
        200: { ...json(Dashboard, "The dashboard"), headers: etag },
        304: conditional.notModified,
      },
    }),
    update: apiRoute({
      ...common,
      reads: dashboardOfPath,
      method: "patch",
      path: item,
      scope: "dashboard:write",
      serviceKeys: true,
      summary: "Update a dashboard and its tiles; `deleted: true` soft-deletes it, `deleted: false` restores it",
      description:
        "Dashboards are never deleted outright: `DELETE` answers 405 with an empty body and `Allow: GET, PATCH`.",
      request: { params: DashboardParams, headers: ifMatch, body: jsonBody(UpdateDashboardInput) },
      responses: {
        200: { ...json(Dashboard, "The dashboard"), headers: etag },
        409: changedMeanwhileResponse,
        412: preconditionFailed,
      },
    }),
    moveTile: apiRoute({
      ...common,
      reads: tileToMove,
      method: "patch",
      path: `${item}/move_tile`,
      scope: "dashboard:write",
      serviceKeys: true,
      summary: "Move a tile to another dashboard of the same environment",
      request: { params: DashboardParams, headers: ifMatch, body: jsonBody(MoveTileInput) },
      responses: {
        200: { ...json(Dashboard, "The source dashboard, without the tile"), headers: etag },
        412: preconditionFailed,
      },
    }),
    copyTile: apiRoute({
      ...common,
      reads: tileToCopy,
      method: "post",
      path: `${item}/copy_tile`,
      scope: "dashboard:write",
      serviceKeys: true,
      summary: "Copy a tile of another dashboard of the same environment onto this one",
      description:
        "The copy shows the same insight, or a copy of the text (a text is edited through its tile), with the " +
        "tile's colour and display settings, on the dashboard's first free row. The caller must see the other " +
        "dashboard and be able to edit this one.",
      request: { params: DashboardParams, headers: ifMatch, body: jsonBody(CopyTileInput) },
      responses: {
        200: { ...json(Dashboard, "The dashboard, with the copy"), headers: etag },
        412: preconditionFailed,
      },
    }),
    updateTile: apiRoute({
      ...common,
      reads: dashboardOfPath,
      method: "patch",
      path: `${item}/tiles/{tile_id}`,
      scope: "dashboard:write",
      serviceKeys: true,
      summary: "Change one tile: its layouts, colour, display settings or text; `deleted: true` removes it",
      description:
        "As the tile's entry in a dashboard PATCH's `tiles`: a new version of the dashboard, checked against " +
        "the dashboard's `If-Match`. `layouts: {}` places the tile on the grid's first free row.",
      request: { params: TileParams, headers: ifMatch, body: jsonBody(UpdateTileInput) },
      responses: {
        200: { ...json(Dashboard, "The dashboard"), headers: etag },
        409: changedMeanwhileResponse,
        412: preconditionFailed,
      },
    }),
    reorderTiles: apiRoute({
      ...common,
      reads: dashboardOfPath,
      method: "post",
      path: `${item}/reorder_tiles`,
      scope: "dashboard:write",
      serviceKeys: true,
      summary: "Lay the tiles out in the given order, two a row (one a row on small screens)",
      request: { params: DashboardParams, headers: ifMatch, body: jsonBody(ReorderTilesInput) },
      responses: { 200: { ...json(Dashboard, "The dashboard"), headers: etag }, 412: preconditionFailed },
    }),
    listVersions: apiRoute({
      ...common,
      method: "get",
      path: `${item}/versions`,
      scope: "dashboard:read",
      serviceKeys: true,
      summary: "List the dashboard's versions, newest first",
      request: { params: DashboardParams, query: PaginationQuery },
      responses: { 200: json(paginated(DashboardVersionItem), "A page of versions (without their snapshots)") },
    }),
    retrieveVersion: apiRoute({
      ...common,
      method: "get",
      path: `${item}/versions/{version}`,
      scope: "dashboard:read",
      serviceKeys: true,
      summary: "Retrieve the dashboard as a version left it, tiles included",
      request: { params: VersionParams },
      responses: { 200: json(DashboardVersion, "The version") },
    }),
    restoreVersion: apiRoute({
      ...common,
      reads: versionToRestore,
      method: "post",
      path: `${item}/versions/{version}/restore`,
      scope: "dashboard:write",
      serviceKeys: true,
      summary: "Make the dashboard as a version left it again, as a new version",
      request: { params: VersionParams, headers: ifMatch },
      responses: {
        200: { ...json(Dashboard, "The dashboard"), headers: etag },
        409: changedMeanwhileResponse,
        412: preconditionFailed,
      },
    }),
  };
}
