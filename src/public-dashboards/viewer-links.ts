import type { Context } from "hono";
import { oneLine, type EmailMessage } from "../platform/email-transport";
import type { AppEnv } from "../platform/env";
import { randomUrlSafeToken, sha256Hex, uuid7 } from "../platform/ids";
import { afterResponse } from "../platform/background";
import { publicUrl } from "../platform/public-url";
import { loadKeyring, seal } from "../platform/secrets";
import { insertViewerLink, type SharedDashboardRow } from "./shared.queries";

/** A one-time link opens the shared dashboard this long after it was asked for, once. */
export const VIEWER_LINK_MINUTES = 15;
const MINUTE_MS = 60_000;

/** The query parameter of a one-time link: `/shared/<access token>?code=<token>`. */
export const VIEWER_CODE_PARAMETER = "code";

/** A queue message on the e-mail queue: which one-time link's e-mail to send. */
export type ViewerLinkEmailMessage = { viewerLinkId: string };

/** Each sealed e-mail is bound to its link's row: copied to another row, it does not open. */
export const viewerLinkOutboxContext = (viewerLinkId: string) => `share-viewer-link:${viewerLinkId}:email`;

function composeViewerLinkEmail(to: string, dashboardName: string, url: string, expiresAt: string): EmailMessage {
  // One line: a name stored before line breaks were refused must not start a header.
  const name = oneLine(dashboardName) || "Untitled dashboard";
  return {
    to,
    subject: `Your link to the shared dashboard ${name}`,
    text: [
      "Hi,",
      "",
      `Someone asked, with this address, to view the shared dashboard ${name}. Open it here:`,
      url,
      "",
      `The link works once, until ${expiresAt}. If you did not ask for it, ignore this e-mail.`,
    ].join("\n"),
  };
}

/**
 * The one-time link for an allow-listed `email`, written with its e-mail sealed in its row, then
 * its message on the e-mail queue, whose consumer sends it. Run after the response, so that an
 * address on the list and one off it are answered alike and as fast. A message lost here is sent
 * again by the cron's sweep while the link is unexpired.
 */
async function issueViewerLink(c: Context<AppEnv>, shared: SharedDashboardRow, accessToken: string, email: string) {
  const token = randomUrlSafeToken(32);
  const id = uuid7();
  const now = Date.now();
  const expiresAt = new Date(now + VIEWER_LINK_MINUTES * MINUTE_MS).toISOString();
  const url = publicUrl(c, `/shared/${accessToken}`);
  url.searchParams.set(VIEWER_CODE_PARAMETER, token);
  const message = composeViewerLinkEmail(email, shared.dashboard.name, url.toString(), expiresAt);
  const keyring = await loadKeyring(c.env);
  const written = await insertViewerLink(
    c.var.db,
    {
      id,
      dashboardId: shared.dashboard.id,
      email,
      tokenHash: await sha256Hex(token),
      issuedMinute: Math.floor(now / MINUTE_MS),
      createdAt: new Date(now).toISOString(),
      expiresAt,
      emailNextAttemptAt: new Date(now).toISOString(),
      emailOutbox: await seal(keyring, JSON.stringify(message), viewerLinkOutboxContext(id)),
    },
    accessToken,
  );
  if (written) await c.env.INVITE_EMAILS.send({ viewerLinkId: id } satisfies ViewerLinkEmailMessage);
}

/** `issueViewerLink` after the response; a failure is logged, without the address. */
export function issueViewerLinkAfterResponse(
  c: Context<AppEnv>,
  shared: SharedDashboardRow,
  accessToken: string,
  email: string,
) {
  afterResponse(
    c,
    "share link e-mail",
    issueViewerLink(c, shared, accessToken, email),
    { dashboard_id: shared.dashboard.id },
    "error",
  );
}
