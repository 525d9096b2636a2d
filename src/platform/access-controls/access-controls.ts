import { z, type RouteHandler } from "@hono/zod-openapi";
import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Context } from "hono";
import { accessControls as rules } from "../../db/schema";
import { isForeignKeyViolation, isNotNullViolation, isNotNullViolationOf, whileHolds, type Database } from "../db";
import { personOf, type AppEnv } from "../env";
import { notFound, permissionDenied, validationError } from "../errors";
import {
  AccessControlRule,
  checkedSubject,
  ofSubject,
  RuleSubjectInput,
  sameSubject,
  selectSubject,
  subjectConflict,
  subjectOf,
  toAccessControlRule,
  type RuleSubject,
} from "./rule-subject";
import { nowIso } from "../ids";
import { peekJsonBody } from "../request-body";
import { projectRead, routeReads } from "../route-context";
import { projectStillIn, refusalInEnvironment } from "../route-context/project";
import { apiRoute, changedMeanwhileResponse, jsonBody, jsonResponse as json } from "../route";
import { createRouter } from "../router";
import { writeWithActivity } from "../activity-log/resource-activity";
import { newRuleColumns, ruleIdInBatch, ruleWriteEntry } from "./access-controls.activity";
import { ruleAsRead, ruleChangedMeanwhile, subjectGoneMeanwhile } from "./rule-as-read";
import {
  RESOURCE_ACCESS_LEVELS,
  type AccessControlledResourceName,
  type AccessLevelOf,
} from "../access-rules/member-rule";

type Statement = BatchItem<"sqlite">;
type ResourceId = string | SQL;

/**
 * What it takes to put a resource under access control: its levels and default, who may change
 * its rules, and how to find it in a request. `accessControls(definition, itemPath)` then serves
 * `GET/PUT <itemPath>/access_controls`; the effects on reads, writes and lists live where the
 * resource decides its rights (`ruleOfMember`).
 */
export type AccessControlDefinition<R extends AccessControlledResourceName, S extends Statement> = {
  resource: R;
  /** The level everyone has when no rule says otherwise. */
  defaultLevel: AccessLevelOf<R>;
  /** The level that may change the resource's rules, and what a caller below it is told. */
  managerLevel: AccessLevelOf<R>;
  notManager: string;
  /** The path parameters of the resource's item path, `project_id` included. */
  params: z.ZodObject<{ project_id: z.ZodString }>;
  /**
   * A read of the resource for a batch that also resolves the project (so it must only read),
   * and its id as its rules store it.
   */
  read: (c: Context<AppEnv>, environmentId: number) => { statement: S; resourceId: ResourceId };
  /** The caller's level from the read's rows, once the project is resolved; 404 when it is not theirs to see. */
  levelOf: (c: Context<AppEnv>, rows: Awaited<S>) => AccessLevelOf<R>;
  /** Statements that keep the resource in step with its default rule (a private project), with their entries. */
  onDefaultChange?: (c: Context<AppEnv>, resourceId: ResourceId, level: AccessLevelOf<R> | null) => Statement[];
  /**
   * Who may change the default rule, where it means more than a rule (a project made private or
   * public): judged on the read, and held by the write as `stillManager` is.
   */
  defaultRule?: {
    mayChange: (c: Context<AppEnv>) => boolean;
    stillMayChange: (c: Context<AppEnv>) => SQL;
    refused: string;
  };
  /**
   * That the caller still holds `managerLevel` when the write runs, as SQL: a demotion between the
   * read and the write must not let the rule be written (403).
   */
  stillManager: (c: Context<AppEnv>, environmentId: number) => SQL;
};

export const AccessControls = z
  .object({
    access_controls: z.array(AccessControlRule),
    available_access_levels: z.array(z.string()),
    default_access_level: z.string(),
    user_access_level: z.string(),
    user_can_edit_access_levels: z.boolean(),
  })
  .openapi("AccessControls");

const PutAccessControlInput = z
  .object({
    access_level: z.string().nullable().openapi({ description: "A level of the resource; null removes the rule." }),
    ...RuleSubjectInput,
  })
  // A member or a role, never both; a level every resource has (a project's are none, member, admin).
  .openapi("PutAccessControl", {
    example: { access_level: "none", organization_member: "0195d3a6-7c1e-7f3a-9b2c-5d4e3f2a1b0c" },
  });

/** The resource's rules, or the one rule of `subject` when given. */
function rulesOf(resource: AccessControlledResourceName, resourceId: ResourceId, subject?: RuleSubject) {
  const ofOne = subject === undefined ? undefined : ofSubject(rules, subject);
  return and(eq(rules.resource, resource), eq(rules.resourceId, resourceId), ofOne);
}

/** Rules, oldest first: one query. */
function selectRules(db: Database, where: SQL | undefined) {
  return db.select({ rule: rules }).from(rules).where(where).orderBy(asc(rules.createdAt), asc(rules.id));
}

type RuleRow = Awaited<ReturnType<typeof selectRules>>[number];

const toRule = ({ rule }: RuleRow) => toAccessControlRule(rule);

type RuleTarget = {
  resource: AccessControlledResourceName;
  resourceId: ResourceId;
  environmentId: number;
  subject: RuleSubject;
};

/** Writes the rule of one member, one role or the default, whether or not it existed. */
function upsertRule(
  db: Database,
  target: RuleTarget,
  level: AccessLevelOf<AccessControlledResourceName>,
  userId: number | null,
  allowed: SQL,
) {
  const now = nowIso();
  // Not allowed when it runs: the level is NULL, which the column refuses, inserted or updated.
  const accessLevel = whileHolds(level, allowed);
  return db
    .insert(rules)
    .values({
      environmentId: target.environmentId,
      resource: target.resource,
      resourceId: target.resourceId,
      ...newRuleColumns(target.subject, level, userId, now),
      accessLevel,
    })
    .onConflictDoUpdate({
      ...subjectConflict([rules.resource, rules.resourceId], rules, target.subject),
      set: { accessLevel, updatedAt: now },
    });
}

/** The resource's id as its rules store it, for the log: the definition's may be SQL. */
const selectResourceId = (db: Database, resourceId: ResourceId) =>
  db.select({ value: sql<string>`${resourceId}` }).from(sql`(select 1)`);

/** A level the resource has, or null (remove the rule); anything else is PostHog's 400. */
function checkedLevel<R extends AccessControlledResourceName>(
  resource: R,
  level: string | null,
): AccessLevelOf<R> | null {
  const levels: readonly string[] = RESOURCE_ACCESS_LEVELS[resource];
  if (level === null || levels.includes(level)) return level as AccessLevelOf<R> | null;
  throw validationError("invalid_choice", `Invalid access level. Must be one of: ${levels.join(", ")}`, "access_level");
}

/** Serves `GET/PUT <itemPath>/access_controls` for one kind of resource, in one tree. */
export function accessControls<R extends AccessControlledResourceName, S extends Statement>(
  definition: AccessControlDefinition<R, S>,
  itemPath: string,
) {
  const levels = RESOURCE_ACCESS_LEVELS[definition.resource];
  const path = `${itemPath}/access_controls`;
  const tags = ["access_controls"];
  const retrieveRoute = apiRoute({
    tags,
    context: "project",
    method: "get",
    path,
    scope: "access_control:read",
    serviceKeys: true,
    summary: `The ${definition.resource}'s access rules and the caller's level`,
    request: { params: definition.params },
    responses: { 200: json(AccessControls, "The rules") },
  });
  /** What a PUT reads, for the rule of `subject`. */
  const putReads = (db: Database, environmentId: number, c: Context<AppEnv>, subject: RuleSubject) => {
    const { statement, resourceId } = definition.read(c, environmentId);
    const existing = db
      .select({ id: rules.id, accessLevel: rules.accessLevel })
      .from(rules)
      .where(rulesOf(definition.resource, resourceId, subject));
    const members = selectSubject(db, environmentId, subject);
    const storedResourceId = selectResourceId(db, resourceId);
    return [statement, members, existing, storedResourceId] as [
      S,
      typeof members,
      typeof existing,
      typeof storedResourceId,
    ];
  };
  /**
   * The resource, the member and the rule the body names, read with the project: the write is the
   * second round trip.
   */
  const ruleToPut = routeReads(async (c) => {
    const body = await peekJsonBody(c, PutAccessControlInput);
    // Both a member and a role is refused once the body is validated; read the member's meanwhile.
    const subject = { membershipId: body?.organization_member ?? null, roleId: body?.role ?? null };
    return {
      subject,
      results: await projectRead(c, (environmentId) => putReads(c.var.db, environmentId, c, subject)),
    };
  });
  const putRoute = apiRoute({
    tags,
    context: "project",
    reads: ruleToPut,
    method: "put",
    path,
    scope: "access_control:write",
    serviceKeys: true,
    summary: `Set a member's, a role's or everyone's access level on the ${definition.resource}; null removes the rule`,
    request: { params: definition.params, body: jsonBody(PutAccessControlInput) },
    responses: {
      200: json(AccessControlRule, "The rule"),
      204: { description: "The rule was removed" },
      409: changedMeanwhileResponse,
    },
  });

  /** One round trip with the key warm: the project, the resource and its rules in one batch. */
  const retrieve: RouteHandler<typeof retrieveRoute, AppEnv> = async (c) => {
    const [resourceRows, ruleRows] = await projectRead(c, (environmentId) => {
      const { statement, resourceId } = definition.read(c, environmentId);
      return [statement, selectRules(c.var.db, rulesOf(definition.resource, resourceId))] as [
        S,
        ReturnType<typeof selectRules>,
      ];
    });
    const level: string = definition.levelOf(c, resourceRows as Awaited<S>);
    const body: z.infer<typeof AccessControls> = {
      access_controls: ruleRows.map(toRule),
      available_access_levels: [...levels],
      default_access_level: definition.defaultLevel,
      user_access_level: level,
      user_can_edit_access_levels: level === definition.managerLevel,
    };
    return c.json(body, 200);
  };

  const put: RouteHandler<typeof putRoute, AppEnv> = async (c) => {
    const input = c.req.valid("json");
    const { db, project, actor } = c.var;
    const { resourceId } = definition.read(c, project.environmentId);
    const subject = subjectOf(input);
    const ruleOfTarget = rulesOf(definition.resource, resourceId, subject);
    const preloaded = ruleToPut.results(c);
    const [resourceRows, found, [existing], [storedResourceId]] = sameSubject(preloaded.subject, subject)
      ? preloaded.results
      : await db.batch(putReads(db, project.environmentId, c, subject));
    if (definition.levelOf(c, resourceRows as Awaited<S>) !== definition.managerLevel)
      throw permissionDenied(definition.notManager);
    const resourceLevel = checkedLevel(definition.resource, input.access_level);
    const named = checkedSubject(subject, found);
    const target = { resource: definition.resource, resourceId, environmentId: project.environmentId, subject };
    const isDefault = named === null;
    const defaultRule = isDefault ? definition.defaultRule : undefined;
    if (defaultRule && !defaultRule.mayChange(c)) throw permissionDenied(defaultRule.refused);
    const keepInStep = isDefault ? (definition.onDefaultChange?.(c, resourceId, resourceLevel) ?? []) : [];
    const ruleDescription = {
      resource: definition.resource,
      resourceId: storedResourceId?.value ?? "",
      subject,
      name: named?.name ?? null,
      accessLevel: resourceLevel ?? existing?.accessLevel ?? null,
    };
    const asManager = sql`(${definition.stillManager(c, project.environmentId)}
      and ${projectStillIn(project.projectId, project.organizationId)})`;
    const asRead = ruleAsRead(rules, ruleOfTarget, existing);
    const manager = defaultRule ? sql`(${asManager} and ${defaultRule.stillMayChange(c)})` : asManager;
    const stillManager = sql`(${manager} and ${asRead})`;
    // A rule written (or removed) only while the caller is still a manager, checked by the write,
    // on the project still in the organization its subject was checked in (a move meanwhile: 409),
    // and while the rule is as read (another write of it meanwhile: 409).
    const refusedWhenNoLongerManager = async (error: unknown): Promise<never> => {
      if (isNotNullViolationOf(error, rules.accessLevel)) {
        throw (
          (await ruleChangedMeanwhile(db, asRead, manager)) ??
          (await refusalInEnvironment(
            db,
            actor,
            project.environmentId,
            () => permissionDenied(defaultRule?.refused ?? definition.notManager),
            project.organizationId,
          ))
        );
      }
      if (isForeignKeyViolation(error)) throw (await subjectGoneMeanwhile(db, project.environmentId, subject)) ?? error;
      throw isNotNullViolation(error) ? notFound() : error;
    };
    if (resourceLevel === null) {
      const entry = ruleWriteEntry(c, project, ruleDescription, existing, null);
      await writeWithActivity(
        db,
        managerHoldsOn(db, target, stillManager),
        deleteRule(db, target),
        entry,
        ...keepInStep,
      ).catch(refusedWhenNoLongerManager);
      return c.body(null, 204);
    }
    const entry = ruleWriteEntry(c, project, ruleDescription, existing, ruleIdInBatch(ruleOfTarget));
    const written = selectRules(db, ruleOfTarget);
    const upsert = upsertRule(db, target, resourceLevel, personOf(actor), stillManager);
    // The resource's id is read by the write: gone (its project deleted meanwhile), it is null.
    const results = await db
      .batch(entry ? [upsert, entry, ...keepInStep, written] : [upsert, ...keepInStep, written])
      .catch(refusedWhenNoLongerManager);
    const [rule] = results.at(-1) as RuleRow[];
    if (!rule) throw new Error("the access rule was not read back");
    return c.json(toRule(rule), 200);
  };

  return createRouter().openapi(retrieveRoute, retrieve).openapi(putRoute, put);
}

/**
 * Before a rule's removal: fails the batch (NOT NULL of `access_level`) when the caller is no
 * longer a manager, so that a manager lowered meanwhile removes no rule (a `none` among them).
 */
function managerHoldsOn(db: Database, target: RuleTarget, stillManager: SQL) {
  return db
    .update(rules)
    .set({ accessLevel: whileHolds(sql`${rules.accessLevel}`, stillManager) })
    .where(rulesOf(target.resource, target.resourceId, target.subject));
}

function deleteRule(db: Database, target: RuleTarget) {
  return db.delete(rules).where(rulesOf(target.resource, target.resourceId, target.subject));
}
