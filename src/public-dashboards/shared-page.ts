import { html, raw } from "hono/html";
import type { SharedDashboard } from "./shared-dashboard";

type SharedTile = SharedDashboard["dashboard"]["tiles"][number];

/*
 * One small stylesheet, inline under the response's CSP nonce: no font, script or image from
 * elsewhere. Cards flow in one column on a phone and several on a desktop.
 */
const STYLES = `
  :root { color-scheme: light dark;
    --bg: #f5f5f4; --card: #ffffff; --text: #1c1917; --muted: #57534e; --line: #e7e5e4; }
  @media (prefers-color-scheme: dark) {
    :root { --bg: #1c1917; --card: #292524; --text: #f5f5f4; --muted: #a8a29e; --line: #44403c; }
  }
  * { box-sizing: border-box; }
  body { margin: 0; background: var(--bg); color: var(--text);
    font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
  main { max-width: 1100px; margin: 0 auto; padding: 24px 16px 48px; }
  header { margin-bottom: 24px; }
  h1 { font-size: 1.75rem; line-height: 1.2; margin: 0 0 8px; overflow-wrap: anywhere; }
  .description { color: var(--muted); margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
  .tags { display: flex; flex-wrap: wrap; gap: 6px; margin: 12px 0 0; padding: 0; list-style: none; }
  .tags li { font-size: 0.8rem; border: 1px solid var(--line); border-radius: 999px; padding: 2px 10px;
    color: var(--muted); }
  .tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 320px), 1fr)); gap: 16px; }
  .tile { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 16px 18px;
    min-width: 0; }
  .tile h2 { font-size: 1.1rem; margin: 0 0 6px; overflow-wrap: anywhere; }
  .tile p { margin: 0; overflow-wrap: anywhere; }
  .text-body { white-space: pre-wrap; }
  .kind { font-size: 0.75rem; text-transform: uppercase; letter-spacing: 0.05em; color: var(--muted);
    margin-bottom: 6px; }
  .muted { color: var(--muted); }
  footer { margin-top: 32px; font-size: 0.85rem; color: var(--muted); }
  input, button { font: inherit; padding: 8px; margin: 4px 0; }
`;

const insightTitle = (insight: NonNullable<SharedTile["insight"]>) =>
  insight.name || insight.derived_name || "Untitled insight";

function tileHtml(tile: SharedTile) {
  if (tile.text) {
    return html`<article class="tile text-tile"><div class="kind">Note</div>
<p class="text-body">${tile.text.body}</p></article>`;
  }
  if (!tile.insight) return "";
  const description = tile.insight.description
    ? html`<p>${tile.insight.description}</p>`
    : html`<p class="muted">No description.</p>`;
  return html`<article class="tile insight-tile"><div class="kind">Insight</div>
<h2>${insightTitle(tile.insight)}</h2>${description}</article>`;
}

/** The JSON embedded in the page: `<` escaped, so that no value can close the data block. */
const embeddedJson = (data: SharedDashboard) =>
  raw(JSON.stringify(data).replaceAll("<", "\\u003c").replaceAll(">", "\\u003e").replaceAll("&", "\\u0026"));

function page(title: string, nonce: string, content: unknown) {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style nonce="${nonce}">${raw(STYLES)}</style>
</head>
<body><main>${content}</main></body>
</html>`;
}

/** The public page of a shared dashboard: every value escaped, the data also embedded as JSON. */
export function sharedDashboardPage(data: SharedDashboard, nonce: string) {
  const { dashboard } = data;
  const name = dashboard.name || "Untitled dashboard";
  const tags =
    dashboard.tags.length > 0 ? html`<ul class="tags">${dashboard.tags.map((tag) => html`<li>${tag}</li>`)}</ul>` : "";
  const tiles =
    dashboard.tiles.length > 0
      ? html`<section class="tiles">${dashboard.tiles.map(tileHtml)}</section>`
      : html`<p class="muted">This dashboard has no tiles yet.</p>`;
  return page(
    name,
    nonce,
    html`<header><h1>${name}</h1>
${dashboard.description ? html`<p class="description">${dashboard.description}</p>` : ""}${tags}</header>
${tiles}
<footer>A read-only view of a shared dashboard.</footer>
<script type="application/json" id="dashboard-data">${embeddedJson(data)}</script>`,
  );
}

export function sharedNotFoundPage(nonce: string) {
  return page(
    "Not found",
    nonce,
    html`<header><h1>Not found</h1>
<p class="description">This shared dashboard does not exist or is no longer shared.</p></header>`,
  );
}

/** A link its owner paused (`enabled: false`) or that passed its `expires_at`: never the dashboard. */
export function sharedClosedPage(state: "paused" | "expired", nonce: string) {
  const [title, text] =
    state === "expired"
      ? ["This link has expired", "The owner of this dashboard set this link to stop working."]
      : ["This link is paused", "The owner of this dashboard has paused this link."];
  return page(title, nonce, html`<header><h1>${title}</h1><p class="description">${text}</p></header>`);
}

/** The form a password-protected link answers until a password is given; it posts to the page itself. */
export function sharedPasswordPage(nonce: string, failed: boolean) {
  const error = failed ? html`<p role="alert">Incorrect password.</p>` : "";
  return page(
    "Password required",
    nonce,
    html`<header><h1>Password required</h1>
</header><form method="post"><label for="password">Password</label>${error}
<input id="password" name="password" type="password" required autofocus> <button>View dashboard</button></form>`,
  );
}

/** What the e-mail form says above itself: nothing, a malformed address, or a one-time link that did not open. */
type EmailFormNotice = "none" | "invalid_email" | "link_not_valid";

const EMAIL_NOTICES: Record<EmailFormNotice, string> = {
  none: "",
  invalid_email: "Enter a valid e-mail address.",
  link_not_valid: "This link has expired or was already used. Ask for a new one.",
};

/**
 * The form an allow-listed link answers until the visitor proves an address: it posts the address
 * to the page itself, which answers the same whether or not the address is on the list.
 */
export function sharedEmailPage(nonce: string, notice: EmailFormNotice) {
  const alert = notice === "none" ? "" : html`<p role="alert">${EMAIL_NOTICES[notice]}</p>`;
  return page(
    "E-mail required",
    nonce,
    html`<header><h1>E-mail required</h1>
<p class="description">This dashboard is shared with some e-mail addresses only. Enter yours: if it is one of
them, we send you a link that opens the dashboard.</p></header><form method="post">
<label for="email">E-mail address</label>${alert}
<input id="email" name="email" type="email" autocomplete="email" required autofocus> <button>Send me a link</button>
</form>`,
  );
}

/** The answer to any well-formed address: the same for one on the list and one off it. */
export function sharedLinkSentPage(nonce: string, minutes: number) {
  return page(
    "Check your e-mail",
    nonce,
    html`<header><h1>Check your e-mail</h1>
<p class="description">If this address may view the dashboard, a link to it is on its way. The link works once,
for ${minutes} minutes.</p></header>`,
  );
}

/**
 * What a one-time link opens: a button that posts its code, so that a mail scanner that follows
 * links does not use it up; the address bar keeps the code only until the button is pressed.
 */
export function sharedOpenLinkPage(nonce: string, action: string, code: string) {
  return page(
    "Open the shared dashboard",
    nonce,
    html`<header><h1>Open the shared dashboard</h1></header><form method="post" action="${action}">
<input type="hidden" name="code" value="${code}"> <button>View dashboard</button></form>`,
  );
}
