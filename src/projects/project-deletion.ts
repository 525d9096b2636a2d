import { and, eq, inArray, isNotNull, isNull, type SQL } from "drizzle-orm";
import {
  accessControls,
  batchExports,
  dashboards,
  environments,
  insights,
  projects,
  resourceAccessControls,
  texts,
} from "../db/schema";
import { type Database, primaryDatabase, whileHolds } from "../platform/db";
import type { Bindings } from "../platform/env";
import type { BackgroundJob, StepOutcome } from "../platform/jobs";
import { deleteSome, nextStepOr, resumeStalledDeletions } from "../platform/stepped-deletion";
import { raisedVersion } from "../platform/conditional-requests";

type ProjectDeletion = Extract<BackgroundJob, { kind: "delete_project" }>;

/** What a scheduled project's name key becomes: no name a client can send, so its name is free at once. */
const freedNameKey = (projectId: number) => `\u0000deleted ${projectId}`;

/**
 * The statements of a DELETE, for one atomic batch: the project marked (only if it was not
 * already: a second DELETE changes nothing), its name freed, its privacy rules and its batch
 * exports out of every list and counter at once. `entry`, the activity entry, goes right after
 * the mark, which gates it. The rest of its rows are the background job's. With `expected`
 * (`If-Match`), a mark of another version fails the whole batch (`raisedVersion`).
 */
export function scheduleDeletionStatements(
  db: Database,
  projectId: number,
  now: string,
  expected: number | undefined,
  holds: SQL,
) {
  const ofProject = db.select({ id: environments.id }).from(environments).where(eq(environments.projectId, projectId));
  return {
    mark: db
      .update(projects)
      .set({
        deletionScheduledAt: now,
        nameKey: freedNameKey(projectId),
        accessControl: false,
        updatedAt: whileHolds(now, holds),
        version: raisedVersion(projects.version, expected),
      })
      .where(and(eq(projects.id, projectId), isNull(projects.deletionScheduledAt))),
    hide: [
      db
        .update(batchExports)
        .set({ deleted: true })
        .where(and(inArray(batchExports.environmentId, ofProject), eq(batchExports.deleted, false))),
      db
        .delete(accessControls)
        .where(and(eq(accessControls.resource, "project"), eq(accessControls.resourceId, String(projectId)))),
    ],
  };
}

/**
 * One step of a project's deletion: a bounded batch of each kind of its rows, deleted in one
 * transaction; when none is left, the project itself (its environments with it). Then the next
 * step's message, or nothing. At-least-once: a step that runs again, or for a project already
 * gone or never scheduled, deletes what is left, if anything.
 */
export async function deleteProjectStep(env: Bindings, job: ProjectDeletion): Promise<StepOutcome> {
  const db = primaryDatabase(env);
  const scheduled = and(eq(projects.id, job.projectId), isNotNull(projects.deletionScheduledAt));
  const ofProject = db
    .select({ id: environments.id })
    .from(environments)
    .innerJoin(projects, eq(projects.id, environments.projectId))
    .where(scheduled);
  const deleted = await db.batch([
    deleteSome(db, dashboards, dashboards.id, inArray(dashboards.environmentId, ofProject)),
    deleteSome(db, insights, insights.id, inArray(insights.environmentId, ofProject)),
    deleteSome(db, texts, texts.id, inArray(texts.environmentId, ofProject)),
    deleteSome(db, batchExports, batchExports.id, inArray(batchExports.environmentId, ofProject)),
    deleteSome(db, accessControls, accessControls.id, inArray(accessControls.environmentId, ofProject)),
    deleteSome(
      db,
      resourceAccessControls,
      resourceAccessControls.id,
      inArray(resourceAccessControls.environmentId, ofProject),
    ),
  ]);
  // Once nothing of it is left (no route shows the project, so no row is added meanwhile), the project.
  return nextStepOr(env, job, deleted, () => db.delete(projects).where(scheduled));
}

/** Projects whose deletion stalled get a step's message again (`resumeStalledDeletions`). */
export const resumeStalledProjectDeletions = (env: Bindings) =>
  resumeStalledDeletions<number>(env, projects, projects.id, projects.deletionScheduledAt, (id) => ({
    kind: "delete_project",
    projectId: id,
  }));
