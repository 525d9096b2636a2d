import { z } from "@hono/zod-openapi";
import type { roleMemberships, roles } from "../../db/schema";
import { visibleName } from "../../platform/names";
import { OrganizationParams } from "../../platform/route-context";
import { Timestamp } from "../../platform/timestamps";
import { UserBasic } from "../../platform/user-basic";
import { Member } from "../members/members.schema";

export type RoleRow = typeof roles.$inferSelect;
export type RoleMembershipRow = typeof roleMemberships.$inferSelect;

export const RoleParams = OrganizationParams.extend({ id: z.string().openapi({ description: "The role's id." }) });
export const RoleMembershipsParams = OrganizationParams.extend({
  role_id: z.string().openapi({ description: "The role's id." }),
});
export const RoleMembershipParams = RoleMembershipsParams.extend({
  id: z.string().openapi({ description: "The role membership's id." }),
});

export const RoleMembership = z
  .object({
    id: z.string().uuid(),
    role_id: z.string().uuid(),
    organization_member: Member,
    user: UserBasic,
    joined_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("RoleMembership");
export type RoleMembership = z.infer<typeof RoleMembership>;

export const Role = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    created_at: Timestamp,
    created_by: UserBasic.nullable().openapi({
      description:
        "Always null, as PostHog's API leaves it on the roles it creates (its clients decode a string); " +
        "who created a role is in the activity log.",
    }),
    members: z.array(RoleMembership).openapi({ description: "The role's members, earliest first." }),
    is_default: z.boolean().openapi({ description: "Always false: new members join no role here." }),
  })
  .openapi("Role");
export type Role = z.infer<typeof Role>;

/** Unique in its organization as readers see it (`nameKey`), as PostHog's case-insensitive check. */
export const RoleInput = z.object({ name: visibleName(z.string().trim().min(1).max(200)) }).openapi("RoleInput");
export const RoleUpdateInput = RoleInput.partial().openapi("PatchedRole");

export const RoleMembershipInput = z
  .object({ user_uuid: z.string().uuid().openapi({ description: "The member's user uuid." }) })
  .openapi("RoleMembershipInput");
