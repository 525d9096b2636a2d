import type { RouteHandler } from "@hono/zod-openapi";
import { and, eq, exists } from "drizzle-orm";
import { dashboards, dashboardTiles, texts } from "../../db/schema";
import { etagOf, expectedVersion } from "../../platform/conditional-requests";
import type { Database } from "../../platform/db";
import { personOf, type AppEnv } from "../../platform/env";
import { changedMeanwhile, notFound, permissionDenied } from "../../platform/errors";
import { nowIso } from "../../platform/ids";
import { sameJson } from "../../platform/json-equality";
import { pageEnvelope, readPage } from "../../platform/pagination";
import { projectRead } from "../../platform/route-context";
import type { ProjectTree } from "../project-trees";
import {
  dashboardActivity,
  dashboardItem,
  tileActivity,
  tileItem,
  trackedDashboardFields,
} from "./dashboards.activity";
import {
  editableDashboard,
  parseDashboardId,
  readScopeOf,
  scopeOf,
  versionToRestore,
  visibleDashboard,
} from "./dashboard-request";
import { rightsOn, toDashboard } from "./dashboard-response";
import { parseSnapshot, toVersion, toVersionItem } from "./dashboard-versions";
import {
  nextVersion,
  selectVersion,
  toVersionPage,
  versionIs,
  versionPageStatements,
  versionStatements,
  type DashboardSnapshot,
} from "./dashboard-versions.queries";
import { authorOf, whileLive, restrictionWhileEditor, trackedTileFields, withinTileLimit } from "./dashboards.handlers";
import {
  insightOnceGuard,
  isInsightShownTwice,
  restoreInsightsOn,
  selectDashboard,
  tileLimitGuard,
  writeAndReadDashboard,
  type DashboardRow,
  type Statement,
  type TileRow,
} from "./dashboards.queries";
import type { dashboardRoutes } from "./dashboards.routes";

type DashboardRoutes = ReturnType<typeof dashboardRoutes<ProjectTree>>;
type Handler<K extends keyof DashboardRoutes> = RouteHandler<DashboardRoutes[K], AppEnv>;

/** A page of versions with the dashboard, in the round trip that resolves the project: 404 where it would be. */
export const listDashboardVersions: Handler<"listVersions"> = async (c) => {
  const id = parseDashboardId(c.req.valid("param").id);
  const page = readPage(c);
  const [[row], [counted], rows] = await projectRead(c, (environmentId) => [
    selectDashboard(c.var.db, readScopeOf(c, environmentId), id),
    ...versionPageStatements(c.var.db, id, page),
  ]);
  visibleDashboard(c, row);
  const listed = toVersionPage(page, rows);
  const results = listed.rows.map(toVersionItem);
  return c.json(pageEnvelope(c, page, counted?.value ?? 0, results, listed.links), 200);
};

export const retrieveDashboardVersion: Handler<"retrieveVersion"> = async (c) => {
  const params = c.req.valid("param");
  const id = parseDashboardId(params.id);
  const number = parseDashboardId(params.version);
  const [[row], [version]] = await projectRead(c, (environmentId) => [
    selectDashboard(c.var.db, readScopeOf(c, environmentId), id),
    selectVersion(c.var.db, id, number),
  ]);
  visibleDashboard(c, row);
  if (!version) throw notFound();
  return c.json(toVersion(version), 200);
};

/** The tile as the snapshot has it, where it differs from the live one (or was removed since). */
function restoredTile(
  db: Database,
  { dashboardId, userId }: { dashboardId: number; userId: number | null },
  tile: DashboardSnapshot["tiles"][number],
  live: TileRow | undefined,
): Statement[] {
  const fields = {
    layouts: tile.layouts,
    color: tile.color,
    showDescription: tile.show_description,
    transparentBackground: tile.transparent_background,
    filtersOverrides: tile.filters_overrides,
  };
  const statements: Statement[] = [];
  const current = live && {
    layouts: live.tile.layouts,
    color: live.tile.color,
    showDescription: live.tile.showDescription,
    transparentBackground: live.tile.transparentBackground,
    filtersOverrides: live.tile.filtersOverrides,
  };
  // Scoped to the dashboard: a tile moved to another one since stays there.
  const thisTile = and(eq(dashboardTiles.id, tile.id), eq(dashboardTiles.dashboardId, dashboardId));
  if (!sameJson(current, fields)) {
    statements.push(
      db
        .update(dashboardTiles)
        .set({ ...fields, deleted: false })
        .where(thisTile),
    );
  }
  if (tile.text_id !== null && tile.text !== null && tile.text !== (live?.text?.body ?? null)) {
    statements.push(
      db
        .update(texts)
        .set({ body: tile.text, lastModifiedById: userId, lastModifiedAt: nowIso() })
        // Only a text this dashboard still shows: one moved to another dashboard since is that one's.
        .where(
          and(
            eq(texts.id, tile.text_id),
            exists(
              db
                .select({ id: dashboardTiles.id })
                .from(dashboardTiles)
                .where(and(eq(dashboardTiles.textId, texts.id), eq(dashboardTiles.dashboardId, dashboardId))),
            ),
          ),
        ),
    );
  }
  return statements;
}

/** The insights a version's tiles show, each once. */
const restoredInsights = (snapshot: DashboardSnapshot) => [
  ...new Set(snapshot.tiles.flatMap((tile) => (tile.insight_id === null ? [] : [tile.insight_id]))),
];

function assertMayRestore(
  row: DashboardRow,
  caller: ReturnType<typeof scopeOf>["caller"],
  snapshot: DashboardSnapshot,
) {
  if (snapshot.restriction_level !== row.dashboard.restrictionLevel && !rightsOn(row, caller).canChangeRestriction) {
    throw permissionDenied(
      "Only the dashboard owner and project admins have the restriction rights required " +
        "to change the dashboard's restriction level.",
    );
  }
}

/**
 * Writes the version's fields and tiles back as a new version: tiles it shows come back as they
 * were (removed ones too), tiles added since are removed, its texts' bodies return. History is
 * never rewritten.
 */
export const restoreDashboardVersion: Handler<"restoreVersion"> = async (c) => {
  const params = c.req.valid("param");
  const id = parseDashboardId(params.id);
  const number = parseDashboardId(params.version);
  const db = c.var.db;
  const scope = scopeOf(c);
  const [[row], tiles, [version]] = versionToRestore.results(c);
  const current = editableDashboard(c, row);
  if (!version) throw notFound();
  const snapshot = parseSnapshot(version.version.snapshot);
  assertMayRestore(current, scope.caller, snapshot);
  const expected = expectedVersion(c, current.dashboard);

  const restoreFields = db
    .update(dashboards)
    .set({
      name: snapshot.name,
      description: snapshot.description,
      pinned: snapshot.pinned,
      tags: snapshot.tags,
      restrictionLevel: restrictionWhileEditor(c, current.dashboard, snapshot.restriction_level),
      filters: snapshot.filters,
      variables: snapshot.variables,
      breakdownColors: snapshot.breakdown_colors,
      dataColorThemeId: snapshot.data_color_theme_id,
      quickFilterIds: snapshot.quick_filter_ids,
      lastModifiedAt: nowIso(),
      deleted: whileLive(),
      ...nextVersion,
    })
    .where(and(eq(dashboards.id, id), versionIs(expected)));
  const live = new Map(tiles.map((tile) => [tile.tile.id, tile]));
  const kept = new Set(snapshot.tiles.map((tile) => tile.id));
  const onDashboard = { dashboard_id: id };
  const tileItemOf = (tileId: number) => tileItem(c.var.project, id, tileId, onDashboard);
  // Each removal's entry right after its own update: a tile moved away meanwhile is not logged.
  const removeAdded = tiles
    .filter(({ tile }) => !kept.has(tile.id))
    .flatMap(({ tile }) => [
      db
        .update(dashboardTiles)
        .set({ deleted: true })
        .where(and(eq(dashboardTiles.id, tile.id), eq(dashboardTiles.dashboardId, id))),
      tileActivity.record(c, "deleted", tileItemOf(tile.id)),
    ]);
  // Each tile the restore changes is logged as a PATCH of it would be (webhooks follow the log).
  const restoreTiles = snapshot.tiles.flatMap((tile) => {
    const shown = live.get(tile.id);
    const writes = restoredTile(db, { dashboardId: id, userId: personOf(c.var.actor) }, tile, shown);
    const after = {
      layouts: tile.layouts,
      color: tile.color,
      text: tile.text ?? (shown ? trackedTileFields(shown).text : null),
      show_description: tile.show_description,
      transparent_background: tile.transparent_background,
      filters_overrides: tile.filters_overrides,
    };
    const before = shown ? trackedTileFields(shown) : Object.fromEntries(Object.keys(after).map((key) => [key, null]));
    const entry =
      writes.length > 0 ? tileActivity.changed(c, "updated", tileItemOf(tile.id), before, after) : undefined;
    return entry ? [...writes, entry] : writes;
  });
  const item = dashboardItem(c.var.project, id, snapshot.name);
  const entry = dashboardActivity.changed(c, "updated", item, trackedDashboardFields(current.dashboard), {
    name: snapshot.name,
    description: snapshot.description,
    pinned: snapshot.pinned,
    tags: snapshot.tags,
    restriction_level: snapshot.restriction_level,
  });
  const writes: Statement[] = [
    restoreFields,
    // Right after the update it records: an entry is written only when the statement before it
    // changed a row, and a tile's write before it may change none (a tile moved away since).
    ...(entry ? [entry] : []),
    ...removeAdded,
    ...restoreTiles,
    // The insights its tiles show, deleted since with a dashboard that showed them too: back with
    // them, as a dashboard's restore brings its own back, so that the dashboard is the version.
    restoreInsightsOn(db, id),
    tileLimitGuard(db, id),
    // Its insights, as read, on no other live tile: a copy of one landed meanwhile refuses the restore (409).
    ...restoredInsights(snapshot).map((insightId) => insightOnceGuard(db, id, insightId)),
    ...versionStatements(db, id, authorOf(c), `Restored version ${number}`, expected),
  ];
  const written = writeAndReadDashboard(db, scope, id, writes).catch((error: unknown) => {
    if (isInsightShownTwice(error)) throw changedMeanwhile("dashboard");
    throw error;
  });
  const restored = await withinTileLimit(c, "version", written);
  if (!restored) throw notFound();
  return c.json(toDashboard(restored, scope.caller), 200, { ETag: etagOf(restored.row.dashboard) });
};
