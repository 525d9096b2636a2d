import type { RouteHandler } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { organizationMemberships, organizations } from "../db/schema";
import { isUniqueViolation, type Database } from "../platform/db";
import type { AppEnv } from "../platform/env";
import { notFound } from "../platform/errors";
import { nowIso, uuid7 } from "../platform/ids";
import { MembershipLevel } from "../platform/levels";
import { admitMember, requestedOrganization } from "../platform/organization-context";
import { pageEnvelope, readPage } from "../platform/pagination";
import {
  deleteOrganization as deleteOrganizationAndContents,
  firstFreeSlug,
  organizationObjectStatements,
  readOrganizationsPage,
  slugify,
  takenSlugs,
  toOrganizationObject,
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
import { DEFAULT_PROJECT_NAME, insertProjectStatements } from "./projects/projects.queries";
import { ProjectInput } from "./projects/projects.schema";

/** Concurrent creates of one name race for its slug; the loser takes the next free one. */
const SLUG_ATTEMPTS = 5;

export const listCallerOrganizations: RouteHandler<typeof listOrganizations, AppEnv> = async (c) => {
  const page = readPage(c);
  const result = await readOrganizationsPage(c.var.db, c.var.actor, page);
  return c.json(pageEnvelope(c, page, result.count, result.organizations), 200);
};

/** The organization, the caller's owner membership and a default project: one atomic batch. */
async function insertOrganization(db: Database, userId: number, name: string, slug: string) {
  const now = nowIso();
  const organization = { id: uuid7(), name, slug, createdAt: now, updatedAt: now };
  const project = insertProjectStatements(db, organization.id, { ...ProjectInput.parse({}), name: DEFAULT_PROJECT_NAME });
  const [, , , , [projectRow], [organizationRow]] = await db.batch([
    db.insert(organizations).values(organization),
    db.insert(organizationMemberships).values({
      id: uuid7(),
      organizationId: organization.id,
      userId,
      level: MembershipLevel.owner,
      joinedAt: now,
      updatedAt: now,
    }),
    project.insertProject,
    project.insertEnvironment,
    project.selectProject,
    // Read back after the membership trigger counted the owner.
    db.select().from(organizations).where(eq(organizations.id, organization.id)),
  ]);
  if (!projectRow || !organizationRow) throw new Error("created organization was not read back");
  return toOrganization(organizationRow, MembershipLevel.owner, [projectRow]);
}

export const createCallerOrganization: RouteHandler<typeof createOrganization, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const { name } = c.req.valid("json");
  const base = slugify(name);
  for (let attempt = 1; ; attempt += 1) {
    const slug = firstFreeSlug(base, await takenSlugs(db, base));
    try {
      return c.json(await insertOrganization(db, actor.userId, name, slug), 201);
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= SLUG_ATTEMPTS) throw error;
    }
  }
};

/** The membership is read in the same round trip as the organization, and admitted as every route admits it. */
export const retrieveCallerOrganization: RouteHandler<typeof retrieveOrganization, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const requested = requestedOrganization(c.req.valid("param").organization_id, actor);
  const [rows, projectRows] = await db.batch(organizationObjectStatements(db, actor, requested));
  const [row] = rows;
  const member = admitMember(row && { ...row, membersCanUsePersonalApiKeys: row.organization.membersCanUsePersonalApiKeys });
  return c.json(toOrganization(member.organization, member.level, projectRows.map(({ project }) => project)), 200);
};

export const updateCallerOrganization: RouteHandler<typeof updateOrganization, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const organizationId = c.var.organization.id;
  const [, rows, projectRows] = await db.batch([
    updateOrganizationSettings(db, organizationId, c.req.valid("json")),
    ...organizationObjectStatements(db, actor, organizationId),
  ]);
  const organization = toOrganizationObject(rows, projectRows);
  if (!organization) throw notFound();
  return c.json(organization, 200);
};

export const deleteCallerOrganization: RouteHandler<typeof deleteOrganization, AppEnv> = async (c) => {
  await deleteOrganizationAndContents(c.var.db, c.var.organization.id);
  return c.body(null, 204);
};
