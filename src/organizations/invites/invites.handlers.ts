import type { RouteHandler } from "@hono/zod-openapi";
import { and, or, sql } from "drizzle-orm";
import type { Context } from "hono";
import type { AppEnv } from "../../platform/env";
import { changedMeanwhile, conflict, goneOr, notFound } from "../../platform/errors";
import { nowIso, uuid7 } from "../../platform/ids";
import {
  callerInOrganization,
  callerStillAdmin,
  callerStillAtLeast,
  keyGoneOrLevelLost,
  levelRefusal,
  refusedWhenLevelLost,
} from "../../platform/route-context/organization";
import { callingKeyLive } from "../../platform/auth/key-policy";
import { isNotNullViolationOf } from "../../platform/db";
import { MembershipLevel } from "../../platform/levels";
import { projectVisibleTo } from "../../platform/access-rules/project-visibility";
import { invites as inviteRows, organizations } from "../../db/schema";
import { organizationRead } from "../../platform/route-context";
import { pageEnvelope, readPage } from "../../platform/pagination";
import { emailStatusAtCreation, enqueueInviteEmails, withSealedEmails } from "./invite-emails";
import {
  deleteInviteOf,
  invitedMeanwhile,
  projectGoneMeanwhile,
  listInvitesPage,
  inviteContextFor,
  replaceInvites,
  inviteStillThere,
  resendFailedEmail,
  toInvite,
  type InviteContext,
  type InviteRow,
  type PreloadedInviteContext,
} from "./invites.queries";
import { mintInviteToken } from "./invite-tokens";
import { inviteActivity, inviteEmailInBatch, inviteItem } from "./invites.activity";
import { bulkInviteReads, oneInviteReads } from "./invites.request";
import type { createInvite, createInvitesInBulk, deleteInvite, listInvites, resendInviteEmail } from "./invites.routes";
import type { CreatedInvite, EmailStatus, InviteInput } from "./invites.schema";
import { assertDistinctEmails, assertInvitable, combineWithPending, type AttrOf } from "./invites.rules";

export const listOrganizationInvites: RouteHandler<typeof listInvites, AppEnv> = async (c) => {
  const page = readPage(c);
  const read = organizationRead(c);
  const result = await listInvitesPage(read, callerInOrganization(c.var.actor, read.organizationId), page);
  return c.json(pageEnvelope(c, page, result.count, result.invites, result.links), 200);
};

export const createOrganizationInvite: RouteHandler<typeof createInvite, AppEnv> = async (c) => {
  const [invite] = await createInvites(c, [c.req.valid("json")], oneInviteReads.results(c), (_index, field) => field);
  return c.json(invite!, 201);
};

export const createOrganizationInvitesInBulk: RouteHandler<typeof createInvitesInBulk, AppEnv> = async (c) => {
  const invites = await createInvites(
    c,
    c.req.valid("json"),
    bulkInviteReads.results(c),
    (index, field) => `${index}.${field}`,
  );
  return c.json(invites, 201);
};

export const deleteOrganizationInvite: RouteHandler<typeof deleteInvite, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const organizationId = c.var.organization.id;
  const entry = inviteActivity.record(c, "cancelled", inviteItem({ id, organizationId }, inviteEmailInBatch(id)));
  const stillAdmin = callerStillAdmin(c.var.actor, organizationId);
  const deleted = await deleteInviteOf(c.var.db, organizationId, id, entry, stillAdmin).catch(
    refusedWhenLevelLost(c, inviteRows.updatedAt),
  );
  if (!deleted) throw notFound();
  return c.body(null, 204);
};

const notFailed = () => conflict("Only an invite e-mail that failed can be sent again.");

/** The failed e-mail, sealed in the invite's row, queued again: the same accept link, a new schedule. */
export const resendOrganizationInviteEmail: RouteHandler<typeof resendInviteEmail, AppEnv> = async (c) => {
  const stillAdmin = callerStillAdmin(c.var.actor, c.var.organization.id);
  const caller = callerInOrganization(c.var.actor, c.var.organization.id);
  const { id } = c.req.valid("param");
  const outcome = await resendFailedEmail(c.var.db, c.var.organization.id, id, caller, stillAdmin);
  // Refused at write: the caller's level lost meanwhile, else the invite deleted or its e-mail no longer failed.
  if (outcome === "refused") {
    throw (
      (await levelRefusal(c, MembershipLevel.admin)) ??
      (await goneOr(c.var.db, inviteStillThere(c.var.organization.id, id), notFailed))
    );
  }
  if (outcome === "not_found") throw notFound();
  if (outcome === "not_failed") throw notFailed();
  if (outcome === "expired") throw conflict("This invite has expired: invite again to send a new one.");
  enqueueInviteEmails(c, [outcome.invite]);
  return c.json(toInvite(outcome.shown, outcome.createdBy), 202);
};

/**
 * A project a pending invite names, as combining keeps it: one the inviter sees. One deleted and one
 * hidden from them are both left out, so that combining tells them apart no more than the list does.
 */
function seenByInviter(context: InviteContext, inviterLevel: number, projectId: number) {
  const project = context.projects.get(projectId);
  return project !== undefined && projectVisibleTo(inviterLevel, project.inviterRule);
}

/**
 * Validates every invite, as it will be stored, before writing any (with what was read with the
 * organization), then replaces
 * earlier invites for the same e-mails and inserts the new ones in one atomic batch: all are
 * created, or none. Each gets a new acceptance token, so earlier tokens for those e-mails die.
 */
async function createInvites(
  c: Context<AppEnv>,
  inputs: InviteInput[],
  preloaded: PreloadedInviteContext,
  attrOf: AttrOf,
): Promise<CreatedInvite[]> {
  const { db, organization } = c.var;
  assertDistinctEmails(inputs, attrOf);
  const context = await inviteContextFor(db, organization.id, c.var.actor.userId, preloaded, inputs);
  // Merged with the open invites for the e-mail only when asked; otherwise they are replaced.
  const invites = inputs.map((input) =>
    combineWithPending(
      input,
      input.combine_pending_invites ? (context.pendingByEmail.get(input.target_email) ?? []) : [],
      (projectId) => seenByInviter(context, organization.level, projectId),
    ),
  );
  invites.forEach((invite, index) =>
    assertInvitable(invite, organization.level, context, (field) => attrOf(index, field)),
  );
  const tokens = await Promise.all(invites.map(() => mintInviteToken()));
  const issued = await withSealedEmails(
    c,
    invites.map((invite, index) => ({
      row: toInviteRow(
        invite,
        organization.id,
        context,
        emailStatusAtCreation(c.env, invite.send_email),
        tokens[index]!.hash,
      ),
      token: tokens[index]!.value,
    })),
    context.inviter,
  );
  const rows = issued.map(({ row }) => row);
  // What the invite grants on joining, so that the log traces a level or project access back to it.
  const entries = rows.map((row) =>
    inviteActivity.record(c, "created", {
      ...inviteItem(row, row.targetEmail),
      context: { level: row.level, private_project_access: row.privateProjectAccess },
    }),
  );
  // Held at write to what the invites were judged on: who may invite (members only while the
  // organization still lets them), and no level above the caller's; and to the caller's key still
  // being theirs: a key revoked meanwhile (a claim of its account included), or one a location's
  // cache still admits for a minute, sends no invite, which would let its holder back in.
  const highestLevel = Math.max(...invites.map((invite) => invite.level));
  const membersMayInvite = sql`(select ${organizations.membersCanInvite} from ${organizations}
    where ${organizations.id} = ${organization.id})`;
  const stillMayInvite = and(
    or(
      callerStillAtLeast(c.var.actor, organization.id, Math.max(MembershipLevel.admin, highestLevel)),
      and(
        callerStillAtLeast(c.var.actor, organization.id, Math.max(MembershipLevel.member, highestLevel)),
        membersMayInvite,
      ),
    ),
    // A value a roll replaced still works through its overlap, as on every route.
    callingKeyLive(c.var.actor, { orReplaced: true }),
  )!;
  // The open invites each new one replaces, as read: each is cancelled, with its entry.
  const replaced = inputs
    .flatMap((input) => context.pendingByEmail.get(input.target_email) ?? [])
    .map(({ id }) => ({
      id,
      entry: inviteActivity.record(
        c,
        "cancelled",
        inviteItem({ id, organizationId: organization.id }, inviteEmailInBatch(id)),
      ),
    }));
  await replaceInvites(
    db,
    organization.id,
    rows,
    entries,
    {
      userId: context.inviter.id,
      stillAdmin: callerStillAdmin(c.var.actor, organization.id),
      stillMayInvite,
    },
    replaced,
  )
    .catch((error: unknown) => {
      if (projectGoneMeanwhile(error)) throw changedMeanwhile("project");
      throw invitedMeanwhile(error) ? changedMeanwhile("invite") : error;
    })
    .catch(async (error: unknown) => {
      throw isNotNullViolationOf(error, inviteRows.organizationId) ? await keyGoneOrLevelLost(c)() : error;
    });
  enqueueInviteEmails(c, rows);
  return issued.map(({ row, token }) => ({ ...toInvite(row, context.inviter), token }));
}

/**
 * `emailing_attempt_made` is set when the send is queued, as PostHog sets it at creation: the
 * attempt follows the response, and the invite answered here already says it will be made. Its
 * e-mail, when pending, is sealed into the row by `withSealedEmails`.
 */
function toInviteRow(
  invite: InviteInput,
  organizationId: string,
  context: InviteContext,
  emailStatus: EmailStatus,
  tokenHash: string,
): InviteRow {
  const now = nowIso();
  return {
    id: uuid7(),
    organizationId,
    targetEmail: invite.target_email,
    firstName: invite.first_name,
    level: invite.level,
    message: invite.message,
    privateProjectAccess: invite.private_project_access,
    sendEmail: invite.send_email,
    combinePendingInvites: invite.combine_pending_invites,
    emailingAttemptMade: emailStatus === "pending",
    emailStatus,
    emailAttempts: 0,
    emailNextAttemptAt: emailStatus === "pending" ? now : null,
    emailOutbox: null,
    createdById: context.inviter.id,
    tokenHash,
    mailedTokenHash: null,
    createdAt: now,
    updatedAt: now,
  };
}
