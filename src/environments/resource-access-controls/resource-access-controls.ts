import { sql } from "drizzle-orm";
import type { RouteHandler } from "@hono/zod-openapi";
import { AccessControls } from "../../platform/access-controls/access-controls";
import { writeWithActivity } from "../../platform/activity-log/resource-activity";
import { ruleWriteEntry } from "../../platform/access-controls/access-controls.activity";
import {
  AccessControlRule,
  checkedSubject,
  sameSubject,
  toAccessControlRule,
} from "../../platform/access-controls/rule-subject";
import { personOf, type AppEnv } from "../../platform/env";
import { isForeignKeyViolation, isNotNullViolation } from "../../platform/db";
import { permissionDenied } from "../../platform/errors";
import { isAdmin } from "../../platform/levels";
import { ProjectParams, projectRead } from "../../platform/route-context";
import { callerStillProjectAdmin, projectStillIn, refusalInEnvironment } from "../../platform/route-context/project";
import { apiRoute, changedMeanwhileResponse, jsonBody, jsonResponse as json } from "../../platform/route";
import { createRouter } from "../../platform/router";
import { subjectOf } from "../../platform/access-controls/rule-subject";
import { ruleAsRead, ruleChangedMeanwhile, subjectGoneMeanwhile } from "../../platform/access-controls/rule-as-read";
import { resourceAccessControls as rules } from "../../db/schema";
import { underEveryTree, type ProjectTree } from "../project-trees";
import * as queries from "./resource-access-controls.queries";
import { typeRuleToPut } from "./resource-access-controls.request";
import {
  checkedResourceType,
  checkedTypeLevel,
  PutResourceAccessControlInput,
  RESOURCE_TYPE_LEVELS,
} from "./resource-access-controls.schema";

function routerFor(tree: ProjectTree) {
  const path = `${tree}/{project_id}/resource_access_controls`;
  const tags = ["access_controls"];
  const retrieveRoute = apiRoute({
    tags,
    context: "project",
    method: "get",
    path,
    scope: "access_control:read",
    serviceKeys: true,
    summary: "The project's rules on kinds of resources (every dashboard, every survey...) and the caller's level",
    request: { params: ProjectParams },
    responses: { 200: json(AccessControls, "The rules") },
  });
  const putRoute = apiRoute({
    tags,
    context: "project",
    reads: typeRuleToPut,
    method: "put",
    path,
    scope: "access_control:write",
    serviceKeys: true,
    summary: "Set a member's, a role's or everyone's level on a kind of resource (project admins); null removes it",
    description:
      "A rule on `dashboard` acts on every dashboard of the project, after the rules on the dashboard itself " +
      "for the member and their roles and before its default (docs/roles.md); `none` on `activity_log` keeps " +
      "a member out of the project's activity log. The other kinds are stored and returned for PostHog's " +
      "clients and act on nothing here, `project` included, as in PostHog.",
    request: { params: ProjectParams, body: jsonBody(PutResourceAccessControlInput) },
    responses: {
      200: json(AccessControlRule, "The rule"),
      204: { description: "The rule was removed" },
      409: changedMeanwhileResponse,
    },
  });

  /** One round trip with the key warm: the project and its rules. */
  const retrieve: RouteHandler<typeof retrieveRoute, AppEnv> = async (c) => {
    const [rows] = await projectRead(c, (environmentId) => [queries.selectTypeRules(c.var.db, environmentId)]);
    const admin = isAdmin(c.var.project.level);
    return c.json(
      {
        access_controls: rows.map(toAccessControlRule),
        available_access_levels: [...RESOURCE_TYPE_LEVELS],
        default_access_level: "editor",
        user_access_level: admin ? "admin" : "member",
        user_can_edit_access_levels: admin,
      },
      200,
    );
  };

  const notProjectAdmin = () => permissionDenied("Must be an Organization admin to modify project-wide permissions.");

  const put: RouteHandler<typeof putRoute, AppEnv> = async (c) => {
    const input = c.req.valid("json");
    const { db, project, actor } = c.var;
    if (!isAdmin(project.level)) throw notProjectAdmin();
    const resource = checkedResourceType(input.resource);
    const level = checkedTypeLevel(resource, input.access_level);
    const subject = subjectOf(input);
    const preloaded = typeRuleToPut.results(c);
    const [found, [existing]] =
      preloaded.resource === resource && sameSubject(preloaded.subject, subject)
        ? preloaded.results
        : await db.batch([...queries.putReads(db, project.environmentId, resource, subject)]);
    const named = checkedSubject(subject, found);
    const target = { environmentId: project.environmentId, resource, subject };
    const description = {
      resource,
      resourceId: null,
      subject,
      name: named?.name ?? null,
      accessLevel: level ?? existing?.accessLevel ?? null,
    };
    // Still a project admin when the write runs, on the project still in the organization its
    // subject was checked in: a demotion meanwhile makes it 403, a move 409.
    // And the rule as read: another write of it meanwhile makes it 409.
    const asRead = ruleAsRead(rules, queries.typeRuleOf(target), existing);
    const admin = sql`(${callerStillProjectAdmin(actor, project.environmentId)}
      and ${projectStillIn(project.projectId, project.organizationId)})`;
    const stillAdmin = sql`(${admin} and ${asRead})`;
    const refusedWhenNoLongerAdmin = async (error: unknown): Promise<never> => {
      if (isForeignKeyViolation(error)) throw (await subjectGoneMeanwhile(db, project.environmentId, subject)) ?? error;
      if (!isNotNullViolation(error)) throw error;
      throw (
        (await ruleChangedMeanwhile(db, asRead, admin)) ??
        (await refusalInEnvironment(db, actor, project.environmentId, notProjectAdmin, project.organizationId))
      );
    };
    if (level === null) {
      const entry = ruleWriteEntry(c, project, description, existing, null);
      const [held, removal] = queries.deleteTypeRule(db, target, stillAdmin);
      await writeWithActivity(db, held, removal, entry).catch(refusedWhenNoLongerAdmin);
      return c.body(null, 204);
    }
    const entry = ruleWriteEntry(c, project, description, existing, queries.typeRuleIdInBatch(target));
    const { upsert, written } = queries.upsertTypeRule(db, target, level, personOf(actor), stillAdmin);
    const results = await db
      .batch(entry ? [upsert, entry, written] : [upsert, written])
      .catch(refusedWhenNoLongerAdmin);
    const [rule] = results.at(-1) as Awaited<typeof written>;
    if (!rule) throw new Error("the rule was not read back");
    return c.json(toAccessControlRule(rule), 200);
  };

  return createRouter().openapi(retrieveRoute, retrieve).openapi(putRoute, put);
}

/** `GET/PUT .../resource_access_controls`, under both trees. */
export const resourceAccessControlsRouter = underEveryTree(routerFor);
