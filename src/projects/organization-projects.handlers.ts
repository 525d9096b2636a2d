import type { RouteHandler } from "@hono/zod-openapi";
import { and, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Context } from "hono";
import { projects } from "../db/schema";
import { fieldsAfterPatch } from "../platform/activity-log/resource-activity";
import { type Database, isNotNullViolationOf, isUniqueViolation, isValueTooBig } from "../platform/db";
import type { AppEnv } from "../platform/env";
import {
  changedMeanwhile,
  conflict,
  insufficientLevel,
  notFound,
  permissionDenied,
  validationError,
} from "../platform/errors";
import { nowIso } from "../platform/ids";
import { isAdmin } from "../platform/levels";
import { pageEnvelope, readPage } from "../platform/pagination";
import { organizationRead } from "../platform/route-context";
import { callerStillAdmin, levelLost } from "../platform/route-context/organization";
import { callerStillProjectAdmin, refusalInEnvironment } from "../platform/route-context/project";
import type {
  createProject,
  deleteProject,
  listProjects,
  retrieveProject,
  updateProject as updateProjectRoute,
} from "./organization-projects.routes";
import { projectOfPath, readProjectOfPath } from "./organization-projects.request";
import { scheduleDeletionStatements } from "./project-deletion";
import { etagOf, expectedVersion, failsOnStaleVersion, versionedAnswer } from "../platform/conditional-requests";
import {
  MAX_PROJECT_SETTINGS_BYTES,
  admitVisibleProject,
  findVisibleProject,
  insertProjectStatements,
  listProjectsOfOrganization,
  MAX_PROJECTS_PER_ORGANIZATION,
  isCallerRightLost,
  isProjectChangedMeanwhile,
  isProjectGone,
  updateProjectStatements,
} from "./projects.queries";
import {
  createdProjectIdInBatch,
  createdProjectNameInBatch,
  projectActivity,
  projectItem,
  trackedProjectFields,
} from "./projects.activity";
import { type ProjectInput, type ProjectUpdateInput, toProject, toProjectListItem } from "./projects.schema";
import { PRIVACY_NEEDS_ORGANIZATION_ADMIN } from "./project-access-control";
import { sendFirstStep } from "../platform/stepped-deletion";

type ProjectRow = typeof projects.$inferSelect;

export const listOrganizationProjects: RouteHandler<typeof listProjects, AppEnv> = async (c) => {
  const page = readPage(c);
  const result = await listProjectsOfOrganization(organizationRead(c), c.var.actor, page);
  return c.json(pageEnvelope(c, page, result.count, result.projects.map(toProjectListItem), result.links), 200);
};

/** Also `POST /api/projects`, where the route context's organization is the caller's current one. */
export const createOrganizationProject: RouteHandler<typeof createProject, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const organization = c.var.organization;
  const project = await insertProject(c, organization.id, input);
  return c.json(toProject(project, organization.level), 201, { ETag: etagOf(project) });
};

/**
 * Default names, the per-organization limit, and names unique ignoring case (409). The limit and
 * the default name are decided by the INSERT itself, so parallel creates cannot pass the limit
 * together nor pick the same default name.
 */
async function insertProject(c: Context<AppEnv>, organizationId: string, input: ProjectInput) {
  const db = c.var.db;
  // Made only while the caller is still an admin: a demotion meanwhile refuses it (403).
  const statements = insertProjectStatements(db, organizationId, input, callerStillAdmin(c.var.actor, organizationId));
  const created = projectItem(
    organizationId,
    createdProjectIdInBatch(statements.uuid),
    createdProjectNameInBatch(statements.uuid),
  );
  try {
    const [, , , [project], , [organization]] = await db.batch([
      statements.insertProject,
      // Appended only if the INSERT (below the limit) made the project.
      projectActivity.record(c, "created", created),
      statements.insertEnvironment,
      statements.selectProject,
      statements.insertPrivacyRule,
      statements.selectOrganization,
    ]);
    if (!organization) throw notFound();
    if (!project) throw projectLimitReached();
    return project;
  } catch (error) {
    if (isUniqueViolation(error) && input.name !== undefined) throw duplicateName(input.name);
    if (isNotNullViolationOf(error, projects.settings) || isValueTooBig(error)) throw settingsTooLarge();
    if (isCallerRightLost(error)) throw await levelLost(c)();
    throw error;
  }
}

/**
 * Settings past their limit, measured, or past D1's largest value (2 MB) while they were bound or
 * merged: what a body sent grows once written back (`1e20` is 21 digits).
 */
const settingsTooLarge = () =>
  validationError(
    "max_length",
    `A project's settings may hold at most ${MAX_PROJECT_SETTINGS_BYTES} bytes in all, serialized.`,
  );

export const projectLimitReached = () =>
  permissionDenied(
    `You have reached the maximum limit of allowed projects for your current plan (${MAX_PROJECTS_PER_ORGANIZATION}).`,
  );

export const duplicateName = (name: string) =>
  conflict(`There is already a project called "${name}" in this organization. Choose a different name.`);

/**
 * Applies a PATCH and its `entry` (right after the project's update) in one atomic batch; a name
 * another project of the organization has is 409, a version other than `expected` 412, and
 * nothing is recorded.
 */
async function updateProject(
  db: Database,
  read: ProjectRow,
  input: ProjectUpdateInput,
  entry: BatchItem<"sqlite"> | undefined,
  expected?: number,
  holds?: { condition: SQL; refused: () => Promise<Error> },
) {
  const { updateProject, renameEnvironment, keepPrivacyInStep, selectProject } = updateProjectStatements(
    db,
    read,
    input,
    expected,
    holds?.condition,
  );
  const writes: BatchItem<"sqlite">[] = [entry, renameEnvironment, keepPrivacyInStep].filter(
    (statement) => statement !== undefined,
  );
  try {
    const results = await failsOnStaleVersion(projects.version, db.batch([updateProject, ...writes, selectProject]));
    const [project] = results.at(-1) as ProjectRow[];
    if (!project) throw notFound();
    return project;
  } catch (error) {
    if (isUniqueViolation(error) && input.name !== undefined) throw duplicateName(input.name);
    if (isNotNullViolationOf(error, projects.settings) || isValueTooBig(error)) throw settingsTooLarge();
    if (isCallerRightLost(error)) throw holds ? await holds.refused() : insufficientLevel();
    if (isProjectGone(error)) throw notFound();
    if (isProjectChangedMeanwhile(error)) throw changedMeanwhile("project");
    throw error;
  }
}

/**
 * The project found among those the caller sees (404 otherwise), patched if they are an admin
 * and `If-Match`, if sent, names its version (412 otherwise); with its new version.
 */
export async function patchVisibleProject(
  c: Context<AppEnv>,
  found: Awaited<ReturnType<typeof findVisibleProject>>,
  input: ProjectUpdateInput,
) {
  const { db, actor } = c.var;
  if (!found) throw notFound();
  if (!isAdmin(found.level)) throw insufficientLevel();
  // Whether a project is private is the organization's admins' to decide, as in PostHog: a project
  // admin by a rule who made it public could not make it private again.
  const setsPrivacy = input.access_control !== undefined;
  if (setsPrivacy && !isAdmin(found.organizationLevel)) throw permissionDenied(PRIVACY_NEEDS_ORGANIZATION_ADMIN);
  const { organizationId, id } = found.project;
  // Written only while the caller still holds what this was judged on (else 404 or 403, as a
  // moment later: `refusalInEnvironment`).
  const holds = {
    condition: and(
      callerStillProjectAdmin(actor, id),
      setsPrivacy ? callerStillAdmin(actor, organizationId) : undefined,
    )!,
    refused: () => refusalInEnvironment(db, actor, id, insufficientLevel),
  };
  const expected = expectedVersion(c, found.project);
  const before = trackedProjectFields(toProject(found.project, found.level));
  const entry = projectActivity.changed(
    c,
    "updated",
    projectItem(found.project.organizationId, found.project.id, input.name ?? found.project.name),
    before,
    fieldsAfterPatch(before, input),
  );
  const updated = await updateProject(db, found.project, input, entry, expected, holds);
  return { project: toProject(updated, found.level), etag: { ETag: etagOf(updated) } };
}

export const updateOrganizationProject: RouteHandler<typeof updateProjectRoute, AppEnv> = async (c) => {
  const updated = await patchVisibleProject(c, projectOfPath.results(c), c.req.valid("json"));
  return c.json(updated.project, 200, updated.etag);
};

export const retrieveOrganizationProject: RouteHandler<typeof retrieveProject, AppEnv> = async (c) => {
  const [[row]] = await readProjectOfPath(c);
  const found = admitVisibleProject(c.var.actor, row);
  if (!found) throw notFound();
  return versionedAnswer(c, found.project, toProject(found.project, found.level));
};

/**
 * A DELETE of a project found among those the caller sees (404 otherwise; 403 below admin; 412
 * when `If-Match` names another version): the
 * project is marked, out of every list and route at once, with its entry, in one atomic batch;
 * its rows go in the background (`deleteProjectStep`). The organization's last project may go,
 * as in PostHog (which refuses only for a paid subscription, unknown here).
 */
export async function deleteVisibleProject(c: Context<AppEnv>, found: Awaited<ReturnType<typeof findVisibleProject>>) {
  if (!found) throw notFound();
  if (!isAdmin(found.level)) throw insufficientLevel();
  const { id, organizationId, name } = found.project;
  const stillAdmin = callerStillProjectAdmin(c.var.actor, id);
  const expected = expectedVersion(c, found.project);
  const { mark, hide } = scheduleDeletionStatements(c.var.db, id, nowIso(), expected, stillAdmin);
  const [marked] = await failsOnStaleVersion(
    projects.version,
    c.var.db.batch([
      mark.returning({ id: projects.id }),
      projectActivity.record(c, "deleted", projectItem(organizationId, id, name)),
      ...hide,
    ]),
  ).catch(async (error: unknown) => {
    throw isCallerRightLost(error) ? await refusalInEnvironment(c.var.db, c.var.actor, id, insufficientLevel) : error;
  });
  // Another DELETE marked it between the read and this batch.
  if (marked.length === 0) throw notFound();
  await sendFirstStep(c.env, { kind: "delete_project", projectId: id });
}

export const deleteOrganizationProject: RouteHandler<typeof deleteProject, AppEnv> = async (c) => {
  await deleteVisibleProject(c, projectOfPath.results(c));
  return c.body(null, 204);
};
