import { errorFields, logLine } from "../../platform/log";
import type { Context } from "hono";
import type { AppEnv, Bindings } from "../../platform/env";
import { publicUrl } from "../../platform/public-url";
import { inviteExpiresAt, type InviteRow, type UserRow } from "./invites.queries";

/** What the transport at `EMAIL_TRANSPORT_URL` receives, as a JSON POST body. */
export type EmailMessage = { to: string; subject: string; text: string };

export const emailTransportConfigured = (env: Bindings) => env.EMAIL_TRANSPORT_URL.trim() !== "";

/** An invite just written, with the acceptance token that only its response and e-mail carry. */
export type IssuedInvite = { row: InviteRow; token: string };

/**
 * Sends the invites marked `emailing_attempt_made` after the response (`waitUntil`): the
 * request neither waits for the transport nor fails with it.
 */
export function sendInviteEmails(c: Context<AppEnv>, issued: IssuedInvite[], inviter: UserRow) {
  const toSend = issued.filter(({ row }) => row.emailingAttemptMade);
  if (toSend.length === 0) return;
  const transportUrl = c.env.EMAIL_TRANSPORT_URL.trim();
  const links = (token: string) => ({
    // After `#`: a browser never sends the fragment, so no server or proxy on the way logs the token.
    page: publicUrl(c, `/signup/#${token}`).toString(),
    api: publicUrl(c, "/api/signup").toString(),
    token,
  });
  const organizationName = c.var.organization.name;
  c.executionCtx.waitUntil(
    Promise.all(
      toSend.map(({ row, token }) =>
        deliver(transportUrl, row.id, composeInviteEmail(row, inviter, organizationName, links(token))),
      ),
    ),
  );
}

/** Where an invite is accepted: the page that posts the token, and the API route for scripts. */
export type AcceptLinks = { page: string; api: string; token: string };

export function composeInviteEmail(
  invite: InviteRow,
  inviter: UserRow,
  organizationName: string,
  links: AcceptLinks,
): EmailMessage {
  const inviterName = inviter.firstName || inviter.email;
  const greeting = invite.firstName ? `Hi ${invite.firstName},` : "Hi,";
  const note = invite.message ? `\n${inviterName} wrote: ${invite.message}\n` : "";
  return {
    to: invite.targetEmail,
    subject: `${inviterName} invited you to join ${organizationName} on PostHog`,
    text: [
      greeting,
      "",
      `${inviterName} (${inviter.email}) invited you to join the organization ${organizationName}.`,
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

async function deliver(transportUrl: string, inviteId: string, message: EmailMessage) {
  try {
    const response = await fetch(transportUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(message),
    });
    if (!response.ok) logLine("error", { task: "invite e-mail", invite_id: inviteId, status: response.status });
  } catch (error) {
    // The address stays out of the log: only the invite id identifies the message.
    logLine("error", { task: "invite e-mail", invite_id: inviteId, error: errorFields(error) });
  }
}
