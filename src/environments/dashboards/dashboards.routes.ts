import { z } from "@hono/zod-openapi";
import { integerPathId } from "../../platform/path-ids";
import { paginated, PaginationQuery } from "../../platform/pagination";
import { ProjectParams } from "../../platform/route-context";
import type { ProjectTree } from "../project-trees";
import { dashboardOfPath, dashboardToCopy, tileToMove } from "./dashboard-request";
import { apiRoute, jsonBody, jsonResponse as json } from "../../platform/route";
import {
  CreateDashboardInput,
  Dashboard,
  DashboardListItem,
  MoveTileInput,
  UpdateDashboardInput,
} from "./dashboards.schema";

export const DashboardParams = ProjectParams.extend({ id: integerPathId("Dashboard id.") });

const ListQuery = PaginationQuery.extend({
  pinned: z.string().optional().openapi({ description: "`true` or `false`." }),
  search: z.string().optional().openapi({ description: "Part of the name or description, ignoring case." }),
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
      summary: "List the environment's dashboards, pinned first, then by name",
      request: { params: ProjectParams, query: ListQuery },
      responses: {
        200: json(paginated(DashboardListItem), "A page of dashboards (without tiles, filters, variables)"),
      },
    }),
    create: apiRoute({
      ...common,
      reads: dashboardToCopy,
      method: "post",
      path: collection,
      scope: "dashboard:write",
      summary: "Create a dashboard, empty, from a template or as a copy of another",
      request: { params: ProjectParams, body: jsonBody(CreateDashboardInput) },
      responses: { 201: json(Dashboard, "The dashboard") },
    }),
    retrieve: apiRoute({
      ...common,
      method: "get",
      path: item,
      scope: "dashboard:read",
      summary: "Retrieve a dashboard with its tiles",
      request: { params: DashboardParams },
      responses: { 200: json(Dashboard, "The dashboard") },
    }),
    update: apiRoute({
      ...common,
      reads: dashboardOfPath,
      method: "patch",
      path: item,
      scope: "dashboard:write",
      summary: "Update a dashboard and its tiles; `deleted: true` soft-deletes it, `deleted: false` restores it",
      description:
        "Dashboards are never deleted outright: `DELETE` answers 405 with an empty body and `Allow: GET, PATCH`.",
      request: { params: DashboardParams, body: jsonBody(UpdateDashboardInput) },
      responses: { 200: json(Dashboard, "The dashboard") },
    }),
    moveTile: apiRoute({
      ...common,
      reads: tileToMove,
      method: "patch",
      path: `${item}/move_tile`,
      scope: "dashboard:write",
      summary: "Move a tile to another dashboard of the same environment",
      request: { params: DashboardParams, body: jsonBody(MoveTileInput) },
      responses: { 200: json(Dashboard, "The source dashboard, without the tile") },
    }),
  };
}
