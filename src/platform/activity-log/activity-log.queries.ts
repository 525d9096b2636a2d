import { and, desc, eq, lt, sql, type SQL } from "drizzle-orm";
import { activityLog, activityLogSegments, serviceApiKeys, users } from "../../db/schema";
import { toUserBasic, userBasicColumns, type UserBasicRow } from "../user-basic";
import { inJsonList, type Database } from "../db";
import { DEFAULT_PAGE_SIZE } from "../pagination";
import { notFound } from "../errors";
import { USER_ID, type ActivityLogEntry, type ActivityLogQuery } from "./activity-log.schema";

type EntryRow = typeof activityLog.$inferSelect;
type UserRow = UserBasicRow;

/** An entry with who made it: the user, or the organization's service key (which is no person). */
export type PageRow = { entry: EntryRow; user: UserRow | null; serviceKey: { id: string; label: string } | null };

export function toActivityLogEntry({ entry: row, user, serviceKey }: PageRow): ActivityLogEntry {
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
    dashboard_id: row.dashboardId,
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
    service_key: serviceKey,
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
      : sql`${activityLog.userId} = (select ${users.id} from ${users} where ${namedUser(query.user)})`,
    query.activity === undefined ? undefined : eq(activityLog.activity, query.activity),
    query.after === undefined ? undefined : sql`${activityLog.seq} > ${lastSeqAtOrBefore(organizationId, query.after)}`,
    // Before a time: at or below the last number of the millisecond before it.
    query.before === undefined
      ? undefined
      : sql`${activityLog.seq} <= ${lastSeqAtOrBefore(
          organizationId,
          new Date(new Date(query.before).getTime() - 1).toISOString(),
        )}`,
    // Page mode reads by offset, as PostHog's page numbers do; the cursor is the other mode's.
    query.cursor === undefined || query.page !== undefined ? undefined : lt(activityLog.seq, Number(query.cursor)),
  ];
}

/** The user a `user` filter names: by id when it is one (`USER_ID`), else by uuid. */
export const namedUser = (user: string) => (USER_ID.test(user) ? eq(users.id, Number(user)) : eq(users.uuid, user));

/** `?scopes=A,B`: the kinds named, blanks and repeats dropped; none named matches nothing, as an unknown kind does. */
export const scopesOf = (scopes: string) => [
  ...new Set(
    scopes
      .split(",")
      .map((scope) => scope.trim())
      .filter((scope) => scope !== ""),
  ),
];

/** Filters besides `scopes`, which each lead an index of their own. */
const ROW_FILTERS = ["scope", "item_id", "user", "activity", "after", "before"] as const;

/**
 * `?scopes=A,B` as SQL. One kind is `?scope=`. Several, on the organization's log, for a page of
 * `reach` entries (the count: undefined) with no other filter, are read one range of the kind
 * index each: per kind, its `reach`-th newest entry (below the cursor) is found along that index,
 * and only the kind's entries from there up are read, so a page costs its kinds' pages however
 * long the log. (An IN list walks the log by number until the page fills: every entry, for a rare
 * kind.) Otherwise the other filters, or a project's entries, lead and the kinds filter what they
 * read (a project's visibility rules, repeated in these subqueries, would pass SQLite's limit on
 * an expression's depth).
 */
function scopesCondition(source: ActivityLogSource, query: ActivityLogQuery, reach?: number): SQL | undefined {
  if (query.scopes === undefined) return undefined;
  const kinds = scopesOf(query.scopes);
  if (kinds.length <= 1) return kinds[0] === undefined ? sql`0` : eq(activityLog.scope, kinds[0]);
  if (reach === undefined || source.where || ROW_FILTERS.some((filter) => query[filter] !== undefined)) {
    return inJsonList(activityLog.scope, kinds);
  }
  const inSource = () => and(sourceCondition(source), ...filtersOf(source.organizationId, query));
  // Within each subquery, `activity_log` is that subquery's own table. The CROSS JOIN keeps the
  // kinds the outer loop (SQLite's rule), so that each is one range of the index, not a scan.
  const lowest = sql`(select ${activityLog.seq} from ${activityLog} where ${inSource()}
    and ${activityLog.scope} = "kinds"."value" order by ${activityLog.seq} desc limit 1 offset ${reach - 1})`;
  return sql`${activityLog.seq} in (select ${activityLog.seq}
    from (select "value" as "kind", ${lowest} as "lowest"
      from json_each(${JSON.stringify(kinds)}) as "kinds") as "reach"
    cross join ${activityLog}
    where ${activityLog.scope} = "reach"."kind" and ${activityLog.seq} >= coalesce("reach"."lowest", 0)
      and ${inSource()})`;
}

/** What page mode counts at most: a count, like a page, costs a bounded read of an index. */
export const COUNT_CAP = 10_000;

/** The service key an entry names, if any: the key's label, read where the entry's user is. */
export const entryServiceKey = { id: serviceApiKeys.id, label: serviceApiKeys.label };
export const serviceKeyOfEntry = eq(serviceApiKeys.id, activityLog.apiKeyId);

/** Entries with who made them (`PageRow`): what a page, an entry's URL and the events feed read. */
export const selectEntriesWithUsers = (db: Database) =>
  db
    .select({ entry: activityLog, user: userBasicColumns(users), serviceKey: entryServiceKey })
    .from(activityLog)
    .leftJoin(users, eq(users.id, activityLog.userId))
    .leftJoin(serviceApiKeys, serviceKeyOfEntry);

/** Whose entries a page lists: an organization's, or some of them (a project's). */
export type ActivityLogSource = { organizationId: string | SQL; where?: SQL };

/**
 * A page of entries, newest first, from `source` and the filters. The cursor is a position in the
 * chain, so entries appended meanwhile never shift a page. One more row than the page is read,
 * to know whether a next page exists.
 */
function selectActivityPage(db: Database, source: ActivityLogSource, query: ActivityLogQuery) {
  const size = pageSizeOf(query);
  const offset = query.page === undefined ? 0 : offsetOf(query.page, size);
  const select = selectEntriesWithUsers(db)
    .where(whereOf(source, query, offset + size + 1))
    .orderBy(desc(activityLog.seq));
  if (query.page === undefined) return select.limit(size + 1);
  // A page past the counted ones is 404 (`activityPageEnvelope`): none of it is read.
  return offset >= COUNT_CAP ? select.limit(0) : select.limit(size + 1).offset(offset);
}

export const offsetOf = (page: number, size: number) => (page - 1) * size;

const sourceCondition = (source: ActivityLogSource) =>
  source.where ?? eq(activityLog.organizationId, source.organizationId);

/** The page's conditions; `reach`: how many of the newest matching entries the page may need. */
const whereOf = (source: ActivityLogSource, query: ActivityLogQuery, reach?: number) =>
  and(sourceCondition(source), ...filtersOf(source.organizationId, query), scopesCondition(source, query, reach));

/** Entries per page: `page_size` in page mode, `limit` with the cursor. */
export const pageSizeOf = (query: ActivityLogQuery) =>
  (query.page === undefined ? query.limit : (query.page_size ?? query.limit)) ?? DEFAULT_PAGE_SIZE;

/**
 * The entries `source` and the filters match, up to `COUNT_CAP`: the same indexes the page
 * reads, never more than the cap of their rows. With the cursor, nothing is counted (none read).
 */
function selectActivityCount(db: Database, source: ActivityLogSource, query: ActivityLogQuery) {
  const matching = db
    .select({ one: sql`1` })
    .from(activityLog)
    .where(whereOf(source, query))
    .limit(query.page === undefined ? 0 : COUNT_CAP)
    .as("matching");
  return db.select({ count: sql<number>`count(*)` }).from(matching);
}

/** The page's statements: the page and its count (`?page=`; an empty read otherwise). */
export const activityPageStatements = (db: Database, source: ActivityLogSource, query: ActivityLogQuery) =>
  [selectActivityPage(db, source, query), selectActivityCount(db, source, query)] as const;

/**
 * The envelope PostHog's pagination answers: with the cursor `{next, previous, results}`; in page
 * mode also `count`, and links to the pages either side. A page past the last is 404, as there.
 * `rows` holds one more than the page when a next one exists; when reading archived segments
 * stopped short of filling it, the next page goes on at `resumeAt`. `requestUrl`: the request's
 * public URL without a query-string key (`thisRequestUrl`), which the links repeat.
 */
export function activityPageEnvelope(
  requestUrl: URL,
  query: ActivityLogQuery,
  rows: PageRow[],
  counted: { count: number }[],
  resumeAt: number | null = null,
) {
  const size = pageSizeOf(query);
  const page = rows.slice(0, size);
  const results = page.map(toActivityLogEntry);
  const hasMore = rows.length > size;
  if (query.page !== undefined) {
    const number = query.page;
    const count = Math.min(counted[0]?.count ?? 0, COUNT_CAP);
    if (number > 1 && (page.length === 0 || offsetOf(number, size) >= COUNT_CAP)) throw notFound();
    const linkTo = (to: number) => {
      const url = new URL(requestUrl);
      if (to === 1) url.searchParams.delete("page");
      else url.searchParams.set("page", String(to));
      return url.toString();
    };
    const next = hasMore && number * size < COUNT_CAP ? linkTo(number + 1) : null;
    return { count, next, previous: number > 1 ? linkTo(number - 1) : null, results };
  }
  const last = page.at(-1);
  const cursor = hasMore && last ? last.entry.seq : resumeAt;
  let next: string | null = null;
  if (cursor !== null) {
    const url = new URL(requestUrl);
    url.searchParams.set("cursor", String(cursor));
    next = url.toString();
  }
  return { next, previous: null, results };
}

/** A project's entries: `:project_id` names an environment, the entries name its project. */
export const ofEnvironmentProject = (environmentId: number) =>
  sql`${activityLog.projectId} = (select project_id from environments where id = ${environmentId})`;
