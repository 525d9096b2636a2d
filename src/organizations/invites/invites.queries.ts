import { and, eq, inArray, isNull, lte, notInArray, or, sql, type SQL } from "drizzle-orm";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import { invites, organizationMemberships, organizations, projects, users } from "../../db/schema";
import { ruleOfMember, type AccessLevelOf } from "../../platform/access-rules/member-rule";
import { projectVisibleAtLevel, type CallerMembership } from "../../platform/access-rules/project-visibility";
import { chunkForInsert, isNotNullViolationOf, whileHolds, type Database } from "../../platform/db";
import { nowIso } from "../../platform/ids";
import type { OrganizationRead } from "../../platform/route-context";
import type { OrganizationRef } from "../../platform/route-context/organization";
import { joinPage, pageOf, type ListOrder, type Page } from "../../platform/pagination";
import type { EmailStatus, Invite, InviteInput } from "./invites.schema";
import { toUserBasic, userBasicColumns, type UserBasicRow } from "../../platform/user-basic";

export type InviteRow = typeof invites.$inferSelect;
type Statement = BatchItem<"sqlite">;
export type UserRow = UserBasicRow;

/** PostHog's INVITE_DAYS_VALIDITY. */
export const INVITE_VALIDITY_MS = 3 * 24 * 60 * 60 * 1000;

/**
 * An invite is open while it was created after `now - 3 days`: expired from that instant on, as the
 * SQL forms read it (`createdAt > unexpiredSince` open, `<=` expired), so that no path holds open
 * what another treats as expired.
 */
export const isInviteExpired = (createdAt: string) => Date.parse(createdAt) <= Date.now() - INVITE_VALIDITY_MS;

/**
 * The invite a statement reads opens (signing up, `@me`'s pending invites, its e-mail): its inviter
 * still a member, by the membership they invited with (one that began after the invite, when they
 * were removed and came back, does not reopen it), its organization not being deleted. Written
 * out in full, so that a select from `invites` alone, which drops the qualifiers drizzle would
 * give these columns, reads it too.
 */
export const inviteOpens = sql`exists (select 1 from "organization_memberships" as "inviter"
  join "organizations" as "organization" on "organization"."id" = "inviter"."organization_id"
  where "inviter"."organization_id" = "invites"."organization_id"
    and "inviter"."user_id" = "invites"."created_by_id"
    and "inviter"."joined_at" <= "invites"."created_at"
    and "organization"."deletion_scheduled_at" is null)`;

export const inviteExpiresAt = (createdAt: string) =>
  new Date(Date.parse(createdAt) + INVITE_VALIDITY_MS).toISOString();

export function toInvite(row: InviteRow, createdBy: UserRow | null): Invite {
  return {
    id: row.id,
    target_email: row.targetEmail,
    first_name: row.firstName,
    emailing_attempt_made: row.emailingAttemptMade,
    email_status: row.emailStatus as EmailStatus,
    level: row.level as Invite["level"],
    is_expired: isInviteExpired(row.createdAt),
    created_by: createdBy ? toUserBasic(createdBy) : null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    message: row.message,
    private_project_access: row.privateProjectAccess,
    send_email: row.sendEmail,
    combine_pending_invites: row.combinePendingInvites,
  };
}

const newestFirst: ListOrder = [
  [invites.createdAt, "desc"],
  [invites.id, "desc"],
];

/**
 * An invite's `private_project_access` as the caller may see it, as JSON text: the projects their
 * rules hide left out (an admin sees them all), and for everyone those deleted or being deleted
 * (whose rules are gone with them), so that listing invites names no project the caller is
 * refused. A project lookup and two rule lookups per project named.
 */
function accessSeenBy(caller: CallerMembership) {
  const projectId = sql`json_extract("access"."value", '$.id')`;
  const live = sql`exists (select 1 from ${projects} where ${projects.id} = ${projectId}
    and ${projects.organizationId} = ${invites.organizationId} and ${projects.deletionScheduledAt} is null)`;
  // None left is null, as an invite naming none reads: `[]` would tell of projects hidden from the caller.
  return sql<string | null>`(case when ${invites.privateProjectAccess} is null then null else
    (select nullif(json_group_array(json("access"."value")), '[]') from json_each(${invites.privateProjectAccess})
      as "access" where ${and(live, projectVisibleAtLevel(caller, projectId))}) end)`;
}

/**
 * Newest first; the creator joined in for the page's invites only, so a page is one query
 * whatever its size. The count is the organization's counter (one row).
 */
export async function listInvitesPage(read: OrganizationRead, caller: CallerMembership, page: Page) {
  const { db, organizationId } = read;
  const [[total], rows] = await read.batch([
    db.select({ value: organizations.inviteCount }).from(organizations).where(eq(organizations.id, organizationId)),
    db
      .select({ invite: invites, createdBy: userBasicColumns(users), access: accessSeenBy(caller) })
      .from(invites)
      .innerJoin(...joinPage(db, newestFirst, eq(invites.organizationId, organizationId), page))
      .leftJoin(users, eq(users.id, invites.createdById)),
  ]);
  const listed = pageOf(newestFirst, page, rows, (row) => row.invite);
  return {
    count: total?.value ?? 0,
    invites: listed.rows.map((row) => toInvite(asSeen(row.invite, row.access), row.createdBy)),
    links: listed.links,
  };
}

/** The invite with its `private_project_access` as `accessSeenBy` read it for the caller. */
const asSeen = (invite: InviteRow, access: string | null): InviteRow => ({
  ...invite,
  privateProjectAccess: access === null ? null : (JSON.parse(access) as InviteRow["privateProjectAccess"]),
});

/** A project named in an invite, with the inviter's access rule on it (their own, else its default). */
type InvitableProject = { id: number; inviterRule: AccessLevelOf<"project"> | null };

/** What of a set of invites decides the reads validating them needs. */
function readsOf(inputs: InviteInput[]) {
  return {
    emails: inputs.map((input) => input.target_email),
    projectIds: [...new Set(inputs.flatMap((input) => (input.private_project_access ?? []).map(({ id }) => id)))],
    emailsToCombine: inputs.filter((input) => input.combine_pending_invites).map((input) => input.target_email),
  };
}

/**
 * Everything validating a set of invites needs, as one batch: the inviter, which of the e-mails
 * already belong to members, the named projects, and the pending invites to combine.
 */
export function inviteContextStatements(
  db: Database,
  organizationId: OrganizationRef,
  inviterId: number,
  inputs: InviteInput[],
) {
  const { emails, projectIds, emailsToCombine } = readsOf(inputs);
  const inviter = db.select().from(users).where(eq(users.id, inviterId));
  // E-mails are stored lower-cased (as `target_email` is validated): the unique index finds each
  // user, then their membership; CROSS JOIN keeps that order, which the planner would otherwise
  // reverse for a bulk, walking every member of the organization.
  const members = db
    .select({ email: users.email })
    .from(users)
    .crossJoin(organizationMemberships)
    .where(
      and(
        inArray(users.email, emails),
        eq(organizationMemberships.userId, users.id),
        eq(organizationMemberships.organizationId, organizationId),
      ),
    );
  // The ids the body names, and those of the pending invites it combines with (the combined invite
  // grants them too, so they are checked alike).
  const named = sql`(select value from json_each(${JSON.stringify(projectIds)})
    union select json_extract(access.value, '$.id')
    from ${invites}, json_each(${invites.privateProjectAccess}) as access
    where ${invites.organizationId} = ${organizationId}
      and ${invites.targetEmail} in (select value from json_each(${JSON.stringify(emailsToCombine)})))`;
  // From the named ids, each found by its key (CROSS JOIN keeps that order): the planner would
  // otherwise walk the organization's projects, however few were named.
  const namedProjects = db
    .select({ id: projects.id, inviterRule: ruleOfMember("project", projects.id, organizationMemberships.id) })
    .from(sql`${named} as named`)
    .crossJoin(projects)
    .innerJoin(
      organizationMemberships,
      and(
        eq(organizationMemberships.organizationId, projects.organizationId),
        eq(organizationMemberships.userId, inviterId),
      ),
    )
    .where(
      and(
        eq(projects.id, sql`named.value`),
        eq(projects.organizationId, organizationId),
        // A project being deleted is gone, as everywhere else.
        isNull(projects.deletionScheduledAt),
      ),
    );
  // Along the (organization, e-mail) index: an e-mail has one pending invite (each replaces the
  // last), so the expired ones are dropped here rather than by a range on created_at, which
  // the planner would walk instead, through every recent invite. Read for every e-mail: what a
  // new invite replaces is checked (`assertReplaceable`), and combined when asked.
  const pending = db
    .select()
    .from(invites)
    .where(and(eq(invites.organizationId, organizationId), inArray(invites.targetEmail, emails)));
  return [inviter, members, namedProjects, pending] as [
    typeof inviter,
    typeof members,
    typeof namedProjects,
    typeof pending,
  ];
}

function toInviteContext(
  inviterId: number,
  [inviters, members, namedProjects, pending]: BatchResponse<ReturnType<typeof inviteContextStatements>>,
) {
  const [inviter] = inviters;
  if (!inviter) throw new Error(`the calling user ${inviterId} has no row`);
  const unexpiredSince = unexpiredInvitesSince();
  return {
    inviter,
    memberEmails: new Set(members.map((member) => member.email)),
    projects: new Map<number, InvitableProject>(namedProjects.map((project) => [project.id, project])),
    pendingByEmail: groupByEmail(pending.filter((invite) => invite.createdAt > unexpiredSince)),
  };
}

export type InviteContext = ReturnType<typeof toInviteContext>;

export const inputsOf = (body: InviteInput | InviteInput[] | undefined) =>
  body === undefined ? [] : Array.isArray(body) ? body : [body];

/** What validating the invites of a peeked body needs, read with the organization. */
export type PreloadedInviteContext = {
  body: InviteInput | InviteInput[] | undefined;
  results: BatchResponse<ReturnType<typeof inviteContextStatements>>;
};

/**
 * The context validating `inputs` (the validated body): the one read with the organization when
 * it was read for the same invites, else read now (a body sent without a Content-Length, say).
 */
export async function inviteContextFor(
  db: Database,
  organizationId: string,
  inviterId: number,
  preloaded: PreloadedInviteContext,
  inputs: InviteInput[],
) {
  const sameReads = JSON.stringify(readsOf(inputsOf(preloaded.body))) === JSON.stringify(readsOf(inputs));
  const results = sameReads
    ? preloaded.results
    : await db.batch(inviteContextStatements(db, organizationId, inviterId, inputs));
  return toInviteContext(inviterId, results);
}

function groupByEmail(rows: InviteRow[]) {
  const groups = new Map<string, InviteRow[]>();
  for (const row of rows) groups.set(row.targetEmail, [...(groups.get(row.targetEmail) ?? []), row]);
  return groups;
}

/** Invites created since this time are still open. */
const unexpiredInvitesSince = () => new Date(Date.now() - INVITE_VALIDITY_MS).toISOString();

/**
 * A new invite replaces every earlier one for its e-mail in the organization: one atomic batch,
 * with an entry per invite chained after the last insert. A caller below admin when the delete
 * runs (`stillAdmin`) replaces only their own and expired ones, in the delete itself: an open
 * invite someone else sent, even one sent since the checks read them, is never cancelled by a
 * member, nor by an admin demoted meanwhile (it stays beside the new one).
 */
export async function replaceInvites(
  db: Database,
  organizationId: string,
  rows: InviteRow[],
  entries: Statement[],
  replacer: { userId: number; stillAdmin: SQL; stillMayInvite: SQL },
  replaced: { id: string; entry: Statement }[],
) {
  const emails = rows.map((row) => row.targetEmail);
  const ofEmails = and(eq(invites.organizationId, organizationId), inArray(invites.targetEmail, emails));
  const replaceable = and(
    ofEmails,
    or(replacer.stillAdmin, eq(invites.createdById, replacer.userId), lte(invites.createdAt, unexpiredInvitesSince())),
  );
  // The open invites for these e-mails were read (and combined, when asked): one sent since, that
  // this write would replace, would go unmerged and without its entry. Its row is then set NULL
  // where the column refuses it, failing the batch (`invitedMeanwhile`), before anything is deleted.
  const sentSinceRead = db
    .update(invites)
    .set({ updatedAt: sql<string>`null` })
    .where(
      and(
        replaceable,
        // `+`: read along the e-mails' index, not every invite of the organization since a time.
        sql`+${invites.createdAt} > ${unexpiredInvitesSince()}`,
        notInArray(
          invites.id,
          replaced.map((invite) => invite.id),
        ),
      ),
    );
  // Each open invite replaced is cancelled, as a DELETE cancels it: its entry appended while it is
  // still there and still the caller's to replace (touched first, as `deleteInviteOf` does).
  const cancellations = replaced.flatMap(({ id, entry }) => [
    db
      .update(invites)
      .set({ updatedAt: sql<string>`${invites.updatedAt}` })
      .where(and(eq(invites.id, id), replaceable)),
    entry,
  ]);
  await db.batch([
    sentSinceRead,
    ...cancellations,
    db.delete(invites).where(replaceable),
    // Each row only while the caller may still send it, while its e-mail is still no member's
    // (a replaced invite may have been accepted since the checks), and while each project it names
    // is still the organization's, not being deleted: else NULL, which the column refuses.
    ...chunkForInsert(invites, rows).map((chunk) =>
      db.insert(invites).values(
        chunk.map((row) => ({
          ...row,
          organizationId: whileHolds(row.organizationId, replacer.stillMayInvite),
          targetEmail: whileHolds(row.targetEmail, sql`not ${memberWithEmail(organizationId, row.targetEmail)}`),
          level: whileHolds(row.level, namedProjectsLive(organizationId, row.privateProjectAccess)),
        })),
      ),
    ),
    ...entries,
  ]);
}

/** Every project `access` names is still the organization's and not being deleted. */
const namedProjectsLive = (organizationId: string, access: InviteRow["privateProjectAccess"]) =>
  sql`not exists (select 1 from json_each(${JSON.stringify((access ?? []).map(({ id }) => id))}) as named
    where not exists (select 1 from ${projects} where ${projects.id} = named.value
      and ${projects.organizationId} = ${organizationId} and ${projects.deletionScheduledAt} is null))`;

/** Whether the organization has a member with the e-mail: one unique-index read of each table. */
const memberWithEmail = (organizationId: string, email: string) => sql`exists (select 1 from ${users}
  join ${organizationMemberships} on ${organizationMemberships.userId} = ${users.id}
  where ${users.email} = ${email} and ${organizationMemberships.organizationId} = ${organizationId})`;

/**
 * Whether a batch failed because an invite was sent, since the read, to an e-mail it combines, or
 * an invite's e-mail became a member's since the read (its earlier invite accepted meanwhile).
 */
export const invitedMeanwhile = (error: unknown) =>
  isNotNullViolationOf(error, invites.updatedAt) || isNotNullViolationOf(error, invites.targetEmail);

/** Whether a batch failed because a project an invite names was deleted, or moved, since the read. */
export const projectGoneMeanwhile = (error: unknown) => isNotNullViolationOf(error, invites.level);

/**
 * The invite is touched first, so that its entry (which reads its e-mail) is appended only if it
 * exists, and before the delete removes what the entry reads; all in one atomic batch.
 */
export async function deleteInviteOf(
  db: Database,
  organizationId: string,
  inviteId: string,
  entry: Statement,
  heldWhile: SQL,
) {
  const ofOrganization = and(eq(invites.id, inviteId), eq(invites.organizationId, organizationId));
  const [, , deleted] = await db.batch([
    // Only while `heldWhile` holds (else NULL, which the column refuses, and nothing is written).
    db
      .update(invites)
      .set({ updatedAt: whileHolds(sql<string>`${invites.updatedAt}`, heldWhile) })
      .where(ofOrganization),
    entry,
    db.delete(invites).where(ofOrganization).returning({ id: invites.id }),
  ]);
  return deleted.length > 0;
}

/** Why an invite's e-mail cannot be sent again, or its row pending again. */
type ResendOutcome =
  | { invite: InviteRow; shown: InviteRow; createdBy: UserRow | null }
  | "not_found"
  | "not_failed"
  | "expired";

/** Whether the invite is still there, for a refused write's answer. */
export const inviteStillThere = (organizationId: string, inviteId: string) =>
  sql`exists (select 1 from ${invites}
    where ${invites.id} = ${inviteId} and ${invites.organizationId} = ${organizationId})`;

/**
 * A failed e-mail made pending again, its attempts counted from zero: only a `failed` one (which
 * keeps its sealed e-mail), of an unexpired invite; the update re-checks the status, so two
 * requests queue it once. `shown`: the invite as the list shows it to the caller.
 */
export async function resendFailedEmail(
  db: Database,
  organizationId: string,
  inviteId: string,
  caller: CallerMembership,
  heldWhile: SQL,
): Promise<ResendOutcome | "refused"> {
  const [found] = await db
    .select({ invite: invites, createdBy: userBasicColumns(users), access: accessSeenBy(caller) })
    .from(invites)
    .leftJoin(users, eq(users.id, invites.createdById))
    .where(and(eq(invites.id, inviteId), eq(invites.organizationId, organizationId)));
  if (!found) return "not_found";
  if (found.invite.emailStatus !== "failed" || found.invite.emailOutbox === null) return "not_failed";
  if (isInviteExpired(found.invite.createdAt)) return "expired";
  const now = nowIso();
  const [invite] = await db
    .update(invites)
    .set({ emailStatus: "pending", emailAttempts: 0, emailNextAttemptAt: now, updatedAt: now })
    .where(and(eq(invites.id, inviteId), eq(invites.emailStatus, "failed"), heldWhile))
    .returning();
  return invite ? { invite, shown: asSeen(invite, found.access), createdBy: found.createdBy } : "refused";
}
