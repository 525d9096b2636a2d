import { and, desc, eq, lt, sql, type SQL } from "drizzle-orm";
import { activityLog, activityLogSegments, users } from "../../db/schema";
import { toUserBasic } from "../../users/user-basic";
import type { Database } from "../db";
import { DEFAULT_PAGE_SIZE } from "../pagination";
import type { ActivityLogEntry, ActivityLogQuery } from "./activity-log.schema";

type EntryRow = typeof activityLog.$inferSelect;
type UserRow = typeof users.$inferSelect;

export function toActivityLogEntry(row: EntryRow, user: UserRow | null): ActivityLogEntry {
  const detail = JSON.parse(row.detail) as {
    name: string | null;
    changes: ActivityLogEntry["detail"]["changes"];
    context: ActivityLogEntry["detail"]["context"];
  };
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
    detail: {
      id: row.itemId,
      name: detail.name,
      short_id: null,
      type: null,
      changes: detail.changes,
      merge: null,
      trigger: null,
      context: detail.context,
    },
    created_at: row.createdAt,
    request_id: row.requestId,
    api_key_id: row.apiKeyId,
    seq: row.seq,
    hash: row.hash,
  };
}

/** Milliseconds as stored (`...T10:00:00.000Z`), so that text comparison is time comparison. */
const storedTime = (value: string) => new Date(value).toISOString();

/**
 * The organization's last `seq` written at or before `time`, as SQL: one probe of the time index.
 * Entries take their number and their time (the database's clock) in the same transaction, so
 * numbers and times rise together, and a time range is a range of numbers, read along the
 * number index in the page's own order. Before the entries kept here, one probe of the archived
 * segments: a segment that holds `time` answers its last number, or the one before its first when
 * `straddling` is "before" (a range around it, its entries then filtered by time as they are read).
 */
export const lastSeqAtOrBefore = (organizationId: string | SQL, time: string, straddling: "before" | "last" = "last") =>
  sql`coalesce((select ${activityLog.seq} from ${activityLog}
    where ${activityLog.organizationId} = ${organizationId} and ${activityLog.createdAt} <= ${storedTime(time)}
    order by ${activityLog.createdAt} desc, ${activityLog.seq} desc limit 1),
    (select case when ${activityLogSegments.lastCreatedAt} <= ${storedTime(time)} or ${straddling} = 'last'
      then ${activityLogSegments.lastSeq} else ${activityLogSegments.firstSeq} - 1 end
    from ${activityLogSegments} where ${activityLogSegments.organizationId} = ${organizationId}
      and ${activityLogSegments.firstCreatedAt} <= ${storedTime(time)}
    order by ${activityLogSegments.firstSeq} desc limit 1), 0)`;

/** The filters of the query string, as SQL; each leads an index together with the organization or project. */
function filtersOf(organizationId: string | SQL, query: ActivityLogQuery): (SQL | undefined)[] {
  return [
    query.scope === undefined ? undefined : eq(activityLog.scope, query.scope),
    query.item_id === undefined ? undefined : eq(activityLog.itemId, query.item_id),
    query.user === undefined
      ? undefined
      : sql`${activityLog.userId} = (select ${users.id} from ${users} where ${users.uuid} = ${query.user})`,
    query.activity === undefined ? undefined : eq(activityLog.activity, query.activity),
    query.after === undefined ? undefined : sql`${activityLog.seq} > ${lastSeqAtOrBefore(organizationId, query.after)}`,
    // Before a time: at or below the last number of the millisecond before it.
    query.before === undefined
      ? undefined
      : sql`${activityLog.seq} <= ${lastSeqAtOrBefore(
          organizationId,
          new Date(new Date(query.before).getTime() - 1).toISOString(),
        )}`,
    query.cursor === undefined ? undefined : lt(activityLog.seq, Number(query.cursor)),
  ];
}

/** Entries with the users who made them: what a page, an entry's URL and the events feed read. */
export const selectEntriesWithUsers = (db: Database) =>
  db.select({ entry: activityLog, user: users }).from(activityLog).leftJoin(users, eq(users.id, activityLog.userId));

/** Whose entries a page lists: an organization's, or some of them (a project's). */
export type ActivityLogSource = { organizationId: string | SQL; where?: SQL };

/**
 * A page of entries, newest first, from `source` and the filters. The cursor is a position in the
 * chain, so entries appended meanwhile never shift a page. One more row than the page is read,
 * to know whether a next page exists.
 */
export function selectActivityPage(db: Database, source: ActivityLogSource, query: ActivityLogQuery) {
  return selectEntriesWithUsers(db)
    .where(
      and(
        source.where ?? eq(activityLog.organizationId, source.organizationId),
        ...filtersOf(source.organizationId, query),
      ),
    )
    .orderBy(desc(activityLog.seq))
    .limit((query.limit ?? DEFAULT_PAGE_SIZE) + 1);
}

export type PageRow = { entry: EntryRow; user: UserRow | null };

/**
 * The page of `rows` (one more than the page when a next one exists), or, when reading archived
 * segments stopped short of filling it, a page going on at `resumeAt`. `requestUrl`: the request's
 * public URL without a query-string key (`thisRequestUrl`), which `next` repeats with a cursor.
 */
export function activityPageEnvelope(
  requestUrl: URL,
  query: ActivityLogQuery,
  rows: PageRow[],
  resumeAt: number | null = null,
) {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const cursor = rows.length > limit && last ? last.entry.seq : resumeAt;
  let next: string | null = null;
  if (cursor !== null) {
    const url = new URL(requestUrl);
    url.searchParams.set("cursor", String(cursor));
    next = url.toString();
  }
  return { next, previous: null, results: page.map((row) => toActivityLogEntry(row.entry, row.user)) };
}

/** A project's entries: `:project_id` names an environment, the entries name its project. */
export const ofEnvironmentProject = (environmentId: number) =>
  sql`${activityLog.projectId} = (select project_id from environments where id = ${environmentId})`;
