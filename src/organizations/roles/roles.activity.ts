import { sql } from "drizzle-orm";
import { roles } from "../../db/schema";
import type { ReadInBatch } from "../../platform/activity-log/record";
import { resourceActivity } from "../../platform/activity-log/resource-activity";

/** Roles are created, renamed and deleted (with their memberships and rules); an entry names the role. */
export const roleActivity = resourceActivity("Role", { fields: ["name"] });

/** Members are added to roles and removed; an entry names the member by e-mail, and the role. */
export const roleMembershipActivity = resourceActivity("RoleMembership", { fields: [] });

export const roleItem = (organizationId: string, id: string, name: string | ReadInBatch) => ({
  organizationId,
  itemId: id,
  name,
});

/** The role's name, read when the entry is appended: a delete matches the role by id without reading it. */
export const roleNameInBatch = (id: string): ReadInBatch =>
  sql`select ${roles.name} from ${roles} where ${roles.id} = ${id}`;

export const roleMembershipItem = (
  organizationId: string,
  id: string,
  role: { id: string; name: string },
  user: { email: string; uuid: string },
) => ({
  organizationId,
  itemId: id,
  name: user.email,
  context: { role_id: role.id, role_name: role.name, user_uuid: user.uuid },
});
