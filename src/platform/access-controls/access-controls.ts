import { z, type RouteHandler } from "@hono/zod-openapi";
import { and, asc, eq, isNull, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Context } from "hono";
import { accessControls as rules, environments, organizationMemberships, users } from "../../db/schema";
import type { Database } from "../db";
import { personOf, type AppEnv } from "../env";
import { permissionDenied, validationError } from "../errors";
import { nowIso, uuid7 } from "../ids";
import { peekJsonBody } from "../request-body";
import { projectRead, routeReads } from "../route-context";
import { apiRoute, jsonBody, jsonResponse as json } from "../route";
import { createRouter } from "../router";
import { accessControlActivity, accessControlItem, ruleIdInBatch } from "./access-controls.activity";
import {
  RESOURCE_ACCESS_LEVELS,
  type AccessControlledResourceName,
  type AccessLevelOf,
} from "../access-rules/member-rule";
import { Timestamp } from "../timestamps";

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
  /** Statements that keep the resource in step with its default rule (a private project). */
  onDefaultChange?: (db: Database, resourceId: ResourceId, level: AccessLevelOf<R> | null) => Statement[];
};

const AccessControlRule = z
  .object({
    id: z.string(),
    access_level: z.string(),
    organization_member: z
      .string()
      .nullable()
      .openapi({ description: "The membership id; null: the default for everyone." }),
    resource: z.string(),
    resource_id: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by: z
      .string()
      .nullable()
      .openapi({
        description:
          "Always null, as PostHog returns it through this API (its clients decode a string); " +
          "who made a rule is in the activity log.",
      }),
  })
  .openapi("AccessControl");

const AccessControls = z
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
    organization_member: z
      .string()
      .nullable()
      .optional()
      .openapi({ description: "A membership id of the organization; absent or null: the default for everyone." }),
  })
  .openapi("PutAccessControl");

/** The resource's rules, or the one rule of a member (`null`: the default), when `membershipId` is given. */
function rulesOf(resource: AccessControlledResourceName, resourceId: ResourceId, membershipId?: string | null) {
  const ofMember =
    membershipId === undefined
      ? undefined
      : membershipId === null
        ? isNull(rules.organizationMembershipId)
        : eq(rules.organizationMembershipId, membershipId);
  return and(eq(rules.resource, resource), eq(rules.resourceId, resourceId), ofMember);
}

/** Rules, oldest first: one query. */
function selectRules(db: Database, where: SQL | undefined) {
  return db.select({ rule: rules }).from(rules).where(where).orderBy(asc(rules.createdAt), asc(rules.id));
}

type RuleRow = Awaited<ReturnType<typeof selectRules>>[number];

const toRule = ({ rule }: RuleRow): z.infer<typeof AccessControlRule> => ({
  id: rule.id,
  access_level: rule.accessLevel,
  organization_member: rule.organizationMembershipId,
  resource: rule.resource,
  resource_id: rule.resourceId,
  created_at: rule.createdAt,
  updated_at: rule.updatedAt,
  created_by: null,
});

type RuleTarget = {
  resource: AccessControlledResourceName;
  resourceId: ResourceId;
  environmentId: number;
  membershipId: string | null;
};

/** Writes the rule of one member (or the default, `membershipId` null), whether or not it existed. */
function upsertRule(
  db: Database,
  target: RuleTarget,
  level: AccessLevelOf<AccessControlledResourceName>,
  userId: number | null,
) {
  const now = nowIso();
  const isDefault = target.membershipId === null;
  return db
    .insert(rules)
    .values({
      id: uuid7(),
      environmentId: target.environmentId,
      resource: target.resource,
      resourceId: target.resourceId,
      organizationMembershipId: target.membershipId,
      accessLevel: level,
      createdById: userId,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoUpdate({
      // The default rule has its own (partial) unique index: NULLs never conflict in the other one.
      target: isDefault
        ? [rules.resource, rules.resourceId]
        : [rules.resource, rules.resourceId, rules.organizationMembershipId],
      targetWhere: isDefault ? isNull(rules.organizationMembershipId) : undefined,
      set: { accessLevel: level, updatedAt: now },
    });
}

/** A membership of the organization, to check that a rule names one of its members (and name them in the log). */
/** The member a rule names, if they belong to the environment's organization. */
const selectMembership = (db: Database, environmentId: number, membershipId: string | null) =>
  db
    .select({ id: organizationMemberships.id, email: users.email })
    .from(organizationMemberships)
    .innerJoin(users, eq(users.id, organizationMemberships.userId))
    .where(
      and(
        eq(
          organizationMemberships.organizationId,
          sql`(select ${environments.organizationId} from ${environments} where ${environments.id} = ${environmentId})`,
        ),
        eq(organizationMemberships.id, membershipId ?? ""),
      ),
    );

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
  /** What a PUT reads, for the rule of `membershipId` (null: the default). */
  const putReads = (db: Database, environmentId: number, c: Context<AppEnv>, membershipId: string | null) => {
    const { statement, resourceId } = definition.read(c, environmentId);
    const existing = db
      .select({ id: rules.id, accessLevel: rules.accessLevel })
      .from(rules)
      .where(rulesOf(definition.resource, resourceId, membershipId));
    const members = selectMembership(db, environmentId, membershipId);
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
    const membershipId = body?.organization_member ?? null;
    return {
      body,
      results: await projectRead(c, (environmentId) => putReads(c.var.db, environmentId, c, membershipId)),
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
    summary: `Set a member's (or everyone's default) access level on the ${definition.resource}; null removes the rule`,
    request: { params: definition.params, body: jsonBody(PutAccessControlInput) },
    responses: { 200: json(AccessControlRule, "The rule"), 204: { description: "The rule was removed" } },
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
    const membershipId = input.organization_member ?? null;
    const ruleOfTarget = rulesOf(definition.resource, resourceId, membershipId);
    const preloaded = ruleToPut.results(c);
    const [resourceRows, members, [existing], [storedResourceId]] =
      preloaded.body !== undefined && (preloaded.body.organization_member ?? null) === membershipId
        ? preloaded.results
        : await db.batch(putReads(db, project.environmentId, c, membershipId));
    if (definition.levelOf(c, resourceRows as Awaited<S>) !== definition.managerLevel)
      throw permissionDenied(definition.notManager);
    const resourceLevel = checkedLevel(definition.resource, input.access_level);
    if (membershipId !== null && members.length === 0) {
      throw validationError("invalid_input", "This user is not a member of the organization.", "organization_member");
    }
    const target = { resource: definition.resource, resourceId, environmentId: project.environmentId, membershipId };
    const keepInStep = membershipId === null ? (definition.onDefaultChange?.(db, resourceId, resourceLevel) ?? []) : [];
    const ruleDescription = {
      resource: definition.resource,
      resourceId: storedResourceId?.value ?? "",
      member: members[0] ?? null,
      accessLevel: resourceLevel ?? existing?.accessLevel ?? null,
    };
    if (resourceLevel === null) {
      // No rule to remove: the DELETE matches nothing, and its entry records nothing.
      const entry = accessControlActivity.record(
        c,
        "deleted",
        accessControlItem(project, existing?.id ?? "", ruleDescription),
      );
      await db.batch([deleteRule(db, target), entry, ...keepInStep]);
      return c.body(null, 204);
    }
    // Whether the rule existed is as read; the entry reads the id of the rule the upsert wrote.
    const item = accessControlItem(project, ruleIdInBatch(ruleOfTarget), ruleDescription);
    const entry = existing
      ? accessControlActivity.changed(
          c,
          "updated",
          item,
          { access_level: existing.accessLevel },
          { access_level: resourceLevel },
        )
      : accessControlActivity.record(c, "created", item);
    const written = selectRules(db, ruleOfTarget);
    const upsert = upsertRule(db, target, resourceLevel, personOf(actor));
    const results = await db.batch(entry ? [upsert, entry, ...keepInStep, written] : [upsert, ...keepInStep, written]);
    const [rule] = results.at(-1) as RuleRow[];
    if (!rule) throw new Error("the access rule was not read back");
    return c.json(toRule(rule), 200);
  };

  return createRouter().openapi(retrieveRoute, retrieve).openapi(putRoute, put);
}

function deleteRule(db: Database, target: RuleTarget) {
  return db.delete(rules).where(rulesOf(target.resource, target.resourceId, target.membershipId));
}
