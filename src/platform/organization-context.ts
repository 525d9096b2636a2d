import { z } from "@hono/zod-openapi";
import { and, asc, eq, type SQL } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { organizationMemberships, organizations } from "../db/schema";
import { assertOrganizationInKeyScope } from "./auth/scopes";
import type { Actor, AppEnv, OrganizationContext } from "./env";
import { insufficientLevel, notFound } from "./errors";
import { inJsonList, type Database } from "./db";

export const CURRENT = "@current";

/** The path parameter `resolveOrganization` reads, for every organization route's schema. */
export const OrganizationParams = z.object({
  organization_id: z.string().openapi({ description: "Organization id, or `@current`." }),
});

/**
 * Resolves `:organization_id` (or `@current`: the caller's first organization in creation order,
 * within the key's scope) and the caller's membership of it in one query. A non-member gets
 * 404, so that organization ids do not leak.
 */
export const resolveOrganization = createMiddleware<AppEnv>(async (c, next) => {
  const requested = c.req.param("organization_id");
  if (requested === undefined) throw new Error("resolveOrganization needs :organization_id");
  const actor = c.var.actor;
  if (requested !== CURRENT) assertOrganizationInKeyScope(actor, requested);
  const organization = await findMembership(c.var.db, actor, requested);
  if (!organization) throw notFound();
  c.set("organization", organization);
  await next();
});

/** A level check declared on a route; runs after `resolveOrganization`. */
export const requireLevel = (minimum: number) =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (c.var.organization.level < minimum) throw insufficientLevel();
    await next();
  });

/** An organization with the caller's membership: select it from memberships joined to organizations. */
export const organizationWithMembership = {
  id: organizations.id,
  name: organizations.name,
  createdAt: organizations.createdAt,
  updatedAt: organizations.updatedAt,
  membershipId: organizationMemberships.id,
  level: organizationMemberships.level,
};

async function findMembership(
  db: Database,
  actor: Actor,
  requested: string,
): Promise<OrganizationContext | undefined> {
  const conditions: (SQL | undefined)[] = [eq(organizationMemberships.userId, actor.userId)];
  if (requested === CURRENT) {
    if (actor.scopedOrganizations.length > 0) {
      conditions.push(inJsonList(organizations.id, actor.scopedOrganizations));
    }
  } else {
    conditions.push(eq(organizations.id, requested));
  }
  const [row] = await db
    .select(organizationWithMembership)
    .from(organizationMemberships)
    .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
    .where(and(...conditions))
    .orderBy(asc(organizations.createdAt), asc(organizations.id))
    .limit(1);
  return row;
}
