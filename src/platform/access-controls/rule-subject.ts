import { z } from "@hono/zod-openapi";
import { and, eq, isNotNull, isNull, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { environments, organizationMemberships, roles, users } from "../../db/schema";
import type { Database } from "../db";
import { validationError } from "../errors";
import { Timestamp } from "../timestamps";

/** Whom a rule is for: a member, a role, or (both null) everyone, the default. */
export type RuleSubject = { membershipId: string | null; roleId: string | null };

/** The fields of a PUT that name a rule's subject, PostHog's. */
export const RuleSubjectInput = {
  organization_member: z
    .string()
    .nullable()
    .optional()
    .openapi({ description: "A membership id of the organization; with `role` absent or null: the default." }),
  role: z
    .string()
    .nullable()
    .optional()
    .openapi({ description: "A role id of the organization (its members' rule); not with `organization_member`." }),
};

/** An access rule as PostHog returns it. */
export const AccessControlRule = z
  .object({
    id: z.string(),
    access_level: z.string(),
    organization_member: z
      .string()
      .nullable()
      .openapi({ description: "The membership id; null with `role` null: the default for everyone." }),
    role: z.string().nullable().openapi({ description: "The role id, for a role's rule." }),
    resource: z.string(),
    resource_id: z.string().nullable().openapi({ description: "null: a rule on every resource of the kind." }),
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
export type AccessControlRule = z.infer<typeof AccessControlRule>;

/** A stored rule of either table, as the API shows it. */
export function toAccessControlRule(rule: {
  id: string;
  accessLevel: string;
  organizationMembershipId: string | null;
  roleId: string | null;
  resource: string;
  resourceId?: string | null;
  createdAt: string;
  updatedAt: string;
}): AccessControlRule {
  return {
    id: rule.id,
    access_level: rule.accessLevel,
    organization_member: rule.organizationMembershipId,
    role: rule.roleId,
    resource: rule.resource,
    resource_id: rule.resourceId ?? null,
    created_at: rule.createdAt,
    updated_at: rule.updatedAt,
    created_by: null,
  };
}

/** The subject a PUT names; both a member and a role is PostHog's 400. */
export function subjectOf(input: { organization_member?: string | null; role?: string | null }): RuleSubject {
  const membershipId = input.organization_member ?? null;
  const roleId = input.role ?? null;
  if (membershipId !== null && roleId !== null) {
    throw validationError("invalid_input", "You can not scope an access control to both a member and a role.");
  }
  return { membershipId, roleId };
}

/** Whether two PUTs name the same subject (a body peeked before validation, then the validated one). */
export const sameSubject = (a: RuleSubject, b: RuleSubject) =>
  a.membershipId === b.membershipId && a.roleId === b.roleId;

type SubjectColumns = { organizationMembershipId: SQLiteColumn; roleId: SQLiteColumn };

/** The rules of `subject` in a rules table (the default: neither a member nor a role). */
export function ofSubject(columns: SubjectColumns, subject: RuleSubject): SQL | undefined {
  if (subject.roleId !== null) return eq(columns.roleId, subject.roleId);
  if (subject.membershipId !== null) return eq(columns.organizationMembershipId, subject.membershipId);
  return and(isNull(columns.organizationMembershipId), isNull(columns.roleId));
}

/**
 * What an upsert of `subject`'s rule conflicts on: `keys` (the resource's) with the member's or
 * the role's column, or, for the default, the partial unique index of rules that name no one.
 */
export function subjectConflict(keys: SQLiteColumn[], columns: SubjectColumns, subject: RuleSubject) {
  // The roles' unique index is partial (only rows with a role): the target says so.
  if (subject.roleId !== null) return { target: [...keys, columns.roleId], targetWhere: isNotNull(columns.roleId) };
  if (subject.membershipId !== null) return { target: [...keys, columns.organizationMembershipId] };
  return { target: keys, targetWhere: ofSubject(columns, subject) };
}

const organizationOfEnvironment = (environmentId: number) =>
  sql`(select ${environments.organizationId} from ${environments} where ${environments.id} = ${environmentId})`;

/**
 * The member or role a rule names, if they belong to the environment's organization, with the
 * name its activity entry gives the rule (the member's e-mail, the role's name): one query.
 */
export function selectSubject(db: Database, environmentId: number, subject: RuleSubject) {
  const organizationId = organizationOfEnvironment(environmentId);
  if (subject.roleId !== null) {
    return db
      .select({ id: roles.id, name: roles.name })
      .from(roles)
      .where(and(eq(roles.organizationId, organizationId), eq(roles.id, subject.roleId)));
  }
  return db
    .select({ id: organizationMemberships.id, name: users.email })
    .from(organizationMemberships)
    .innerJoin(users, eq(users.id, organizationMemberships.userId))
    .where(
      and(
        eq(organizationMemberships.organizationId, organizationId),
        eq(organizationMemberships.id, subject.membershipId ?? ""),
      ),
    );
}

type SubjectRow = { id: string; name: string };

/**
 * The subject as read: a member or role of another organization (or none) is a 400 on its field,
 * the same whether it exists elsewhere or not. Null: the default rule.
 */
export function checkedSubject(subject: RuleSubject, found: SubjectRow[]): SubjectRow | null {
  if (subject.membershipId === null && subject.roleId === null) return null;
  const [row] = found;
  if (row) return row;
  if (subject.roleId !== null) {
    throw validationError("does_not_exist", `Invalid pk "${subject.roleId}" - object does not exist.`, "role");
  }
  throw validationError("invalid_input", "This user is not a member of the organization.", "organization_member");
}
