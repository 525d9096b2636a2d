import type { Context } from "hono";
import { resourceActivity } from "../../platform/activity-log/resource-activity";
import type { AppEnv } from "../../platform/env";
import type { MembershipRow } from "./members.queries";

/** Members join (signing up), change level, and leave; an entry names the member by e-mail. */
export const membershipActivity = resourceActivity("OrganizationMembership", { fields: ["level"] });

export const membershipItem = (membership: MembershipRow, user: { email: string; uuid: string }) => ({
  organizationId: membership.organizationId,
  itemId: membership.id,
  name: user.email,
  context: { user_uuid: user.uuid },
});

export const memberLeft = (c: Context<AppEnv>, membership: MembershipRow, user: { email: string; uuid: string }) =>
  membershipActivity.record(c, "left", membershipItem(membership, user));
