import type { Context } from "hono";
import { afterResponse } from "../../platform/background";
import type { AppEnv, Bindings } from "../../platform/env";
import { emailTransportConfigured, oneLine, quoted, type EmailMessage } from "../../platform/email-transport";
import { publicUrl } from "../../platform/public-url";
import { loadKeyring, seal, type Keyring } from "../../platform/secrets";
import { inviteExpiresAt, type InviteRow, type UserRow } from "./invites.queries";
import type { EmailStatus } from "./invites.schema";
import { mintInviteToken } from "./invite-tokens";

/** A queue message: which invite's e-mail to send. Everything else is in the invite's row. */
export type InviteEmailMessage = { inviteId: string };

/** An invite just written, with the acceptance token that only its response carries. */
type IssuedInvite = { row: InviteRow; token: string };

/** Where an invite is accepted: the page that posts the token, and the API route for scripts. */
type AcceptLinks = { page: string; api: string; token: string };

/** Each sealed e-mail is bound to its invite: copied to another row, it does not open. */
export const outboxContext = (inviteId: string) => `invite:${inviteId}:email`;

export const emailStatusAtCreation = (env: Bindings, sendEmail: boolean): EmailStatus =>
  !sendEmail ? "not_sent" : emailTransportConfigured(env) ? "pending" : "not_configured";

/**
 * The outbox: each invite whose e-mail is `pending` gets it composed and sealed into its row, so
 * that the write that creates the invite also holds its e-mail, and the queue's consumer needs
 * nothing else (not the request, whose origin the links are on).
 */
export async function withSealedEmails(
  c: Context<AppEnv>,
  issued: IssuedInvite[],
  inviter: UserRow,
): Promise<IssuedInvite[]> {
  if (!issued.some(({ row }) => row.emailStatus === "pending")) return issued;
  const keyring = await loadKeyring(c.env);
  const links = (token: string) => ({
    // After `#`: a browser never sends the fragment, so no server or proxy on the way logs the token.
    page: publicUrl(c, `/signup/#${token}`).toString(),
    api: publicUrl(c, "/api/signup").toString(),
    token,
  });
  return Promise.all(
    issued.map(async ({ row, token }) => {
      if (row.emailStatus !== "pending") return { row, token };
      // A token of the e-mail's own, not the one the inviter is answered: signing up with it
      // proves the address.
      const mailed = await mintInviteToken();
      const email = composeInviteEmail(row, inviter, c.var.organization.name, links(mailed.value));
      const emailOutbox = await sealEmail(keyring, row.id, email);
      return { row: { ...row, mailedTokenHash: mailed.hash, emailOutbox }, token };
    }),
  );
}

const sealEmail = (keyring: Keyring, inviteId: string, email: EmailMessage) =>
  seal(keyring, JSON.stringify(email), outboxContext(inviteId));

/**
 * After the invites are written, a message per pending e-mail, after the response (`waitUntil`):
 * the request neither waits for the queue nor fails with it. A message lost here is sent again by
 * the cron's sweep, since the invite's e-mail stays pending.
 */
export function enqueueInviteEmails(c: Context<AppEnv>, rows: InviteRow[]) {
  const pending = rows.filter((row) => row.emailStatus === "pending");
  if (pending.length === 0) return;
  const ids = pending.map((row) => row.id);
  afterResponse(c, "enqueue invite e-mails", sendInviteEmailMessages(c.env, ids), {}, "error");
}

/** Queues take at most 100 messages per `sendBatch`. */
const MESSAGES_PER_SEND = 100;

export async function sendInviteEmailMessages(env: Bindings, inviteIds: string[]) {
  for (let start = 0; start < inviteIds.length; start += MESSAGES_PER_SEND) {
    const ids = inviteIds.slice(start, start + MESSAGES_PER_SEND);
    await env.INVITE_EMAILS.sendBatch(ids.map((inviteId) => ({ body: { inviteId } })));
  }
}

function composeInviteEmail(
  invite: InviteRow,
  inviter: UserRow,
  organizationName: string,
  links: AcceptLinks,
): EmailMessage {
  // One line each: a name stored before line breaks were refused must not start a header.
  const inviterName = oneLine(inviter.firstName || inviter.email);
  const organization = oneLine(organizationName);
  const greeting = invite.firstName ? `Hi ${oneLine(invite.firstName)},` : "Hi,";
  // Quoted: the inviter's words cannot write a line of the e-mail's own.
  const note = invite.message ? `\n${inviterName} wrote:\n${quoted(invite.message)}\n` : "";
  return {
    to: invite.targetEmail,
    subject: `${inviterName} invited you to join ${organization} on PostHog`,
    text: [
      greeting,
      "",
      `${inviterName} (${inviter.email}) invited you to join the organization ${organization}.`,
      note,
      `Accept it in your browser: ${links.page}`,
      `Or with the API: POST ${links.api} with the JSON body {"token": "${links.token}"}`,
      "Without an API key, this creates your account and answers with your first personal API key.",
      "If you already have an account, send that account's personal API key as a Bearer token.",
      "",
      `The invite expires at ${inviteExpiresAt(invite.createdAt)}.`,
    ].join("\n"),
  };
}
