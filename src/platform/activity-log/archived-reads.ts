import { and, desc, eq, gte, lte, sql, type SQL } from "drizzle-orm";
import { activityLog, activityLogSegments, users } from "../../db/schema";
import type { Database } from "../db";
import type { OrganizationRef } from "../route-context/organization";
import {
  activityPageStatements,
  COUNT_CAP,
  namedUser,
  offsetOf,
  pageSizeOf,
  scopesOf,
  type ActivityLogSource,
  type PageRow,
} from "./activity-log.queries";
import type { ActivityLogQuery } from "./activity-log.schema";
import {
  authorStatements,
  readSegment,
  segmentsReadAtOnce,
  selectSegmentsBelow,
  withAuthors,
  withUsers,
  type SegmentRow,
} from "./archive";

type EntryRow = typeof activityLog.$inferSelect;

/**
 * Archived entries as a table named as the log's (`json_each` of their values), so that a
 * condition written for the entries kept here (who sees what) reads them alike.
 */
function archivedAsLog(entries: EntryRow[]): SQL {
  // One array an entry, not an object: the 10,000 entries of ten full segments bind about 1.2 MB,
  // well within D1's 2 MB for a value (as objects they would pass it).
  const values = JSON.stringify(
    entries.map((entry) => [
      entry.id,
      entry.organizationId,
      entry.projectId,
      entry.dashboardId,
      entry.scope,
      entry.activity,
    ]),
  );
  return sql`(select json_extract(value, '$[0]') as id, json_extract(value, '$[1]') as organization_id,
    json_extract(value, '$[2]') as project_id, json_extract(value, '$[3]') as dashboard_id,
    json_extract(value, '$[4]') as scope, json_extract(value, '$[5]') as activity
    from json_each(${values})) as ${activityLog}`;
}

/** The ids of the archived `entries` that `where`, a condition on the log's columns, keeps. */
export const selectArchivedMatching = (db: Database, entries: EntryRow[], where: SQL | undefined) =>
  db
    .select({ id: sql<string>`${activityLog.id}` })
    .from(archivedAsLog(entries))
    .where(where);

/**
 * Segments one page of the log reads at most (a quiet organization's segments hold a day each): a
 * cursor page that filters most entries out may end early, its `next` going on.
 */
const SEGMENTS_PER_PAGE = 50;

/** A page's filters, applied to archived entries as the page's SQL applies them to those kept here. */
type ArchivedFilter = Omit<ActivityLogQuery, "user" | "limit"> & { userId?: number | null };

/**
 * The filter as a test of one entry, its values read once a page, not once an entry (a page may
 * read 50,000 entries, and `?scopes=` name 2,000 kinds).
 */
function entryTest(filter: ArchivedFilter): (row: EntryRow) => boolean {
  const scopes = filter.scopes === undefined ? undefined : new Set(scopesOf(filter.scopes));
  const after = filter.after === undefined ? undefined : new Date(filter.after).toISOString();
  const before = filter.before === undefined ? undefined : new Date(filter.before).toISOString();
  const below = filter.page !== undefined || filter.cursor === undefined ? undefined : Number(filter.cursor);
  return (row) =>
    (filter.scope === undefined || row.scope === filter.scope) &&
    (scopes === undefined || scopes.has(row.scope)) &&
    (filter.item_id === undefined || row.itemId === filter.item_id) &&
    (filter.userId === undefined || row.userId === filter.userId) &&
    (filter.activity === undefined || row.activity === filter.activity) &&
    (after === undefined || row.createdAt > after) &&
    (before === undefined || row.createdAt < before) &&
    (below === undefined || row.seq < below);
}

/** No filter at all: the archive's entries are counted from its index, unread. */
const unfiltered = (filter: ArchivedFilter, reader: ArchiveReader) =>
  reader.where === undefined &&
  reader.of === undefined &&
  [filter.scope, filter.scopes, filter.item_id, filter.userId, filter.activity, filter.after, filter.before].every(
    (value) => value === undefined,
  );

/**
 * Where archived entries are read, and which of them the page's source keeps: its `where`, in SQL,
 * after `of`, what can be told from the entry alone (its project), so that SQL sees only those.
 */
export type ArchiveReader = { bucket: R2Bucket; db: Database; where?: SQL; of?: (entry: EntryRow) => boolean };

/**
 * The archived entries the filters and the source's `where` keep, newest first, up to `wanted` of
 * them (every archived entry is older than those kept here: archiving takes the chain's prefix):
 * how many (`matched`), and those at positions `keep` among them, the rest not held. Reads at most
 * 50 of `segments` (`pageStatements`), as many at once as `segmentsReadAtOnce` lets, with one
 * query a read for `where`; `resumeAt` is where a cursor page goes on when they were not enough.
 */
async function archivedEntries(
  reader: ArchiveReader,
  segments: SegmentRow[],
  filter: ArchivedFilter,
  wanted: number,
  keep = { from: 0, to: wanted },
): Promise<{ rows: EntryRow[]; matched: number; resumeAt: number | null }> {
  const after = filter.after === undefined ? undefined : new Date(filter.after).toISOString();
  const matches = entryTest(filter);
  const rows: EntryRow[] = [];
  let matched = 0;
  const readable = segments.slice(0, SEGMENTS_PER_PAGE);
  let next = 0;
  let ended = false;
  while (!ended && next < readable.length && matched < wanted) {
    // As many as the page may still need, unfiltered (each holds `entries`), as one read holds.
    const group: SegmentRow[] = [];
    let holding = 0;
    for (const segment of segmentsReadAtOnce(readable.slice(next))) {
      ended = after !== undefined && segment.lastCreatedAt <= after;
      if (ended || holding >= wanted - matched) break;
      group.push(segment);
      holding += segment.entries;
    }
    next += group.length;
    const contents = await Promise.all(group.map((segment) => readSegment(reader.bucket, segment)));
    const matching = contents.flatMap((content) => content.rows.filter(matches).reverse());
    for (const row of await keptBy(reader, matching)) {
      if (matched === wanted) break;
      if (matched >= keep.from && matched < keep.to) rows.push(row);
      matched += 1;
    }
  }
  const more = !ended && matched < wanted && segments.length > SEGMENTS_PER_PAGE;
  return { rows, matched, resumeAt: more ? readable.at(-1)!.firstSeq : null };
}

/**
 * The entries the reader's `where` keeps, in their order. With a `where`, asked even when nothing
 * is left to keep: a page's round trips (`Server-Timing`) must not tell whether hidden entries
 * matched its filters.
 */
async function keptBy(reader: ArchiveReader, entries: EntryRow[]): Promise<EntryRow[]> {
  const candidates = reader.of ? entries.filter(reader.of) : entries;
  if (reader.where === undefined) return candidates;
  const kept = new Set((await selectArchivedMatching(reader.db, candidates, reader.where)).map((row) => row.id));
  return candidates.filter((entry) => kept.has(entry.id));
}

/**
 * A page's statements, for the caller's round trip: its entries kept here and their count
 * (`activityPageStatements`), the segments it may read next (below its cursor, newest first) and
 * the `user` filter's id, which archived entries name.
 */
export const pageStatements = (db: Database, source: ActivityLogSource, query: ActivityLogQuery) =>
  [
    ...activityPageStatements(db, source, query),
    selectSegmentsBelow(
      db,
      source.organizationId,
      query.cursor === undefined || query.page !== undefined ? Number.MAX_SAFE_INTEGER : Number(query.cursor),
      SEGMENTS_PER_PAGE + 1,
    ),
    db
      .select({ id: users.id })
      .from(users)
      .where(query.user === undefined ? sql`0` : namedUser(query.user)),
  ] as const;

export type PageReads = [PageRow[], { count: number }[], SegmentRow[], { id: number }[]];

/** A page with its count, and where a cursor page goes on when the archive it read ran short. */
type PageAcross = { rows: PageRow[]; counted: { count: number }[]; resumeAt: number | null };

/**
 * The page `pageStatements` began, gone on into the archive where the entries kept here run out:
 * the same order, filters and bodies. A cursor page reads what it lacks; a numbered page counts
 * the archived entries too (up to `COUNT_CAP` with those kept here, within the 50 segments a page
 * reads: from the index when nothing is filtered, else by reading them) and takes its part.
 */
export async function pageAcrossArchive(
  reader: ArchiveReader,
  query: ActivityLogQuery,
  [rows, counted, segments, [filterUser]]: PageReads,
): Promise<PageAcross> {
  const size = pageSizeOf(query);
  // A uuid of no user matches no entry, not those of no user (the system's, service keys'): no user has id -1.
  const filter = { ...query, userId: query.user === undefined ? undefined : (filterUser?.id ?? -1) };
  const alone = { rows, counted, resumeAt: null };
  if (segments.length === 0) return alone;
  if (query.page === undefined) {
    const wanted = size + 1 - rows.length;
    if (wanted <= 0) return alone;
    const archived = await archivedEntries(reader, segments, filter, wanted);
    return { rows: [...rows, ...(await withUsers(reader.db, archived.rows))], counted, resumeAt: archived.resumeAt };
  }
  const keptCount = Math.min(counted[0]?.count ?? 0, COUNT_CAP);
  const offset = offsetOf(query.page, size);
  if (keptCount >= COUNT_CAP || offset >= COUNT_CAP) return alone;
  // Archived entries before the page's own, and through its end (one more: is there a next page?).
  const skipped = Math.max(0, offset - keptCount);
  const through = offset + size + 1 - keptCount;
  // Only the page's part is held: a count may go through 10,000 entries.
  const keep = { from: skipped, to: skipped + size + 1 - rows.length };
  let part: EntryRow[];
  let archivedCount: number;
  if (unfiltered(filter, reader)) {
    const read = segments.slice(0, SEGMENTS_PER_PAGE);
    archivedCount = read.reduce((sum, segment) => sum + segment.entries, 0);
    part = through > 0 ? (await archivedEntries(reader, read, filter, through, keep)).rows : [];
  } else {
    const archived = await archivedEntries(reader, segments, filter, COUNT_CAP - keptCount, keep);
    [part, archivedCount] = [archived.rows, archived.matched];
  }
  return {
    rows: [...rows, ...(await withUsers(reader.db, part))],
    counted: [{ count: Math.min(COUNT_CAP, keptCount + archivedCount) }],
    resumeAt: null,
  };
}

/** How far an entry's time (the database's clock) may be from its id's (the Worker's, as it built the write). */
const ID_TIME_TOLERANCE = 5 * 60_000;
/** The time in a UUIDv7 (its first 48 bits, milliseconds), or null for another id. */
function timeOfId(id: string): number | null {
  const hex = id.toLowerCase().replaceAll("-", "");
  return /^[0-9a-f]{12}7[0-9a-f]{19}$/.test(hex) ? Number.parseInt(hex.slice(0, 12), 16) : null;
}

/**
 * The organization's segments that may hold the entry `id`, read in the caller's round trip: entry
 * ids are UUIDv7, so the id tells when the entry was written, and the segments whose entries span
 * that time (give or take the clocks' tolerance) are one range of the (organization, first time)
 * index: a segment holds one UTC day's entries, so it began on the day of that time's earliest.
 */
export function selectSegmentsAroundId(db: Database, organizationId: OrganizationRef, id: string) {
  const time = timeOfId(id);
  const window = time === null ? undefined : idTimeWindow(time);
  return db
    .select()
    .from(activityLogSegments)
    .where(
      and(
        eq(activityLogSegments.organizationId, organizationId),
        window === undefined
          ? sql`0`
          : and(
              gte(activityLogSegments.firstCreatedAt, `${window.earliest.slice(0, 10)}T00:00:00.000Z`),
              lte(activityLogSegments.firstCreatedAt, window.latest),
              gte(activityLogSegments.lastCreatedAt, window.earliest),
            ),
      ),
    )
    .orderBy(desc(activityLogSegments.firstCreatedAt));
}

const idTimeWindow = (time: number) => ({
  earliest: new Date(time - ID_TIME_TOLERANCE).toISOString(),
  latest: new Date(time + ID_TIME_TOLERANCE).toISOString(),
});

/** How far a segment's time range lies from `time`: 0 when it spans it. */
function distanceFrom(time: number, segment: SegmentRow) {
  const [first, last] = [Date.parse(segment.firstCreatedAt), Date.parse(segment.lastCreatedAt)];
  return time < first ? first - time : time > last ? time - last : 0;
}

/**
 * The archived entry `id` among `segments` (`selectSegmentsAroundId`), with its user, if `where`
 * (a condition on the log's columns: who sees it) keeps it; else null. Reads the segments nearest
 * the id's time first, a few at a time (a busy organization writes many in a few minutes), then
 * one query, also when no entry has the id: a hidden entry's 404 costs the D1 round trips of an
 * unknown one's.
 */
export async function archivedEntry(
  reader: ArchiveReader,
  segments: SegmentRow[],
  id: string,
): Promise<PageRow | null> {
  const time = timeOfId(id);
  if (time === null) return null;
  const nearestFirst = [...segments].sort((a, b) => distanceFrom(time, a) - distanceFrom(time, b));
  let found: EntryRow | undefined;
  for (let at = 0; at < nearestFirst.length && !found; ) {
    const read = segmentsReadAtOnce(nearestFirst.slice(at));
    at += read.length;
    const contents = await Promise.all(read.map((segment) => readSegment(reader.bucket, segment)));
    found = contents.flatMap((content) => content.rows).find((row) => row.id === id);
  }
  const candidates = found && (!reader.of || reader.of(found)) ? [found] : [];
  const [visible, ...authors] = await reader.db.batch([
    selectArchivedMatching(reader.db, candidates, reader.where),
    ...authorStatements(reader.db, candidates),
  ]);
  return visible.length === 0 ? null : (withAuthors(candidates, authors)[0] ?? null);
}
