import { and, asc, desc, eq, isNotNull, isNull, type SQL } from "drizzle-orm";
import { activityLog, activityLogAnchors, activityLogSegments } from "../../db/schema";
import type { Database } from "../db";
import { sha256Hex } from "../ids";

type EntryRow = typeof activityLog.$inferSelect;

/** The previous hash of an organization's first entry. */
const GENESIS_HASH = "0".repeat(64);

/** Entries sealed per round trip (`sealChain`). */
export const SEAL_BATCH = 200;

/**
 * What an entry's hash covers: every stored column but the hash, with the keys in alphabetical
 * order and `detail` as the exact text stored. Exports carry these fields as they are, so that
 * anyone holding them can recompute the hash (scripts/activity-export-chain.mjs does).
 */
export function canonicalRecord(row: EntryRow) {
  return {
    activity: row.activity,
    api_key_id: row.apiKeyId,
    created_at: row.createdAt,
    dashboard_id: row.dashboardId,
    detail: row.detail,
    id: row.id,
    is_system: row.isSystem,
    item_id: row.itemId,
    organization_id: row.organizationId,
    project_id: row.projectId,
    request_id: row.requestId,
    scope: row.scope,
    seq: row.seq,
    user_id: row.userId,
  };
}

/** The canonical record as the JSON text hashed. */
const canonicalEntry = (row: EntryRow): string => JSON.stringify(canonicalRecord(row));

/** `hash` = SHA-256 (hex) of the previous entry's hash followed by the entry's canonical JSON. */
const entryHash = (previousHash: string, row: EntryRow) => sha256Hex(previousHash + canonicalEntry(row));

/** Where the chain's remaining entries start: after the retention anchor, or at the beginning. */
const startOf = (anchor: { seq: number; hash: string } | undefined) => ({
  seq: anchor?.seq ?? 0,
  hash: anchor?.hash ?? GENESIS_HASH,
});

/**
 * Hashes the organization's entries appended since the last sealed one, in order. Entries are
 * numbered inside the writing batch; hashing needs the previous hash, which only exists once that
 * batch has committed, so it happens here, right after the response and on every cron run. Two
 * passes at once compute the same hashes and each update applies only to a still-unsealed row:
 * the chain cannot fork. Returns how many entries it sealed.
 */
export async function sealChain(db: Database, organizationId: string): Promise<number> {
  const [[lastSealed], pending, [anchor], [lastSegment]] = await db.batch([
    db
      .select()
      .from(activityLog)
      .where(and(eq(activityLog.organizationId, organizationId), isNotNull(activityLog.hash)))
      .orderBy(desc(activityLog.seq))
      .limit(1),
    db
      .select()
      .from(activityLog)
      .where(and(eq(activityLog.organizationId, organizationId), isNull(activityLog.hash)))
      .orderBy(asc(activityLog.seq))
      .limit(SEAL_BATCH),
    db.select().from(activityLogAnchors).where(eq(activityLogAnchors.organizationId, organizationId)),
    db
      .select({ seq: activityLogSegments.lastSeq, hash: activityLogSegments.lastHash })
      .from(activityLogSegments)
      .where(eq(activityLogSegments.organizationId, organizationId))
      .orderBy(desc(activityLogSegments.lastSeq))
      .limit(1),
  ]);
  // After the last sealed entry kept here, else the later of the last archived one and the anchor
  // (retention may have pruned past a segment not deleted yet).
  const archived = lastSegment && lastSegment.seq > startOf(anchor).seq ? lastSegment : startOf(anchor);
  let previous = lastSealed ? { seq: lastSealed.seq, hash: lastSealed.hash ?? GENESIS_HASH } : archived;
  const seals: { id: string; hash: string }[] = [];
  for (const row of pending) {
    if (row.seq !== previous.seq + 1) break;
    const hash = await entryHash(previous.hash, row);
    seals.push({ id: row.id, hash });
    previous = { seq: row.seq, hash };
  }
  const [first, ...rest] = seals.map((seal) =>
    db
      .update(activityLog)
      .set({ hash: seal.hash })
      .where(and(eq(activityLog.id, seal.id), isNull(activityLog.hash))),
  );
  if (first) await db.batch([first, ...rest]);
  return seals.length;
}

export type ChainVerdict = {
  valid: boolean;
  /** Entries checked (the organization's entries since the retention anchor, archived or not). */
  entries: number;
  /** The `seq` of the first entry that is missing, altered or out of place; null when valid. */
  first_invalid: number | null;
  /** The last entry's `seq` and `hash`: keep them elsewhere to detect a truncated chain later. */
  head: { seq: number; hash: string } | null;
};

/** A position in the chain: an entry's number and hash (or the anchor's, or the genesis). */
type ChainLink = { seq: number; hash: string };

/** Where the chain's remaining entries start, as a link. */
export const chainStart = (anchor: { seq: number; hash: string } | undefined): ChainLink => startOf(anchor);

/**
 * Recomputes `rows` (in order) after `previous`: every number the next one, every hash right.
 * Returns the last link, or the first number missing, altered or out of place.
 */
export async function walkChain(
  previous: ChainLink,
  rows: EntryRow[],
): Promise<{ end: ChainLink; firstInvalid: number | null }> {
  let end = previous;
  for (const row of rows) {
    const hash = row.seq === end.seq + 1 && row.hash !== null ? await entryHash(end.hash, row) : null;
    if (hash === null || hash !== row.hash) return { end, firstInvalid: Math.min(row.seq, end.seq + 1) };
    end = { seq: row.seq, hash };
  }
  return { end, firstInvalid: null };
}

/** The organization's entries kept here in order and its retention anchor: what a verdict reads. */
export function chainStatements(db: Database, organizationId: string | SQL<string>) {
  return [
    db.select().from(activityLog).where(eq(activityLog.organizationId, organizationId)).orderBy(asc(activityLog.seq)),
    db.select().from(activityLogAnchors).where(eq(activityLogAnchors.organizationId, organizationId)),
  ] as const;
}

/**
 * The verdict on the entries kept here, after `previous` (the anchor, or the last archived entry)
 * and `checked` entries already verified before them (the archived ones). The newest entries not
 * sealed yet (a write's seal still running) are not judged: a hash missing before a sealed entry is.
 */
export async function verdictOf(rows: EntryRow[], previous: ChainLink, checked: number): Promise<ChainVerdict> {
  let sealedCount = rows.length;
  while (sealedCount > 0 && rows[sealedCount - 1]!.hash === null) sealedCount -= 1;
  const sealed = rows.slice(0, sealedCount);
  const entries = checked + sealed.length;
  const { end, firstInvalid } = await walkChain(previous, sealed);
  // The entries not sealed yet must follow on, number after number: one missing before them is
  // an entry deleted (and it would stop every seal after it).
  const gap = rows.slice(sealedCount).findIndex((row, index) => row.seq !== end.seq + 1 + index);
  const invalidAt = firstInvalid ?? (gap === -1 ? null : end.seq + 1 + gap);
  if (invalidAt !== null) return { valid: false, entries, first_invalid: invalidAt, head: null };
  return { valid: true, entries, first_invalid: null, head: entries === 0 ? null : end };
}

/** Organizations with entries still unsealed (a seal after a response that never ran), at most `limit`. */
export async function organizationsWithUnsealedEntries(db: Database, limit: number): Promise<string[]> {
  const rows = await db
    .selectDistinct({ organizationId: activityLog.organizationId })
    .from(activityLog)
    .where(isNull(activityLog.hash))
    .limit(limit);
  return rows.map((row) => row.organizationId);
}

/**
 * The hash an entry's own is computed from: the previous entry's (`previousEntryHash`, when it is
 * kept), else the anchor's or the genesis hash for the first entry kept. Null when the previous
 * entry is missing: the chain is broken there, and whoever verifies it will see so.
 */
export function previousHashOf(
  seq: number,
  previousEntryHash: string | null | undefined,
  anchor: { seq: number; hash: string } | undefined,
): string | null {
  if (previousEntryHash) return previousEntryHash;
  const start = startOf(anchor);
  return seq === start.seq + 1 ? start.hash : null;
}
