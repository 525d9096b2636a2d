import type { Context } from "hono";
import { and, desc, eq, gt, lt, sql, type SQL } from "drizzle-orm";
import { activityLog, users } from "../../db/schema";
import { toUserBasic } from "../../users/user-basic";
import type { Database } from "../db";
import type { AppEnv } from "../env";
import { DEFAULT_PAGE_SIZE } from "../pagination";
import { publicUrl } from "../public-url";
import type { ActivityLogEntry, ActivityLogQuery } from "./activity-log.schema";

type EntryRow = typeof activityLog.$inferSelect;
type UserRow = typeof users.$inferSelect;

export function toActivityLogEntry(row: EntryRow, user: UserRow | null): ActivityLogEntry {
  const detail = JSON.parse(row.detail) as { name: string | null; changes: ActivityLogEntry["detail"]["changes"]; context: ActivityLogEntry["detail"]["context"] };
  return {
    id: row.id,
    user: user ? toUserBasic(user) : null,
    unread: false,
    organization_id: row.organizationId,
    project_id: row.projectId,
    was_impersonated: false,
    is_system: row.isSystem,
    activity: row.activity,
    scope: row.scope,
    item_id: row.itemId,
    detail: { id: row.itemId, name: detail.name, short_id: null, type: null, changes: detail.changes, merge: null, trigger: null, context: detail.context },
    created_at: row.createdAt,
    request_id: row.requestId,
    api_key_id: row.apiKeyId,
    seq: row.seq,
    hash: row.hash,
  };
}

/** Milliseconds as stored (`...T10:00:00.000Z`), so that text comparison is time comparison. */
const storedTime = (value: string) => new Date(value).toISOString();

/** The filters of the query string, as SQL; each leads an index together with the organization or project. */
function filtersOf(query: ActivityLogQuery): (SQL | undefined)[] {
  return [
    query.scope === undefined ? undefined : eq(activityLog.scope, query.scope),
    query.item_id === undefined ? undefined : eq(activityLog.itemId, query.item_id),
    query.user === undefined ? undefined : sql`${activityLog.userId} = (select ${users.id} from ${users} where ${users.uuid} = ${query.user})`,
    query.activity === undefined ? undefined : eq(activityLog.activity, query.activity),
    query.after === undefined ? undefined : gt(activityLog.createdAt, storedTime(query.after)),
    query.before === undefined ? undefined : lt(activityLog.createdAt, storedTime(query.before)),
    query.cursor === undefined ? undefined : lt(activityLog.seq, Number(query.cursor)),
  ];
}

/**
 * A page of entries, newest first, from `where` (an organization, or a project) and the filters.
 * The cursor is a position in the chain, so entries appended meanwhile never shift a page.
 * One more row than the page is read, to know whether a next page exists.
 */
export function selectActivityPage(db: Database, where: SQL | undefined, query: ActivityLogQuery) {
  return db
    .select({ entry: activityLog, user: users })
    .from(activityLog)
    .leftJoin(users, eq(users.id, activityLog.userId))
    .where(and(where, ...filtersOf(query)))
    .orderBy(desc(activityLog.seq))
    .limit((query.limit ?? DEFAULT_PAGE_SIZE) + 1);
}

type PageRow = { entry: EntryRow; user: UserRow | null };

export function activityPageEnvelope(c: Context<AppEnv>, query: ActivityLogQuery, rows: PageRow[]) {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  let next: string | null = null;
  if (rows.length > limit && last) {
    const request = new URL(c.req.url);
    const url = publicUrl(c, `${request.pathname}${request.search}`);
    url.searchParams.set("cursor", String(last.entry.seq));
    next = url.toString();
  }
  return { next, previous: null, results: page.map((row) => toActivityLogEntry(row.entry, row.user)) };
}

export const ofOrganization = (organizationId: string) => eq(activityLog.organizationId, organizationId);
/** A project's entries: `:project_id` names an environment, the entries name its project. */
export const ofEnvironmentProject = (environmentId: number) =>
  sql`${activityLog.projectId} = (select project_id from environments where id = ${environmentId})`;
