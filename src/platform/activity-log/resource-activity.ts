import type { Context } from "hono";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import type { Database } from "../db";
import type { AppEnv } from "../env";
import { changesBetween, recordActivity, type ActivityActor, type ActivityEntry } from "./record";
import type { ActivityOf, ActivityScope } from "./vocabulary";

/** Which item an entry is about, and where. */
type ActivityItem = Omit<ActivityEntry, "scope" | "activity" | "changes">;

type Fields = { fields: readonly string[]; secretFields?: readonly string[] };

/**
 * A resource's activity, declared once beside its queries: its scope, the fields whose changes an
 * update records (API names, compared on the API shapes before and after), and those that are
 * secrets, recorded only as changed. Each method returns the statement to batch right after the
 * write it describes.
 */
export function resourceActivity<S extends ActivityScope>(scope: S, { fields, secretFields = [] }: Fields) {
  return {
    scope,
    record(c: Context<AppEnv>, activity: ActivityOf<S>, item: ActivityItem, actor?: ActivityActor) {
      return recordActivity(c, { ...item, scope, activity }, actor);
    },
    /** An update's entry with what changed; none when nothing tracked changed (a secret sent always did). */
    changed(
      c: Context<AppEnv>,
      activity: ActivityOf<S>,
      item: ActivityItem,
      before: Record<string, unknown>,
      after: Record<string, unknown>,
      sentSecrets: readonly string[] = [],
    ): BatchItem<"sqlite"> | undefined {
      const changes = changesBetween(scope, before, after, fields, secretFields, sentSecrets);
      return changes.length === 0 ? undefined : recordActivity(c, { ...item, scope, activity, changes });
    },
  };
}

type Statement = BatchItem<"sqlite">;

/**
 * The tracked fields (API names) after a PATCH whose body uses the same names: a field not sent
 * (undefined) keeps its value.
 */
export function fieldsAfterPatch(
  before: Record<string, unknown>,
  input: Record<string, unknown>,
): Record<string, unknown> {
  const sent = Object.entries(input).filter(([, value]) => value !== undefined);
  return { ...before, ...Object.fromEntries(sent) };
}

/**
 * `write` and the entries that describe it, as one atomic batch; the write's own result back.
 * Entries that are `undefined` (nothing to record) are left out.
 */
export async function writeWithActivity<T extends Statement>(
  db: Database,
  write: T,
  ...entries: (Statement | undefined)[]
): Promise<BatchResponse<[T]>[0]> {
  const [result] = await db.batch([write, ...entries.filter((entry): entry is Statement => entry !== undefined)]);
  return result as BatchResponse<[T]>[0];
}
