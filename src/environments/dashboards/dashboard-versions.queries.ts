import { userBasicColumns } from "../../platform/user-basic";
import { and, eq, getTableName, lte, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { dashboards, dashboardTiles, dashboardVersions, texts, users, type TileLayouts } from "../../db/schema";
import { type Database, isNotNullViolationOf, isUniqueViolationOf, isValueTooBig } from "../../platform/db";
import { jsonWithinLimit } from "../../platform/input-limits";
import { nowIso } from "../../platform/ids";
import { joinPage, pageOf, type ListOrder, type Page } from "../../platform/pagination";
import type { DashboardRef, Statement } from "./dashboards.queries";

/**
 * Versions kept per dashboard: each write deletes the one that falls past this count, so that a
 * dashboard's history stays bounded whatever its age.
 */
export const DASHBOARD_VERSIONS_KEPT = 100;

/** Who made a change: the user, and the personal API key it came through (empty for a session). */
export type VersionAuthor = { userId: number | null; keyId: string };

/** A tile as a version holds it. */
export type TileSnapshot = {
  id: number;
  insight_id: number | null;
  text_id: number | null;
  text: string | null;
  layouts: TileLayouts;
  color: string | null;
  show_description: boolean | null;
  transparent_background: boolean | null;
  filters_overrides: Record<string, unknown> | null;
};

/** A dashboard as a version holds it: what a restore writes back. */
export type DashboardSnapshot = {
  name: string;
  description: string;
  pinned: boolean;
  tags: string[];
  restriction_level: number;
  filters: Record<string, unknown>;
  variables: Record<string, unknown>;
  breakdown_colors: unknown;
  data_color_theme_id: number | null;
  quick_filter_ids: string[] | null;
  tiles: TileSnapshot[];
};

/**
 * A column named with its table: within `insert ... select` drizzle leaves names unqualified,
 * and the snapshot's subquery reads two tables with an `id`.
 */
const qualified = (column: SQLiteColumn) => sql.raw(`"${getTableName(column.table)}"."${column.name}"`);

const tileSnapshot = sql`json_object(
  'id', ${qualified(dashboardTiles.id)},
  'insight_id', ${qualified(dashboardTiles.insightId)},
  'text_id', ${qualified(dashboardTiles.textId)},
  'text', (select ${qualified(texts.body)} from ${texts}
    where ${qualified(texts.id)} = ${qualified(dashboardTiles.textId)}),
  'layouts', json(${qualified(dashboardTiles.layouts)}),
  'color', ${qualified(dashboardTiles.color)},
  'show_description', ${qualified(dashboardTiles.showDescription)},
  'transparent_background', ${qualified(dashboardTiles.transparentBackground)},
  'filters_overrides', json(${qualified(dashboardTiles.filtersOverrides)}))`;

/** The dashboard row's fields and its live tiles as one JSON text, read by the statement that stores it. */
const dashboardSnapshot = sql<string>`json_object(
  'name', ${qualified(dashboards.name)},
  'description', ${qualified(dashboards.description)},
  'pinned', ${qualified(dashboards.pinned)},
  'tags', json(${qualified(dashboards.tags)}),
  'restriction_level', ${qualified(dashboards.restrictionLevel)},
  'filters', json(${qualified(dashboards.filters)}),
  'variables', json(${qualified(dashboards.variables)}),
  'breakdown_colors', json(${qualified(dashboards.breakdownColors)}),
  'data_color_theme_id', ${qualified(dashboards.dataColorThemeId)},
  'quick_filter_ids', json(${qualified(dashboards.quickFilterIds)}),
  'tiles', json((select json_group_array(${tileSnapshot}) from ${dashboardTiles}
    where ${qualified(dashboardTiles.dashboardId)} = ${qualified(dashboards.id)}
      and ${qualified(dashboardTiles.deleted)} = 0)))`;

/**
 * A dashboard's fields and live tiles together, serialized, as its snapshot stores them: each tile
 * field may hold 64 KiB, and 500 tiles add up past D1's 2 MB row.
 */
export const MAX_DASHBOARD_SNAPSHOT_BYTES = 1024 * 1024;

/**
 * A batch `versionStatements` ends failed because the dashboard would pass `MAX_DASHBOARD_SNAPSHOT_BYTES`:
 * measured, or, past D1's largest value, refused by D1 while the snapshot was built.
 */
export const isSnapshotTooLarge = (error: unknown) =>
  isNotNullViolationOf(error, dashboardVersions.snapshot) || isValueTooBig(error);

/**
 * The statements that end a batch changing a dashboard: its snapshot as the version the batch
 * raised it to, and the deletion of the version that falls past `DASHBOARD_VERSIONS_KEPT`.
 *
 * With `expected` (a request's `If-Match`), the batch's raise of the version matched the stored
 * version only if it was `expected`. The version stored here must then be `expected + 1`; every other value
 * leaves it null, and `expected + 1` written by a concurrent write is already a row; either fails
 * (and so undoes) the whole batch: see `isStaleVersion`.
 */
export function versionStatements(
  db: Database,
  dashboardId: DashboardRef,
  author: VersionAuthor,
  summary: string,
  expected?: number,
): Statement[] {
  const stored = qualified(dashboards.version);
  const version =
    expected === undefined
      ? sql<number>`${stored}`
      : sql<number>`case when ${stored} = ${expected + 1} then ${stored} end`;
  const insert = db.insert(dashboardVersions).select(
    db
      .select({
        dashboardId: dashboards.id,
        version: version.as("version"),
        createdAt: sql<string>`${nowIso()}`.as("created_at"),
        createdById: sql<number | null>`${author.userId}`.as("created_by_id"),
        keyId: sql<string | null>`${author.keyId || null}`.as("key_id"),
        summary: sql<string>`${summary}`.as("summary"),
        snapshot: jsonWithinLimit(dashboardSnapshot, MAX_DASHBOARD_SNAPSHOT_BYTES).as("snapshot"),
      })
      .from(dashboards)
      .where(eq(dashboards.id, dashboardId)),
  );
  const prune = db
    .delete(dashboardVersions)
    .where(
      and(
        eq(dashboardVersions.dashboardId, dashboardId),
        lte(dashboardVersions.version, sql`${newestVersion(dashboardId)} - ${DASHBOARD_VERSIONS_KEPT}`),
      ),
    );
  return [insert, prune];
}

const newestVersion = (dashboardId: DashboardRef) =>
  sql`(select ${dashboards.version} from ${dashboards} where ${dashboards.id} = ${dashboardId})`;

/**
 * A batch `versionStatements` failed because the dashboard's version was not the one `If-Match`
 * named: past another version, the version row is null (NOT NULL); right after it, because a
 * concurrent write raised it first, the row is that write's own version (primary key).
 */
export const isStaleVersion = (error: unknown) =>
  isNotNullViolationOf(error, dashboardVersions.version) ||
  isUniqueViolationOf(error, dashboardVersions.dashboardId, dashboardVersions.version);

/** Raises the dashboard's version; with `expected`, only from that version. */
export const nextVersion = { version: sql<number>`${dashboards.version} + 1` };

export const versionIs = (expected: number | undefined) =>
  expected === undefined ? undefined : eq(dashboards.version, expected);

/** Newest first, along the primary key. */
const versionOrder: ListOrder = [
  [dashboardVersions.dashboardId, "desc"],
  [dashboardVersions.version, "desc"],
];

/**
 * What a page of versions reads of each: everything but its snapshot, which may hold 1 MiB (a
 * hundred of them would fill the isolate's memory).
 */
const versionItemFields = {
  version: {
    dashboardId: dashboardVersions.dashboardId,
    version: dashboardVersions.version,
    createdAt: dashboardVersions.createdAt,
    keyId: dashboardVersions.keyId,
    summary: dashboardVersions.summary,
  },
  createdBy: userBasicColumns(users),
};

/** A page of the dashboard's versions (without their snapshots) and their count. */
export function versionPageStatements(db: Database, dashboardId: number, page: Page) {
  const where = eq(dashboardVersions.dashboardId, dashboardId);
  const count = db.select({ value: sql<number>`count(*)` }).from(dashboardVersions).where(where);
  const rows = db
    .select(versionItemFields)
    .from(dashboardVersions)
    .innerJoin(...pageJoin(db, where, page))
    .leftJoin(users, eq(users.id, dashboardVersions.createdById));
  return [count, rows] as [typeof count, typeof rows];
}

/**
 * The page's rows joined by their key: `joinPage` joins on the order's last column, the version,
 * which is not unique across dashboards, so the dashboard is matched too.
 */
function pageJoin(db: Database, where: SQL, page: Page) {
  const [table, on] = joinPage(db, versionOrder, where, page);
  return [table, and(on, where)!] as const;
}

export type VersionRow = Awaited<ReturnType<typeof versionPageStatements>[1]>[number];
export type VersionWithSnapshot = Awaited<ReturnType<typeof selectVersion>>[number];

export function toVersionPage(page: Page, rows: VersionRow[]) {
  return pageOf(versionOrder, page, rows, (row) => row.version);
}

/** One version of the dashboard, snapshot included. */
export const selectVersion = (db: Database, dashboardId: number, version: number) =>
  db
    .select({ version: dashboardVersions, createdBy: userBasicColumns(users) })
    .from(dashboardVersions)
    .leftJoin(users, eq(users.id, dashboardVersions.createdById))
    .where(and(eq(dashboardVersions.dashboardId, dashboardId), eq(dashboardVersions.version, version)));
