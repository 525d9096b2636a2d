import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import { resourceAccessControls as rules } from "../../db/schema";
import {
  ofSubject,
  selectSubject,
  subjectConflict,
  type RuleSubject,
} from "../../platform/access-controls/rule-subject";
import { whileHolds, type Database } from "../../platform/db";
import { nowIso } from "../../platform/ids";
import { newRuleColumns } from "../../platform/access-controls/access-controls.activity";

/** The environment's rules on kinds of resources, oldest first: a few per kind at most per member and role. */
export const selectTypeRules = (db: Database, environmentId: number) =>
  db.select().from(rules).where(eq(rules.environmentId, environmentId)).orderBy(asc(rules.createdAt), asc(rules.id));

/** The one rule of `subject` on a kind of resource. */
const ruleOf = (environmentId: number, resource: string, subject: RuleSubject) =>
  and(eq(rules.environmentId, environmentId), eq(rules.resource, resource), ofSubject(rules, subject));

/** What a PUT reads with the project: the member or role it names, and the rule it replaces. */
export function putReads(db: Database, environmentId: number, resource: string, subject: RuleSubject) {
  return [
    selectSubject(db, environmentId, subject),
    db
      .select({ id: rules.id, accessLevel: rules.accessLevel })
      .from(rules)
      .where(ruleOf(environmentId, resource, subject)),
  ] as const;
}

type TypeRuleTarget = { environmentId: number; resource: string; subject: RuleSubject };

/** The target's one rule, as SQL. */
export const typeRuleOf = (target: TypeRuleTarget) => ruleOf(target.environmentId, target.resource, target.subject);

/** The rule's id, read after the upsert that wrote it (for its entry). */
export const typeRuleIdInBatch = (target: TypeRuleTarget): SQL =>
  sql`select ${rules.id} from ${rules} where ${typeRuleOf(target)} limit 1`;

/**
 * Writes the rule, whether or not it existed, and reads it back: statements for one batch. The
 * rule is written only while `allowed` holds when it runs: else its level is NULL, which the
 * column refuses, inserted or updated.
 */
export function upsertTypeRule(
  db: Database,
  target: TypeRuleTarget,
  level: string,
  userId: number | null,
  allowed: SQL,
) {
  const now = nowIso();
  const accessLevel = whileHolds(level, allowed);
  const upsert = db
    .insert(rules)
    .values({
      environmentId: target.environmentId,
      resource: target.resource,
      ...newRuleColumns(target.subject, level, userId, now),
      accessLevel,
    })
    .onConflictDoUpdate({
      ...subjectConflict([rules.environmentId, rules.resource], rules, target.subject),
      set: { accessLevel, updatedAt: now },
    });
  const written = db
    .select()
    .from(rules)
    .where(ruleOf(target.environmentId, target.resource, target.subject));
  return { upsert, written };
}

/**
 * Removes the rule, only while `allowed` holds when the batch runs: else the first statement
 * fails it (NOT NULL of `access_level`), so that an admin demoted meanwhile removes no rule (a
 * `none` among them). Statements for one batch.
 */
export function deleteTypeRule(db: Database, target: TypeRuleTarget, allowed: SQL) {
  const which = ruleOf(target.environmentId, target.resource, target.subject);
  return [
    db
      .update(rules)
      .set({ accessLevel: whileHolds(sql`${rules.accessLevel}`, allowed) })
      .where(which),
    db.delete(rules).where(which),
  ] as const;
}
