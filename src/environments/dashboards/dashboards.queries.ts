import { userBasicColumns } from "../../platform/user-basic";
import { and, eq, exists, inArray, isNull, lt, ne, notExists, or, sql, type SQL } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import { alias } from "drizzle-orm/sqlite-core";
import {
  accessControls,
  dashboardCollaborators,
  dashboards,
  dashboardTags,
  dashboardTiles,
  environments,
  insights,
  organizationMemberships,
  organizations,
  projects,
  texts,
  users,
  type TileLayouts,
} from "../../db/schema";
import { projectVisible } from "../../platform/access-rules/project-visibility";
import type { Actor } from "../../platform/env";
import { membershipsOf } from "../../platform/route-context/organization";
import {
  membershipInEnvironment,
  membershipOfCaller,
  projectLevelInEnvironment,
  projectsInKeyScope,
  selectedProjectFields,
} from "../../platform/route-context/project";
import { prepared } from "../../platform/prepared";
import { inJsonList, isNotNullViolationOf, type Database } from "../../platform/db";
import { holdsIgnoringCase, indexedSearch, trigramMatch } from "../../platform/text-search";
import { nowIso, randomBase62 } from "../../platform/ids";
import {
  counterOf,
  pageIds,
  pageIdsAmong,
  pageOf,
  selectCount,
  type ListOrder,
  type Page,
} from "../../platform/pagination";
import { kindRuleOfMember, resourcesRuledForRolesOf } from "../../platform/access-rules/member-rule";
import { isAdminInSql } from "../../platform/levels";
import type { z } from "@hono/zod-openapi";
import {
  dashboardRuleInSql,
  dashboardVisibleInSql,
  RestrictionLevel,
  type AccessLevel,
  type DashboardCaller,
} from "../../platform/access-rules/dashboard-rights";
import { MAX_LIVE_TILES, type CopyTileInput, type MoveTileInput } from "./dashboards.schema";

export type Statement = BatchItem<"sqlite">;

/** The environment the request is about and who is asking: every dashboard query needs both. */
export type DashboardScope = { environmentId: number; caller: DashboardCaller & { membershipId: string } };

/**
 * What reading a dashboard needs of the caller. The membership may be SQL, for a read batched
 * with the project before the membership is known (`projectRead`).
 */
export type DashboardReadScope = { environmentId: number; caller: { userId: number; membershipId: string | SQL } };

/**
 * A dashboard id, or an SQL expression for one created earlier in the same batch: a batch runs as
 * one transaction, so the largest id of an AUTOINCREMENT table is the row just inserted.
 */
export type DashboardRef = number | SQL;
export const newestDashboardId = sql`(select max(${dashboards.id}) from ${dashboards})`;
const newestTextId = sql`(select max(${texts.id}) from ${texts})`;

const textCreators = alias(users, "text_creators");
const textModifiers = alias(users, "text_modifiers");
const otherTiles = alias(dashboardTiles, "other_tiles");
const otherDashboards = alias(dashboards, "other_dashboards");

/**
 * Dashboards with their creator, sharing state and what bears on the caller's rights: one query.
 * A caller's `level` known to the statement spares an admin reading each dashboard's rule.
 */
function selectDashboards(
  db: Database,
  scope: DashboardReadScope & { environment?: SQL<number>; caller: { level?: SQL<number> } },
) {
  return db
    .select(dashboardFields(scope.caller, scope.environment ?? scope.environmentId))
    .from(dashboards)
    .leftJoin(users, eq(users.id, dashboards.createdById));
}

/**
 * What a list item shows of a dashboard, and what its rights and its place in the list read: not
 * its filters, variables, colours or quick filters, each of which may hold 64 KiB (a page of a
 * thousand would fill the isolate's memory).
 */
const listedColumns = {
  id: dashboards.id,
  name: dashboards.name,
  description: dashboards.description,
  pinned: dashboards.pinned,
  createdAt: dashboards.createdAt,
  createdById: dashboards.createdById,
  deleted: dashboards.deleted,
  creationMode: dashboards.creationMode,
  tags: dashboards.tags,
  restrictionLevel: dashboards.restrictionLevel,
  environmentId: dashboards.environmentId,
  lastAccessedAt: dashboards.lastAccessedAt,
};

/** `selectDashboards` for a list: each dashboard's `listedColumns`. */
function selectListedDashboards(db: Database, scope: DashboardListScope) {
  return db
    .select(dashboardFields(scope.caller, scope.environment, listedColumns))
    .from(dashboards)
    .leftJoin(users, eq(users.id, dashboards.createdById));
}

/**
 * What `selectDashboards` reads of each dashboard (`columns`: the whole row, unless a list names
 * fewer), for a caller known to the statement; the rules on every dashboard are those of
 * `environmentId` (the dashboards' own, where they may be several).
 */
function dashboardFields<Columns = typeof dashboards>(
  caller: DashboardReadScope["caller"] & { level?: SQL<number> },
  environmentId: number | SQL | typeof dashboards.environmentId,
  columns: Columns = dashboards as Columns,
) {
  const rule = dashboardRuleInSql({ id: dashboards.id, environmentId }, caller.membershipId);
  return {
    dashboard: columns,
    createdBy: userBasicColumns(users),
    sharingEnabled: dashboards.sharingEnabled,
    // Only where it bears on the rights: at the restriction level where only collaborators edit.
    isCollaborator: sql<boolean>`case when ${dashboards.restrictionLevel} > ${RestrictionLevel.everyoneCanEdit}
      then exists (select 1 from ${dashboardCollaborators}
        where ${dashboardCollaborators.dashboardId} = ${dashboards.id}
        and ${dashboardCollaborators.userId} = ${caller.userId}) else 0 end`.mapWith(Boolean),
    accessRule: caller.level
      ? sql<AccessLevel | null>`case when ${isAdminInSql(caller.level)} then null else ${rule} end`
      : rule,
  };
}

/** A tile is live while neither it nor its dashboard is deleted. */
const liveTile = and(eq(dashboardTiles.deleted, false), eq(dashboards.deleted, false));

/** One dashboard of the environment, deleted ones included when asked (a restore must find them). */
export function selectDashboard(
  db: Database,
  scope: DashboardReadScope,
  ref: DashboardRef,
  options: { includeDeleted?: boolean } = {},
) {
  return selectDashboards(db, scope).where(
    and(
      eq(dashboards.id, ref),
      eq(dashboards.environmentId, scope.environmentId),
      options.includeDeleted ? undefined : eq(dashboards.deleted, false),
    ),
  );
}

/**
 * The live tiles of a dashboard (or the one `tileId` names) with their insights, texts and the
 * texts' users: one query. `ofDeletedDashboard`: those it will have again once restored, too (a
 * PATCH restoring it changes and places tiles among them).
 */
export function selectTiles(
  db: Database,
  ref: DashboardRef,
  tileId?: number,
  { ofDeletedDashboard = false }: { ofDeletedDashboard?: boolean } = {},
) {
  return db
    .select({
      tile: dashboardTiles,
      insight: insights,
      text: texts,
      textCreator: userBasicColumns(textCreators),
      textModifier: userBasicColumns(textModifiers),
    })
    .from(dashboardTiles)
    .innerJoin(dashboards, eq(dashboards.id, dashboardTiles.dashboardId))
    .leftJoin(insights, eq(insights.id, dashboardTiles.insightId))
    .leftJoin(texts, eq(texts.id, dashboardTiles.textId))
    .leftJoin(textCreators, eq(textCreators.id, texts.createdById))
    .leftJoin(textModifiers, eq(textModifiers.id, texts.lastModifiedById))
    .where(
      and(
        eq(dashboardTiles.dashboardId, ref),
        tileId === undefined ? undefined : eq(dashboardTiles.id, tileId),
        ofDeletedDashboard ? eq(dashboardTiles.deleted, false) : liveTile,
        or(isNull(dashboardTiles.insightId), eq(insights.deleted, false)),
      ),
    );
}

export type DashboardRow = Awaited<ReturnType<typeof selectDashboards>>[number];
export type ListedDashboardRow = Awaited<ReturnType<typeof selectListedDashboards>>[number];
export type TileRow = Awaited<ReturnType<typeof selectTiles>>[number];
export type DashboardWithTiles = { row: DashboardRow; tiles: TileRow[] };

/**
 * Everything a dashboard response shows, in one round trip whatever the number of tiles. Runs
 * `writes` first in the same batch (atomically), so that a change and its result cost one trip.
 */
export async function writeAndReadDashboard(
  db: Database,
  scope: DashboardScope,
  ref: DashboardRef,
  writes: Statement[] = [],
  options: { includeDeleted?: boolean } = {},
): Promise<DashboardWithTiles | undefined> {
  const statements: Statement[] = [...writes, selectDashboard(db, scope, ref, options), selectTiles(db, ref)];
  const results = await db.batch(statements as [Statement, ...Statement[]]);
  const [dashboardRows, tiles] = results.slice(-2) as [DashboardRow[], TileRow[]];
  const [row] = dashboardRows;
  return row ? { row, tiles } : undefined;
}

/**
 * A live dashboard a new one may copy, in any project the caller sees (a member of its
 * organization, the project visible to them and within the key's scope), with where it is and the
 * caller's levels there; what a dashboard rule hides is the handler's to refuse (`rightsOn`).
 */
function selectDashboardToCopy(db: Database, actor: Actor, id: number) {
  return db
    .select({
      ...dashboardFields(
        { userId: actor.userId, membershipId: sql`${organizationMemberships.id}` },
        dashboards.environmentId,
      ),
      source: selectedProjectFields(actor),
    })
    .from(dashboards)
    .leftJoin(users, eq(users.id, dashboards.createdById))
    .innerJoin(environments, eq(environments.id, dashboards.environmentId))
    .innerJoin(projects, eq(projects.id, environments.projectId))
    .innerJoin(organizations, eq(organizations.id, projects.organizationId))
    .innerJoin(membershipsOf(actor), membershipOfCaller(actor.userId))
    .where(and(eq(dashboards.id, id), eq(dashboards.deleted, false), projectVisible, ...projectsInKeyScope(actor)));
}

/** The dashboard a new one copies (wherever the caller sees it) and its tiles. */
export const sourceStatements = (db: Database, actor: Actor, id: number) =>
  [selectDashboardToCopy(db, actor, id), selectTiles(db, id)] as [
    ReturnType<typeof selectDashboardToCopy>,
    ReturnType<typeof selectTiles>,
  ];

export type DashboardToCopy = Awaited<ReturnType<typeof selectDashboardToCopy>>[number];

export type TileMove = z.output<typeof MoveTileInput>;

/** The dashboard a tile leaves, the one it joins and the tile. */
export const moveStatements = (db: Database, scope: DashboardReadScope, sourceId: number, move: TileMove) => {
  const source = selectDashboard(db, scope, sourceId);
  const destination = selectDashboard(db, scope, move.toDashboard);
  const tile = selectTileToMove(db, move.tile.id, sourceId, move.toDashboard);
  return [source, destination, tile] as [typeof source, typeof destination, typeof tile];
};

/**
 * The dashboard a tile is copied to (deleted ones too: 404) with its tiles, the one it is copied
 * from, and the tile.
 */
export const copyStatements = (db: Database, scope: DashboardReadScope, destinationId: number, copy: CopyTileInput) => {
  const destination = selectDashboard(db, scope, destinationId, { includeDeleted: true });
  const destinationTiles = selectTiles(db, destinationId);
  const source = selectDashboard(db, scope, copy.fromDashboardId);
  const tile = selectTiles(db, copy.fromDashboardId, copy.tileId);
  return [destination, destinationTiles, source, tile] as [
    typeof destination,
    typeof destinationTiles,
    typeof source,
    typeof tile,
  ];
};

type DashboardListFilters = { pinned?: boolean; search?: string; tags?: string[] };

/**
 * The caller of a list read with the project: their membership and project level as SQL read
 * once by each statement, since the level is known only when the round trip returns.
 */
type DashboardListScope = {
  environmentId: number;
  /** The environment's id as the rule on every dashboard reads it: bound, or written into the statement. */
  environment: SQL<number>;
  caller: { userId: number; membershipId: SQL; level: SQL<number> };
};

/**
 * A `none` rule hides a dashboard from the member, as in PostHog, whether it is on the dashboard
 * or on every dashboard of the environment (`dashboardRuleInSql`); its creator and the project's
 * admins always see it.
 */
function notHiddenByRule(scope: DashboardListScope): SQL {
  const rule = dashboardRuleInSql({ id: dashboards.id, environmentId: scope.environment }, scope.caller.membershipId);
  return dashboardVisibleInSql(
    { userId: scope.caller.userId, projectLevel: scope.caller.level },
    { createdById: dashboards.createdById, rule },
  );
}

/**
 * A search reads the first 1,000 characters of a dashboard's description (which the index holds,
 * migrations/0043) and its name.
 */
const SEARCHED_DESCRIPTION_LENGTH = 1000;

/**
 * The ids (`"id"`) of the environment's live dashboards the indexes select, or undefined where no
 * filter is indexed: a search of 3 characters or more, read from the trigram index within the
 * environment (each row indexes its environment as `<id>`; the search is one quoted phrase, so
 * that nothing in it is FTS5 syntax), and tags, one range of the tag index per tag.
 */
function indexedMatches(environmentId: number, { search, tags }: DashboardListFilters): SQL | undefined {
  const tagged = (distinct: SQL) =>
    sql`select ${distinct} ${dashboardTags.dashboardId} as "id" from ${dashboardTags}
      where ${dashboardTags.environmentId} = ${environmentId} and ${inJsonList(dashboardTags.tag, tags ?? [])}`;
  const byTags = tags !== undefined && tags.length > 0;
  const indexed = indexedSearch(search);
  if (!indexed) return byTags ? tagged(sql`distinct`) : undefined;
  const phrase = trigramMatch(environmentId, ["name", "description"], indexed);
  return sql`select rowid as "id" from dashboards_search where dashboards_search match ${phrase}
    ${byTags ? sql`and rowid in (${tagged(sql``)})` : sql``}`;
}

/**
 * What the list's filters select, among `read.visible` (a query of the `id`s of dashboards the
 * caller sees) where given, else of those the caller's rules leave visible. What the indexes
 * match, and `visible`, are read by id, those dashboards alone (the `+` keeps SQLite from walking
 * the listing index instead, which would read the environment's dashboards until the page is
 * full). A search shorter than a trigram tests each dashboard's name and description along the
 * listing index, as far as the page needs. Where `read.unless` holds (a condition the same for
 * every row), the conditions read nothing: the listing index's key is then null, and what the
 * indexes match is cut to none (SQLite tests a condition on each row it reads, but a LIMIT once).
 */
function listConditions(
  scope: DashboardListScope,
  filters: DashboardListFilters,
  read: { unless?: SQL; visible?: SQL } = {},
) {
  const { visible, unless } = read;
  const environment = unless
    ? sql`(case when ${unless} then null else ${scope.environmentId} end)`
    : scope.environmentId;
  const indexed = indexedMatches(scope.environmentId, filters);
  const matches =
    indexed && unless ? sql`select "id" from (${indexed}) limit (case when ${unless} then 0 else -1 end)` : indexed;
  const conditions: (SQL | undefined)[] = [
    matches || visible
      ? sql`+${dashboards.environmentId} = ${environment}`
      : sql`${dashboards.environmentId} = ${environment}`,
    eq(dashboards.deleted, false),
    visible ? sql`${dashboards.id} in (${visible})` : notHiddenByRule(scope),
  ];
  if (filters.pinned !== undefined) conditions.push(eq(dashboards.pinned, filters.pinned));
  if (matches) conditions.push(sql`${dashboards.id} in (${matches})`);
  const { search } = filters;
  if (search && !indexedSearch(search)) {
    const description = sql`substr(${dashboards.description}, 1, ${SEARCHED_DESCRIPTION_LENGTH})`;
    conditions.push(sql`(${holdsIgnoringCase(dashboards.name, search)} or ${holdsIgnoringCase(description, search)})`);
  }
  return and(...conditions);
}

/** The listing index's order: pinned first, then by name. */
const listingOrder: ListOrder = [
  [dashboards.pinned, "desc"],
  [dashboards.name, "asc"],
  [dashboards.id, "asc"],
];

/** The caller's rule on every dashboard of the environment (`kindRuleOfMember`), read once per statement. */
const kindRuleOfCaller = (scope: DashboardListScope) =>
  kindRuleOfMember("dashboard", scope.environment, scope.caller.membershipId);

/**
 * Whether a rule on every dashboard of the environment hides them from the caller (`none`, and
 * they are not one of the project's admins): then only their own dashboards and those their
 * rules on a dashboard grant them stay visible (`dashboardsVisibleDespiteKindRule`). The rule
 * first: where it is not `none`, SQLite reads no more (the caller's level costs a few rows).
 */
const hiddenByKindRule = (scope: DashboardListScope) =>
  sql`(${kindRuleOfCaller(scope)} is 'none' and not ${isAdminInSql(scope.caller.level)})`;

/** The dashboards the caller's own rules or their roles' name, as a query of `id`: the few that may differ. */
function dashboardsRuledForCaller(scope: DashboardListScope): SQL {
  const own = sql`select cast(${accessControls.resourceId} as integer) as "id" from ${accessControls}
    where ${accessControls.organizationMembershipId} = ${scope.caller.membershipId}
      and ${accessControls.resource} = 'dashboard'`;
  return sql`${own} union all ${resourcesRuledForRolesOf("dashboard", scope.caller.membershipId)}`;
}

/**
 * Of the environment's live dashboards, those among `candidates` (a query of `id`) that `test`
 * keeps, each once. CROSS JOIN keeps the order: the few candidates first (one pass, UNION ALL
 * then DISTINCT: a UNION would sort the caller's rules twice), then each dashboard by its id.
 */
const liveDashboardsAmong = (scope: DashboardListScope, candidates: SQL, test: SQL) =>
  sql`select distinct ${dashboards.id} from (${candidates}) as "candidate"
    cross join ${dashboards} on ${dashboards.id} = "candidate"."id"
    where ${dashboards.environmentId} = ${scope.environmentId} and ${dashboards.deleted} = 0 and ${test}`;

/**
 * The environment's live dashboards the caller's rules hide from them, as a query of `id`, where
 * no rule on every dashboard hides them all (`hiddenByKindRule`). Only a dashboard with a default
 * rule (read along the environment's rules of that kind) or with a rule of the caller's own or of
 * one of their roles can then be hidden: those few are tested by the rule itself (which weighs a
 * default below the caller's rules on every dashboard).
 */
function dashboardsHiddenFrom(scope: DashboardListScope): SQL {
  // The defaults, along the environment's index alone (with the roles' rules there: candidates too).
  const defaults = sql`select cast(${accessControls.resourceId} as integer) as "id" from ${accessControls}
    where ${accessControls.environmentId} = ${scope.environmentId}
      and ${accessControls.organizationMembershipId} is null and ${accessControls.resource} = 'dashboard'`;
  const candidates = sql`${defaults} union all ${dashboardsRuledForCaller(scope)}`;
  return liveDashboardsAmong(scope, candidates, sql`not ${notHiddenByRule(scope)}`);
}

/**
 * The environment's live dashboards the caller sees where a rule on every dashboard hides them
 * (`hiddenByKindRule`), as a query of `id`: the dashboards they created (along the creator's
 * index), and those their own rules or their roles' on a dashboard grant them.
 */
function dashboardsVisibleDespiteKindRule(scope: DashboardListScope): SQL {
  const { userId } = scope.caller;
  const created = sql`select ${dashboards.id} from ${dashboards}
    where ${dashboards.createdById} = ${userId} and ${dashboards.environmentId} = ${scope.environmentId}
      and ${dashboards.deleted} = 0`;
  const granted = liveDashboardsAmong(
    scope,
    dashboardsRuledForCaller(scope),
    sql`${dashboards.createdById} is not ${userId} and ${notHiddenByRule(scope)}`,
  );
  return sql`${created} union all ${granted}`;
}

/**
 * A page of the environment's live dashboards and their count, for the round trip that resolves
 * the project. The count is the environment's counter less what the caller's rules hide, or,
 * where a rule on every dashboard hides them, what the caller sees despite it (their own
 * dashboards and those granted them one by one): either way a read of the caller's rules, not of
 * the dashboards. What the indexes match (a search, tags) is counted along them in the same way;
 * other filters count the rows they select. SQLite evaluates each uncorrelated subquery (the
 * caller's level, their rule on every dashboard) once per statement; an admin's rows test no rule.
 */
function dashboardPageStatements(db: Database, scope: DashboardListScope, page: Page, filters: DashboardListFilters) {
  const where = listConditions(scope, filters);
  const unfiltered = Object.values(filters).every((filter) => filter === undefined);
  const counter = counterOf(environments.dashboardCount, eq(environments.id, scope.environmentId));
  const hidden = dashboardsHiddenFrom(scope);
  const visible = dashboardsVisibleDespiteKindRule(scope);
  const matches = indexedMatches(scope.environmentId, filters);
  // A search too short for the index is tested on each row (`listConditions`): counted with them.
  const shortSearch = filters.search !== undefined && !indexedSearch(filters.search);
  const onlyIndexed = matches && filters.pinned === undefined && !shortSearch;
  const total = unfiltered
    ? sql<number>`(case when ${hiddenByKindRule(scope)} then (select count(*) from (${visible}))
        else ${counter} - (select count(*) from (${hidden})) end)`
    : onlyIndexed
      ? sql<number>`(case when ${hiddenByKindRule(scope)}
          then (select count(*) from (${visible}) as "visible" where "visible"."id" in (${matches}))
          else (select count(*) from (${matches}))
            - (select count(*) from (${hidden}) as "hidden" where "hidden"."id" in (${matches})) end)`
      : db.$count(dashboards, where);
  const ids = pageIdsOfCaller(db, scope, page, filters, visible);
  const rows = selectListedDashboards(db, scope).where(sql`${dashboards.id} in (${ids})`);
  const count = selectCount(db, total);
  return [count, rows] as [typeof count, typeof rows];
}

/** A list's scope from plain values: the caller's membership and project level as SQL read with the project. */
function listScope(actor: Actor, environmentId: number): DashboardListScope {
  return {
    environmentId,
    environment: sql<number>`${environmentId}`,
    caller: {
      userId: actor.userId,
      membershipId: membershipInEnvironment(actor, environmentId),
      level: projectLevelInEnvironment(actor, environmentId),
    },
  };
}

/** Pages without a cursor or a filter (the first, or one at an offset, as nearly every client reads them): prepared. */
const dashboardPageAtOffset = prepared(
  (db: Database, actor: Actor, environmentId: number, limit: number, offset: number) =>
    dashboardPageStatements(db, listScope(actor, environmentId), { limit, offset }, {}),
);

/** The statements of a page of the environment's dashboards the caller sees (`dashboardPageStatements`). */
export function dashboardPage(
  db: Database,
  actor: Actor,
  environmentId: number,
  page: Page,
  filters: DashboardListFilters,
) {
  const filtered = Object.values(filters).some((filter) => filter !== undefined);
  if (page.after || page.before || filtered) {
    return dashboardPageStatements(db, listScope(actor, environmentId), page, filters);
  }
  return dashboardPageAtOffset(db, actor, environmentId, page.limit, page.offset);
}

/**
 * The ids of the list's page and of one more row (`pageIds`), read one of two ways: along the
 * listing index, or, where a rule on every dashboard hides them from the caller, among the few
 * they see despite it (`dashboardsVisibleDespiteKindRule`), by id and sorted. Walking the listing
 * index past every dashboard the rule hides would read the environment's dashboards to fill a
 * page: that way then reads nothing (`listConditions`' `unless`), and the other reads nothing
 * otherwise (its LIMIT is 0). Read as an `in` list: joined, the two ways cost a row more.
 */
function pageIdsOfCaller(
  db: Database,
  scope: DashboardListScope,
  page: Page,
  filters: DashboardListFilters,
  visible: SQL,
): SQL {
  const hiddenByKind = hiddenByKindRule(scope);
  const along = pageIds(db, listingOrder, listConditions(scope, filters, { unless: hiddenByKind }), page);
  const despite = pageIdsAmong(db, listingOrder, listConditions(scope, filters, { visible }), page, hiddenByKind);
  return sql`select "id" from (${along}) union all select "id" from (${despite})`;
}

export function toDashboardPage(
  page: Page,
  [[counted], rows]: BatchResponse<ReturnType<typeof dashboardPageStatements>>,
) {
  const listed = pageOf(listingOrder, page, rows, (row) => row.dashboard);
  return { count: counted?.value ?? 0, rows: listed.rows, links: listed.links };
}

type NewInsight = {
  name: string | null;
  description: string;
  query: Record<string, unknown> | null;
  tags: string[];
};

/** What a new tile shows: an existing insight, or a new insight or text created with it (a text has one tile). */
export type NewTileContent = { insightId: number } | { insight: NewInsight } | { text: { body: string } };
/** A new tile's display settings (`showDescription`...): as PostHog's app set them, null when never set. */
export type TileDisplay = Pick<
  typeof dashboardTiles.$inferInsert,
  "color" | "showDescription" | "transparentBackground" | "filtersOverrides"
>;
export type NewTile = { content: NewTileContent; layouts: TileLayouts; display: TileDisplay };

/** Statements that add tiles (and the insights and texts they bring) to a dashboard. */
export function insertTilesStatements(
  db: Database,
  environmentId: number,
  dashboardId: DashboardRef,
  userId: number | null,
  tiles: NewTile[],
) {
  const now = nowIso();
  return tiles.flatMap(({ content, layouts, display }): Statement[] => {
    const insertTile = (reference: { insightId: number | SQL } | { textId: SQL }) =>
      db.insert(dashboardTiles).values({ dashboardId, layouts, ...display, createdAt: now, ...reference });
    if ("insightId" in content) return [insertTile(content)];
    if ("insight" in content) {
      const shortId = randomBase62(8);
      return [
        db.insert(insights).values({
          environmentId,
          shortId,
          name: content.insight.name,
          description: content.insight.description,
          query: content.insight.query,
          tags: content.insight.tags,
          createdById: userId,
          createdAt: now,
          updatedAt: now,
        }),
        insertTile({ insightId: sql`(select ${insights.id} from ${insights} where ${insights.shortId} = ${shortId})` }),
      ];
    }
    return [
      db.insert(texts).values({
        environmentId,
        body: content.text.body,
        createdById: userId,
        lastModifiedById: userId,
        lastModifiedAt: now,
      }),
      insertTile({ textId: newestTextId }),
    ];
  });
}

/**
 * The last write of a batch that adds tiles to a dashboard: past `MAX_LIVE_TILES` live tiles it
 * sets a NOT NULL column to null, which fails (and so undoes) the whole batch. The count is taken
 * by the write itself, so concurrent additions cannot pass the limit together.
 */
export function tileLimitGuard(db: Database, dashboardId: number) {
  const liveTiles = db.$count(
    dashboardTiles,
    and(eq(dashboardTiles.dashboardId, dashboardId), eq(dashboardTiles.deleted, false)),
  );
  return db
    .update(dashboards)
    .set({ lastModifiedAt: sql`case when ${liveTiles} <= ${MAX_LIVE_TILES} then ${dashboards.lastModifiedAt} end` })
    .where(eq(dashboards.id, dashboardId));
}

/**
 * Past one live tile of the insight on the dashboard, the dashboard's name set to null, which the
 * column refuses (`isInsightShownTwice`): writes that each add a tile of one insight at once (a
 * copy, a move, a restore) do not all land.
 */
export function insightOnceGuard(db: Database, dashboardId: number, insightId: number) {
  const tilesOfInsight = db.$count(
    dashboardTiles,
    and(
      eq(dashboardTiles.dashboardId, dashboardId),
      eq(dashboardTiles.insightId, insightId),
      eq(dashboardTiles.deleted, false),
    ),
  );
  return db
    .update(dashboards)
    .set({ name: sql`case when ${tilesOfInsight} <= 1 then ${dashboards.name} end` })
    .where(eq(dashboards.id, dashboardId));
}

/**
 * A dashboard write's hold on the dashboard as it read it, as the value its update sets
 * `creation_mode` to: NULL, which the column refuses (`isDashboardNotAsRead`), unless the
 * dashboard is still deleted or not as read (`deleted`, when given) and every tile the write
 * names is still a live tile of it, so that an edit or copy of a tile removed or moved meanwhile
 * lands nothing. An update of a column no index and no trigger holds, so that the hold writes no
 * row of its own.
 */
export function stillAsRead(dashboardId: number, { deleted, tileIds }: { deleted?: boolean; tileIds: number[] }) {
  const ids = [...new Set(tileIds)];
  const liveTiles = sql`(select count(*) from ${dashboardTiles} where ${and(
    eq(dashboardTiles.dashboardId, dashboardId),
    inJsonList(dashboardTiles.id, ids),
    eq(dashboardTiles.deleted, false),
  )})`;
  const holds = and(
    deleted === undefined ? undefined : eq(dashboards.deleted, deleted),
    ids.length === 0 ? undefined : sql`${liveTiles} = ${ids.length}`,
  );
  return holds === undefined ? undefined : sql<"default">`case when ${holds} then ${dashboards.creationMode} end`;
}

/** Whether a batch failed on `stillAsRead`. */
export const isDashboardNotAsRead = (error: unknown) => isNotNullViolationOf(error, dashboards.creationMode);

/** Whether tile `tileId` is still a live tile of dashboard `dashboardId`: what a tile move or copy holds. */
export const tileLiveOn = (tileId: number, dashboardId: number) =>
  sql`exists (select 1 from ${dashboardTiles} where ${dashboardTiles.id} = ${tileId}
    and ${dashboardTiles.dashboardId} = ${dashboardId} and ${dashboardTiles.deleted} = 0)`;

/** Whether the dashboard is still live: what tells a write refused by `stillAsRead` 404 from 409. */
export const dashboardLive = (dashboardId: number) =>
  sql`exists (select 1 from ${dashboards} where ${dashboards.id} = ${dashboardId} and ${dashboards.deleted} = 0)`;

/** Whether a batch failed on `insightOnceGuard`. */
export const isInsightShownTwice = (error: unknown) => isNotNullViolationOf(error, dashboards.name);

/** Live tiles matching `where`, under the aliases `otherTiles` and `otherDashboards` (for EXISTS tests). */
function liveTilesWhere(db: Database, where: SQL | undefined) {
  return db
    .select({ id: otherTiles.id })
    .from(otherTiles)
    .innerJoin(otherDashboards, eq(otherDashboards.id, otherTiles.dashboardId))
    .where(and(eq(otherTiles.deleted, false), eq(otherDashboards.deleted, false), where));
}

const insightsOnTilesOf = (db: Database, dashboardId: number) =>
  inArray(
    insights.id,
    db
      .select({ id: dashboardTiles.insightId })
      .from(dashboardTiles)
      .where(and(eq(dashboardTiles.dashboardId, dashboardId), eq(dashboardTiles.deleted, false))),
  );

/** Soft-deletes the insights of the dashboard's tiles that no live tile elsewhere shows. */
export const deleteInsightsOnlyOn = (db: Database, dashboardId: number) =>
  db
    .update(insights)
    .set({ deleted: true, updatedAt: nowIso() })
    .where(
      and(
        insightsOnTilesOf(db, dashboardId),
        notExists(
          liveTilesWhere(db, and(eq(otherTiles.insightId, insights.id), ne(otherTiles.dashboardId, dashboardId))),
        ),
      ),
    );

export const restoreInsightsOn = (db: Database, dashboardId: number) =>
  db
    .update(insights)
    .set({ deleted: false, updatedAt: nowIso() })
    .where(and(insightsOnTilesOf(db, dashboardId), eq(insights.deleted, true)));

/** The tile to move, on the source dashboard, and whether the destination already shows its content. */
function selectTileToMove(db: Database, tileId: number, fromDashboardId: number, toDashboardId: number) {
  const alreadyOnDestination = exists(
    liveTilesWhere(
      db,
      and(
        eq(otherTiles.dashboardId, toDashboardId),
        or(eq(otherTiles.insightId, dashboardTiles.insightId), eq(otherTiles.textId, dashboardTiles.textId)),
      ),
    ),
  );
  return db
    .select({ tile: dashboardTiles, alreadyOnDestination })
    .from(dashboardTiles)
    .where(
      and(
        eq(dashboardTiles.id, tileId),
        eq(dashboardTiles.dashboardId, fromDashboardId),
        eq(dashboardTiles.deleted, false),
      ),
    );
}

export const ACCESS_WRITE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * After the response, unmetered: `last_accessed_at` at most once an hour. Conditional, so that
 * retrievals at the same moment write once.
 */
export async function recordDashboardAccess(database: D1Database, dashboardId: number) {
  const now = new Date();
  const hourAgo = new Date(now.getTime() - ACCESS_WRITE_INTERVAL_MS).toISOString();
  await drizzle(database)
    .update(dashboards)
    .set({ lastAccessedAt: now.toISOString() })
    .where(
      and(
        eq(dashboards.id, dashboardId),
        or(isNull(dashboards.lastAccessedAt), lt(dashboards.lastAccessedAt, hourAgo)),
      ),
    );
}
