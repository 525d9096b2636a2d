import type { Context } from "hono";
import type { AppEnv } from "../../platform/env";
import { peekJsonBody } from "../../platform/request-body";
import { organizationRead, routeReads } from "../../platform/route-context";
import { newRoleMembershipReads, roleReads, selectRoleMembership } from "./roles.queries";
import { RoleMembershipInput } from "./roles.schema";

/** A path parameter of the roles' routes ("" when absent, which names no row). */
const pathParam = (c: Context<AppEnv>, name: string) => c.req.param(name) ?? "";

/** The role the path names, with its members, read in the round trip that resolves the organization. */
export function readRoleOfPath(c: Context<AppEnv>) {
  const read = organizationRead(c);
  return read.batch([...roleReads(read.db, read.organizationId, pathParam(c, "id"))]);
}

/** A rename's role, read before its body. */
export const roleOfPath = routeReads(readRoleOfPath);

/** The role and the member a new role membership names (the body's `user_uuid`), read with the organization. */
export const newRoleMembershipOfBody = routeReads(async (c) => {
  const body = await peekJsonBody(c, RoleMembershipInput);
  const read = organizationRead(c);
  const userUuid = body?.user_uuid ?? "";
  return {
    userUuid,
    results: await read.batch([
      ...newRoleMembershipReads(read.db, read.organizationId, pathParam(c, "role_id"), userUuid),
    ]),
  };
});

/** The role membership the path names, read with the organization. */
export function readRoleMembershipOfPath(c: Context<AppEnv>) {
  const read = organizationRead(c);
  return read.batch([selectRoleMembership(read.db, read.organizationId, pathParam(c, "role_id"), pathParam(c, "id"))]);
}

/** A removal's membership (with the role's name, for its entry), read before the write. */
export const roleMembershipOfPath = routeReads(async (c) => {
  const read = organizationRead(c);
  const [role] = roleReads(read.db, read.organizationId, pathParam(c, "role_id"));
  return read.batch([
    selectRoleMembership(read.db, read.organizationId, pathParam(c, "role_id"), pathParam(c, "id")),
    role,
  ]);
});
