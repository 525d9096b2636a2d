import type { Context } from "hono";
import { SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { activityLog, activityLogAnchors, activityLogSegments } from "../../db/schema";
import { whileHolds, type Database } from "../db";
import { projectStillIn } from "../route-context/project";
import { personOf, type AppEnv } from "../env";
import { uuid7 } from "../ids";
import { sameJson } from "../json-equality";
import type { ActivityOf, ActivityScope } from "./vocabulary";

/** PostHog's `Change`: one field of an item, before and after. */
export type Change = {
  type: ActivityScope;
  action: "changed" | "created" | "deleted";
  field: string | null;
  before: unknown;
  after: unknown;
};

/** What PostHog shows in place of a secret's value. */
const MASKED = "masked";

/** Who made the change: a key's user, or the service itself (`is_system`). */
export type ActivityActor = {
  /** Read in the batch for a user the same batch creates (signing up). */
  userId: number | null | ReadInBatch;
  apiKeyId: string | null;
  isSystem: boolean;
  requestId: string | null;
};

/**
 * A value the write itself decides, read when the entry is appended (after the write, in the same
 * batch): the id of a row just inserted, the name of a row the write matched without reading it.
 */
export type ReadInBatch = SQL;

export type ActivityEntry<S extends ActivityScope = ActivityScope> = {
  organizationId: string;
  projectId?: number | null | ReadInBatch;
  /** The project's move out of this organization: its project is in another one when the entry is appended. */
  projectLeft?: boolean;
  /** The dashboard the entry is about (itself, a tile, a collaborator, its sharing or rules). */
  dashboardId?: number | null | ReadInBatch;
  scope: S;
  activity: ActivityOf<S>;
  itemId: string | number | ReadInBatch;
  /** The item's human name (a dashboard's name, a member's e-mail). */
  name?: string | null | ReadInBatch;
  changes?: Change[] | null;
  /** A value of it may be read in the batch too: what the write granted, say. */
  context?: Record<string, unknown> | null;
};

/** The most an entry's `changes` keep, serialized: a page of entries stays readable, a row far from D1's 2 MB. */
const MAX_CHANGES_BYTES = 16 * 1024;

const serializedBytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value ?? null)).byteLength;

/** What an entry keeps in place of a value too large for the log: its size. */
export const omittedValue = (bytes: number) => `(omitted: ${bytes} bytes, more than the activity log keeps)`;

/**
 * `changes` within `MAX_CHANGES_BYTES`: the largest values (before or after) are replaced by
 * `omittedValue` until the rest fits. A field may hold 64 KiB, and a change keeps two of them.
 */
function boundedChanges(changes: Change[] | null): Change[] | null {
  if (changes === null || serializedBytes(changes) <= MAX_CHANGES_BYTES) return changes;
  const bounded = changes.map((change) => ({ ...change }));
  const values = bounded
    .flatMap((change) =>
      (["before", "after"] as const).map((side) => ({ change, side, bytes: serializedBytes(change[side]) })),
    )
    .sort((left, right) => right.bytes - left.bytes);
  let total = serializedBytes(changes);
  for (const { change, side, bytes } of values) {
    if (total <= MAX_CHANGES_BYTES) break;
    change[side] = omittedValue(bytes);
    total -= bytes - serializedBytes(change[side]);
  }
  return bounded;
}

/** A value bound as a parameter, or an expression read in the batch (parenthesized: it may be a subquery). */
const valueOrRead = (value: string | number | null | ReadInBatch) =>
  value instanceof SQL ? sql`(${value})` : sql`${value}`;

/**
 * `detail` as stored text. A name or a context value read in the batch is put in by SQLite's
 * `json_object`, which writes the same compact JSON as `JSON.stringify` (a value read must be
 * JSON itself, `json(...)`, or a scalar).
 */
function detailOf(entry: ActivityEntry): SQL | string {
  const changes = boundedChanges(entry.changes ?? null);
  const context = entry.context ?? null;
  const contextRead = context !== null && Object.values(context).some((value) => value instanceof SQL);
  if (!(entry.name instanceof SQL) && !contextRead) {
    return JSON.stringify({ name: entry.name ?? null, changes, context });
  }
  const contextSql = contextRead
    ? sql`json_object(${sql.join(
        Object.entries(context).map(([key, value]) =>
          value instanceof SQL ? sql`${key}, (${value})` : sql`${key}, json(${JSON.stringify(value)})`,
        ),
        sql`, `,
      )})`
    : sql`json(${JSON.stringify(context)})`;
  return sql`json_object('name', ${valueOrRead(entry.name ?? null)}, 'changes', json(${JSON.stringify(changes)}),
    'context', ${contextSql})`;
}

/**
 * The entry's organization, while the project it names (as a number: one the request read) is
 * still in it: a project moved to another organization meanwhile (`change_organization`) refuses
 * the entry with NULL, and with it the whole batch (409: `onError`), so that no write
 * lands on the project with its entry in the organization it left. `projectLeft`: the move's own
 * entry in that organization.
 */
function organizationHeld(entry: ActivityEntry): SQL<string> {
  if (typeof entry.projectId !== "number" || entry.projectLeft) return sql<string>`${entry.organizationId}`;
  return whileHolds(entry.organizationId, projectStillIn(entry.projectId, entry.organizationId));
}

/**
 * The statement that appends `entry`, to be placed in the same `db.batch` as the write it
 * describes, right after it: it inserts only if that statement changed a row (`changes()`), so
 * a conditional write that matched nothing records nothing. Entries placed one after another are
 * gated in a chain. The entry's number is the organization's next (after the highest of its last
 * entry kept here, its last archived one and its retention anchor: retention may have pruned past
 * a segment not deleted yet), taken inside the batch's transaction: gapless, and never the same for
 * two writers. Its time is the database's.
 */
export function activityStatement(db: Database, actor: ActivityActor, entry: ActivityEntry): BatchItem<"sqlite"> {
  const detail = detailOf(entry);
  const nextSeq = sql<number>`max(
    coalesce((select ${activityLog.seq} from ${activityLog}
      where ${activityLog.organizationId} = ${entry.organizationId} order by ${activityLog.seq} desc limit 1), 0),
    coalesce((select max(${activityLogSegments.lastSeq}) from ${activityLogSegments}
      where ${activityLogSegments.organizationId} = ${entry.organizationId}), 0),
    coalesce((select ${activityLogAnchors.seq} from ${activityLogAnchors}
      where ${activityLogAnchors.organizationId} = ${entry.organizationId}), 0)
  ) + 1`;
  // drizzle's D1 batch cannot bind a raw statement's parameters, so the INSERT ... SELECT is built.
  return db.insert(activityLog).select(
    db
      .select({
        id: sql<string>`${uuid7()}`.as("id"),
        organizationId: organizationHeld(entry).as("organization_id"),
        seq: nextSeq.as("seq"),
        projectId: sql<number | null>`${valueOrRead(entry.projectId ?? null)}`.as("project_id"),
        dashboardId: sql<number | null>`${valueOrRead(entry.dashboardId ?? null)}`.as("dashboard_id"),
        userId: sql<number | null>`${valueOrRead(actor.userId)}`.as("user_id"),
        apiKeyId: sql<string | null>`${actor.apiKeyId}`.as("api_key_id"),
        isSystem: sql<boolean>`${actor.isSystem ? 1 : 0}`.as("is_system"),
        activity: sql<string>`${entry.activity}`.as("activity"),
        scope: sql<string>`${entry.scope}`.as("scope"),
        itemId:
          sql<string>`${entry.itemId instanceof SQL ? sql`cast((${entry.itemId}) as text)` : String(entry.itemId)}`.as(
            "item_id",
          ),
        detail: sql<string>`${detail}`.as("detail"),
        requestId: sql<string | null>`${actor.requestId}`.as("request_id"),
        createdAt: sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`.as("created_at"),
        hash: sql<string | null>`null`.as("hash"),
      })
      .from(sql`(select 1)`)
      .where(sql`changes() > 0`),
  );
}

/** The organizations this request appended entries to: their chains are sealed after the response. */
const appendedByRequest = new WeakMap<Context, Set<string>>();

export function organizationsAppendedBy(c: Context): string[] {
  return [...(appendedByRequest.get(c) ?? [])];
}

/** The caller of the request, as the log names it. */
function requestActor(c: Context<AppEnv>): ActivityActor {
  const actor = c.get("actor");
  return {
    // A service key acts as its organization: the entry names the key alone, never a person.
    userId: actor ? personOf(actor) : null,
    apiKeyId: actor?.keyId ?? null,
    isSystem: false,
    requestId: c.get("requestId") ?? null,
  };
}

/** `activityStatement` for the request's caller (or `actor`, for a caller without a key). */
export function recordActivity(
  c: Context<AppEnv>,
  entry: ActivityEntry,
  actor: ActivityActor = requestActor(c),
): BatchItem<"sqlite"> {
  const appended = appendedByRequest.get(c) ?? new Set<string>();
  appended.add(entry.organizationId);
  appendedByRequest.set(c, appended);
  return activityStatement(c.var.db, actor, entry);
}

const sameValue = (left: unknown, right: unknown) => sameJson(left ?? null, right ?? null);

/**
 * The fields of an update that changed, in `fields` order; a secret field says only that it
 * changed. Values are compared as JSON (API shapes: objects and lists compare by content). A
 * secret the request sent (`sentSecrets`) counts as changed whether or not it matched the stored
 * one: compared, its entry's absence would confirm a guess of it to anyone who reads the log.
 */
export function changesBetween(
  type: ActivityScope,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  fields: readonly string[],
  secretFields: readonly string[] = [],
  sentSecrets: readonly string[] = [],
): Change[] {
  return fields
    .filter((field) => sentSecrets.includes(field) || !sameValue(before[field], after[field]))
    .map((field) =>
      secretFields.includes(field)
        ? { type, action: "changed", field, before: MASKED, after: MASKED }
        : { type, action: "changed", field, before: before[field] ?? null, after: after[field] ?? null },
    );
}
