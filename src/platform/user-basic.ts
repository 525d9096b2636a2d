import { z } from "@hono/zod-openapi";
import type { users } from "../db/schema";

/** The user as PostHog embeds it in other resources (`created_by`, `user`). */
export const UserBasic = z
  .object({
    id: z.number().int(),
    uuid: z.string().uuid(),
    distinct_id: z.string(),
    first_name: z.string(),
    last_name: z.string(),
    email: z.string(),
    is_email_verified: z.boolean(),
    hedgehog_config: z.record(z.string(), z.unknown()).nullable(),
    role_at_organization: z.string(),
  })
  .openapi("UserBasic");
export type UserBasic = z.infer<typeof UserBasic>;

export function toUserBasic(user: typeof users.$inferSelect): UserBasic {
  return {
    id: user.id,
    uuid: user.uuid,
    distinct_id: user.distinctId,
    first_name: user.firstName,
    last_name: user.lastName,
    email: user.email,
    is_email_verified: user.isEmailVerified,
    hedgehog_config: user.hedgehogConfig,
    role_at_organization: user.roleAtOrganization,
  };
}
