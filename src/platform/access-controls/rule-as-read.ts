import { sql, type SQL } from "drizzle-orm";
import type { accessControls, resourceAccessControls } from "../../db/schema";
import type { Database } from "../db";
import { changedMeanwhile } from "../errors";
import { checkedSubject, selectSubject, type RuleSubject } from "./rule-subject";

type RuleTable = typeof accessControls | typeof resourceAccessControls;

/** A rule as a PUT read it: none, or that rule at that level. */
export type ReadRule = { id: string; accessLevel: string } | undefined;

/**
 * The rule `where` finds is still the one read: none, or the same rule at the same level. A rule
 * write holds it, so that its entry (created, updated from a level, deleted) says what it replaced.
 */
export const ruleAsRead = (table: RuleTable, where: SQL | undefined, read: ReadRule) =>
  read === undefined
    ? sql`not exists (select 1 from ${table} where ${where})`
    : sql`exists (select 1 from ${table}
        where ${where} and ${table.id} = ${read.id} and ${table.accessLevel} = ${read.accessLevel})`;

/**
 * Why a rule write held on `ruleAsRead` and on the caller's rights (`allowed`) was refused, when
 * the rights still hold: 409, another write changed the rule meanwhile (sent again, it is judged on
 * the rule as it is). Undefined when the rights no longer hold: they say why, as a moment later.
 * Read only on that path.
 */
export async function ruleChangedMeanwhile(db: Database, asRead: SQL, allowed: SQL) {
  const row = await db.get<{ changed: number }>(sql`select (${allowed}) and not (${asRead}) as "changed"`);
  return row?.changed ? changedMeanwhile("access control") : undefined;
}

/**
 * A rule write that named a member or a role removed meanwhile (a foreign key refused it): the
 * body's 400, as a moment later; undefined when the subject is still there (what refused it is
 * then the project, gone meanwhile).
 */
export async function subjectGoneMeanwhile(db: Database, environmentId: number, subject: RuleSubject) {
  const found = await selectSubject(db, environmentId, subject);
  try {
    checkedSubject(subject, found);
    return undefined;
  } catch (refusal) {
    return refusal as Error;
  }
}
