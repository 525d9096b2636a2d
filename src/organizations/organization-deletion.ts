import { and, eq, inArray, isNotNull, isNull, notExists, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import {
  accessControls,
  activityLog,
  activityLogSegments,
  batchExports,
  dashboards,
  environments,
  insights,
  invites,
  organizationMemberships,
  organizations,
  projects,
  resourceAccessControls,
  serviceApiKeys,
  texts,
  webhookDeliveries,
  webhooks,
} from "../db/schema";
import { raisedVersion } from "../platform/conditional-requests";
import { type Database, primaryDatabase, whileHolds } from "../platform/db";
import type { Bindings } from "../platform/env";
import type { BackgroundJob, StepOutcome } from "../platform/jobs";
import { deleteSome, resumeStalledDeletions, ROWS_PER_STEP } from "../platform/stepped-deletion";

type OrganizationDeletion = Extract<BackgroundJob, { kind: "delete_organization" }>;

/**
 * The statements of a DELETE, for one atomic batch: the organization marked (only if it was not
 * already), which its invites' sign-up and service keys' routes check, and every other way into
 * it closed at once: its memberships and service keys deleted (the keys' hashes returned, for
 * their cache entries), its projects marked for deletion as a project's DELETE marks one, which
 * hides them from every route and share link, and its webhooks disabled. The rest of its rows are
 * the background job's. With `expected` (`If-Match`), a mark of another version fails the whole
 * batch (`raisedVersion`).
 */
export function scheduleOrganizationDeletion(
  db: Database,
  organizationId: string,
  now: string,
  allowed: SQL,
  expected?: number,
) {
  return [
    db
      .update(organizations)
      .set({
        deletionScheduledAt: now,
        updatedAt: now,
        version: raisedVersion(organizations.version, expected),
        // Only while the caller is still an owner when it runs: else NULL, which the column refuses.
        name: whileHolds(sql<string>`${organizations.name}`, allowed),
      })
      .where(and(eq(organizations.id, organizationId), isNull(organizations.deletionScheduledAt)))
      .returning({ id: organizations.id }),
    db.delete(organizationMemberships).where(eq(organizationMemberships.organizationId, organizationId)),
    db.delete(serviceApiKeys).where(eq(serviceApiKeys.organizationId, organizationId)).returning({
      id: serviceApiKeys.id,
      secureValue: serviceApiKeys.secureValue,
      previousSecureValue: serviceApiKeys.previousSecureValue,
    }),
    db
      .update(projects)
      .set({ deletionScheduledAt: now, updatedAt: now })
      .where(and(eq(projects.organizationId, organizationId), isNull(projects.deletionScheduledAt))),
    // Their creators are no longer members: no delivery queued or recovered sends another event.
    db
      .update(webhooks)
      .set({ enabled: false, updatedAt: now })
      .where(and(eq(webhooks.organizationId, organizationId), eq(webhooks.enabled, true))),
  ] as const;
}

/**
 * One step of an organization's deletion: a bounded batch of its archived activity-log segments
 * (objects, then rows), then of each kind of its rows that can be many, in one transaction; once
 * none is left, a bounded batch of its emptied projects (their environments with them), and once
 * none of those is left, the organization itself, whose few remaining rows (roles, domains,
 * webhooks, ...) go with it. Then the next step's message, or nothing. At-least-once: a step run
 * again, or for an organization gone or never scheduled, deletes what is left, if anything.
 */
export async function deleteOrganizationStep(env: Bindings, job: OrganizationDeletion): Promise<StepOutcome> {
  const db = primaryDatabase(env);
  const scheduled = and(eq(organizations.id, job.organizationId), isNotNull(organizations.deletionScheduledAt));
  const ofOrganization = (column: SQLiteColumn) =>
    inArray(column, db.select({ id: organizations.id }).from(organizations).where(scheduled));
  const inEnvironments = (column: SQLiteColumn): SQL =>
    inArray(
      column,
      db.select({ id: environments.id }).from(environments).where(ofOrganization(environments.organizationId)),
    );
  const ofWebhooks = db.select({ id: webhooks.id }).from(webhooks).where(ofOrganization(webhooks.organizationId));
  const archived = await archivedSegmentsDeleted(db, env.ACTIVITY_LOG_ARCHIVE, ofOrganization);
  const contents = await db.batch([
    deleteSome(db, dashboards, dashboards.id, inEnvironments(dashboards.environmentId)),
    deleteSome(db, insights, insights.id, inEnvironments(insights.environmentId)),
    deleteSome(db, texts, texts.id, inEnvironments(texts.environmentId)),
    deleteSome(db, batchExports, batchExports.id, ofOrganization(batchExports.organizationId)),
    deleteSome(db, accessControls, accessControls.id, inEnvironments(accessControls.environmentId)),
    deleteSome(
      db,
      resourceAccessControls,
      resourceAccessControls.id,
      inEnvironments(resourceAccessControls.environmentId),
    ),
    deleteSome(db, activityLog, activityLog.id, ofOrganization(activityLog.organizationId)),
    deleteSome(db, invites, invites.id, ofOrganization(invites.organizationId)),
    deleteSome(db, webhookDeliveries, webhookDeliveries.id, inArray(webhookDeliveries.webhookId, ofWebhooks)),
  ]);
  if (archived < ROWS_PER_STEP && contents.every((rows) => rows.length < ROWS_PER_STEP)) {
    // Nothing of that is left: no route reaches the organization, so no row is added meanwhile.
    const anyProject = db
      .select({ id: projects.id })
      .from(projects)
      .where(eq(projects.organizationId, job.organizationId));
    const [emptied] = await db.batch([
      deleteSome(db, projects, projects.id, ofOrganization(projects.organizationId)),
      db.delete(organizations).where(and(scheduled, notExists(anyProject))),
    ]);
    if (emptied.length < ROWS_PER_STEP) return {};
  }
  await env.BACKGROUND_JOBS.send(job);
  return {};
}

/**
 * Up to `ROWS_PER_STEP` of the organization's archived activity-log segments: their objects
 * deleted from the archive, then their index rows (a step run again finds the rows whose objects
 * are already gone, and deletes them). How many.
 */
async function archivedSegmentsDeleted(
  db: Database,
  archive: R2Bucket,
  ofOrganization: (column: SQLiteColumn) => SQL,
): Promise<number> {
  const segments = await db
    .select({ key: activityLogSegments.key })
    .from(activityLogSegments)
    .where(ofOrganization(activityLogSegments.organizationId))
    .limit(ROWS_PER_STEP);
  if (segments.length === 0) return 0;
  const keys = segments.map((segment) => segment.key);
  await archive.delete(keys);
  await db
    .delete(activityLogSegments)
    .where(and(ofOrganization(activityLogSegments.organizationId), inArray(activityLogSegments.key, keys)));
  return segments.length;
}

/** Organizations whose deletion stalled get a step's message again (`resumeStalledDeletions`). */
export const resumeStalledOrganizationDeletions = (env: Bindings) =>
  resumeStalledDeletions<string>(env, organizations, organizations.id, organizations.deletionScheduledAt, (id) => ({
    kind: "delete_organization",
    organizationId: id,
  }));
