import type { RouteConfig, RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/env";
import { changedMeanwhile, changedOrGone, notFound, validationError } from "../../platform/errors";
import { refusedWhenNull } from "../../platform/db";
import { nowIso, uuid7 } from "../../platform/ids";
import { nameKey } from "../../platform/names";
import { pageEnvelope, readPage } from "../../platform/pagination";
import { organizationRead } from "../../platform/route-context";
import { callerStillAdmin, levelLost } from "../../platform/route-context/organization";
import { toUserBasic } from "../../platform/user-basic";
import { toMember } from "../members/members.queries";
import { roleActivity, roleItem, roleMembershipActivity, roleMembershipItem, roleNameInBatch } from "./roles.activity";
import * as queries from "./roles.queries";
import {
  newRoleMembershipOfBody,
  readRoleMembershipOfPath,
  readRoleOfPath,
  roleMembershipOfPath,
  roleOfPath,
} from "./roles.request";
import type * as routes from "./roles.routes";

/** A route's handler (`routes` also holds the reads declared beside the routes). */
type Handler<R extends keyof typeof routes> = RouteHandler<Extract<(typeof routes)[R], RouteConfig>, AppEnv>;

export const listOrganizationRoles: Handler<"listRoles"> = async (c) => {
  const page = readPage(c);
  const result = await queries.listRoles(organizationRead(c), page);
  return c.json(pageEnvelope(c, page, result.count, result.roles, result.links), 200);
};

export const createOrganizationRole: Handler<"createRole"> = async (c) => {
  const { name } = c.req.valid("json");
  const { db, organization, actor } = c.var;
  const id = uuid7();
  const entry = roleActivity.record(c, "created", roleItem(organization.id, id, name));
  const role = await refusedWhenNull(
    queries.insertRole(
      db,
      {
        id,
        organizationId: organization.id,
        name,
        nameKey: nameKey(name),
        createdById: actor.kind === "user" ? actor.userId : null,
        createdAt: nowIso(),
      },
      entry,
      callerStillAdmin(actor, organization.id),
    ),
    levelLost(c),
  );
  return c.json(queries.toRole(role, []), 201);
};

export const retrieveOrganizationRole: Handler<"retrieveRole"> = async (c) => {
  const [[role], members] = await readRoleOfPath(c);
  if (!role) throw notFound();
  return c.json(queries.toRole(role, members), 200);
};

export const updateOrganizationRole: Handler<"updateRole"> = async (c) => {
  const { name } = c.req.valid("json");
  const [[role], members] = roleOfPath.results(c);
  if (!role) throw notFound();
  if (name === undefined) return c.json(queries.toRole(role, members), 200);
  const { db, organization } = c.var;
  const item = roleItem(organization.id, role.id, name);
  const entry = roleActivity.changed(c, "updated", item, { name: role.name }, { name });
  const renamed = await refusedWhenNull(
    queries.renameRole(db, organization.id, role, name, entry, callerStillAdmin(c.var.actor, organization.id)),
    levelLost(c),
  );
  // Renamed meanwhile (409: sent again, it renames the role from its new name) or deleted (404).
  if (!renamed) throw await changedOrGone(db, queries.roleStillThere(organization.id, role.id), "role");
  return c.json(queries.toRole(renamed, members), 200);
};

export const deleteOrganizationRole: Handler<"deleteRole"> = async (c) => {
  const { id } = c.req.valid("param");
  const organizationId = c.var.organization.id;
  const entry = roleActivity.record(c, "deleted", roleItem(organizationId, id, roleNameInBatch(id)));
  const allowed = callerStillAdmin(c.var.actor, organizationId);
  const deleted = await refusedWhenNull(queries.deleteRole(c.var.db, organizationId, id, entry, allowed), levelLost(c));
  if (!deleted) throw notFound();
  return c.body(null, 204);
};

export const listOrganizationRoleMemberships: Handler<"listRoleMemberships"> = async (c) => {
  const page = readPage(c);
  const { role_id } = c.req.valid("param");
  const result = await queries.listRoleMemberships(organizationRead(c), role_id, page);
  if (!result) throw notFound();
  return c.json(pageEnvelope(c, page, result.count, result.memberships, result.links), 200);
};

const userDoesNotExist = () => validationError("does_not_exist", "User does not exist.", "user_uuid");

export const createOrganizationRoleMembership: Handler<"createRoleMembership"> = async (c) => {
  const { user_uuid } = c.req.valid("json");
  const { role_id } = c.req.valid("param");
  const { db, organization } = c.var;
  const preloaded = newRoleMembershipOfBody.results(c);
  const [[role], [member]] =
    preloaded.userUuid === user_uuid
      ? preloaded.results
      : await db.batch([...queries.newRoleMembershipReads(db, organization.id, role_id, user_uuid)]);
  if (!role) throw notFound();
  if (!member) throw userDoesNotExist();
  const id = uuid7();
  const joinedAt = nowIso();
  const entry = roleMembershipActivity.record(c, "created", roleMembershipItem(organization.id, id, role, member.user));
  const row = { id, roleId: role.id, organizationMembershipId: member.membership.id, joinedAt };
  // Still an admin when it runs, as every role write: a demotion meanwhile must not let them add
  // anyone (themselves included), nor remove anyone from a role that restricts them.
  const inserted = await refusedWhenNull(
    queries.insertRoleMembership(db, organization.id, row, entry, callerStillAdmin(c.var.actor, organization.id)),
    levelLost(c),
  );
  if (!inserted) {
    // Changed meanwhile: the role gone (404), the member gone (400), or the member left and came
    // back under a new membership (409): each as the same request answers a moment later, or to retry.
    const [[roleNow], [memberNow]] = await db.batch([
      ...queries.newRoleMembershipReads(db, organization.id, role_id, user_uuid),
    ]);
    if (!roleNow) throw notFound();
    throw memberNow ? changedMeanwhile("member") : userDoesNotExist();
  }
  return c.json(
    {
      id,
      role_id: role.id,
      organization_member: toMember(member.membership, member.user),
      user: toUserBasic(member.user),
      joined_at: joinedAt,
      updated_at: joinedAt,
    },
    201,
  );
};

export const retrieveOrganizationRoleMembership: Handler<"retrieveRoleMembership"> = async (c) => {
  const [[row]] = await readRoleMembershipOfPath(c);
  if (!row) throw notFound();
  return c.json(queries.toRoleMembership(row), 200);
};

export const deleteOrganizationRoleMembership: Handler<"deleteRoleMembership"> = async (c) => {
  const { role_id, id } = c.req.valid("param");
  const [[row], [role]] = roleMembershipOfPath.results(c);
  if (!row || !role) throw notFound();
  const { db, organization } = c.var;
  const entry = roleMembershipActivity.record(c, "deleted", roleMembershipItem(organization.id, id, role, row.user));
  const allowed = callerStillAdmin(c.var.actor, organization.id);
  const deleted = await refusedWhenNull(
    queries.deleteRoleMembership(db, organization.id, role_id, id, entry, allowed),
    levelLost(c),
  );
  if (!deleted) throw notFound();
  return c.body(null, 204);
};
