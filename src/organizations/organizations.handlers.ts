import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { eq, sql } from "drizzle-orm";
import { organizationMemberships, organizations, users } from "../db/schema";
import { etagOf, expectedVersion, failsOnStaleVersion, versionedAnswer } from "../platform/conditional-requests";
import { isUniqueViolation, refusedWhenNull } from "../platform/db";
import type { AppEnv } from "../platform/env";
import { changedMeanwhile, notFound } from "../platform/errors";
import { nowIso, randomBase62, uuid7 } from "../platform/ids";
import { MembershipLevel } from "../platform/levels";
import { keyPolicyChangeJudgedOnRead } from "../platform/auth/key-policy";
import {
  admitMember,
  callerStillAtLeast,
  levelLost,
  requestedOrganization,
} from "../platform/route-context/organization";
import { pageEnvelope, readPage } from "../platform/pagination";
import {
  firstFreeSlug,
  organizationObjectStatements,
  readOrganizationsPage,
  slugify,
  takenSlugs,
  toOrganizationObject,
  isSettingChangedMeanwhile,
  updateOrganizationSettings,
} from "./organizations.queries";
import type {
  createOrganization,
  deleteOrganization,
  listOrganizations,
  retrieveOrganization,
  updateOrganization,
} from "./organizations.routes";
import { toOrganization } from "./organizations.schema";
import { membershipActivity } from "./members/members.activity";
import { fieldsAfterPatch } from "../platform/activity-log/resource-activity";
import { assertRetentionDays } from "../platform/activity-log/retention";
import { forgetRevokedKey } from "../platform/auth/key-lifecycle";
import { currentEnvironmentGuessKey } from "../platform/route-context/current-environment-guess";
import { sendFirstStep } from "../platform/stepped-deletion";
import { scheduleOrganizationDeletion } from "./organization-deletion";
import { organizationActivity, organizationItem, trackedOrganizationFields } from "./organizations.activity";
import { DEFAULT_PROJECT_NAME, insertProjectStatements } from "../projects/projects.queries";
import { asListRow, ProjectInput, toProjectListItem } from "../projects/projects.schema";

/** The user's e-mail, read when the entry is appended: the key names its user by id only. */
const userEmailInBatch = (userId: number) => sql`select ${users.email} from ${users} where ${users.id} = ${userId}`;

/**
 * Concurrent creates of one name race for its slug: the loser reads the slugs again and takes the
 * next free one; its last attempt (many creates of one name at once, by anyone: slugs are unique
 * across the service) takes a random suffix instead.
 */
const SLUG_ATTEMPTS = 5;

export const listCallerOrganizations: RouteHandler<typeof listOrganizations, AppEnv> = async (c) => {
  const page = readPage(c);
  const result = await readOrganizationsPage(c.var.db, c.var.actor, page);
  return c.json(pageEnvelope(c, page, result.count, result.organizations, result.links), 200);
};

/**
 * The organization, the caller's owner membership and a default project: one atomic batch, with
 * the organization's creation and the owner's joining as the first entries of its log.
 */
async function insertOrganization(c: Context<AppEnv>, name: string, slug: string) {
  const { db, actor } = c.var;
  const now = nowIso();
  const organization = { id: uuid7(), name, slug, createdAt: now, updatedAt: now };
  const membershipId = uuid7();
  const project = insertProjectStatements(db, organization.id, {
    ...ProjectInput.parse({}),
    name: DEFAULT_PROJECT_NAME,
  });
  const [, , , , , , [projectRow], [organizationRow]] = await db.batch([
    db.insert(organizations).values(organization),
    organizationActivity.record(c, "created", organizationItem(organization)),
    db.insert(organizationMemberships).values({
      id: membershipId,
      organizationId: organization.id,
      userId: actor.userId,
      level: MembershipLevel.owner,
      joinedAt: now,
      updatedAt: now,
    }),
    membershipActivity.record(c, "joined", {
      organizationId: organization.id,
      itemId: membershipId,
      name: userEmailInBatch(actor.userId),
      context: { user_uuid: actor.userUuid },
    }),
    project.insertProject,
    project.insertEnvironment,
    project.selectProject,
    // Read back after the membership trigger counted the owner.
    db.select().from(organizations).where(eq(organizations.id, organization.id)),
  ]);
  if (!projectRow || !organizationRow) throw new Error("created organization was not read back");
  return {
    organization: toOrganization(organizationRow, MembershipLevel.owner, [toProjectListItem(asListRow(projectRow))]),
    version: organizationRow.version,
  };
}

export const createCallerOrganization: RouteHandler<typeof createOrganization, AppEnv> = async (c) => {
  const { db } = c.var;
  const { name } = c.req.valid("json");
  const base = slugify(name);
  for (let attempt = 1; ; attempt += 1) {
    const slug =
      attempt < SLUG_ATTEMPTS
        ? firstFreeSlug(base, await takenSlugs(db, base))
        : `${base}-${randomBase62(6).toLowerCase()}`;
    try {
      const created = await insertOrganization(c, name, slug);
      const tagged = { id: created.organization.id, version: created.version };
      return c.json(created.organization, 201, { ETag: etagOf(tagged) });
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= SLUG_ATTEMPTS) throw error;
    }
  }
};

/** The membership is read in the same round trip as the organization, and admitted as every route admits it. */
export const retrieveCallerOrganization: RouteHandler<typeof retrieveOrganization, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const requested = requestedOrganization(c.req.valid("param").organization_id, actor);
  const reads = await db.batch(organizationObjectStatements(db, actor, requested));
  const [row] = reads[0];
  admitMember(actor, row);
  const organization = toOrganizationObject(reads);
  if (!organization || !row) throw notFound();
  return versionedAnswer(c, row.organization, organization);
};

export const updateCallerOrganization: RouteHandler<typeof updateOrganization, AppEnv> = async (c) => {
  const { db, actor, organization: current } = c.var;
  const organizationId = current.id;
  const input = c.req.valid("json");
  if (typeof input.activity_log_retention_days === "number")
    assertRetentionDays(input.activity_log_retention_days, c.env.ACTIVITY_LOG_RETENTION_DAYS);
  const policyChange = {
    personalApiKeyMaxScopes: input.personal_api_key_max_scopes,
    apiKeyMaxLifetimeDays: input.api_key_max_lifetime_days,
    membersCanUsePersonalApiKeys: input.members_can_use_personal_api_keys,
  };
  const judgedOnRead = keyPolicyChangeJudgedOnRead(actor, current.level, current, policyChange);
  const before = trackedOrganizationFields(current);
  const entry = organizationActivity.changed(
    c,
    "updated",
    organizationItem({ id: organizationId, name: input.name ?? current.name }),
    before,
    fieldsAfterPatch(before, input),
  );
  // A policy change below owner is written only over the policy it was judged on, so that an
  // owner's tightening meanwhile is not undone (412, as a stale If-Match).
  const expected = expectedVersion(c, current) ?? (judgedOnRead ? current.version : undefined);
  const stillAtLevel = callerStillAtLeast(actor, organizationId, current.level);
  const update = updateOrganizationSettings(db, organizationId, input, stillAtLevel, before, expected);
  const reads = organizationObjectStatements(db, actor, organizationId);
  // Nothing tracked changed: no entry, and the batch reads back as before.
  // A caller no longer at the level the change was judged on writes nothing (NOT NULL: 403).
  const [rows, projectRows] = await refusedWhenNull(
    failsOnStaleVersion(
      organizations.version,
      entry
        ? db.batch([update, entry, ...reads]).then(([, , ...readBack]) => readBack)
        : db.batch([update, ...reads]).then(([, ...readBack]) => readBack),
    ).catch((error: unknown) => {
      // The caller's level is checked first (its column comes first): then a setting sent changed meanwhile.
      throw isSettingChangedMeanwhile(error) ? changedMeanwhile("organization") : error;
    }),
    levelLost(c),
  );
  const organization = toOrganizationObject([rows, projectRows]);
  if (!organization || !rows[0]) throw notFound();
  return c.json(organization, 200, { ETag: etagOf(rows[0].organization) });
};

/**
 * Closes every way into the organization at once (`scheduleOrganizationDeletion`); its rows go in
 * the background (`deleteOrganizationStep`), so that no organization is too large to delete.
 */
export const deleteCallerOrganization: RouteHandler<typeof deleteOrganization, AppEnv> = async (c) => {
  const { organization } = c.var;
  const expected = expectedVersion(c, organization);
  const stillOwner = callerStillAtLeast(c.var.actor, organization.id, MembershipLevel.owner);
  const statements = scheduleOrganizationDeletion(c.var.db, organization.id, nowIso(), stillOwner, expected);
  const [marked, , serviceKeys] = await refusedWhenNull(
    failsOnStaleVersion(organizations.version, c.var.db.batch(statements)),
    levelLost(c),
  );
  // Another DELETE marked it between the read and this batch.
  if (marked.length === 0) throw notFound();
  // Each deleted key's cache entries and its `@current` guess go, as when one key is revoked.
  await Promise.all(serviceKeys.map((key) => forgetRevokedKey(c.env, key, currentEnvironmentGuessKey(key.id))));
  await sendFirstStep(c.env, { kind: "delete_organization", organizationId: organization.id });
  return c.body(null, 204);
};
