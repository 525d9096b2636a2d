import { z } from "@hono/zod-openapi";
import type { alias } from "drizzle-orm/sqlite-core";
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

type UserBasicKey =
  | "id"
  | "uuid"
  | "distinctId"
  | "firstName"
  | "lastName"
  | "email"
  | "isEmailVerified"
  | "hedgehogConfig"
  | "roleAtOrganization";

/** What `toUserBasic` reads of a user's row. */
export type UserBasicRow = Pick<typeof users.$inferSelect, UserBasicKey>;

/** `users`, or an alias of it (`alias(users, "text_creators")`). */
type UsersTable = typeof users | ReturnType<typeof alias<typeof users, string>>;

/**
 * The columns `toUserBasic` reads, of `users` or an alias of it: what a statement embedding a
 * person selects. Anyone may fill their own row's other fields (settings of 64 KiB each), which a
 * page embedding a person on every row would otherwise read whole.
 */
export function userBasicColumns(table: UsersTable): Pick<typeof users, UserBasicKey> {
  // An alias has the same columns under its own name, which the statement reads them by.
  const columns = table as typeof users;
  return {
    id: columns.id,
    uuid: columns.uuid,
    distinctId: columns.distinctId,
    firstName: columns.firstName,
    lastName: columns.lastName,
    email: columns.email,
    isEmailVerified: columns.isEmailVerified,
    hedgehogConfig: columns.hedgehogConfig,
    roleAtOrganization: columns.roleAtOrganization,
  };
}

export function toUserBasic(user: UserBasicRow): UserBasic {
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
