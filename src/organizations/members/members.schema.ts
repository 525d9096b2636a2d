import { z } from "@hono/zod-openapi";
import { OrganizationParams } from "../../platform/route-context";
import { UserBasic } from "../../platform/user-basic";
import { MembershipLevelField } from "../membership-level-field";
import { Timestamp } from "../../platform/timestamps";

export const MemberParams = OrganizationParams.extend({
  user__uuid: z.string().openapi({ description: "The member's user uuid, or `@me`." }),
});

export const Member = z
  .object({
    id: z.string().uuid().openapi({ description: "The membership's id." }),
    user: UserBasic,
    level: MembershipLevelField,
    joined_at: Timestamp,
    updated_at: Timestamp,
    is_2fa_enabled: z.boolean(),
    has_social_auth: z.boolean(),
    last_login: Timestamp.nullable(),
  })
  .openapi("Member");
export type Member = z.infer<typeof Member>;

export const MemberUpdate = z.object({ level: MembershipLevelField.optional() }).openapi("MemberUpdate");
