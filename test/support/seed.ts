import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import * as schema from "../../src/db/schema";
import { chunkForInsert } from "../../src/platform/db";
import { nowIso, uuid7 } from "../../src/platform/ids";
import { mintInviteToken } from "../../src/organizations/invites/invite-tokens";
import { MembershipLevel } from "../../src/platform/levels";
import { MAX_PROJECTS_PER_ORGANIZATION } from "../../src/projects/projects.queries";
import { MAX_KEYS_PER_USER } from "../../src/personal-api-keys/personal-api-keys.handlers";
import { db, setupOrganization } from "./harness";

/*
 * Organizations with thousands of rows of every kind, written straight into D1 (HTTP would take
 * hours), for measuring what reads cost as the data grows. The counters' triggers run on these
 * inserts as on any other.
 */

type Insert<T extends SQLiteTable> = T["$inferInsert"];

/** What is seeded, parents first: the order rows are inserted in. */
const SEEDED_TABLES = {
  organizations: schema.organizations,
  users: schema.users,
  memberships: schema.organizationMemberships,
  personalApiKeys: schema.personalApiKeys,
  projects: schema.projects,
  environments: schema.environments,
  invites: schema.invites,
  domains: schema.domains,
  batchExports: schema.batchExports,
  dashboards: schema.dashboards,
  collaborators: schema.dashboardCollaborators,
  accessControls: schema.accessControls,
  roles: schema.roles,
  roleMemberships: schema.roleMemberships,
  activityLog: schema.activityLog,
};

export type SeedRows = { [K in keyof typeof SEEDED_TABLES]: Insert<(typeof SEEDED_TABLES)[K]>[] };

/**
 * Integer ids far above what the tests' own inserts reach, so that seeded rows never collide with
 * them. A table's own inserts after a seed take ids just above it, so each seed starts a million
 * further on.
 */
let nextId = 10_000_000;
const newId = () => (nextId += 1);

export const emptySeedRows = () => {
  nextId = (Math.floor(nextId / 1_000_000) + 1) * 1_000_000;
  return Object.fromEntries(Object.keys(SEEDED_TABLES).map((name) => [name, []])) as unknown as SeedRows;
};

const S3_CONFIG = { bucket_name: "bucket", region: "us-east-1", prefix: "events/" };

export function seedProject(rows: SeedRows, organizationId: string, now: string) {
  const id = newId();
  rows.projects.push({
    id,
    uuid: uuid7(),
    organizationId,
    name: `Seeded project ${id}`,
    nameKey: `seeded project ${id}`,
    apiToken: `phc_seed_${id}`,
    liveEventsToken: `live_${id}`,
    settings: {},
    createdAt: now,
    updatedAt: now,
  });
  rows.environments.push({ id, projectId: id, organizationId, name: "Default", createdAt: now });
  return id;
}

function seedBatchExport(rows: SeedRows, organizationId: string, environmentId: number, now: string) {
  const id = uuid7();
  rows.batchExports.push({
    id,
    environmentId,
    organizationId,
    name: `Export ${id}`,
    destinationType: "S3",
    destinationConfig: S3_CONFIG,
    interval: "hour",
    createdAt: now,
    lastUpdatedAt: now,
  });
  return id;
}

/** A role without members: the roles list's rows (its members are read with it, all of them). */
const seedRole = (rows: SeedRows, organizationId: string, now: string) => {
  const id = uuid7();
  rows.roles.push({ id, organizationId, name: `Role ${id}`, nameKey: `role ${id}`, createdAt: now });
  return id;
};

const seedDomain = (rows: SeedRows, organizationId: string, now: string) => {
  const id = uuid7();
  rows.domains.push({ id, organizationId, domain: `${id}.example.com`, verificationChallenge: id, createdAt: now });
  return id;
};

/** An invite; one to sign up by has its token, and is sent by a member (`createdById`). */
function seedInvite(
  rows: SeedRows,
  organizationId: string,
  now: string,
  sent: { tokenHash: string; createdById: number } | null = null,
) {
  const id = uuid7();
  rows.invites.push({
    id,
    organizationId,
    createdById: sent?.createdById ?? null,
    targetEmail: `invitee-${id}@example.com`,
    level: MembershipLevel.member,
    sendEmail: false,
    combinePendingInvites: false,
    tokenHash: sent?.tokenHash ?? null,
    createdAt: now,
    updatedAt: now,
  });
  return id;
}

function seedMember(rows: SeedRows, organizationId: string, now: string) {
  const id = newId();
  const membershipId = uuid7();
  const user = { id, uuid: uuid7(), distinctId: `seed-${id}`, email: `seed-${id}@example.com`, createdAt: now };
  rows.users.push(user);
  rows.memberships.push({
    id: membershipId,
    organizationId,
    userId: id,
    level: MembershipLevel.member,
    joinedAt: now,
    updatedAt: now,
  });
  return { user, membershipId };
}

export type SeededOrganization = Awaited<ReturnType<typeof setupOrganization>> & {
  /** A dashboard with every member but the last as collaborator and a rule for each. */
  dashboardId: number;
  batchExportId: string;
  domainId: string;
  inviteId: string;
  /** An invite's acceptance token, for the signup routes. */
  inviteToken: string;
  personalApiKeyId: string;
  /** Members without a collaboration on the dashboard, for writes to use. */
  spareMembers: { uuid: string; membershipId: string }[];
};

/**
 * `size` rows of each kind in a new organization (projects stop short of the organization's
 * limit): members (each with a rule on the first project), invites, domains, roles, projects, batch
 * exports, dashboards, a few personal API keys of the owner, activity-log entries (unsealed:
 * reading them costs the same), and collaborators and rules on one dashboard. Rows to insert are
 * added to `rows`; nothing is written until `insertSeedRows`.
 */
export async function seedOrganization(rows: SeedRows, size: number): Promise<SeededOrganization> {
  const team = await setupOrganization();
  const now = nowIso();
  const organizationId = team.organization.id;
  const environmentId = team.project.id;
  const inviteToken = await mintInviteToken();
  const inviteId = seedInvite(rows, organizationId, now, { tokenHash: inviteToken.hash, createdById: team.owner.id });
  const domainId = seedDomain(rows, organizationId, now);
  seedRole(rows, organizationId, now);
  const batchExportId = seedBatchExport(rows, organizationId, environmentId, now);
  const dashboardId = newId();
  rows.dashboards.push({
    id: dashboardId,
    environmentId,
    name: "Shared board",
    restrictionLevel: 37,
    createdById: team.owner.id,
    createdAt: now,
    lastModifiedAt: now,
  });
  const personalApiKeyId = uuid7();
  const spareMembers: SeededOrganization["spareMembers"] = [];
  for (let index = 1; index < size; index += 1) {
    seedInvite(rows, organizationId, now);
    seedDomain(rows, organizationId, now);
    seedRole(rows, organizationId, now);
    seedBatchExport(rows, organizationId, environmentId, now);
    rows.dashboards.push({
      id: newId(),
      environmentId,
      name: `Seeded ${index}`,
      createdById: team.owner.id,
      createdAt: now,
      lastModifiedAt: now,
    });
    // A user holds a handful of keys at most; room is left for the tests' own.
    if (index < MAX_KEYS_PER_USER - 2)
      rows.personalApiKeys.push({
        id: index === 1 ? personalApiKeyId : uuid7(),
        userId: team.owner.id,
        label: `Seeded ${index}`,
        secureValue: `seed-${uuid7()}`,
        maskValue: "phx_...seed",
        scopes: ["*"],
        scopedOrganizations: [],
        scopedTeams: [],
        createdAt: now,
      });
    if (index < MAX_PROJECTS_PER_ORGANIZATION - 10) seedProject(rows, organizationId, now);
  }
  for (let seq = 1; seq <= size; seq += 1)
    seedActivityEntry(rows, organizationId, environmentId, team.owner.id, seq, now);
  for (let index = 0; index < size; index += 1) {
    const { user, membershipId } = seedMember(rows, organizationId, now);
    const rule = { environmentId, organizationMembershipId: membershipId, createdAt: now, updatedAt: now };
    rows.accessControls.push({
      ...rule,
      id: uuid7(),
      resource: "project",
      resourceId: String(environmentId),
      accessLevel: "member",
    });
    if (index >= size - 2) {
      spareMembers.push({ uuid: user.uuid, membershipId });
      continue;
    }
    rows.accessControls.push({
      ...rule,
      id: uuid7(),
      resource: "dashboard",
      resourceId: String(dashboardId),
      accessLevel: "viewer",
    });
    rows.collaborators.push({ id: uuid7(), dashboardId, userId: user.id, level: 37, addedAt: now, updatedAt: now });
  }
  return {
    ...team,
    dashboardId,
    batchExportId,
    domainId,
    inviteId,
    inviteToken: inviteToken.value,
    personalApiKeyId,
    spareMembers,
  };
}

function seedActivityEntry(
  rows: SeedRows,
  organizationId: string,
  projectId: number,
  userId: number | null,
  seq: number,
  now: string,
) {
  rows.activityLog.push({
    id: uuid7(),
    organizationId,
    seq,
    projectId: seq % 2 === 0 ? projectId : null,
    userId,
    isSystem: false,
    activity: "updated",
    scope: seq % 2 === 0 ? "Dashboard" : "OrganizationMembership",
    itemId: String(seq % 100),
    detail: JSON.stringify({ name: `Seeded ${seq}`, changes: null, context: null }),
    createdAt: now,
  });
}

/** Organizations besides the measured ones, each with a member and one row of each kind. */
export function seedOtherOrganizations(rows: SeedRows, count: number) {
  const now = nowIso();
  for (let index = 0; index < count; index += 1) {
    const organizationId = uuid7();
    rows.organizations.push({
      id: organizationId,
      name: `Other ${index}`,
      slug: `other-${organizationId}`,
      createdAt: now,
      updatedAt: now,
    });
    const environmentId = seedProject(rows, organizationId, now);
    seedMember(rows, organizationId, now);
    seedInvite(rows, organizationId, now);
    seedDomain(rows, organizationId, now);
    seedRole(rows, organizationId, now);
    seedBatchExport(rows, organizationId, environmentId, now);
    rows.dashboards.push({ id: newId(), environmentId, name: `Other ${index}`, createdAt: now, lastModifiedAt: now });
    seedActivityEntry(rows, organizationId, environmentId, null, 1, now);
  }
}

/** A user's memberships of the organizations `organizationIds` names: a user in many organizations. */
export function seedMembershipsOf(rows: SeedRows, userId: number, organizationIds: string[]) {
  const now = nowIso();
  for (const organizationId of organizationIds) {
    rows.memberships.push({
      id: uuid7(),
      organizationId,
      userId,
      level: MembershipLevel.member,
      joinedAt: now,
      updatedAt: now,
    });
  }
}

/** Statements per round trip: a batch of tens of thousands would hold D1's writer for too long at once. */
const STATEMENTS_PER_BATCH = 500;

/** Every row, parents first, in multi-row inserts that keep to D1's parameter limit. */
export async function insertSeedRows(rows: SeedRows) {
  const statements = Object.entries(SEEDED_TABLES).flatMap(([name, table]) =>
    // The entries lose the pairing of each table with its rows' type; the keys are SeedRows' own.
    chunkForInsert<unknown>(table, rows[name as keyof SeedRows]).map(
      (chunk) => db.insert(table).values(chunk as never) as BatchItem<"sqlite">,
    ),
  );
  for (let start = 0; start < statements.length; start += STATEMENTS_PER_BATCH) {
    const [first, ...rest] = statements.slice(start, start + STATEMENTS_PER_BATCH);
    if (first) await db.batch([first, ...rest]);
  }
}
