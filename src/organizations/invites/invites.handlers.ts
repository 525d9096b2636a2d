import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../platform/env";
import { notFound } from "../../platform/errors";
import { nowIso, uuid7 } from "../../platform/ids";
import { pageEnvelope, readPage } from "../../platform/pagination";
import { emailTransportConfigured, sendInviteEmails } from "./invite-emails";
import {
  deleteInviteOf,
  listInvitesPage,
  readInviteContext,
  replaceInvites,
  toInvite,
  type InviteContext,
  type InviteRow,
} from "./invites.queries";
import type { createInvite, createInvitesInBulk, deleteInvite, Invite, InviteInput, listInvites } from "./invites.routes";
import { assertDistinctEmails, assertInvitable, combineWithPending, type AttrOf } from "./invites.rules";

export const listOrganizationInvites: RouteHandler<typeof listInvites, AppEnv> = async (c) => {
  const page = readPage(c);
  const result = await listInvitesPage(c.var.db, c.var.organization.id, page);
  return c.json(pageEnvelope(c, page, result.count, result.invites), 200);
};

export const createOrganizationInvite: RouteHandler<typeof createInvite, AppEnv> = async (c) => {
  const [invite] = await createInvites(c, [c.req.valid("json")], (_index, field) => field);
  return c.json(invite!, 201);
};

export const createOrganizationInvitesInBulk: RouteHandler<typeof createInvitesInBulk, AppEnv> = async (c) => {
  const invites = await createInvites(c, c.req.valid("json"), (index, field) => `${index}.${field}`);
  return c.json(invites, 200);
};

export const deleteOrganizationInvite: RouteHandler<typeof deleteInvite, AppEnv> = async (c) => {
  const deleted = await deleteInviteOf(c.var.db, c.var.organization.id, c.req.valid("param").id);
  if (!deleted) throw notFound();
  return c.body(null, 204);
};

/**
 * Validates every invite before writing any (one read), then replaces earlier invites for the
 * same e-mails and inserts the new ones in one atomic batch: all are created, or none.
 */
async function createInvites(c: Context<AppEnv>, inputs: InviteInput[], attrOf: AttrOf): Promise<Invite[]> {
  const { db, actor, organization } = c.var;
  assertDistinctEmails(inputs, attrOf);
  const context = await readInviteContext(db, organization.id, actor.userId, inputs);
  inputs.forEach((input, index) =>
    assertInvitable(input, organization.level, context, (field) => attrOf(index, field)),
  );
  const emailing = emailTransportConfigured(c.env);
  const rows = inputs.map((input) => toInviteRow(input, organization.id, context, emailing));
  await replaceInvites(db, organization.id, rows);
  sendInviteEmails(c, rows, context.inviter);
  return rows.map((row) => toInvite(row, context.inviter));
}

/**
 * `emailing_attempt_made` is set when the send is scheduled, as PostHog does: the attempt
 * follows the response, and the invite answered here already says it will be made.
 */
function toInviteRow(input: InviteInput, organizationId: string, context: InviteContext, emailing: boolean): InviteRow {
  const now = nowIso();
  const combined = combineWithPending(input, context.pendingByEmail.get(input.target_email) ?? []);
  return {
    id: uuid7(),
    organizationId,
    targetEmail: input.target_email,
    firstName: input.first_name,
    level: combined.level,
    message: input.message,
    privateProjectAccess: combined.privateProjectAccess,
    sendEmail: input.send_email,
    combinePendingInvites: input.combine_pending_invites,
    emailingAttemptMade: emailing && input.send_email,
    createdById: context.inviter.id,
    createdAt: now,
    updatedAt: now,
  };
}
