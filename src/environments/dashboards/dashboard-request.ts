import type { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import type { BatchResponse } from "drizzle-orm/batch";
import type { Context } from "hono";
import { dashboardCollaborators, dashboards } from "../../db/schema";
import {
  dashboardEditorInSql,
  dashboardManagerInSql,
  dashboardRestrictionChangerInSql,
  dashboardRuleInSql,
  dashboardVisibleInSql,
} from "../../platform/access-rules/dashboard-rights";
import { callerStillAdmin } from "../../platform/route-context/organization";
import type { AppEnv } from "../../platform/env";
import { notFound, permissionDenied } from "../../platform/errors";
import { isAdmin } from "../../platform/levels";
import { peekJsonBody } from "../../platform/request-body";
import { projectRead, routeReads } from "../../platform/route-context";
import type { Database } from "../../platform/db";
import { primaryOfRequest } from "../../platform/request-context";
import { kindRuleOfMember } from "../../platform/access-rules/member-rule";
import {
  callerStillProjectAdmin,
  callerStillSeesProject,
  environmentStillIn,
  membershipInEnvironment,
  projectLevelInEnvironment,
  refusalInEnvironment,
  selectKindRuleOfCaller,
} from "../../platform/route-context/project";
import { rightsOn } from "./dashboard-response";
import {
  copyStatements,
  moveStatements,
  selectDashboard,
  selectTiles,
  sourceStatements,
  type DashboardReadScope,
  type DashboardRow,
  type DashboardScope,
  type DashboardToCopy,
  type DashboardWithTiles,
  type Statement,
  type TileRow,
} from "./dashboards.queries";
import { CopyTileInput, CreateDashboardInput, MoveTileInput } from "./dashboards.schema";
import { selectVersion } from "./dashboard-versions.queries";

export const NO_EDIT_RIGHT = "You don't have edit permissions for this dashboard.";
export const NO_CREATE_RIGHT = "You do not have editor access to this resource.";

/** The dashboard scope of a request whose project is resolved. */
export function scopeOf(c: Context<AppEnv>): DashboardScope {
  const { project, actor } = c.var;
  return {
    environmentId: project.environmentId,
    caller: { userId: actor.userId, organizationLevel: project.level, membershipId: project.membershipId },
  };
}

/** The scope of a read batched with the project itself (`projectRead`). */
export function readScopeOf(c: Context<AppEnv>, environmentId: number): DashboardReadScope {
  const { actor } = c.var;
  return {
    environmentId,
    caller: { userId: actor.userId, membershipId: membershipInEnvironment(actor, environmentId) },
  };
}

export function parseDashboardId(value: string): number {
  if (!/^\d{1,15}$/.test(value)) throw notFound();
  return Number(value);
}

/** The dashboard, unless it is missing or a `none` rule hides it from the caller: then 404. */
export function visibleDashboard(c: Context<AppEnv>, row: DashboardRow | undefined): DashboardRow {
  if (!row || rightsOn(row, scopeOf(c).caller).userAccessLevel === "none") throw notFound();
  return row;
}

/** The visible dashboard, which the caller may edit (403 otherwise). */
export function editableDashboard(c: Context<AppEnv>, row: DashboardRow | undefined): DashboardRow {
  const visible = visibleDashboard(c, row);
  if (!rightsOn(visible, scopeOf(c).caller).canEdit) throw permissionDenied(NO_EDIT_RIGHT);
  return visible;
}

/**
 * What bears on the caller's rights on a dashboard, as SQL read when a statement runs: the
 * dashboard found by id alone, so that a write of any table may hold only while they still do.
 */
function callerOnDashboardInSql(c: Context<AppEnv>, environmentId: number, dashboardId: number) {
  const { actor } = c.var;
  const column = (name: typeof dashboards.createdById | typeof dashboards.restrictionLevel) =>
    sql`(select ${name} from ${dashboards} where ${dashboards.id} = ${dashboardId})`;
  const caller = { userId: actor.userId, projectLevel: projectLevelInEnvironment(actor, environmentId) };
  const dashboard = {
    createdById: column(dashboards.createdById),
    restrictionLevel: column(dashboards.restrictionLevel),
    isCollaborator: sql`exists (select 1 from ${dashboardCollaborators}
      where ${dashboardCollaborators.dashboardId} = ${dashboardId}
      and ${dashboardCollaborators.userId} = ${actor.userId})`,
    // As its rules store it: text (a bound number would be cast as a real, `5.0`).
    rule: dashboardRuleInSql({ id: String(dashboardId), environmentId }, membershipInEnvironment(actor, environmentId)),
  };
  // The rights below read a missing membership as no rule (the default, `editor`) and a creator's
  // by the id alone: the caller must still see the project too (removed or hidden meanwhile).
  return { caller, dashboard, seesProject: callerStillSeesProject(actor, environmentId) };
}

/** The caller still sees the dashboard when the statement runs (`dashboardVisibleInSql`): a read that writes. */
export function callerStillSeesDashboard(c: Context<AppEnv>, dashboardId: number) {
  const { caller, dashboard, seesProject } = callerOnDashboardInSql(c, c.var.project.environmentId, dashboardId);
  return sql`(${seesProject} and ${dashboardVisibleInSql(caller, dashboard)})`;
}

/** The caller still manages the dashboard when the statement runs (`dashboardManagerInSql`). */
export function callerStillManagerOf(c: Context<AppEnv>, environmentId: number, dashboardId: number) {
  const { caller, dashboard, seesProject } = callerOnDashboardInSql(c, environmentId, dashboardId);
  return sql`(${seesProject} and ${dashboardManagerInSql(caller, dashboard)})`;
}

/**
 * The caller may still edit the dashboard when the statement runs (`dashboardEditorInSql`), and,
 * for a write that changes its restriction level, still change that (`dashboardRestrictionChangerInSql`).
 * Refused: `editRightLost` says why.
 */
export function callerStillEditorOf(c: Context<AppEnv>, dashboardId: number, changesRestriction = false) {
  const { caller, dashboard, seesProject } = callerOnDashboardInSql(c, c.var.project.environmentId, dashboardId);
  const editor = dashboardEditorInSql(caller, dashboard);
  const changer = changesRestriction ? sql` and ${dashboardRestrictionChangerInSql(caller, dashboard)}` : sql``;
  return sql`(${seesProject} and ${editor}${changer})`;
}

/**
 * The caller may still copy dashboard `source` when the statement runs, as `copyableSource` judged
 * it on the read: live, in a project they still see (with a key not blocked there), not hidden from
 * them by a rule, and from another project only while they are an admin of both organizations and
 * that project is still in the organization it was read in (moved meanwhile, it is judged anew:
 * `sourceMovedMeanwhile`).
 */
export function callerStillMayCopy(
  c: Context<AppEnv>,
  source: { id: number; environmentId: number; organizationId: string },
  sameProject: boolean,
) {
  const { caller, dashboard, seesProject } = callerOnDashboardInSql(c, source.environmentId, source.id);
  const live = sql`exists (select 1 from ${dashboards}
    where ${dashboards.id} = ${source.id} and ${dashboards.deleted} = 0)`;
  const adminOfBoth = sameProject
    ? sql`1`
    : sql`(${environmentStillIn(source.environmentId, source.organizationId)}
      and ${callerStillAdmin(c.var.actor, source.organizationId)}
      and ${callerStillAdmin(c.var.actor, c.var.project.organizationId)})`;
  return sql`(${live} and ${seesProject} and ${dashboardVisibleInSql(caller, dashboard)} and ${adminOfBoth})`;
}

/** Whether a copy refused by `callerStillMayCopy` met its source's project moved out of the organization read. */
export async function sourceMovedMeanwhile(db: Database, source: { environmentId: number; organizationId: string }) {
  const row = await db.get<{ moved: number }>(
    sql`select not ${environmentStillIn(source.environmentId, source.organizationId)} as "moved"`,
  );
  return row?.moved === 1;
}

/**
 * Why a write held by `callerStillEditorOf` was refused: 404 once the caller no longer sees the
 * project (removed from the organization, or hidden by a rule, meanwhile), as a moment later; 403
 * otherwise (`refusalInEnvironment`). Read only on that path.
 */
export const editRightLost = (c: Context<AppEnv>): Promise<Error> =>
  refusalInEnvironment(c.var.db, c.var.actor, c.var.project.environmentId, () => permissionDenied(NO_EDIT_RIGHT));

/** A dashboard (deleted included: a PATCH restores) and its tiles. */
const dashboardAndTiles = (c: Context<AppEnv>, db: Database, environmentId: number, id: number) =>
  [
    selectDashboard(db, readScopeOf(c, environmentId), id, { includeDeleted: true }),
    selectTiles(db, id, undefined, { ofDeletedDashboard: true }),
  ] as [ReturnType<typeof selectDashboard>, ReturnType<typeof selectTiles>];

/** The dashboard the path names and its tiles, read in the round trip that resolves the project. */
export const dashboardOfPath = routeReads((c) => {
  const id = parseDashboardId(c.req.param("id") ?? "");
  return projectRead(c, (environmentId) => dashboardAndTiles(c, c.var.db, environmentId, id));
});

/**
 * The dashboard of the path as read again by a write whose first read went stale
 * (`judgedOnLatest`): at the primary, which holds the write that made it stale.
 */
export async function dashboardOfPathAgain(c: Context<AppEnv>): Promise<DashboardWithTiles | undefined> {
  const id = parseDashboardId(c.req.param("id") ?? "");
  const primary = primaryOfRequest(c);
  const [[row], tiles] = await primary.batch(dashboardAndTiles(c, primary, c.var.project.environmentId, id));
  return row && { row, tiles };
}

/**
 * What creating a dashboard reads with the project (POST): the caller's rule on every dashboard
 * of the environment, and the dashboard a new one copies (`use_dashboard`), in whichever project
 * the caller sees it, with its tiles.
 */
export const creationReads = routeReads(async (c) => {
  const body = await peekJsonBody(c, CreateDashboardInput);
  const [[rule], ...source] = await projectRead(c, (environmentId) => [
    selectKindRuleOfCaller(c.var.db, "dashboard", c.var.actor, environmentId),
    ...(typeof body?.use_dashboard === "number" ? sourceStatements(c.var.db, c.var.actor, body.use_dashboard) : []),
  ]);
  return { body, ruleOnEveryDashboard: rule?.level ?? null, source };
});

/**
 * As PostHog: creating a dashboard needs `editor` on every dashboard of the project (the default),
 * whatever rules on single dashboards grant; the project's admins are never restricted.
 */
export function assertMayCreateDashboards(c: Context<AppEnv>) {
  const { ruleOnEveryDashboard } = creationReads.results(c);
  if (isAdmin(c.var.project.level) || ruleOnEveryDashboard === null) return;
  if (ruleOnEveryDashboard === "none" || ruleOnEveryDashboard === "viewer") {
    throw permissionDenied(NO_CREATE_RIGHT);
  }
}

/**
 * `assertMayCreateDashboards` when the statement runs, not only as read: the caller still sees
 * the project, and is its admin or held below editor by no rule on every dashboard.
 */
export function callerStillCreatorIn(c: Context<AppEnv>) {
  const { actor } = c.var;
  const { environmentId } = c.var.project;
  const rule = kindRuleOfMember("dashboard", environmentId, membershipInEnvironment(actor, environmentId));
  const editorByRule = sql`coalesce(${rule}, 'editor') not in ('none', 'viewer')`;
  return sql`(${callerStillSeesProject(actor, environmentId)}
    and (${callerStillProjectAdmin(actor, environmentId)} or ${editorByRule}))`;
}

/** The dashboard to copy: the one read with the project, when it is the one the body names, else read now. */
export async function readDashboardToCopy(
  c: Context<AppEnv>,
  id: number,
): Promise<{ row: DashboardToCopy; tiles: TileRow[] } | undefined> {
  const { body, source } = creationReads.results(c);
  const [[row], tiles] =
    body?.use_dashboard === id && source.length === 2
      ? (source as [DashboardToCopy[], TileRow[]])
      : await c.var.db.batch(sourceStatements(c.var.db, c.var.actor, id));
  return row ? { row, tiles } : undefined;
}

/**
 * A tile write's reads, which its body names (`move_tile`, `copy_tile`): made in the round trip that
 * resolves the project when the body can be read then (`reads`), else by the handler (`read`), the
 * same statements either way.
 */
function readsNamedByBody<S extends z.ZodType, T extends [Statement, ...Statement[]]>(
  schema: S,
  statements: (db: Database, scope: DashboardReadScope, dashboardId: number, body: z.output<S>) => T,
) {
  const reads = routeReads(async (c) => {
    const body = await peekJsonBody(c, schema);
    const id = parseDashboardId(c.req.param("id") ?? "");
    const results = await projectRead(c, (environmentId) =>
      body === undefined ? [] : statements(c.var.db, readScopeOf(c, environmentId), id, body),
    );
    return { body, results };
  });
  async function read(c: Context<AppEnv>, scope: DashboardScope, dashboardId: number, sent: z.output<S>) {
    const { body, results } = reads.results(c);
    if (body !== undefined && JSON.stringify(body) === JSON.stringify(sent)) return results as BatchResponse<T>;
    return c.var.db.batch(statements(c.var.db, scope, dashboardId, sent));
  }
  return { reads, read };
}

/** The tile to move and both dashboards (`move_tile`). */
const tileMove = readsNamedByBody(MoveTileInput, moveStatements);
export const tileToMove = tileMove.reads;
export const readTileMove = tileMove.read;

/** The tile to copy, both dashboards and the destination's tiles (`copy_tile`). */
const tileCopy = readsNamedByBody(CopyTileInput, copyStatements);
export const tileToCopy = tileCopy.reads;
export const readTileCopy = tileCopy.read;

/** The dashboard the path names, its tiles and the version to restore, read with the project. */
export const versionToRestore = routeReads((c) => {
  const id = parseDashboardId(c.req.param("id") ?? "");
  const version = parseDashboardId(c.req.param("version") ?? "");
  return projectRead(c, (environmentId) => [
    selectDashboard(c.var.db, readScopeOf(c, environmentId), id),
    selectTiles(c.var.db, id),
    selectVersion(c.var.db, id, version),
  ]);
});
