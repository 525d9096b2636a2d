import { sql } from "drizzle-orm";
import { invites } from "../../db/schema";
import type { ReadInBatch } from "../../platform/activity-log/record";
import { resourceActivity } from "../../platform/activity-log/resource-activity";

/** Invites are created, cancelled and accepted; an entry names the invite by its target e-mail, never its token. */
export const inviteActivity = resourceActivity("OrganizationInvite", { fields: [] });

export const inviteItem = (invite: { id: string; organizationId: string }, targetEmail: string | ReadInBatch) => ({
  organizationId: invite.organizationId,
  itemId: invite.id,
  name: targetEmail,
});

/** The invite's e-mail, read when the entry is appended: a cancel matches the invite by id without reading it. */
export const inviteEmailInBatch = (inviteId: string): ReadInBatch =>
  sql`select ${invites.targetEmail} from ${invites} where ${invites.id} = ${inviteId}`;
