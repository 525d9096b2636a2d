import { afterResponse } from "../../platform/background";
import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { and, eq, sql, type SQL } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { dashboards, dashboardTiles, texts, type TileLayouts } from "../../db/schema";
import { authenticate } from "../../platform/auth/authenticate";
import { inJsonList, isNotNullViolation, isNotNullViolationOf, whileHolds, type Database } from "../../platform/db";
import { searchText } from "../../platform/text-search";
import {
  etagOf,
  expectedVersion,
  isNotModified,
  judgedOnLatest,
  notModified,
  preconditionFailed,
  StaleRead,
} from "../../platform/conditional-requests";
import { personOf, type AppEnv } from "../../platform/env";
import {
  ApiError,
  changedMeanwhile,
  changedOrGone,
  notFound,
  permissionDenied,
  validationError,
} from "../../platform/errors";
import { normalizeTags, splitQueryList } from "../../platform/input-limits";
import { nowIso } from "../../platform/ids";
import { pageEnvelope, readPage } from "../../platform/pagination";
import { projectRead } from "../../platform/route-context";
import {
  dashboardActivity,
  dashboardItem,
  newestTileId,
  tileActivity,
  tileItem,
  trackedDashboardFields,
} from "./dashboards.activity";
import {
  assertMayCreateDashboards,
  dashboardOfPath,
  dashboardOfPathAgain,
  editableDashboard,
  callerStillCreatorIn,
  callerStillEditorOf,
  editRightLost,
  NO_CREATE_RIGHT,
  NO_EDIT_RIGHT,
  parseDashboardId,
  readScopeOf,
  readTileMove,
  scopeOf,
  sourceMovedMeanwhile,
  visibleDashboard,
} from "./dashboard-request";
import { copiedContent, copiedDisplay, copyStartingPoint } from "./dashboard-copies";
import { refusalInEnvironment } from "../../platform/route-context/project";
import { DASHBOARD_TEMPLATES, type DashboardTemplate } from "./dashboard-templates";
import { rightsOn, toDashboard, toDashboardListItem } from "./dashboard-response";
import {
  ACCESS_WRITE_INTERVAL_MS,
  deleteInsightsOnlyOn,
  insertTilesStatements,
  insightOnceGuard,
  isInsightShownTwice,
  isDashboardNotAsRead,
  dashboardLive,
  stillAsRead,
  tileLiveOn,
  dashboardPage,
  toDashboardPage,
  newestDashboardId,
  recordDashboardAccess,
  restoreInsightsOn,
  selectDashboard,
  selectTiles,
  tileLimitGuard,
  writeAndReadDashboard,
  type DashboardRow,
  type DashboardScope,
  type DashboardWithTiles,
  type NewTile,
  type TileDisplay,
  type Statement,
  type TileRow,
} from "./dashboards.queries";
import type { ProjectTree } from "../project-trees";
import { sameJson } from "../../platform/json-equality";
import type { dashboardRoutes } from "./dashboards.routes";
import {
  changesAsRead,
  changesDashboardItself,
  reorderedLayouts,
  stackedLayouts,
  updateSummary,
} from "./dashboard-versions";
import {
  isSnapshotTooLarge,
  isStaleVersion,
  MAX_DASHBOARD_SNAPSHOT_BYTES,
  nextVersion,
  versionIs,
  versionStatements,
  type VersionAuthor,
} from "./dashboard-versions.queries";
import {
  MAX_LIVE_TILES,
  type CreateDashboardInput,
  type DuplicateTiles,
  type TileInput,
  type UpdateDashboardInput,
} from "./dashboards.schema";

type DashboardRoutes = ReturnType<typeof dashboardRoutes<ProjectTree>>;
type Handler<K extends keyof DashboardRoutes> = RouteHandler<DashboardRoutes[K], AppEnv>;

export const listEnvironmentDashboards: Handler<"list"> = async (c) => {
  const page = readPage(c);
  const query = c.req.valid("query");
  const filters = {
    pinned: query.pinned,
    search: searchText(query.search),
    tags: query.tags ? normalizeTags(splitQueryList(query.tags, "tags")) : undefined,
  };
  const result = toDashboardPage(
    page,
    await projectRead(c, (environmentId) => dashboardPage(c.var.db, c.var.actor, environmentId, page, filters)),
  );
  const caller = scopeOf(c).caller;
  const results = result.rows.map((row) => toDashboardListItem(row, caller));
  return c.json(pageEnvelope(c, page, result.count, results, result.links), 200);
};

/** The dashboard and its tiles, with the project: one round trip, whatever the number of tiles. */
export const retrieveEnvironmentDashboard: Handler<"retrieve"> = async (c) => {
  const id = parseDashboardId(c.req.valid("param").id);
  const [[row], tiles] = await projectRead(c, (environmentId) => [
    selectDashboard(c.var.db, readScopeOf(c, environmentId), id),
    selectTiles(c.var.db, id),
  ]);
  const found = { row: visibleDashboard(c, row), tiles };
  const scope = scopeOf(c);
  const { lastAccessedAt } = found.row.dashboard;
  if (!lastAccessedAt || Date.now() - Date.parse(lastAccessedAt) > ACCESS_WRITE_INTERVAL_MS) {
    afterResponse(c, "record dashboard access", recordDashboardAccess(c.env.DB, found.row.dashboard.id), {
      dashboard_id: found.row.dashboard.id,
    });
  }
  if (isNotModified(c, found.row.dashboard)) return notModified(c, found.row.dashboard);
  return c.json(toDashboard(found, scope.caller), 200, { ETag: etagOf(found.row.dashboard) });
};

function findTemplate(name: string): DashboardTemplate {
  const template = Object.hasOwn(DASHBOARD_TEMPLATES, name) ? DASHBOARD_TEMPLATES[name] : undefined;
  if (!template) throw validationError("invalid_input", `Invalid template provided: ${name}`, "use_template");
  return template;
}

function templateTiles(template: DashboardTemplate): NewTile[] {
  return template.tiles.map((tile) => ({
    content: "insight" in tile ? { insight: { ...tile.insight, tags: [] } } : { text: tile.text },
    layouts: tile.layouts,
    display: { color: tile.color },
  }));
}

/** What the new dashboard starts from: nothing, a template, or a copy of another dashboard. */
async function startingPoint(c: Context<AppEnv>, scope: DashboardScope, input: CreateDashboardInput) {
  const template = input.use_template || undefined;
  const sourceId = input.use_dashboard ?? undefined;
  if (template !== undefined && sourceId !== undefined) {
    throw validationError(
      "invalid_input",
      "`use_dashboard` and `use_template` cannot be used together",
      "use_template",
    );
  }
  const empty = { name: "", description: "", tags: [], filters: {}, variables: {}, copiedFrom: undefined };
  if (template !== undefined) {
    const found = findTemplate(template);
    return {
      ...empty,
      creationMode: "template" as const,
      tiles: templateTiles(found),
      name: found.name,
      description: found.description,
      summary: `Created from template ${template}`,
    };
  }
  if (sourceId !== undefined) return copyStartingPoint(c, scope, input, sourceId);
  return { ...empty, creationMode: "default" as const, tiles: [], summary: "Created" };
}

/** Who a version names as the author of the request's change. */
export const authorOf = (c: Context<AppEnv>): VersionAuthor => ({
  userId: personOf(c.var.actor),
  keyId: c.var.actor.keyId,
});

export const createEnvironmentDashboard: Handler<"create"> = async (c) => {
  const input = c.req.valid("json");
  assertMayCreateDashboards(c);
  const scope = scopeOf(c);
  const db = c.var.db;
  const start = await startingPoint(c, scope, input);
  const now = nowIso();
  const insertDashboard = db.insert(dashboards).values({
    environmentId: scope.environmentId,
    // Only while the caller may still create dashboards here: NULL fails the batch (below).
    name: whileHolds(input.name ?? start.name, callerStillCreatorIn(c)),
    // A copy: only while its source may still be copied (NULL fails the batch: 400, below).
    description:
      "heldWhile" in start
        ? whileHolds(input.description ?? start.description, start.heldWhile)
        : (input.description ?? start.description),
    pinned: input.pinned ?? false,
    deleted: input.deleted ?? false,
    creationMode: start.creationMode,
    restrictionLevel: input.restriction_level,
    tags: input.tags ?? start.tags,
    filters: start.filters,
    breakdownColors: input.breakdown_colors,
    dataColorThemeId: input.data_color_theme_id,
    quickFilterIds: input.quick_filter_ids,
    variables: start.variables,
    createdById: personOf(c.var.actor),
    createdAt: now,
    lastModifiedAt: now,
  });
  const insertTiles = insertTilesStatements(
    db,
    scope.environmentId,
    newestDashboardId,
    personOf(c.var.actor),
    start.tiles,
  );
  // One entry for the dashboard: the tiles it starts with are part of its creation.
  const entry = dashboardActivity.record(c, "created", {
    ...dashboardItem(c.var.project, newestDashboardId, input.name ?? start.name),
    context: start.copiedFrom,
  });
  const version = versionStatements(db, newestDashboardId, authorOf(c), start.summary);
  const writes = [insertDashboard, entry, ...insertTiles, ...version];
  const created = await writeAndReadDashboard(db, scope, newestDashboardId, writes, { includeDeleted: true }).catch(
    async (error: unknown) => {
      // A copy or template whose first version would pass the size of one: 400 on what brought it.
      if (isSnapshotTooLarge(error)) throw snapshotTooLarge(input.use_dashboard ? "use_dashboard" : "use_template");
      if (isNotNullViolationOf(error, dashboards.description)) {
        if ("source" in start && (await sourceMovedMeanwhile(db, start.source))) throw changedMeanwhile("project");
        throw validationError("invalid_input", "Invalid value provided", "use_dashboard");
      }
      if (!isNotNullViolationOf(error, dashboards.name)) throw error;
      throw await refusalInEnvironment(db, c.var.actor, scope.environmentId, () => permissionDenied(NO_CREATE_RIGHT));
    },
  );
  if (!created) throw new Error("created dashboard was not read back");
  return c.json(toDashboard(created, scope.caller), 201, { ETag: etagOf(created.row.dashboard) });
};

function assertMayUpdate(row: DashboardRow, scope: DashboardScope, input: UpdateDashboardInput) {
  const rights = rightsOn(row, scope.caller);
  const changesRestriction =
    input.restriction_level !== undefined && input.restriction_level !== row.dashboard.restrictionLevel;
  if (changesRestriction && !rights.canChangeRestriction) {
    throw permissionDenied(
      "Only the dashboard owner and project admins have the restriction rights required " +
        "to change the dashboard's restriction level.",
    );
  }
  if (!rights.canEdit) throw permissionDenied(NO_EDIT_RIGHT);
}

/**
 * The restriction level a write of dashboard `read` sets (`level` when it differs from the level
 * read, else the one the dashboard has when the write runs: repeating the level read changes
 * nothing, so a lock meanwhile stays): it lands only while the caller may still edit the
 * dashboard (`callerStillEditorOf`), so that a lock to collaborators, a collaborator removed or a
 * `viewer` rule meanwhile fails the whole batch (NOT NULL: 403, see `withinTileLimit`). Other
 * changes meanwhile do not refuse it.
 */
export function restrictionWhileEditor(
  c: Context<AppEnv>,
  read: { id: number; restrictionLevel: number },
  level?: number,
) {
  const changes = level !== undefined && level !== read.restrictionLevel;
  const written = changes ? level : sql<number>`${dashboards.restrictionLevel}`;
  // A change of the level, only while the caller may still make it (its creator, a project admin).
  return whileHolds(written, callerStillEditorOf(c, read.id, changes));
}

/**
 * `deleted` of a write that raises a dashboard's version: false while the dashboard is live (and
 * `also` holds), NULL once it was deleted meanwhile, which the column refuses, so that the whole
 * batch fails (404, see `withinTileLimit`) and a tile move, reorder or restore lands on no deleted
 * dashboard.
 */
export const whileLive = (also?: SQL) => whileHolds(sql<boolean>`0`, and(sql`${dashboards.deleted} = 0`, also)!);

/**
 * A tile write's raise of its dashboard's version (from `expected`, with `If-Match`): only while the
 * dashboard is live (and `also` holds: else 404) and the caller may still edit it, as read.
 */
export function raiseTileWrite(
  c: Context<AppEnv>,
  dashboard: DashboardRow["dashboard"],
  expected?: number,
  also?: SQL,
) {
  return c.var.db
    .update(dashboards)
    .set({
      ...nextVersion,
      lastModifiedAt: nowIso(),
      deleted: whileLive(also),
      restrictionLevel: restrictionWhileEditor(c, dashboard),
    })
    .where(and(eq(dashboards.id, dashboard.id), versionIs(expected)));
}

/** A write whose dashboard would pass `MAX_DASHBOARD_SNAPSHOT_BYTES`, serialized: a 400 on `attr`. */
const snapshotTooLarge = (attr: string) =>
  validationError(
    "max_length",
    `A dashboard holds at most ${MAX_DASHBOARD_SNAPSHOT_BYTES} bytes of fields and tiles, serialized.`,
    attr,
  );

/**
 * A batch ended by `tileLimitGuard` fails whole past the limit: a 400 on `attr` then, as one
 * whose dashboard would pass `MAX_DASHBOARD_SNAPSHOT_BYTES`. One whose `If-Match` lost to another
 * write (`versionStatements`) fails whole too: a 412; one whose caller lost the edit right
 * meanwhile (`restrictionWhileEditor`), a 403 (404 when they lost the project: `editRightLost`);
 * one whose dashboard was deleted meanwhile (`whileLive`), a 404.
 */
export async function withinTileLimit<T>(c: Context<AppEnv>, attr: string, write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (isStaleVersion(error)) throw preconditionFailed();
    if (isNotNullViolationOf(error, dashboards.restrictionLevel)) throw await editRightLost(c);
    if (isNotNullViolationOf(error, dashboards.deleted)) throw notFound();
    if (isSnapshotTooLarge(error)) throw snapshotTooLarge(attr);
    if (isNotNullViolation(error)) {
      throw validationError("max_length", `A dashboard holds at most ${MAX_LIVE_TILES} tiles.`, attr);
    }
    throw error;
  }
}

/** Where a tile change's errors point: `tiles.N` in a dashboard's body; the body itself for a tile's route. */
type TileAttr = (index: number) => string;
const inTilesList: TileAttr = (index) => `tiles.${index}`;
const fieldOf = (attr: string, field: string) => (attr === "" ? field : `${attr}.${field}`);

/**
 * Statements for PATCH `tiles` and `duplicate_tiles`, each write followed by its entry in the
 * activity log; every change is validated before anything is written.
 */
function tileChangeStatements(
  c: Context<AppEnv>,
  scope: DashboardScope,
  current: DashboardWithTiles,
  changes: TileInput[],
  attrOf: TileAttr = inTilesList,
  duplicates: DuplicateTiles = [],
) {
  const db = c.var.db;
  const shown = new Map(current.tiles.map((row) => [row.tile.id, row]));
  const dashboardId = current.row.dashboard.id;
  const onDashboard = { dashboard_id: dashboardId };
  // A copy is a new tile: placed where it is sent, else with the tiles added without a place.
  const placed = placeUnplaced(current, [...changes, ...duplicates.map(({ layouts }) => ({ layouts }))]);
  const changed = new Map(changes.flatMap((change) => (change.id === undefined ? [] : [[change.id, change]])));
  const copies = duplicates.flatMap(({ id }, index): Statement[] => {
    const read = shown.get(id);
    const change = changed.get(id);
    if (!read || change?.deleted) {
      throw validationError("invalid_input", `Tile ${id} is not on this dashboard.`, `duplicate_tiles.${index}.id`);
    }
    // Applied after `tiles`: a tile the same PATCH changes is copied as the change leaves it.
    const source = change ? asChangedBy(read, change) : read;
    const copy: NewTile = {
      content: copiedContent(source, true, true),
      layouts: placed[changes.length + index]!.layouts!,
      display: copiedDisplay(source),
    };
    return [
      ...insertTilesStatements(db, scope.environmentId, dashboardId, personOf(c.var.actor), [copy]),
      tileActivity.record(c, "created", tileItem(c.var.project, dashboardId, newestTileId, onDashboard)),
    ];
  });
  const edits = placed.slice(0, changes.length).flatMap((change, index): Statement[] => {
    const attr = attrOf(index);
    if (change.id === undefined) {
      if (!change.text) {
        const example = 'A new tile needs a text: {"text": {"body": "..."}}.';
        throw validationError("required", example, fieldOf(attr, "text"));
      }
      const tile: NewTile = {
        content: { text: { body: change.text.body } },
        layouts: change.layouts ?? {},
        display: tileDisplay(change),
      };
      return [
        ...insertTilesStatements(db, scope.environmentId, dashboardId, personOf(c.var.actor), [tile]),
        tileActivity.record(c, "created", tileItem(c.var.project, dashboardId, newestTileId, onDashboard)),
      ];
    }
    const existing = shown.get(change.id);
    if (!existing) {
      throw validationError("invalid_input", `Tile ${change.id} is not on this dashboard.`, fieldOf(attr, "id"));
    }
    const writes = existingTileStatements(db, personOf(c.var.actor), existing, change, attr);
    const item = tileItem(c.var.project, dashboardId, existing.tile.id, onDashboard);
    const entry = change.deleted
      ? tileActivity.record(c, "deleted", item)
      : tileActivity.changed(c, "updated", item, trackedTileFields(existing), trackedTileFields(existing, change));
    return writes.length === 0 || !entry ? writes : [...writes, entry];
  });
  return [...edits, ...copies];
}

/**
 * The changes, with a place for every tile they would leave without one: a new tile sent without
 * layouts (or with `{}`), or a tile sent `layouts: {}`. Those go one below the other from the
 * grid's first free row under the tiles as the changes leave them: never `{}`, which PostHog's
 * app would stack at the top.
 */
function placeUnplaced(current: DashboardWithTiles, changes: TileInput[]): TileInput[] {
  const unplaced = (change: TileInput) =>
    !hasLayouts(change) && (change.id === undefined || (!change.deleted && change.layouts !== undefined));
  const leaving = new Set(changes.filter((change) => change.deleted || unplaced(change)).map((change) => change.id));
  const sent = new Map(changes.filter(hasLayouts).map((change) => [change.id, change.layouts]));
  const staying = current.tiles
    .filter(({ tile }) => !leaving.has(tile.id))
    .map(({ tile }) => sent.get(tile.id) ?? tile.layouts);
  const added = changes.filter(hasLayouts).flatMap((change) => (change.id === undefined ? [change.layouts] : []));
  const free = stackedLayouts([...staying, ...added], changes.filter(unplaced).length);
  let next = 0;
  return changes.map((change) => (unplaced(change) ? { ...change, layouts: free[next++] } : change));
}

/** A tile change that places its tile: `{}` places nothing. */
const hasLayouts = (change: TileInput): change is TileInput & { layouts: Record<string, unknown> } =>
  change.layouts !== undefined && Object.keys(change.layouts).length > 0;

/** The display settings a tile change sends (undefined: kept). */
const tileDisplay = (change: TileInput): TileDisplay => ({
  color: change.color,
  showDescription: change.show_description,
  transparentBackground: change.transparent_background,
  filtersOverrides: change.filters_overrides,
});

/** A value a change sends, or, not sent (undefined), the one stored. */
const kept = <T>(sent: T | undefined, stored: T) => (sent === undefined ? stored : sent);

/** A tile as `change` leaves it: its display settings and its text's body. */
function asChangedBy(row: TileRow, change: TileInput): TileRow {
  const { tile, text } = row;
  return {
    ...row,
    tile: {
      ...tile,
      color: kept(change.color, tile.color),
      showDescription: kept(change.show_description, tile.showDescription),
      transparentBackground: kept(change.transparent_background, tile.transparentBackground),
      filtersOverrides: kept(change.filters_overrides, tile.filtersOverrides),
    },
    text: text && change.text ? { ...text, body: change.text.body } : text,
  };
}

/** A tile's tracked fields as the API names them; with `change`, as the change leaves them. */
export function trackedTileFields({ tile, text }: TileRow, change: TileInput = {}) {
  return {
    layouts: change.layouts ?? tile.layouts,
    color: kept(change.color, tile.color),
    text: change.text?.body ?? text?.body ?? null,
    show_description: kept(change.show_description, tile.showDescription),
    transparent_background: kept(change.transparent_background, tile.transparentBackground),
    filters_overrides: kept(change.filters_overrides, tile.filtersOverrides),
  };
}

/** SQLite's form of a nullable boolean, as bound. */
const flag = (value: boolean | null) => (value === null ? null : value ? 1 : 0);
const jsonText = (value: unknown) => (value === null ? null : JSON.stringify(value));

/**
 * The tile's layouts and display settings are still as read: else its write leaves `deleted` NULL,
 * which the column refuses (`isTileNotAsRead`), so that its entry's "before" is what it replaces.
 */
const tileAsRead = ({ tile }: TileRow) => sql`json(${dashboardTiles.layouts}) = json(${JSON.stringify(tile.layouts)})
  and ${dashboardTiles.color} is ${tile.color}
  and ${dashboardTiles.showDescription} is ${flag(tile.showDescription)}
  and ${dashboardTiles.transparentBackground} is ${flag(tile.transparentBackground)}
  and json(${dashboardTiles.filtersOverrides}) is json(${jsonText(tile.filtersOverrides)})`;

/** A tile's write refused because the tile (or its text) changed since the read: `tileAsRead`. */
const isTileNotAsRead = (error: unknown) =>
  isNotNullViolationOf(error, dashboardTiles.deleted) || isNotNullViolationOf(error, texts.body);

/**
 * Removing a tile, or editing its layouts, colour and text body: an edit only while the tile (or
 * its text) is as read (`tileAsRead`).
 */
function existingTileStatements(
  db: Database,
  userId: number | null,
  existing: TileRow,
  change: TileInput,
  attr: string,
): Statement[] {
  // Scoped to the dashboard too: a tile moved away meanwhile is left alone.
  const thisTile = and(
    eq(dashboardTiles.id, existing.tile.id),
    eq(dashboardTiles.dashboardId, existing.tile.dashboardId),
  );
  if (change.deleted) return [db.update(dashboardTiles).set({ deleted: true }).where(thisTile)];

  const statements: Statement[] = [];
  const display = tileDisplay(change);
  if (change.layouts !== undefined || Object.values(display).some((value) => value !== undefined)) {
    statements.push(
      db
        .update(dashboardTiles)
        .set({ layouts: change.layouts, ...display, deleted: whileHolds(sql<boolean>`0`, tileAsRead(existing)) })
        .where(thisTile),
    );
  }
  if (change.text) {
    if (!existing.text) {
      throw validationError("invalid_input", "Only a text tile has a text body.", fieldOf(attr, "text"));
    }
    if (change.text.id !== undefined && change.text.id !== existing.text.id) {
      const message = `Text ${change.text.id} is not this tile's text.`;
      throw validationError("invalid_input", message, fieldOf(attr, "text.id"));
    }
    // The tile is still here when this runs: the dashboard's update before it holds that (`stillAsRead`).
    const bodyAsRead = sql`${texts.body} = ${existing.text.body}`;
    statements.push(
      db
        .update(texts)
        .set({ body: whileHolds(change.text.body, bodyAsRead), lastModifiedById: userId, lastModifiedAt: nowIso() })
        .where(eq(texts.id, existing.text.id)),
    );
  }
  return statements;
}

/** Soft delete and restore reach the insights too, as in PostHog. */
function deletionStatements(db: Database, current: DashboardRow, input: UpdateDashboardInput): Statement[] {
  const { id, deleted } = current.dashboard;
  if (input.deleted === true && !deleted && input.delete_insights) return [deleteInsightsOnlyOn(db, id)];
  if (input.deleted === false && deleted) return [restoreInsightsOn(db, id)];
  return [];
}

/**
 * A soft delete or restore, as its own write with its entry right after it: it lands only on the
 * dashboard as read, so that two at once are recorded (and sent to webhooks) once.
 */
function deletionFlip(c: Context<AppEnv>, current: DashboardRow, input: UpdateDashboardInput): Statement[] {
  const { id, deleted, name } = current.dashboard;
  if (input.deleted === undefined || input.deleted === deleted) return [];
  const flip = c.var.db
    .update(dashboards)
    .set({ deleted: input.deleted })
    .where(and(eq(dashboards.id, id), eq(dashboards.deleted, deleted)));
  const item = dashboardItem(c.var.project, id, input.name ?? name);
  return [flip, dashboardActivity.record(c, input.deleted ? "deleted" : "restored", item)];
}

/** The entry of a PATCH on the dashboard's own fields: what changed. */
function dashboardEntries(c: Context<AppEnv>, current: DashboardRow, input: UpdateDashboardInput): Statement[] {
  const before = trackedDashboardFields(current.dashboard);
  const after = {
    name: input.name ?? before.name,
    description: input.description ?? before.description,
    pinned: input.pinned ?? before.pinned,
    tags: input.tags ?? before.tags,
    restriction_level: input.restriction_level ?? before.restriction_level,
  };
  const item = dashboardItem(c.var.project, current.dashboard.id, after.name);
  const entry = dashboardActivity.changed(c, "updated", item, before, after);
  return entry ? [entry] : [];
}

const DELETION_FIELDS = ["deleted", "delete_insights"];
const restoresOrReDeletes = (input: UpdateDashboardInput) =>
  input.deleted === false ||
  (input.deleted === true &&
    Object.entries(input).every(([field, value]) => value === undefined || DELETION_FIELDS.includes(field)));

export const updateEnvironmentDashboard: Handler<"update"> = async (c) => {
  const input = c.req.valid("json");
  const scope = scopeOf(c);
  const [[row], tiles] = dashboardOfPath.results(c);
  const first = row && { row, tiles };
  const update = (current: DashboardWithTiles | undefined, again: boolean) => {
    const sent = again && first ? changesAsRead(first, input) : input;
    // A deleted dashboard is gone except to the PATCH that restores it, or re-deletes it and no more.
    if (!current || (current.row.dashboard.deleted && !restoresOrReDeletes(sent))) throw notFound();
    visibleDashboard(c, current.row);
    if (again) assertTilesStillThere(current, sent);
    assertMayUpdate(current.row, scope, sent);
    return writeDashboardUpdate(c, current, sent);
  };
  const updated = await judgedOnLatest(first, () => dashboardOfPathAgain(c), update, "dashboard");
  return c.json(toDashboard(updated, scope.caller), 200, { ETag: etagOf(updated.row.dashboard) });
};

/**
 * Read again (`judgedOnLatest`): a tile the PATCH names that left the dashboard meanwhile is 409,
 * as a write held to it.
 */
function assertTilesStillThere(current: DashboardWithTiles, input: UpdateDashboardInput) {
  const live = new Set(current.tiles.map(({ tile }) => tile.id));
  const named = [
    ...(input.tiles ?? []).flatMap((change) => (change.id === undefined ? [] : [change.id])),
    ...(input.duplicate_tiles ?? []).map((duplicate) => duplicate.id),
  ];
  if (named.some((tileId) => !live.has(tileId))) throw changedMeanwhile("dashboard");
}

/** A write that lost its version to another change: without `If-Match`, a `StaleRead` (else a 412, later). */
const staleWithoutIfMatch = (expected: number | undefined, error: unknown) =>
  expected === undefined && isStaleVersion(error) ? new StaleRead() : error;

/**
 * A PATCH of a dashboard the caller may update, its tiles' changes included: one batch with its
 * entries and, when it changes anything, its version (only from the version `If-Match` names),
 * then the dashboard read back.
 */
export async function writeDashboardUpdate(
  c: Context<AppEnv>,
  current: DashboardWithTiles,
  input: UpdateDashboardInput,
  attrOf?: TileAttr,
): Promise<DashboardWithTiles> {
  const scope = scopeOf(c);
  const db = c.var.db;
  const id = current.row.dashboard.id;
  const summary = updateSummary(current, input);
  // Built (and so checked) whatever they change, and before the tag: an invalid tile is 400
  // whatever the tag, even one that reads as no change. Tiles sent as they were read change nothing:
  // written, they would undo (unchecked, as the update below matches no row once the version moved)
  // what another request changed meanwhile.
  const tileStatements = tileChangeStatements(c, scope, current, input.tiles ?? [], attrOf, input.duplicate_tiles);
  const tileWrites = summary === undefined ? [] : tileStatements;
  const expected = expectedVersion(c, current.row.dashboard);
  // Without `If-Match`, a change of the dashboard itself (its fields, its deleted state) holds to
  // the version read (a tile's edit, to the tile as read: `tileAsRead`), so that its entry and
  // version say what it replaced: lost to another change, it is judged again on the dashboard as
  // that one left it (`StaleRead`: `judgedOnLatest`). Tiles added or removed land whatever changed.
  const itself = summary !== undefined && changesDashboardItself(current.row, input);
  const held = expected ?? (itself ? current.row.dashboard.version : undefined);

  // A PATCH that changes nothing as read writes nothing but holds the caller's edit right (a change
  // meanwhile stays); one that changes something, only from the version read (`If-Match`'s), on the
  // dashboard still deleted or not as read (unless it flips that itself) and showing the tiles it names.
  const asRead = stillAsRead(id, {
    // Unless it deletes or restores the dashboard itself (`deletionFlip`): sending the state read is no flip.
    deleted:
      input.deleted === undefined || input.deleted === current.row.dashboard.deleted
        ? current.row.dashboard.deleted
        : undefined,
    tileIds: [
      ...(input.tiles ?? []).flatMap((change) => (change.id === undefined ? [] : [change.id])),
      ...(input.duplicate_tiles ?? []).map((duplicate) => duplicate.id),
    ],
  });
  const updateDashboard =
    summary === undefined
      ? db
          .update(dashboards)
          .set({ restrictionLevel: restrictionWhileEditor(c, current.row.dashboard), creationMode: asRead })
          .where(eq(dashboards.id, id))
      : db
          .update(dashboards)
          .set({
            name: input.name,
            description: input.description,
            pinned: input.pinned,
            tags: input.tags,
            restrictionLevel: restrictionWhileEditor(c, current.row.dashboard, input.restriction_level),
            breakdownColors: input.breakdown_colors,
            dataColorThemeId: input.data_color_theme_id,
            quickFilterIds: input.quick_filter_ids,
            lastModifiedAt: nowIso(),
            creationMode: asRead,
            ...nextVersion,
          })
          .where(and(eq(dashboards.id, id), versionIs(held)));
  const writes = [
    ...deletionFlip(c, current.row, input),
    updateDashboard,
    ...dashboardEntries(c, current.row, input),
    ...tileWrites,
    ...deletionStatements(db, current.row, input),
  ];
  const addsTiles = (input.tiles ?? []).some((change) => change.id === undefined);
  const copiesTiles = (input.duplicate_tiles ?? []).length > 0;
  if (addsTiles || copiesTiles) writes.push(tileLimitGuard(db, id));
  if (summary !== undefined) writes.push(...versionStatements(db, id, authorOf(c), summary, held));
  const written = writeAndReadDashboard(db, scope, id, writes, { includeDeleted: true }).catch(
    async (error: unknown) => {
      if (isDashboardNotAsRead(error)) throw await changedOrGone(db, dashboardLive(id), "dashboard");
      if (isTileNotAsRead(error)) throw expected === undefined ? new StaleRead() : preconditionFailed();
      throw staleWithoutIfMatch(expected, error);
    },
  );
  const updated = await withinTileLimit(c, addsTiles || !copiesTiles ? "tiles" : "duplicate_tiles", written);
  if (!updated) throw notFound();
  return updated;
}

export const moveDashboardTile: Handler<"moveTile"> = async (c) => {
  const move = c.req.valid("json");
  const { tile, toDashboard: destinationId, field } = move;
  const scope = scopeOf(c);
  const db = c.var.db;
  const sourceId = parseDashboardId(c.req.valid("param").id);
  const [[source], [destination], [moving]] = await readTileMove(c, scope, sourceId, move);
  const sourceRow = editableDashboard(c, source);
  if (!moving || !destination || rightsOn(destination, scope.caller).userAccessLevel === "none") throw notFound();
  if (!rightsOn(destination, scope.caller).canEdit) {
    throw permissionDenied("You don't have edit permissions for the destination dashboard.");
  }
  const alreadyThere = () =>
    validationError("invalid_input", "The destination dashboard already shows this tile's insight or text.", field);
  if (moving.alreadyOnDestination) throw alreadyThere();
  const moveTile = db
    .update(dashboardTiles)
    .set({ dashboardId: destinationId })
    .where(and(eq(dashboardTiles.id, tile.id), eq(dashboardTiles.dashboardId, sourceId)));
  const guard = tileLimitGuard(db, destinationId);
  const entry = tileActivity.record(
    c,
    "moved",
    tileItem(c.var.project, sourceId, tile.id, { from_dashboard_id: sourceId, to_dashboard_id: destinationId }),
  );
  // Both dashboards change: each gets a version, each written over the row its rights were judged
  // on; `If-Match` is about the source, the one in the path.
  const expected = expectedVersion(c, sourceRow.dashboard);
  // Only while the tile is still a live tile of the source: the same move sent twice at once
  // moves it once, and the second answers 404 with nothing written.
  const raiseSource = db
    .update(dashboards)
    .set({
      ...nextVersion,
      deleted: whileLive(tileLiveOn(tile.id, sourceId)),
      restrictionLevel: restrictionWhileEditor(c, sourceRow.dashboard),
    })
    .where(and(eq(dashboards.id, sourceId), versionIs(expected)));
  const raiseDestination = db
    .update(dashboards)
    .set({
      ...nextVersion,
      deleted: whileLive(),
      restrictionLevel: restrictionWhileEditor(c, destination.dashboard),
    })
    .where(eq(dashboards.id, destinationId));
  const author = authorOf(c);
  const writes = [
    raiseSource,
    raiseDestination,
    moveTile,
    entry,
    guard,
    // The insight as read not on the destination: one copied there meanwhile refuses the move, as a moment later.
    ...(moving.tile.insightId === null ? [] : [insightOnceGuard(db, destinationId, moving.tile.insightId)]),
    ...versionStatements(db, sourceId, author, `Moved tile ${tile.id} to dashboard ${destinationId}`, expected),
    ...versionStatements(db, destinationId, author, `Received tile ${tile.id} from dashboard ${sourceId}`),
  ];
  const written = writeAndReadDashboard(db, scope, sourceId, writes).catch((error: unknown) => {
    if (isInsightShownTwice(error)) throw alreadyThere();
    throw error;
  });
  const moved = await withinTileLimit(c, field, written);
  if (!moved) throw notFound();
  return c.json(toDashboard(moved, scope.caller), 200, { ETag: etagOf(moved.row.dashboard) });
};

/**
 * PostHog's `reorder_tiles`: the tiles named, in that order, two a row on small screens (one
 * below), whatever their sizes were. One statement sets every layout; an order already in place
 * changes nothing, so it writes nothing (but holds the caller's edit right), as a PATCH.
 */
export const reorderDashboardTiles: Handler<"reorderTiles"> = async (c) => {
  const { tile_order: order } = c.req.valid("json");
  const scope = scopeOf(c);
  const db = c.var.db;
  const id = parseDashboardId(c.req.valid("param").id);
  if (new Set(order).size !== order.length) {
    throw validationError("invalid_input", "tile_order must contain unique tile IDs", "tile_order");
  }
  const reordered = order.map((tileId, index) => [tileId, reorderedLayouts(index)] as const);
  const reorder = async (read: DashboardWithTiles | undefined) => {
    if (read?.row.dashboard.deleted) throw notFound();
    const current = editableDashboard(c, read?.row);
    const layoutsOf = new Map(read?.tiles.map(({ tile }) => [tile.id, tile.layouts]));
    const missing = order.filter((tileId) => !layoutsOf.has(tileId)).sort((left, right) => left - right);
    if (missing.length > 0) {
      throw new ApiError(404, "not_found", `Tile IDs not found on this dashboard: [${missing.join(", ")}]`);
    }
    const expected = expectedVersion(c, current.dashboard);
    const inPlace = reordered.every(([tileId, layouts]) => sameJson(layoutsOf.get(tileId), layouts));
    const writes = inPlace
      ? [
          db
            .update(dashboards)
            .set({ restrictionLevel: restrictionWhileEditor(c, current.dashboard) })
            .where(eq(dashboards.id, id)),
        ]
      : reorderStatements(c, current.dashboard, reordered, expected ?? current.dashboard.version);
    const written = writeAndReadDashboard(db, scope, id, writes).catch((error: unknown) => {
      throw staleWithoutIfMatch(expected, error);
    });
    const answer = await withinTileLimit(c, "tile_order", written);
    if (!answer) throw notFound();
    return answer;
  };
  const [[row], tiles] = dashboardOfPath.results(c);
  const answer = await judgedOnLatest(row && { row, tiles }, () => dashboardOfPathAgain(c), reorder, "dashboard");
  return c.json(toDashboard(answer, scope.caller), 200, { ETag: etagOf(answer.row.dashboard) });
};

/** `reorder_tiles`' writes, from version `held` only: the layouts, the version, and the dashboard's entry. */
function reorderStatements(
  c: Context<AppEnv>,
  dashboard: DashboardRow["dashboard"],
  reordered: (readonly [number, TileLayouts])[],
  held: number,
): Statement[] {
  const db = c.var.db;
  const order = reordered.map(([tileId]) => tileId);
  const layouts = JSON.stringify(Object.fromEntries(reordered));
  const setLayouts = db
    .update(dashboardTiles)
    .set({ layouts: sql`json_extract(${layouts}, '$."' || ${dashboardTiles.id} || '"')` })
    .where(and(eq(dashboardTiles.dashboardId, dashboard.id), inJsonList(dashboardTiles.id, order)));
  const summary = `Reordered ${order.length === 1 ? "1 tile" : `${order.length} tiles`}`;
  // The dashboard's entry (and its webhook): its tiles' order is what changed.
  const entry = dashboardActivity.record(c, "updated", {
    ...dashboardItem(c.var.project, dashboard.id, dashboard.name),
    context: { tile_order: order },
  });
  return [
    raiseTileWrite(c, dashboard, held),
    entry,
    setLayouts,
    ...versionStatements(db, dashboard.id, authorOf(c), summary, held),
  ];
}

/**
 * PostHog never hard-deletes a dashboard: DELETE is 405 with an empty body for any id, once the
 * caller is authenticated. A middleware rather than a route, so that the generic 405 handler
 * does not list DELETE among the allowed methods.
 */
export const refuseDashboardDelete = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== "DELETE") return next();
  await authenticate(c, async () => {});
  return c.body(null, 405, { Allow: "GET, PATCH" });
});
