import type { RouteHandler } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import type { Context } from "hono";
import type { AppEnv } from "../../platform/env";
import { organizationMemberships } from "../../db/schema";
import { changedOrGone, notFound } from "../../platform/errors";
import { organizationRead } from "../../platform/route-context";
import { callerStillAtLeast, levelRefusal } from "../../platform/route-context/organization";
import { MembershipLevel } from "../../platform/levels";
import { pageEnvelope, readPage } from "../../platform/pagination";
import { deleteMembership, listMembersPage, rolesAsRead, setMemberLevel, toMember } from "./members.queries";
import type { listMembers, removeMember, updateMember } from "./members.routes";
import { memberOfPath } from "./members.request";
import { memberLeft, membershipActivity, membershipItem } from "./members.activity";
import { disableWebhooksOfFormerAdmin } from "../webhooks/webhook-creators";
import { assertCanChangeLevel, assertCanEditOther, assertCanRemove } from "./members.rules";
import { roleMembershipActivity, roleMembershipItem } from "../roles/roles.activity";

/** The member found by `memberOfPath`, with the organization's owner count and the webhooks they created. */
function memberOfRequest(c: Context<AppEnv>) {
  const [[found], [owners], createdWebhooks, roleMemberships] = memberOfPath.results(c);
  return found ? { ...found, ownerCount: owners?.value ?? 0, createdWebhooks, roleMemberships } : undefined;
}

/** Membership is read on every request, so no cached key needs invalidating on a change here. */
function targetMember(c: Context<AppEnv>) {
  const target = memberOfRequest(c);
  if (!target) throw notFound();
  return target;
}

export const listOrganizationMembers: RouteHandler<typeof listMembers, AppEnv> = async (c) => {
  const page = readPage(c);
  const result = await listMembersPage(organizationRead(c), page, c.req.valid("query"));
  return c.json(pageEnvelope(c, page, result.count, result.members, result.links), 200);
};

export const updateOrganizationMember: RouteHandler<typeof updateMember, AppEnv> = async (c) => {
  const { level } = c.req.valid("json");
  const target = targetMember(c);
  if (level === undefined) {
    assertCanEditOther(c.var.organization, target.membership);
    return c.json(toMember(target.membership, target.user), 200);
  }
  assertCanChangeLevel(c.var.organization, target.membership, level);
  const entry = membershipActivity.changed(
    c,
    "updated",
    membershipItem(target.membership, target.user),
    { level: target.membership.level },
    { level },
  );
  const consequences = disableWebhooksOfFormerAdmin(c, c.var.organization.id, target.user.id, target.createdWebhooks);
  const updated = await setMemberLevel(c.var.db, target.membership, level, entry, whileCallerHolds(c, consequences));
  if (!updated) throw (await removedMeanwhile(c)) ?? (await memberChangedOrGone(c, target.membership.id));
  return c.json(toMember(updated, target.user), 200);
};

export const removeOrganizationMember: RouteHandler<typeof removeMember, AppEnv> = async (c) => {
  const target = targetMember(c);
  assertCanRemove(c.var.organization, target.membership, target.ownerCount);
  const organizationId = c.var.organization.id;
  const entry = memberLeft(c, target.membership, target.user);
  // Each role they held records its membership's end, gated on the membership's own entry.
  const leftRoles = target.roleMemberships.map(({ id, role }) =>
    roleMembershipActivity.record(c, "deleted", roleMembershipItem(organizationId, id, role, target.user)),
  );
  const consequences = disableWebhooksOfFormerAdmin(c, organizationId, target.user.id, target.createdWebhooks);
  const held = whileCallerHolds(c, consequences);
  const roleIds = target.roleMemberships.map(({ id }) => id);
  const removed = await deleteMembership(c.var.db, target.membership, [entry, ...leftRoles], {
    ...held,
    holds: sql`${held.holds} and ${rolesAsRead(target.membership.id, roleIds)}`,
  });
  if (!removed) throw (await removedMeanwhile(c)) ?? (await memberChangedOrGone(c, target.membership.id));
  return c.body(null, 204);
};

/** 404 for a caller no longer a member (or 403 for a key blocked meanwhile), as a moment later. */
const removedMeanwhile = (c: Context<AppEnv>) => levelRefusal(c, MembershipLevel.member);

/** 404 for a member removed meanwhile (by another request), else 409. */
const memberChangedOrGone = (c: Context<AppEnv>, membershipId: string) =>
  changedOrGone(
    c.var.db,
    sql`exists (select 1 from ${organizationMemberships} where ${organizationMemberships.id} = ${membershipId})`,
    "member",
  );

/**
 * The rules were judged on the caller's level as read: the write holds only while they still have
 * it, so that a caller demoted meanwhile changes or removes no one (409; a retry is judged again).
 */
function whileCallerHolds(c: Context<AppEnv>, held: ReturnType<typeof disableWebhooksOfFormerAdmin>) {
  const { actor, organization } = c.var;
  const stillAtLevel = callerStillAtLeast(actor, organization.id, organization.level);
  return { consequences: held.consequences, holds: sql`(${held.holds}) and ${stillAtLevel}` };
}
