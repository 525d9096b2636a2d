import { inJsonList } from "../platform/db";
import type { RouteHandler } from "@hono/zod-openapi";
import { and, asc, eq } from "drizzle-orm";
import { organizationMemberships, organizations, users } from "../db/schema";
import type { AppEnv } from "../platform/env";
import { notFound } from "../platform/errors";
import { toUserBasic } from "./user-basic";
import type { getCurrentUser } from "./users.routes";

export const currentUser: RouteHandler<typeof getCurrentUser, AppEnv> = async (c) => {
  const { userId, scopedOrganizations } = c.var.actor;
  const inKeyScope =
    scopedOrganizations.length > 0 ? inJsonList(organizations.id, scopedOrganizations) : undefined;
  const [userRows, memberships] = await c.var.db.batch([
    c.var.db.select().from(users).where(eq(users.id, userId)),
    c.var.db
      .select({
        id: organizations.id,
        name: organizations.name,
        membership_level: organizationMemberships.level,
      })
      .from(organizationMemberships)
      .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
      .where(and(eq(organizationMemberships.userId, userId), inKeyScope))
      .orderBy(asc(organizations.createdAt), asc(organizations.id)),
  ]);
  const [user] = userRows;
  if (!user) throw notFound();
  return c.json({ ...toUserBasic(user), date_joined: user.createdAt, organizations: memberships }, 200);
};
