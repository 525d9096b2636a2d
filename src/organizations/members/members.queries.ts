import { and, count, eq, exists, gt, ne, notExists, sql, type SQL } from "drizzle-orm";
import {
  dashboardCollaborators,
  dashboards,
  environments,
  organizationMemberships,
  organizations,
  roleMemberships,
  roles,
  users,
} from "../../db/schema";
import type { BatchItem } from "drizzle-orm/batch";
import { writeWithActivity } from "../../platform/activity-log/resource-activity";
import { unchangedSinceRead, type Database } from "../../platform/db";
import { nowIso } from "../../platform/ids";
import type { OrganizationRead } from "../../platform/route-context";
import type { OrganizationRef } from "../../platform/route-context/organization";
import { MembershipLevel } from "../../platform/levels";
import { counterOf, joinPage, pageOf, selectCount, type ListOrder, type Page } from "../../platform/pagination";
import { toUserBasic, userBasicColumns, type UserBasicRow } from "../../platform/user-basic";
import { holdsIgnoringCase, indexedSearch, searchText, trigramMatch } from "../../platform/text-search";
import type { Member } from "./members.schema";
import { enabledWebhooksCreatedBy } from "../webhooks/webhook-creators";

export type MembershipRow = typeof organizationMemberships.$inferSelect;
/** What a member shows of their user: `UserBasic`'s fields and the last login. */
type UserRow = UserBasicRow & Pick<typeof users.$inferSelect, "lastLogin">;
export const memberUserColumns = { ...userBasicColumns(users), lastLogin: users.lastLogin };
type Statement = BatchItem<"sqlite">;

export function toMember(membership: MembershipRow, user: UserRow): Member {
  return {
    id: membership.id,
    user: toUserBasic(user),
    level: membership.level as Member["level"],
    joined_at: membership.joinedAt,
    updated_at: membership.updatedAt,
    // No 2FA or social login exists here: both always false.
    is_2fa_enabled: false,
    has_social_auth: false,
    last_login: user.lastLogin,
  };
}

/**
 * Users are joined, not fetched one by one: a page costs one query whatever its size. The count
 * reads memberships only; e-mails are stored lower-cased, so `?email=` is one unique-index probe.
 */
const latestJoinedFirst: ListOrder = [
  [organizationMemberships.joinedAt, "desc"],
  [organizationMemberships.id, "desc"],
];

/** The id of the user with that e-mail (stored lower-cased), as a subquery. */
const userWithEmail = (db: Database, email: string) =>
  sql<number>`(${db.select({ id: users.id }).from(users).where(eq(users.email, email.toLowerCase()))})`;

const earliestJoinedFirst: ListOrder = [
  [organizationMemberships.joinedAt, "asc"],
  [organizationMemberships.id, "asc"],
];

/**
 * Members whose first name, last name or e-mail holds `search`, case ignored. A search of 3
 * characters or more is read from the trigram index `members_search` (migrations/0047: a row per
 * membership, its rowid the membership's), the organization's matches alone; the membership's own
 * organization is still the condition that keeps other organizations' members out. A shorter one
 * tests each member walked (e-mails are stored lower-cased).
 */
function memberMatching(organizationId: OrganizationRef, search: string): SQL {
  const indexed = indexedSearch(search);
  if (indexed) {
    const phrase = trigramMatch(organizationId, ["first_name", "last_name", "email"], indexed);
    return sql`${organizationMemberships}.rowid in
      (select rowid from members_search where members_search match ${phrase})`;
  }
  return sql`exists (select 1 from ${users} where ${users.id} = ${organizationMemberships.userId}
    and (${holdsIgnoringCase(users.firstName, search)} or ${holdsIgnoringCase(users.lastName, search)}
      or instr(${users.email}, ${search.toLowerCase()}) > 0))`;
}

/**
 * `?email=`, `?search=`, `?updated_after=` and `?order=` (`-joined_at`, the default, or
 * `joined_at`), as PostHog's list takes them.
 */
type MemberFilters = { email?: string; search?: string; updated_after?: string; order?: string };

export async function listMembersPage(read: OrganizationRead, page: Page, filters: MemberFilters) {
  const { db, organizationId } = read;
  const { email, order: sent } = filters;
  const search = searchText(filters.search);
  const order = sent === "joined_at" ? earliestJoinedFirst : latestJoinedFirst;
  const where = and(
    // Where the search index selects the members, they are read by rowid, not along the list's index (`+`).
    indexedSearch(search)
      ? sql`+${organizationMemberships.organizationId} = ${organizationId}`
      : eq(organizationMemberships.organizationId, organizationId),
    // An equality, so that the (organization, user) index finds the one member it can be.
    !email ? undefined : eq(organizationMemberships.userId, userWithEmail(db, email)),
    !search ? undefined : memberMatching(organizationId, search),
    // Stored times are ISO text in UTC: the time sent, in that form, compares as they do.
    !filters.updated_after
      ? undefined
      : gt(organizationMemberships.updatedAt, new Date(filters.updated_after).toISOString()),
  );
  const total =
    email || search || filters.updated_after
      ? db.$count(organizationMemberships, where)
      : counterOf(organizations.memberCount, eq(organizations.id, organizationId));
  const [[counted], rows] = await read.batch([
    selectCount(db, total),
    db
      .select({ membership: organizationMemberships, user: memberUserColumns })
      .from(organizationMemberships)
      .innerJoin(...joinPage(db, order, where, page))
      .innerJoin(users, eq(users.id, organizationMemberships.userId)),
  ]);
  const listed = pageOf(order, page, rows, (row) => row.membership);
  return {
    count: counted?.value ?? 0,
    members: listed.rows.map((row) => toMember(row.membership, row.user)),
    links: listed.links,
  };
}

/**
 * The member a user's uuid names, the organization's owner count, the webhooks they created and
 * the roles they hold (whose memberships leave with them).
 */
export function memberReads(db: Database, organizationId: OrganizationRef, userUuid: string) {
  const userId = sql<number>`(select ${users.id} from ${users} where ${users.uuid} = ${userUuid})`;
  return [
    selectMemberByUuid(db, organizationId, userUuid),
    selectOwnerCount(db, organizationId),
    enabledWebhooksCreatedBy(db, organizationId, userId),
    selectRolesOfMember(db, organizationId, userId),
  ] as const;
}

/**
 * The membership's roles are still the ones read (`ids`): a removal logs the end of each, so one
 * added or gone meanwhile must not be missed or logged twice (the write then answers 409).
 */
export const rolesAsRead = (membershipId: string, ids: string[]) =>
  sql`coalesce((select group_concat(${sql.identifier("id")}, ',') from (select ${roleMemberships.id} from
    ${roleMemberships} where ${roleMemberships.organizationMembershipId} = ${membershipId}
    order by ${roleMemberships.id})), '') = ${[...ids].sort().join(",")}`;

const selectRolesOfMember = (db: Database, organizationId: OrganizationRef, userId: SQL<number>) =>
  db
    .select({ id: roleMemberships.id, role: { id: roles.id, name: roles.name } })
    .from(organizationMemberships)
    .innerJoin(roleMemberships, eq(roleMemberships.organizationMembershipId, organizationMemberships.id))
    .innerJoin(roles, eq(roles.id, roleMemberships.roleId))
    .where(and(eq(organizationMemberships.organizationId, organizationId), eq(organizationMemberships.userId, userId)));

const selectMemberByUuid = (db: Database, organizationId: OrganizationRef, userUuid: string) =>
  db
    .select({ membership: organizationMemberships, user: memberUserColumns })
    .from(organizationMemberships)
    .innerJoin(users, eq(users.id, organizationMemberships.userId))
    .where(and(eq(organizationMemberships.organizationId, organizationId), eq(users.uuid, userUuid)));

const selectOwnerCount = (db: Database, organizationId: OrganizationRef) =>
  db
    .select({ value: count() })
    .from(organizationMemberships)
    .where(
      and(
        eq(organizationMemberships.organizationId, organizationId),
        eq(organizationMemberships.level, MembershipLevel.owner),
      ),
    );

/**
 * The rules were checked against `target` as read; the write holds only if it is still so, and
 * if an owner remains besides it when an owner stops being one. Two owners demoting or removing
 * each other at once cannot leave the organization without an owner.
 */
function unchangedAndOwnerRemains(db: Database, target: MembershipRow, losesOwnership: boolean) {
  const stillAsRead = unchangedSinceRead([
    [organizationMemberships.id, target.id],
    [organizationMemberships.level, target.level],
  ]);
  if (!losesOwnership) return stillAsRead;
  return and(
    stillAsRead,
    exists(
      db
        .select({ id: organizationMemberships.id })
        .from(organizationMemberships)
        .where(
          and(
            eq(organizationMemberships.organizationId, target.organizationId),
            eq(organizationMemberships.level, MembershipLevel.owner),
            ne(organizationMemberships.id, target.id),
          ),
        ),
    ),
  );
}

/** Statements that follow a membership's change, and what must still hold for it to be made. */
type Consequences = { consequences: Statement[]; holds: SQL };

const losesOwnership = (target: MembershipRow, level: number) =>
  target.level === MembershipLevel.owner && level !== MembershipLevel.owner;

/**
 * The level, its `entry`, then `consequences` (statements that read the new level), in one atomic
 * batch; only while `holds` (what the consequences were built from is still so).
 */
export async function setMemberLevel(
  db: Database,
  target: MembershipRow,
  level: number,
  entry: Statement | undefined,
  { consequences, holds }: Consequences,
) {
  const [updated] = await writeWithActivity(
    db,
    db
      .update(organizationMemberships)
      .set({ level, updatedAt: nowIso() })
      .where(and(unchangedAndOwnerRemains(db, target, losesOwnership(target, level)), holds))
      .returning(),
    entry,
    ...consequences,
  );
  return updated;
}

/**
 * The membership, its `entries` in the activity log (its own, then those of the role memberships
 * that go with it), what it carried, and `consequences` (statements that read the membership as
 * gone), in one atomic batch: its access rules and role memberships go with it (they reference
 * the membership, ON DELETE CASCADE), and the user's collaborations on the organization's
 * dashboards are deleted once the membership is gone.
 */
export async function deleteMembership(
  db: Database,
  target: MembershipRow,
  entries: [Statement, ...Statement[]],
  { consequences, holds }: Consequences,
) {
  const [removed] = await db.batch([
    db
      .delete(organizationMemberships)
      .where(and(unchangedAndOwnerRemains(db, target, target.level === MembershipLevel.owner), holds))
      .returning({ id: organizationMemberships.id }),
    ...entries,
    db.delete(dashboardCollaborators).where(
      and(
        eq(dashboardCollaborators.userId, target.userId),
        // Per collaboration of the user (its index), not per dashboard of the organization.
        exists(
          db
            .select({ id: dashboards.id })
            .from(dashboards)
            .innerJoin(environments, eq(environments.id, dashboards.environmentId))
            .where(
              and(
                eq(dashboards.id, dashboardCollaborators.dashboardId),
                eq(environments.organizationId, target.organizationId),
              ),
            ),
        ),
        notExists(
          db
            .select({ id: organizationMemberships.id })
            .from(organizationMemberships)
            .where(
              and(
                eq(organizationMemberships.organizationId, target.organizationId),
                eq(organizationMemberships.userId, target.userId),
              ),
            ),
        ),
      ),
    ),
    ...consequences,
  ]);
  return removed.length > 0;
}
