import { inJsonList } from "../platform/db";
import type { RouteHandler } from "@hono/zod-openapi";
import { and, asc, count, eq, type SQL } from "drizzle-orm";
import { organizationMemberships, organizations } from "../db/schema";
import type { AppEnv, OrganizationContext } from "../platform/env";
import { nowIso, uuid7 } from "../platform/ids";
import { MembershipLevel } from "../platform/levels";
import { organizationWithMembership } from "../platform/organization-context";
import { pageEnvelope, readPage } from "../platform/pagination";
import { insertProjectStatements, DEFAULT_PROJECT_NAME } from "./projects/projects.queries";
import { ProjectInput } from "./projects/projects.schema";
import type { createOrganization, listOrganizations, retrieveOrganization } from "./organizations.routes";

function toOrganization(organization: Omit<OrganizationContext, "membershipId">) {
  return {
    id: organization.id,
    name: organization.name,
    created_at: organization.createdAt,
    updated_at: organization.updatedAt,
    membership_level: organization.level,
  };
}

export const listCallerOrganizations: RouteHandler<typeof listOrganizations, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const page = readPage(c);
  const filters: SQL[] = [eq(organizationMemberships.userId, actor.userId)];
  if (actor.scopedOrganizations.length > 0) {
    filters.push(inJsonList(organizationMemberships.organizationId, actor.scopedOrganizations));
  }
  const [[total], rows] = await db.batch([
    db.select({ value: count() }).from(organizationMemberships).where(and(...filters)),
    db
      .select(organizationWithMembership)
      .from(organizationMemberships)
      .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
      .where(and(...filters))
      .orderBy(asc(organizations.createdAt), asc(organizations.id))
      .limit(page.limit)
      .offset(page.offset),
  ]);
  return c.json(pageEnvelope(c, page, total?.value ?? 0, rows.map(toOrganization)), 200);
};

/** The organization, the caller's owner membership and a default project: one atomic batch. */
export const createCallerOrganization: RouteHandler<typeof createOrganization, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const { name } = c.req.valid("json");
  const now = nowIso();
  const organization = { id: uuid7(), name, createdAt: now, updatedAt: now };
  const project = insertProjectStatements(db, organization.id, {
    ...ProjectInput.parse({}),
    name: DEFAULT_PROJECT_NAME,
  });
  await db.batch([
    db.insert(organizations).values(organization),
    db.insert(organizationMemberships).values({
      id: uuid7(),
      organizationId: organization.id,
      userId: actor.userId,
      level: MembershipLevel.owner,
      joinedAt: now,
      updatedAt: now,
    }),
    project.insertProject,
    project.insertEnvironment,
  ]);
  return c.json(toOrganization({ ...organization, level: MembershipLevel.owner }), 201);
};

export const retrieveCallerOrganization: RouteHandler<typeof retrieveOrganization, AppEnv> = (c) =>
  c.json(toOrganization(c.var.organization), 200);
