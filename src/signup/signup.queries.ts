import { and, eq, inArray, isNotNull, isNull, lte, ne, or, sql, type Column, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import {
  invites,
  organizationMemberships,
  organizations,
  accessControls,
  personalApiKeys,
  projects,
  users,
  webhooks,
} from "../db/schema";
import type { BatchItem } from "drizzle-orm/batch";
import { inJsonList, isNotNullViolationOf, whileHolds, type Database } from "../platform/db";
import { enabledWebhooksMadeBy, noWebhookEnabledBeyond } from "../organizations/webhooks/webhook-creators";
import { newDistinctId, nowIso, uuid7 } from "../platform/ids";
import { ruleOfMember } from "../platform/access-rules/member-rule";
import { grantableLevelInSql } from "../platform/access-rules/grantable-level";
import { inviteOpens, type InviteRow } from "../organizations/invites/invites.queries";
import { keyOutlivesLifetimeIn, keyWouldOutliveLifetime } from "../platform/auth/key-policy";

type Statement = BatchItem<"sqlite">;

const FIRST_KEY_LABEL = "First key (signed up by invite)";

/** An invite's token: the one its inviter was answered, or the one only its e-mail carried. */
const tokenOf = (tokenHash: string) => or(eq(invites.tokenHash, tokenHash), eq(invites.mailedTokenHash, tokenHash))!;

/**
 * The invite a token hash names, with its organization's name, whether the token is the one only
 * its e-mail carried (`addressProven`), and the account its e-mail names with that account's
 * membership of the organization, if any: one round trip. E-mails are stored lower-cased, so the
 * unique index on users.email serves the lookup.
 */
export async function findInviteForSignup(db: Database, tokenHash: string) {
  const [[found], [account], others] = await db.batch([
    db
      .select({
        invite: invites,
        organizationName: organizations.name,
        keyLifetimeDays: organizations.apiKeyMaxLifetimeDays,
        // What joining would grant now (`levelGranted`): `inviteOpens` holds the inviter there.
        levelGranted: sql<number>`min(${invites.level}, (${db
          .select({ level: inviter.level })
          .from(inviter)
          .where(and(eq(inviter.organizationId, invites.organizationId), eq(inviter.userId, invites.createdById)))}))`,
      })
      .from(invites)
      .innerJoin(organizations, eq(organizations.id, invites.organizationId))
      // Its inviter left, its organization being deleted: it opens nothing (`levelGranted` too).
      .where(and(tokenOf(tokenHash), inviteOpens)),
    db
      .select({ user: users, membershipId: organizationMemberships.id })
      .from(users)
      .leftJoin(
        organizationMemberships,
        and(
          eq(organizationMemberships.userId, users.id),
          eq(organizationMemberships.organizationId, invitedBy(tokenHash, invites.organizationId)),
        ),
      )
      .where(eq(users.email, invitedBy(tokenHash, invites.targetEmail))),
    // The organization's other invites for the e-mail (one a member sent beside an admin's, say):
    // joining cancels them.
    db
      .select({ id: otherInvite.id })
      .from(invites)
      .innerJoin(
        otherInvite,
        and(
          eq(otherInvite.organizationId, invites.organizationId),
          eq(otherInvite.targetEmail, invites.targetEmail),
          ne(otherInvite.id, invites.id),
        ),
      )
      .where(tokenOf(tokenHash))
      .limit(MAX_OTHER_INVITES),
  ]);
  if (!found) return undefined;
  const otherInviteIds = others.map((other) => other.id);
  return { ...found, account, otherInviteIds, addressProven: found.invite.mailedTokenHash === tokenHash };
}

/**
 * Other invites for the e-mail a joining cancels at most: one per inviter, as an invite replaces
 * its inviter's earlier ones. Any beyond stay, as do any sent after the read: each names a member.
 */
const MAX_OTHER_INVITES = 100;

/**
 * A value of the invite row, read inside the statement. In the joining batch this is what
 * makes it atomic with the invite: if the invite was used or deleted since it was read, the
 * value is NULL, a NOT NULL column refuses it and the whole batch rolls back.
 */
const inviteColumn = (inviteId: string, column: Column) =>
  sql`(select ${column} from ${invites} where ${invites.id} = ${inviteId})`;

/** A value of the invite a token hash names, read inside the statement. */
const invitedBy = (tokenHash: string, column: Column) =>
  sql`(select ${column} from ${invites} where ${tokenOf(tokenHash)})`;

const inviter = alias(organizationMemberships, "inviter");
const otherInvite = alias(invites, "other_invite");
/**
 * The level an invite's project access grants when it is redeemed: what it names, held again to
 * what the inviter may grant now (`grantableLevel`).
 */
const grantable = grantableLevelInSql(
  inviter.level,
  ruleOfMember("project", projects.id, inviter.id),
  sql`json_extract(access.value, '$.level')`,
);

/**
 * The level the membership gets: the invite's, held to what its inviter holds when it is redeemed
 * (an inviter demoted since grants no more than they hold now; one gone, or back under a membership
 * that began after the invite, grants nothing: NULL, which the column refuses), so that no one
 * regains a level, or a place, they lost through an invite they sent before.
 */
function levelGranted(invite: InviteRow) {
  const inviterLevel = sql`(select ${organizationMemberships.level} from ${organizationMemberships}
    where ${organizationMemberships.organizationId} = ${invite.organizationId}
      and ${organizationMemberships.userId} = ${inviteColumn(invite.id, invites.createdById)}
      and ${organizationMemberships.joinedAt} <= ${inviteColumn(invite.id, invites.createdAt)})`;
  const granted = inviteColumn(invite.id, invites.level);
  return sql<number>`min(${granted}, ${inviterLevel})`;
}

const organizationLive = (organizationId: string) =>
  sql`(select ${organizations.deletionScheduledAt} from ${organizations}
    where ${organizations.id} = ${organizationId}) is null`;

/**
 * What a joining granted, read when its last entry is appended: the new membership's level (the
 * invite's, or less when its inviter was demoted meanwhile) and the project access its rules give
 * (the invite's, less the projects deleted, made private to the inviter or moved meanwhile).
 */
export const grantedByJoining = (membershipId: string) => ({
  level: sql<number>`select ${organizationMemberships.level} from ${organizationMemberships}
    where ${organizationMemberships.id} = ${membershipId}`,
  private_project_access: sql`json((select json_group_array(json_object('id', "id", 'level', "level")) from
    (select cast(${accessControls.resourceId} as integer) as "id", ${accessControls.accessLevel} as "level"
      from ${accessControls} where ${accessControls.organizationMembershipId} = ${membershipId}
        and ${accessControls.resource} = 'project' order by 1)))`,
});

/**
 * The joining's entries in the activity log, for the membership it creates, and each other invite
 * it cancels (`otherInviteIds`, as read) with its entry.
 */
export type JoinEntries = (membershipId: string) => {
  joined: Statement;
  accepted: Statement;
  cancelled: { id: string; entry: Statement }[];
};

/** A new user's entries: their first key's creation, then their joining's. */
export type NewUserEntries = { keyCreated: (key: { id: string; label: string }) => Statement[]; join: JoinEntries };

/**
 * Membership at the invite's level, its private project access, and the invite and the others for
 * the e-mail gone; the membership's joining is recorded right after its insert, each other
 * invite's cancellation before the delete, the invite's acceptance right after it.
 */
function joinStatements(
  db: Database,
  invite: InviteRow,
  userId: SQL | number,
  entries: JoinEntries,
  keyHolds?: { keyNotBlocked: SQL; keysWithinLifetime: SQL },
) {
  const now = nowIso();
  const membershipId = uuid7();
  const { joined, accepted, cancelled } = entries(membershipId);
  // One JSON parameter for the whole list (D1 binds at most 100 per statement), each with its rule's id.
  const accessList = (invite.privateProjectAccess ?? []).map((item) => ({ ...item, ruleId: uuid7() }));
  const access = sql`json_each(${JSON.stringify(accessList)}) as access`;
  // Project access is the new member's access rule on each project (the rules of an earlier
  // membership went with it).
  const projectRules = db.insert(accessControls).select(
    db
      .select({
        id: sql<string>`json_extract(access.value, '$.ruleId')`.as("id"),
        environmentId: projects.id,
        resource: sql<"project">`'project'`.as("resource"),
        resourceId: sql<string>`cast(${projects.id} as text)`.as("resource_id"),
        organizationMembershipId: sql<string>`${membershipId}`.as("organization_membership_id"),
        roleId: sql<null>`null`.as("role_id"),
        accessLevel: sql<"member" | "admin">`${grantable}`.as("access_level"),
        createdById: invites.createdById,
        createdAt: sql<string>`${now}`.as("created_at"),
        updatedAt: sql<string>`${now}`.as("updated_at"),
      })
      .from(projects)
      // Projects deleted since the invite was sent have no row to join: they are skipped.
      .innerJoin(access, sql`json_extract(access.value, '$.id') = ${projects.id}`)
      .innerJoin(invites, eq(invites.id, invite.id))
      // The inviter as they are now, by the membership they invited with: one who left grants nothing.
      .innerJoin(
        inviter,
        and(
          eq(inviter.organizationId, invite.organizationId),
          eq(inviter.userId, invites.createdById),
          lte(inviter.joinedAt, invites.createdAt),
        ),
      )
      // The projects named, by id: never the organization's whole list.
      .where(
        and(
          inJsonList(
            projects.id,
            accessList.map((item) => item.id),
          ),
          eq(projects.organizationId, invite.organizationId),
          // Nor one being deleted: gone, as everywhere else.
          isNull(projects.deletionScheduledAt),
          isNotNull(grantable),
        ),
      ),
  );
  return [
    db.insert(organizationMemberships).values({
      id: membershipId,
      organizationId: invite.organizationId,
      userId,
      // Only while the organization is not being deleted (its DELETE may land after the invite was read).
      level: whileHolds(levelGranted(invite), organizationLive(invite.organizationId)),
      // An existing user joins only while the calling key is not blocked in the organization
      // (`keyJoinRefused`) and no key of theirs would reach it beyond its lifetime limit
      // (`keyLifetimeJoinRefused`).
      joinedAt: keyHolds ? whileHolds(now, keyHolds.keyNotBlocked) : now,
      updatedAt: keyHolds ? whileHolds(now, keyHolds.keysWithinLifetime) : now,
    }),
    joined,
    ...(accessList.length === 0 ? [] : [projectRules]),
    // Each other invite is cancelled with its entry, appended while it is still there (touched first).
    ...cancelled.flatMap(({ id, entry }) => [
      db
        .update(invites)
        .set({ updatedAt: sql<string>`${invites.updatedAt}` })
        .where(eq(invites.id, id)),
      entry,
    ]),
    // By id alone (each was read as one of the organization's): along the primary key, not every
    // invite of the organization.
    db.delete(invites).where(inJsonList(invites.id, [invite.id, ...cancelled.map(({ id }) => id)])),
    accepted,
  ] as const;
}

/** An existing user joins; a token only the invite's e-mail carried proves their address too. */
export async function joinAsExistingUser(
  db: Database,
  invite: InviteRow,
  userId: number,
  entries: JoinEntries,
  addressProven: boolean,
  keyNotBlocked: SQL,
) {
  const proven = db.update(users).set({ isEmailVerified: true }).where(eq(users.id, userId));
  const keyHolds = {
    keyNotBlocked,
    keysWithinLifetime: sql`not ${keyOutlivesLifetimeIn(userId, invite.organizationId)}`,
  };
  await db.batch([...joinStatements(db, invite, userId, entries, keyHolds), ...(addressProven ? [proven] : [])]);
}

/** Whether a join's write failed on the calling key's block (`joinAsExistingUser`'s hold). */
export const keyJoinRefused = (error: unknown) => isNotNullViolationOf(error, organizationMemberships.joinedAt);

/** Whether a join's write failed on a key of the user outliving the organization's lifetime limit. */
export const keyLifetimeJoinRefused = (error: unknown) =>
  isNotNullViolationOf(error, organizationMemberships.updatedAt);

/** `addressProven`: they signed up with the token only the invite's e-mail carried. */
type NewUser = { firstName: string; lastName: string; addressProven: boolean };
/** `expiresAt` follows `lifetimeDays`, the organization's key lifetime limit as read. */
type NewKey = { secureValue: string; maskValue: string; expiresAt: string | null; lifetimeDays: number | null };

/** Whether a sign-up's write failed on the organization's key lifetime limit changed since its read. */
export const keyPolicyChangedAtSignup = (error: unknown) => isNotNullViolationOf(error, personalApiKeys.maskValue);

/**
 * A first key's row, its expiry following the organization's limit as read: one set meanwhile
 * refuses the batch, as does `holds`, when given, failing.
 */
function firstKey(
  invite: InviteRow,
  id: string,
  userId: SQL | number,
  key: NewKey,
  now: string,
  label: SQL | string,
  holds?: SQL,
) {
  const limitAsRead = sql`(select ${organizations.apiKeyMaxLifetimeDays} from ${organizations}
    where ${organizations.id} = ${invite.organizationId}) is ${key.lifetimeDays}`;
  return {
    id,
    userId,
    label,
    secureValue: key.secureValue,
    maskValue: whileHolds(key.maskValue, holds ? and(limitAsRead, holds)! : limitAsRead),
    scopes: ["*"],
    scopedOrganizations: [],
    scopedTeams: [],
    expiresAt: key.expiresAt,
    createdAt: now,
  };
}

/**
 * The user, their first key (`*`) and the membership: all in one atomic batch. `entriesFor`
 * gets the new user (their id read in the batch) and gives the joining's entries.
 */
export async function signUpAndJoin(
  db: Database,
  invite: InviteRow,
  names: NewUser,
  key: NewKey,
  entriesFor: (user: { id: SQL; uuid: string }) => NewUserEntries,
) {
  const now = nowIso();
  const uuid = uuid7();
  const keyId = uuid7();
  const userId = sql<number>`(select ${users.id} from ${users} where ${users.uuid} = ${uuid})`;
  const entries = entriesFor({ id: userId, uuid });
  const [[user], [personalApiKey]] = await db.batch([
    db
      .insert(users)
      .values({
        uuid,
        distinctId: newDistinctId(),
        firstName: names.firstName,
        lastName: names.lastName,
        email: inviteColumn(invite.id, invites.targetEmail),
        isEmailVerified: names.addressProven,
        createdAt: now,
      })
      .returning(),
    db
      .insert(personalApiKeys)
      .values(firstKey(invite, keyId, userId, key, now, FIRST_KEY_LABEL))
      .returning(),
    ...entries.keyCreated({ id: keyId, label: FIRST_KEY_LABEL }),
    ...joinStatements(db, invite, userId, entries.join),
  ]);
  if (!user || !personalApiKey) throw new Error("the new user or key was not returned");
  return { user, personalApiKey };
}

/**
 * The address's owner, proving it with the e-mail's own token, takes the account someone made for
 * it with a token that proved nothing: every key of the account is revoked, the address is marked
 * proven (with the names sent, if any), and they get a first key and the membership, in one atomic
 * batch. Only while the account is still unproven: one proven meanwhile (another claim) gives the
 * first key no label, which the column refuses (`claimRefused`). Returns the revoked keys' values,
 * whose cached copies the caller forgets.
 */
export async function claimAndJoin(
  db: Database,
  invite: InviteRow,
  account: AccountToClaim,
  names: { firstName?: string; lastName?: string },
  key: NewKey,
  entries: NewUserEntries & { webhooksDisabled: Statement[] },
) {
  const now = nowIso();
  const keyId = uuid7();
  const userId = account.id;
  const unproven = sql`(select not ${users.isEmailVerified} from ${users} where ${users.id} = ${userId})`;
  const label = whileHolds(FIRST_KEY_LABEL, unproven);
  // The account's other organizations' limits too (as they are now): the key reaches them all.
  const theirLimits = sql`not ${keyWouldOutliveLifetime(userId, { ...key, scopedOrganizations: [], scopedTeams: [] })}`;
  const [[personalApiKey], revoked, [user]] = await db.batch([
    db
      .insert(personalApiKeys)
      .values({
        ...firstKey(invite, keyId, userId, key, now, label, theirLimits),
        // The account's organizations as read, whose logs record the key, and its webhooks: one
        // joined or left, or a webhook turned on, meanwhile refuses the claim
        // (`claimChangedMeanwhile`), and a retry reads them again.
        secureValue: whileHolds(key.secureValue, accountAsRead(account)),
      })
      .returning(),
    db
      .delete(personalApiKeys)
      .where(and(eq(personalApiKeys.userId, userId), ne(personalApiKeys.id, keyId)))
      .returning({
        id: personalApiKeys.id,
        secureValue: personalApiKeys.secureValue,
        previousSecureValue: personalApiKeys.previousSecureValue,
      }),
    db
      .update(users)
      // `@current` is the organization joined now, not one the account's earlier holder chose.
      .set({
        isEmailVerified: true,
        firstName: names.firstName,
        lastName: names.lastName,
        currentOrganizationId: invite.organizationId,
        currentProjectId: null,
      })
      .where(eq(users.id, userId))
      .returning(),
    ...entries.keyCreated({ id: keyId, label: FIRST_KEY_LABEL }),
    ...joinStatements(db, invite, userId, entries.join),
    // Last, as each entry above follows the write it records (`changes()`): the invites the
    // earlier holder sent are no one's now, so they open nothing (`inviteOpens` needs their inviter
    // a member), every one written before this whatever its clock said, and one their key sends
    // later is refused (`callingKeyLive`); and their webhooks are turned off, each with its entry.
    db.update(invites).set({ createdById: null, updatedAt: now }).where(eq(invites.createdById, userId)),
    ...entries.webhooksDisabled,
  ]);
  if (!user || !personalApiKey) throw new Error("the claimed user or key was not returned");
  return { user, personalApiKey, revoked };
}

/**
 * What a claim takes over, in one round trip: the organizations the account belongs to, with their
 * key lifetime limits (days; null: none), since its first key reaches them all, so it is held to
 * them and recorded in each; and the webhooks its earlier holder turned on there, which the claim
 * turns off.
 */
export async function accountToClaim(db: Database, userId: number) {
  const [organizationsOfUser, enabledWebhooks] = await db.batch([
    db
      .select({ id: organizations.id, lifetimeDays: organizations.apiKeyMaxLifetimeDays })
      .from(organizationMemberships)
      .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
      .where(eq(organizationMemberships.userId, userId)),
    db
      .select({ id: webhooks.id, organizationId: webhooks.organizationId, url: webhooks.url })
      .from(webhooks)
      .where(enabledWebhooksOf(userId)),
  ]);
  return { organizations: organizationsOfUser, enabledWebhooks };
}

/**
 * The enabled webhooks the user made, sought in their organizations along each one's webhooks
 * (a webhook has no index by its maker; one of an organization they left was turned off then).
 */
const enabledWebhooksOf = (userId: number) =>
  enabledWebhooksMadeBy(
    userId,
    inArray(
      webhooks.organizationId,
      sql`(select ${organizationMemberships.organizationId} from ${organizationMemberships}
        where ${organizationMemberships.userId} = ${userId})`,
    ),
  );

export type AccountToClaim = { id: number; organizationIds: string[]; enabledWebhookIds: string[] };

/**
 * The account is as read: it belongs to exactly the organizations `organizationIds`, and its
 * enabled webhooks are among `enabledWebhookIds` (one turned on meanwhile would stay on).
 */
const accountAsRead = ({ id, organizationIds, enabledWebhookIds }: AccountToClaim) => {
  const ofUser = eq(organizationMemberships.userId, id);
  return sql`(select count(*) from ${organizationMemberships} where ${ofUser}) = ${organizationIds.length}
    and (select count(*) from ${organizationMemberships} where ${ofUser}
      and ${inJsonList(organizationMemberships.organizationId, organizationIds)}) = ${organizationIds.length}
    and ${noWebhookEnabledBeyond(enabledWebhooksOf(id), enabledWebhookIds)}`;
};

/** Whether a claim's write failed because the account's organizations changed since the read. */
export const claimChangedMeanwhile = (error: unknown) => isNotNullViolationOf(error, personalApiKeys.secureValue);

/** Whether a claim's write failed because the account was proven meanwhile (`claimAndJoin`'s hold). */
export const claimRefused = (error: unknown) => isNotNullViolationOf(error, personalApiKeys.label);
