import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import {
  accessControls,
  organizationMemberships,
  organizations,
  resourceAccessControls,
  roleMemberships,
  roles,
  users,
} from "../../db/schema";
import { isUniqueViolation, whileHolds, type Database } from "../../platform/db";
import { validationError } from "../../platform/errors";
import { nameKey } from "../../platform/names";
import { counterOf, joinPage, pageOf, selectCount, type ListOrder, type Page } from "../../platform/pagination";
import type { OrganizationRead } from "../../platform/route-context";
import type { OrganizationRef } from "../../platform/route-context/organization";
import { toUserBasic } from "../../platform/user-basic";
import { memberUserColumns, toMember } from "../members/members.queries";
import type { Role, RoleMembership, RoleMembershipRow, RoleRow } from "./roles.schema";

type Statement = BatchItem<"sqlite">;

const earliestFirst: ListOrder = [
  [roles.createdAt, "asc"],
  [roles.id, "asc"],
];

const membersEarliestFirst: ListOrder = [
  [roleMemberships.joinedAt, "asc"],
  [roleMemberships.id, "asc"],
];

const roleOfOrganization = (organizationId: OrganizationRef, id: string) =>
  and(eq(roles.organizationId, organizationId), eq(roles.id, id));

/** The role `roleId` names, as a query of its id: none when it is not the organization's. */
const roleIdIn = (organizationId: OrganizationRef, roleId: string) =>
  sql`(select ${roles.id} from ${roles} where ${roleOfOrganization(organizationId, roleId)})`;

/** Role memberships with their member and user, as the API shows them. */
const selectMemberships = (db: Database) =>
  db
    .select({ roleMembership: roleMemberships, membership: organizationMemberships, user: memberUserColumns })
    .from(roleMemberships)
    .innerJoin(organizationMemberships, eq(organizationMemberships.id, roleMemberships.organizationMembershipId))
    .innerJoin(users, eq(users.id, organizationMemberships.userId));

type MembershipRow = Awaited<ReturnType<ReturnType<typeof selectMemberships>["where"]>>[number];

export const toRoleMembership = ({ roleMembership, membership, user }: MembershipRow): RoleMembership => ({
  id: roleMembership.id,
  role_id: roleMembership.roleId,
  organization_member: toMember(membership, user),
  user: toUserBasic(user),
  joined_at: roleMembership.joinedAt,
  updated_at: roleMembership.updatedAt,
});

/** `members`: the role's, in any order: put in theirs (earliest first) here. */
export function toRole(role: RoleRow, members: MembershipRow[]): Role {
  return {
    id: role.id,
    name: role.name,
    created_at: role.createdAt,
    created_by: null,
    members: members
      .filter((row) => row.roleMembership.roleId === role.id)
      .sort((a, b) => compareJoined(a.roleMembership, b.roleMembership))
      .map(toRoleMembership),
    is_default: false,
  };
}

const compareJoined = (a: RoleMembershipRow, b: RoleMembershipRow) =>
  a.joinedAt === b.joinedAt ? (a.id < b.id ? -1 : 1) : a.joinedAt < b.joinedAt ? -1 : 1;

/**
 * A page of the organization's roles, earliest first, with their members and the organization's
 * counter: one round trip. The page's roles are joined to their members (along each role's
 * index), so the page is walked once.
 */
export async function listRoles(read: OrganizationRead, page: Page) {
  const { db, organizationId } = read;
  const where = eq(roles.organizationId, organizationId);
  const counter = counterOf(organizations.roleCount, eq(organizations.id, organizationId));
  const [[total], rows] = await read.batch([
    selectCount(db, counter),
    db
      .select({
        role: roles,
        roleMembership: roleMemberships,
        membership: organizationMemberships,
        user: memberUserColumns,
      })
      .from(roles)
      .innerJoin(...joinPage(db, earliestFirst, where, page))
      .leftJoin(roleMemberships, eq(roleMemberships.roleId, roles.id))
      .leftJoin(organizationMemberships, eq(organizationMemberships.id, roleMemberships.organizationMembershipId))
      .leftJoin(users, eq(users.id, organizationMemberships.userId)),
  ]);
  const distinctRoles = [...new Map(rows.map((row) => [row.role.id, row.role])).values()];
  const members = rows.flatMap(({ roleMembership, membership, user }) =>
    roleMembership && membership && user ? [{ roleMembership, membership, user }] : [],
  );
  const listed = pageOf(earliestFirst, page, distinctRoles);
  return { count: total?.value ?? 0, roles: listed.rows.map((role) => toRole(role, members)), links: listed.links };
}

/** The role and its members, for a batch that resolves the organization. */
export function roleReads(db: Database, organizationId: OrganizationRef, id: string) {
  return [
    db.select().from(roles).where(roleOfOrganization(organizationId, id)),
    selectMemberships(db)
      .where(eq(roleMemberships.roleId, roleIdIn(organizationId, id)))
      .orderBy(asc(roleMemberships.joinedAt), asc(roleMemberships.id)),
  ] as const;
}

const nameTaken = () => validationError("unique", "There is already a role with this name.", "name");

/*
 * Every role write below lands only while `allowed` holds when it runs (the caller still an
 * admin): else a NOT NULL failure, for the caller to answer.
 */

/** A new role and its entry, in one batch; a name the organization has (as `nameKey` compares) is a 400. */
export async function insertRole(db: Database, role: typeof roles.$inferInsert, entry: Statement, allowed: SQL) {
  try {
    const insert = db
      .insert(roles)
      .values({ ...role, name: whileHolds(role.name, allowed) })
      .returning();
    const [[row]] = await db.batch([insert, entry]);
    return row!;
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken();
    throw error;
  }
}

export async function renameRole(
  db: Database,
  organizationId: string,
  role: { id: string; name: string },
  name: string,
  entry: Statement | undefined,
  allowed: SQL,
) {
  try {
    const update = db
      .update(roles)
      .set({ name: whileHolds(name, allowed), nameKey: nameKey(name) })
      // Only from the name read, which its entry says it replaced: none when renamed meanwhile.
      .where(and(roleOfOrganization(organizationId, role.id), eq(roles.name, role.name)))
      .returning();
    const [[row]] = entry ? await db.batch([update, entry]) : await db.batch([update]);
    return row;
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken();
    throw error;
  }
}

/** Whether the role is still there, for a refused write's answer. */
export const roleStillThere = (organizationId: string, id: string) =>
  sql`exists (select 1 from ${roles} where ${roleOfOrganization(organizationId, id)})`;

/**
 * The role, its entry, then its rules (on resources and on kinds of resources) and its
 * memberships, in one atomic batch. The role is touched first so that the entry (which reads its
 * name) is appended only if it exists; the deletes name what the cascades would also remove.
 */
export async function deleteRole(db: Database, organizationId: string, id: string, entry: Statement, allowed: SQL) {
  const ofOrganization = roleOfOrganization(organizationId, id);
  const role = roleIdIn(organizationId, id);
  const [, , , , , removed] = await db.batch([
    db
      .update(roles)
      .set({ name: whileHolds(sql`${roles.name}`, allowed) })
      .where(ofOrganization),
    entry,
    db.delete(accessControls).where(eq(accessControls.roleId, role)),
    db.delete(resourceAccessControls).where(eq(resourceAccessControls.roleId, role)),
    db.delete(roleMemberships).where(eq(roleMemberships.roleId, role)),
    db.delete(roles).where(ofOrganization).returning({ id: roles.id }),
  ]);
  return removed.length > 0;
}

/** A page of the role's memberships, earliest first, the role (404 when absent) and its counter. */
export async function listRoleMemberships(read: OrganizationRead, roleId: string, page: Page) {
  const { db, organizationId } = read;
  const where = eq(roleMemberships.roleId, roleIdIn(organizationId, roleId));
  const counter = counterOf(roles.memberCount, roleOfOrganization(organizationId, roleId));
  const [[role], [total], rows] = await read.batch([
    db.select({ id: roles.id }).from(roles).where(roleOfOrganization(organizationId, roleId)),
    selectCount(db, counter),
    selectMemberships(db).innerJoin(...joinPage(db, membersEarliestFirst, where, page)),
  ]);
  const listed = pageOf(membersEarliestFirst, page, rows, (row) => row.roleMembership);
  return role
    ? { count: total?.value ?? 0, memberships: listed.rows.map(toRoleMembership), links: listed.links }
    : undefined;
}

/** One membership of the organization's role. */
export const selectRoleMembership = (db: Database, organizationId: OrganizationRef, roleId: string, id: string) =>
  selectMemberships(db).where(
    and(eq(roleMemberships.id, id), eq(roleMemberships.roleId, roleIdIn(organizationId, roleId))),
  );

/** What adding a member to a role reads: the role, and the member the user's uuid names. */
export function newRoleMembershipReads(
  db: Database,
  organizationId: OrganizationRef,
  roleId: string,
  userUuid: string,
) {
  return [
    db.select().from(roles).where(roleOfOrganization(organizationId, roleId)),
    db
      .select({ membership: organizationMemberships, user: memberUserColumns })
      .from(organizationMemberships)
      .innerJoin(users, eq(users.id, organizationMemberships.userId))
      .where(and(eq(organizationMemberships.organizationId, organizationId), eq(users.uuid, userUuid))),
  ] as const;
}

/**
 * The membership and its entry, written only while the role and the member are still the
 * organization's (a role deleted meanwhile writes nothing) and while `allowed` holds (else a NOT
 * NULL failure, for the caller to answer); a member already in the role is a 400.
 */
export async function insertRoleMembership(
  db: Database,
  organizationId: string,
  row: { id: string; roleId: string; organizationMembershipId: string; joinedAt: string },
  entry: Statement,
  allowed: SQL,
) {
  const now = row.joinedAt;
  const stillThere = and(
    eq(roles.id, roleIdIn(organizationId, row.roleId)),
    eq(organizationMemberships.organizationId, organizationId),
  ) as SQL;
  try {
    const [inserted] = await db.batch([
      db
        .insert(roleMemberships)
        .select(
          db
            .select({
              id: sql<string>`${row.id}`.as("id"),
              roleId: roles.id,
              organizationMembershipId: organizationMemberships.id,
              joinedAt: sql<string>`${whileHolds(now, allowed)}`.as("joined_at"),
              updatedAt: sql<string>`${now}`.as("updated_at"),
            })
            .from(roles)
            .innerJoin(organizationMemberships, eq(organizationMemberships.id, row.organizationMembershipId))
            .where(stillThere),
        )
        .returning({ id: roleMemberships.id }),
      entry,
    ]);
    return inserted.length > 0;
  } catch (error) {
    if (isUniqueViolation(error)) throw validationError("invalid_input", "User is already part of the role.");
    throw error;
  }
}

/** The membership, after its entry (which reads it), in one batch: whether it existed. */
export async function deleteRoleMembership(
  db: Database,
  organizationId: string,
  roleId: string,
  id: string,
  entry: Statement,
  allowed: SQL,
) {
  const ofRole = and(eq(roleMemberships.id, id), eq(roleMemberships.roleId, roleIdIn(organizationId, roleId)));
  const [, , removed] = await db.batch([
    db
      .update(roleMemberships)
      .set({ updatedAt: whileHolds(sql`${roleMemberships.updatedAt}`, allowed) })
      .where(ofRole),
    entry,
    db.delete(roleMemberships).where(ofRole).returning({ id: roleMemberships.id }),
  ]);
  return removed.length > 0;
}
