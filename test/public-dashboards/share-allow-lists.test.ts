import { createScheduledController } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { eq, inArray } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import worker from "../../src/index";
import { EMAIL_ATTEMPTS } from "../../src/organizations/invites/invite-email-queue";
import type { ViewerLinkEmailMessage } from "../../src/public-dashboards/viewer-links";
import { NOT_AUTHENTICATED, NOT_FOUND } from "../support/error-bodies";
import { api, db, errorBody, ISO_TIMESTAMP, setupOrganization } from "../support/harness";
import { FAKE_TRANSPORT_URL, restoreTestDoubles, useEmailTransport } from "../support/people";
import { attemptsFrom, consumeAttempt, consumeDeadLetter, retryDelays } from "../support/queues";
import { beforeWrites } from "../support/races";
import { eventually, receiver } from "../support/webhooks";
import { createDashboard, dashboardsPath } from "../environments/dashboard-fixtures";
import { awaitRoomInWindow, freshClientAddress } from "../support/rate-windows";

afterEach(restoreTestDoubles);

const INVALID_LINK = errorBody(
  "authentication_error",
  "invalid_link",
  "This link has expired or was already used. Ask for a new one.",
);
const LINK_SENT = { detail: "If this address may view the dashboard, a link to it is on its way." };

/** The one-time links' e-mails put on the queue, kept off the real queue for the test's own consumer calls. */
function capturedMessages() {
  const sent: ViewerLinkEmailMessage[] = [];
  vi.spyOn(env.INVITE_EMAILS, "send").mockImplementation(async (body) => {
    sent.push(body as ViewerLinkEmailMessage);
    return { metadata: { metrics: { backlogCount: sent.length, backlogBytes: 0 } } };
  });
  vi.spyOn(env.INVITE_EMAILS, "sendBatch").mockImplementation(async (messages) => {
    sent.push(...[...messages].map((message) => message.body as ViewerLinkEmailMessage));
    return { metadata: { metrics: { backlogCount: sent.length, backlogBytes: 0 } } };
  });
  return sent;
}

/** A shared dashboard whose link lets only `ada@example.com` and `lin@example.com` in. */
async function setupAllowList() {
  const team = await setupOrganization();
  const dashboard = await createDashboard(team.key, team.project.id, { name: "Quarterly" });
  const sharingPath = `${dashboardsPath(team.project.id)}/${dashboard.id}/sharing`;
  useEmailTransport();
  const sharing = await api("PATCH", sharingPath, {
    key: team.key,
    body: { enabled: true, allowed_emails: ["Ada@Example.com", "lin@example.com", "ada@example.com"] },
  });
  expect(sharing.status).toBe(200);
  return { ...team, dashboard, sharingPath, token: sharing.body.access_token as string };
}

/** A browser's request: `api` reads JSON bodies only, and sends JSON. */
async function browse(path: string, init: RequestInit = {}) {
  const response = await exports.default.fetch(new Request(`http://localhost${path}`, { redirect: "manual", ...init }));
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const postForm = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  browse(path, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });

/** A page without its response's CSP nonce, so that two answers can be compared whole. */
const withoutNonce = (text: string) => text.replace(/nonce="[^"]*"/g, 'nonce=""');

/** The one-time link the transport received for the link's first queued message, and its code. */
async function deliveredLink(messages: ViewerLinkEmailMessage[], index = 0) {
  const message = await eventually(async () => messages[index]);
  const posted = receiver(200);
  const result = await consumeAttempt("invite-emails", message, 1);
  expect(result.explicitAcks).toEqual(["message"]);
  expect(posted).toHaveLength(1);
  const email = JSON.parse(posted[0]!.body) as { to: string; subject: string; text: string };
  const url = new URL(email.text.match(/http:\/\/localhost\/shared\/\S+/)![0]);
  vi.mocked(globalThis.fetch).mockRestore();
  return { message, email, headers: posted[0]!.headers, url, code: url.searchParams.get("code")! };
}

const sessionCookie = (response: { headers: Headers }) => (response.headers.get("Set-Cookie") ?? "").split(";")[0]!;

const storedLinks = (dashboardId: number) =>
  db.select().from(schema.shareViewerLinks).where(eq(schema.shareViewerLinks.dashboardId, dashboardId));

describe("a share link's e-mail allow-list: the configuration", () => {
  it("stores addresses lower-cased without repeats, answers them on GET; [] or null lifts the list", async () => {
    const { key, sharingPath } = await setupAllowList();
    const read = await api("GET", sharingPath, { key });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      enabled: true,
      password_required: false,
      allowed_emails: ["ada@example.com", "lin@example.com"],
      verified_viewers: [],
    });
    expect((await api("PATCH", sharingPath, { key, body: { allowed_emails: [] } })).body.allowed_emails).toBeNull();
    await api("PATCH", sharingPath, { key, body: { allowed_emails: ["ada@example.com"] } });
    expect((await api("PATCH", sharingPath, { key, body: { enabled: false } })).body.allowed_emails).toEqual([
      "ada@example.com",
    ]);
    expect((await api("PATCH", sharingPath, { key, body: { allowed_emails: null } })).body.allowed_emails).toBeNull();
  });

  it("refuses with 400 and its attr: bad addresses, too many, with passwords, without e-mail", async () => {
    const { key, sharingPath } = await setupAllowList();
    const refused = async (body: Record<string, unknown>, attr: string, detail: string) => {
      const response = await api("PATCH", sharingPath, { key, body });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ type: "validation_error", attr, detail });
    };
    await refused(
      { allowed_emails: ["ada@example.com", "not an address"] },
      "allowed_emails.1",
      "Enter a valid email address.",
    );
    await refused({ allowed_emails: "ada@example.com" }, "allowed_emails", "Expected array, received string.");
    await refused({ allowed_emails: [`${"a".repeat(250)}@example.com`] }, "allowed_emails.0", expect.any(String));
    const tooMany = Array.from({ length: 101 }, (_, index) => `viewer${index}@example.com`);
    await refused({ allowed_emails: tooMany }, "allowed_emails", expect.any(String));
    const both = "A link is protected by passwords or by an e-mail allow-list, not both.";
    await refused({ password_required: true }, "password_required", both);
    await api("PATCH", sharingPath, { key, body: { allowed_emails: null, password_required: true } });
    await refused({ allowed_emails: ["ada@example.com"] }, "allowed_emails", both);
    await api("PATCH", sharingPath, { key, body: { password_required: false } });
    restoreTestDoubles();
    await refused(
      { allowed_emails: ["ada@example.com"] },
      "allowed_emails",
      "E-mail is not configured on this server: nobody could receive a one-time link.",
    );
    expect((await api("GET", sharingPath, { key })).body).toMatchObject({
      allowed_emails: null,
      password_required: false,
    });
  });
});

describe("a share link's e-mail allow-list: the public view", () => {
  it("asks for an address, sends an allow-listed one a one-time link that opens the dashboard, once", async () => {
    const { key, sharingPath, token, dashboard } = await setupAllowList();
    const messages = capturedMessages();

    const form = await browse(`/shared/${token}`);
    expect(form.status).toBe(200);
    expect(form.text).toContain("<h1>E-mail required</h1>");
    expect(form.text).toContain('<input id="email" name="email" type="email"');
    expect(form.text).not.toContain("Quarterly");

    const asked = await postForm(`/shared/${token}`, { email: " ADA@example.com " });
    expect(asked.status).toBe(200);
    expect(asked.text).toContain("<h1>Check your e-mail</h1>");
    const { email, headers, url, code, message } = await deliveredLink(messages);
    expect(headers).toMatchObject({ "content-type": "application/json", "idempotency-key": message.viewerLinkId });
    expect(email).toEqual({
      to: "ada@example.com",
      subject: "Your link to the shared dashboard Quarterly",
      text: expect.stringContaining("The link works once, until "),
    });
    expect(url.pathname).toBe(`/shared/${token}`);
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Only the code's hash is kept, and the e-mail left the row once sent.
    const [stored] = await storedLinks(dashboard.id);
    expect(stored).toMatchObject({ email: "ada@example.com", emailOutbox: null, usedAt: null });
    expect(stored!.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(code);
    expect(Date.parse(stored!.expiresAt) - Date.parse(stored!.createdAt)).toBe(15 * 60_000);

    // The link shows a button that posts the code: a mail scanner following links does not use it up.
    const landing = await browse(`${url.pathname}${url.search}`);
    expect(landing.status).toBe(200);
    expect(landing.text).toContain(`<form method="post" action="/shared/${token}">`);
    expect(landing.text).toContain(`<input type="hidden" name="code" value="${code}">`);
    expect(landing.text).not.toContain("Quarterly");

    const opened = await postForm(`/shared/${token}`, { code });
    expect(opened.status).toBe(303);
    expect(opened.headers.get("Location")).toBe(`/shared/${token}`);
    const cookie = opened.headers.get("Set-Cookie") ?? "";
    expect(cookie).toMatch(/^posthog_sharing_token=[^;]+;/);
    for (const attribute of [`Path=/shared/${token}`, "HttpOnly", "Secure", "SameSite=Lax", "Max-Age=86400"]) {
      expect(cookie).toContain(attribute);
    }
    const page = await browse(`/shared/${token}`, { headers: { Cookie: sessionCookie(opened) } });
    expect(page.status).toBe(200);
    expect(page.text).toContain("<h1>Quarterly</h1>");

    // Used once: the second time it opens nothing, and says so.
    const again = await postForm(`/shared/${token}`, { code });
    expect(again.status).toBe(401);
    expect(again.text).toContain("This link has expired or was already used. Ask for a new one.");
    expect(again.text).not.toContain("Quarterly");
    expect(again.headers.get("Set-Cookie")).toBeNull();

    // The verified view is counted for its address, with nothing else about the viewer.
    await vi.waitFor(async () => {
      const { body } = await api("GET", sharingPath, { key });
      expect(body.view_count).toBe(1);
      expect(body.verified_viewers).toEqual([
        { email: "ada@example.com", view_count: 1, last_viewed_at: expect.stringMatching(ISO_TIMESTAMP) },
      ]);
    });
  });

  it("answers an address off the list exactly as one on it, and sends it nothing", async () => {
    const { token, dashboard } = await setupAllowList();
    const messages = capturedMessages();

    const listed = await postForm(`/shared/${token}`, { email: "lin@example.com" });
    const unlisted = await postForm(`/shared/${token}`, { email: "mallory@example.com" });
    expect(unlisted.status).toBe(listed.status);
    expect(withoutNonce(unlisted.text)).toBe(withoutNonce(listed.text));
    const listedJson = await api("POST", `/shared/${token}.json`, { body: { email: "lin@example.com" } });
    const unlistedJson = await api("POST", `/shared/${token}.json`, { body: { email: "mallory@example.com" } });
    expect([listedJson.status, listedJson.body]).toEqual([202, LINK_SENT]);
    expect([unlistedJson.status, unlistedJson.body]).toEqual([202, LINK_SENT]);

    // Lin's first request made a link; the second, in the same minute, none. Mallory's, none.
    await eventually(async () => messages[0]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(messages).toHaveLength(1);
    expect((await storedLinks(dashboard.id)).map((link) => link.email)).toEqual(["lin@example.com"]);
  });

  it("refuses a malformed address with 400, as a page and as JSON with its attr", async () => {
    const { token } = await setupAllowList();
    const messages = capturedMessages();
    const page = await postForm(`/shared/${token}`, { email: "not an address" });
    expect(page.status).toBe(400);
    expect(page.text).toContain('<p role="alert">Enter a valid e-mail address.</p>');
    const json = await api("POST", `/shared/${token}.json`, { body: { email: "not an address" } });
    expect([json.status, json.body]).toEqual([
      400,
      errorBody("validation_error", "invalid_input", "Enter a valid e-mail address.", "email"),
    ]);
    expect(messages).toEqual([]);
  });

  it("counts every address posted against the caller's refusals, listed or not: 429 past the limit", async () => {
    const { token } = await setupAllowList();
    const messages = capturedMessages();
    const from = { "CF-Connecting-IP": freshClientAddress() };
    const statuses: number[] = [];
    // 30 refusals a minute, all in one window (clock-aligned) so that the last check falls in it too.
    await awaitRoomInWindow(60_000, 10_000);
    while (statuses.at(-1) !== 429 && statuses.length < 31) {
      statuses.push(
        (await postForm(`/shared/${token}`, { email: `guess${statuses.length}@example.com` }, from)).status,
      );
    }
    expect(statuses.at(-1)).toBe(429);
    expect(new Set(statuses.slice(0, -1))).toEqual(new Set([200]));
    // Even a listed address waits for the window to end, and gets nothing meanwhile.
    expect((await postForm(`/shared/${token}`, { email: "ada@example.com" }, from)).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(messages).toEqual([]);
  }, 30_000);

  it("answers the JSON form 401 without a session, and opens it with the JSON unlock's shareToken", async () => {
    const { token } = await setupAllowList();
    const messages = capturedMessages();
    const locked = await api("GET", `/shared/${token}.json`);
    expect([locked.status, locked.body]).toEqual([401, NOT_AUTHENTICATED]);

    await api("POST", `/shared/${token}.json`, { body: { email: "ada@example.com" } });
    const { code } = await deliveredLink(messages);
    const wrong = await api("POST", `/shared/${token}.json`, { body: { code: `${code}x` } });
    expect([wrong.status, wrong.body]).toEqual([401, INVALID_LINK]);
    const unlocked = await api("POST", `/shared/${token}.json`, { body: { code } });
    expect(unlocked.status).toBe(200);
    const bearer = { Authorization: `Bearer ${unlocked.body.shareToken}` };
    const json = await api("GET", `/shared/${token}.json`, { headers: bearer });
    expect(json.status).toBe(200);
    expect(json.body.dashboard.name).toBe("Quarterly");
    const reused = await api("POST", `/shared/${token}.json`, { body: { code } });
    expect([reused.status, reused.body]).toEqual([401, INVALID_LINK]);
  });

  it("answers a view 404 when the viewer's address was taken off the list between its two reads", async () => {
    const { key, token, sharingPath } = await setupAllowList();
    const messages = capturedMessages();
    await api("POST", `/shared/${token}.json`, { body: { email: "ada@example.com" } });
    const unlocked = await api("POST", `/shared/${token}.json`, {
      body: { code: (await deliveredLink(messages)).code },
    });
    const bearer = { Authorization: `Bearer ${unlocked.body.shareToken}` };
    const meanwhile = beforeWrites([
      [
        /"sharing_configurations"\."enabled" = /,
        async () => (await api("PATCH", sharingPath, { key, body: { allowed_emails: ["lin@example.com"] } })).status,
      ],
    ]);
    const view = await api("GET", `/shared/${token}.json`, { headers: bearer });
    expect(meanwhile).toEqual([200]);
    vi.restoreAllMocks();
    expect([view.status, view.body]).toEqual([404, NOT_FOUND]);
  });

  it("refuses a one-time link past its 15 minutes, and does not send its e-mail any more", async () => {
    const { token, dashboard } = await setupAllowList();
    const messages = capturedMessages();
    await postForm(`/shared/${token}`, { email: "ada@example.com" });
    const { code } = await deliveredLink(messages);
    const past = new Date(Date.now() - 1000).toISOString();
    await db.update(schema.shareViewerLinks).set({ expiresAt: past });
    const expired = await postForm(`/shared/${token}`, { code });
    expect(expired.status).toBe(401);
    expect(expired.text).toContain("This link has expired or was already used.");

    // A message for a link that expired before its e-mail went drops the e-mail unsent.
    await db.update(schema.shareViewerLinks).set({ emailOutbox: "enc:v1:pending" });
    const posted = receiver(200);
    const late = await consumeAttempt("invite-emails", messages[0]!, 2);
    expect(late.explicitAcks).toEqual(["message"]);
    expect(posted).toEqual([]);
    expect((await storedLinks(dashboard.id))[0]!.emailOutbox).toBeNull();
  });

  it("answers a paused or expired link first, whatever is posted or presented", async () => {
    const { key, sharingPath, token } = await setupAllowList();
    const messages = capturedMessages();
    await postForm(`/shared/${token}`, { email: "ada@example.com" });
    const { code } = await deliveredLink(messages);
    const opened = await postForm(`/shared/${token}`, { code });
    const cookie = { Cookie: sessionCookie(opened) };

    await api("PATCH", sharingPath, { key, body: { expires_at: new Date(Date.now() - 1000).toISOString() } });
    const expired = await browse(`/shared/${token}`, { headers: cookie });
    expect(expired.status).toBe(410);
    expect(expired.text).toContain("<h1>This link has expired</h1>");
    expect((await postForm(`/shared/${token}`, { email: "ada@example.com" })).status).toBe(410);
    const json = await api("POST", `/shared/${token}.json`, { body: { email: "ada@example.com" } });
    expect([json.status, json.body]).toEqual([404, NOT_FOUND]);

    await api("PATCH", sharingPath, { key, body: { expires_at: null, enabled: false } });
    const paused = await browse(`/shared/${token}`, { headers: cookie });
    expect(paused.status).toBe(404);
    expect(paused.text).toContain("<h1>This link is paused</h1>");
  });

  /** Ada's and Lin's sessions on a new allow-listed link, each opened with the one-time link e-mailed. */
  async function twoViewerSessions() {
    const link = await setupAllowList();
    const { key, sharingPath, token } = link;
    const messages = capturedMessages();
    const sessionOf = async (email: string, index: number) => {
      await api("POST", `/shared/${token}.json`, { body: { email } });
      const { code } = await deliveredLink(messages, index);
      return {
        Authorization: `Bearer ${(await api("POST", `/shared/${token}.json`, { body: { code } })).body.shareToken}`,
      };
    };
    const ada = await sessionOf("ada@example.com", 0);
    const lin = await sessionOf("lin@example.com", 1);
    const statusOf = async (headers: Record<string, string>, path = `/shared/${token}.json`) =>
      (await api("GET", path, { headers })).status;
    expect([await statusOf(ada), await statusOf(lin)]).toEqual([200, 200]);
    await vi.waitFor(async () =>
      expect((await api("GET", sharingPath, { key })).body.verified_viewers).toHaveLength(2),
    );
    return { ...link, ada, lin, statusOf };
  }

  it("ends every viewer session when an address is taken off the list, for good", async () => {
    const { key, sharingPath, ada, lin, statusOf } = await twoViewerSessions();
    // Adding an address ends nobody's session.
    const added = await api("PATCH", sharingPath, {
      key,
      body: { allowed_emails: ["ada@example.com", "lin@example.com", "max@example.com"] },
    });
    expect(added.status).toBe(200);
    expect([await statusOf(ada), await statusOf(lin)]).toEqual([200, 200]);

    // Taking Ada off ends her session and, since a session is signed for its address alone, every
    // other: Lin verifies her address again.
    const changed = await api("PATCH", sharingPath, { key, body: { allowed_emails: ["lin@example.com"] } });
    expect(changed.body.verified_viewers.map((viewer: { email: string }) => viewer.email)).toEqual(["lin@example.com"]);
    expect([await statusOf(ada), await statusOf(lin)]).toEqual([401, 401]);
    // Listed again, Ada does not get the link back through the session that was ended.
    const relisted = await api("PATCH", sharingPath, {
      key,
      body: { allowed_emails: ["lin@example.com", "ada@example.com"] },
    });
    expect(relisted.status).toBe(200);
    expect(await statusOf(ada)).toBe(401);
  });

  it("ends every viewer session with a refresh of the link", async () => {
    const { key, sharingPath, ada, lin, statusOf } = await twoViewerSessions();
    const refreshed = await api("POST", `${sharingPath}/refresh`, { key });
    const newPath = `/shared/${refreshed.body.access_token}.json`;
    expect([await statusOf(ada, newPath), await statusOf(lin, newPath)]).toEqual([401, 401]);
  });

  it("takes back the unused one-time links of an address taken off the list, and all with a refresh", async () => {
    const { key, sharingPath, token } = await setupAllowList();
    const messages = capturedMessages();
    const invalidLink = { status: 401, code: "invalid_link" };
    const unlock = async (path: string, code: string) => {
      const answer = await api("POST", `/shared/${path}.json`, { body: { code } });
      return { status: answer.status, code: answer.body.code };
    };
    await api("POST", `/shared/${token}.json`, { body: { email: "ada@example.com" } });
    const { code } = await deliveredLink(messages);
    // Off the list and on it again: the code e-mailed before opens nothing.
    await api("PATCH", sharingPath, { key, body: { allowed_emails: ["lin@example.com"] } });
    await api("PATCH", sharingPath, { key, body: { allowed_emails: ["lin@example.com", "ada@example.com"] } });
    expect(await unlock(token, code)).toEqual(invalidLink);

    // A code e-mailed for the token before a refresh opens nothing under the new one.
    await api("POST", `/shared/${token}.json`, { body: { email: "lin@example.com" } });
    const forLin = await deliveredLink(messages, 1);
    const refreshed = await api("POST", `${sharingPath}/refresh`, { key });
    expect(await unlock(refreshed.body.access_token, forLin.code)).toEqual(invalidLink);
  });
});

describe("expired one-time links", () => {
  // Anyone with an allow-listed link may ask for links, 30 a minute from each client address: a
  // cron run (every 10 minutes) must delete more than one address asks for meanwhile.
  it("are all deleted by a cron run, more of them than a client address may ask for between two runs", async () => {
    const { key, project } = await setupOrganization();
    useEmailTransport();
    capturedMessages();
    // Two links, 100 addresses listed (a list's most) and 20: 120 links asked for.
    const listed = Array.from({ length: 100 }, (_, index) => `viewer${index}@example.com`);
    const asked: [string, string][] = [];
    const dashboardIds: number[] = [];
    for (const list of [listed, listed.slice(0, 20)]) {
      const dashboard = await createDashboard(key, project.id, { name: "Quarterly" });
      const sharingPath = `${dashboardsPath(project.id)}/${dashboard.id}/sharing`;
      const sharing = await api("PATCH", sharingPath, { key, body: { enabled: true, allowed_emails: list } });
      expect(sharing.status).toBe(200);
      dashboardIds.push(dashboard.id);
      asked.push(...list.map((email): [string, string] => [sharing.body.access_token, email]));
    }
    const addresses = Array.from({ length: 5 }, freshClientAddress);
    for (const [index, [token, email]] of asked.entries()) {
      const answer = await postForm(`/shared/${token}`, { email }, { "CF-Connecting-IP": addresses[index % 5]! });
      expect(answer.status).toBe(200);
    }
    const links = () =>
      db.select().from(schema.shareViewerLinks).where(inArray(schema.shareViewerLinks.dashboardId, dashboardIds));
    await vi.waitFor(async () => expect(await links()).toHaveLength(120), { timeout: 10_000 });
    const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
    await db
      .update(schema.shareViewerLinks)
      .set({ createdAt: minutesAgo(20), expiresAt: minutesAgo(5), emailOutbox: null, emailNextAttemptAt: null })
      .where(inArray(schema.shareViewerLinks.dashboardId, dashboardIds));

    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
    expect(await links()).toEqual([]);
  }, 60_000);
});

describe("a one-time link asked for just before its link changed", () => {
  // The link is written after the answer: a change that landed in between must take it back as it
  // takes back the codes already written, or its e-mail carries a dead link, or reaches an address
  // no longer listed once it is listed again.
  it.each([
    ["the link was refreshed", { method: "POST", path: "/refresh", body: undefined }],
    [
      "the address was taken off the list",
      { method: "PATCH", path: "", body: { allowed_emails: ["lin@example.com"] } },
    ],
  ])("writes no link and sends nothing when %s meanwhile", async (_change, change) => {
    const { key, token, sharingPath, dashboard } = await setupAllowList();
    const messages = capturedMessages();
    const changed = beforeWrites([
      [
        /^insert into "share_viewer_links"/,
        async () => (await api(change.method, `${sharingPath}${change.path}`, { key, body: change.body })).status,
      ],
    ]);
    expect((await api("POST", `/shared/${token}.json`, { body: { email: "ada@example.com" } })).status).toBe(202);
    expect(await eventually(async () => changed[0] as number | undefined)).toBe(200);
    // The write, right after the change, and what would follow it: its message on the queue.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const links = await db
      .select()
      .from(schema.shareViewerLinks)
      .where(eq(schema.shareViewerLinks.dashboardId, dashboard.id));
    expect([links, messages]).toEqual([[], []]);
  });
});

describe("a share link's one-time link e-mails on the queue", () => {
  it("sends nothing to an address taken off the list, or once the link is paused, before it went out", async () => {
    const { token, sharingPath, key, dashboard } = await setupAllowList();
    const messages = capturedMessages();
    await postForm(`/shared/${token}`, { email: "ada@example.com" });
    await postForm(`/shared/${token}`, { email: "lin@example.com" });
    const [toAda, toLin] = [await eventually(async () => messages[0]), await eventually(async () => messages[1])];
    expect((await api("PATCH", sharingPath, { key, body: { allowed_emails: ["lin@example.com"] } })).status).toBe(200);

    const posted = receiver(200);
    expect((await consumeAttempt("invite-emails", toAda!, 1)).explicitAcks).toEqual(["message"]);
    expect(posted).toEqual([]);
    expect((await api("PATCH", sharingPath, { key, body: { enabled: false } })).status).toBe(200);
    expect((await consumeAttempt("invite-emails", toLin!, 1)).explicitAcks).toEqual(["message"]);
    expect(posted).toEqual([]);
    // Ada's link went with her address; Lin's e-mail is dropped from its row, token and all.
    const links = await storedLinks(dashboard.id);
    expect(links.map((link) => [link.email, link.emailOutbox])).toEqual([["lin@example.com", null]]);
  });

  it("has a one-line subject and text: a dashboard name stored with a line break starts no header", async () => {
    const { token, dashboard } = await setupAllowList();
    // As a name stored before names were held to visible characters.
    await db
      .update(schema.dashboards)
      .set({ name: "Quarterly\r\nBcc: victims@attacker.example" })
      .where(eq(schema.dashboards.id, dashboard.id));
    const messages = capturedMessages();
    await postForm(`/shared/${token}`, { email: "ada@example.com" });
    const { email } = await deliveredLink(messages);
    expect(email.subject).toBe("Your link to the shared dashboard Quarterly Bcc: victims@attacker.example");
    expect(email.text).toContain("to view the shared dashboard Quarterly Bcc: victims@attacker.example. Open it");
  });

  it("retries a failing transport on the invites' schedule, then the dead letter drops the e-mail", async () => {
    const { token, dashboard } = await setupAllowList();
    const messages = capturedMessages();
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    await postForm(`/shared/${token}`, { email: "ada@example.com" });
    const message = await eventually(async () => messages[0]);
    const posted = receiver(503);

    const delays = await retryDelays("invite-emails", message, attemptsFrom(1, EMAIL_ATTEMPTS));
    expect(delays).toEqual([30, 300, 1_800, 7_200, undefined]);
    expect(posted).toHaveLength(EMAIL_ATTEMPTS);
    expect(posted[0]!.url).toBe(FAKE_TRANSPORT_URL);
    const lines = errors.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(lines[0]).toEqual({
      level: "error",
      run_id: expect.any(String),
      queue: "invite-emails",
      task: "share link e-mail",
      viewer_link_id: message.viewerLinkId,
      attempt: 1,
      status: 503,
      error: "HTTP 503",
    });
    expect(JSON.stringify(lines)).not.toContain("ada@example.com");

    const deadLetters = await consumeDeadLetter("invite-emails-dead-letters", message);
    expect(deadLetters.ackAll).toBe(true);
    expect(deadLetters.warnings).toEqual([
      {
        level: "warn",
        run_id: expect.any(String),
        queue: "invite-emails-dead-letters",
        task: "share link e-mail dead letter",
        viewer_link_id: message.viewerLinkId,
        dashboard_id: dashboard.id,
      },
    ]);
    expect((await storedLinks(dashboard.id))[0]!.emailOutbox).toBeNull();
  });

  it("the cron re-sends an unexpired link whose message was lost, and deletes expired links", async () => {
    const { token, dashboard } = await setupAllowList();
    const messages = capturedMessages();
    await postForm(`/shared/${token}`, { email: "ada@example.com" });
    await postForm(`/shared/${token}`, { email: "lin@example.com" });
    await eventually(async () => messages[1]);
    const [lost, expired] = await storedLinks(dashboard.id);
    const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
    // No attempt time, as code from before that column wrote the row: due when it was asked for.
    await db
      .update(schema.shareViewerLinks)
      .set({ createdAt: minutesAgo(5), emailNextAttemptAt: null })
      .where(eq(schema.shareViewerLinks.id, lost!.id));
    await db
      .update(schema.shareViewerLinks)
      .set({ createdAt: minutesAgo(20), expiresAt: minutesAgo(5) })
      .where(eq(schema.shareViewerLinks.id, expired!.id));
    messages.length = 0;

    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);

    expect(messages).toEqual([{ viewerLinkId: lost!.id }]);
    expect((await storedLinks(dashboard.id)).map((link) => link.id)).toEqual([lost!.id]);
  });

  it("the cron re-sends a lost message once, for two runs at once and for the next while it waits", async () => {
    const { token, dashboard } = await setupAllowList();
    const messages = capturedMessages();
    await postForm(`/shared/${token}`, { email: "ada@example.com" });
    await eventually(async () => messages[0]);
    const [lost] = await storedLinks(dashboard.id);
    const fiveMinutesAgo = new Date(Date.now() - 5 * 60_000).toISOString();
    await db
      .update(schema.shareViewerLinks)
      .set({ createdAt: fiveMinutesAgo, emailNextAttemptAt: fiveMinutesAgo })
      .where(eq(schema.shareViewerLinks.id, lost!.id));
    messages.length = 0;
    const cron = () => worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);

    await Promise.all([cron(), cron()]);
    await cron();

    // Two messages in flight at once could each send the e-mail.
    expect(messages).toEqual([{ viewerLinkId: lost!.id }]);
  });

  it("the cron leaves alone an e-mail whose message waits for its retry", async () => {
    const { token, dashboard } = await setupAllowList();
    const messages = capturedMessages();
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    await postForm(`/shared/${token}`, { email: "ada@example.com" });
    const message = await eventually(async () => messages[0]);
    receiver(503);
    // Two attempts failed: the third is due in 5 minutes.
    expect(await retryDelays("invite-emails", message, [1, 2])).toEqual([30, 300]);
    // The link was asked for 4 minutes ago; its message is well, waiting.
    await db
      .update(schema.shareViewerLinks)
      .set({ createdAt: new Date(Date.now() - 4 * 60_000).toISOString() })
      .where(eq(schema.shareViewerLinks.id, message!.viewerLinkId));
    messages.length = 0;

    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);

    expect(messages).toEqual([]);
    const [link] = await storedLinks(dashboard.id);
    expect(link!.emailOutbox).not.toBeNull();
  });
});

describe("a share link's e-mail allow-list changed by two editors at once", () => {
  it("ends a viewer's sessions when a write takes off an address listed since it read the list", async () => {
    const { key, sharingPath, token } = await setupAllowList();
    const ada = await api("PATCH", sharingPath, { key, body: { allowed_emails: ["ada@example.com"] } });
    expect(ada.status).toBe(200);
    const jsonPath = `/shared/${token}.json`;
    const messages = capturedMessages();
    let bob: Record<string, string> = {};
    // An editor adds Carol to the list it read (Ada alone); meanwhile (after that PATCH read the list,
    // before it writes) another editor adds Bob, and Bob opens a session with his one-time link.
    beforeWrites([
      [
        /insert into "sharing_configurations"/,
        async () => {
          const body = { allowed_emails: ["ada@example.com", "bob@example.com"] };
          expect((await api("PATCH", sharingPath, { key, body })).status).toBe(200);
          await api("POST", jsonPath, { body: { email: "bob@example.com" } });
          const { code } = await deliveredLink(messages);
          const unlocked = await api("POST", jsonPath, { body: { code } });
          expect(unlocked.status).toBe(200);
          bob = { Authorization: `Bearer ${unlocked.body.shareToken}` };
          expect((await api("GET", jsonPath, { headers: bob })).status).toBe(200);
        },
      ],
    ]);
    const withCarol = { allowed_emails: ["ada@example.com", "carol@example.com"] };
    const adaAndCarol = await api("PATCH", sharingPath, { key, body: withCarol });
    vi.restoreAllMocks();
    // Read again, the editor's list (a change from what it read) replaces the stored one, Bob's.
    expect(adaAndCarol.body.allowed_emails).toEqual(["ada@example.com", "carol@example.com"]);
    expect((await api("GET", jsonPath, { headers: bob })).status).toBe(401);

    // Listed again, Bob verifies his address again: the session the list dropped stays ended.
    const body = { allowed_emails: ["ada@example.com", "bob@example.com"] };
    expect((await api("PATCH", sharingPath, { key, body })).status).toBe(200);
    expect((await api("GET", jsonPath, { headers: bob })).status).toBe(401);
  });
});

describe("a verified view recorded after its address was taken off the list", () => {
  it("leaves no verified viewer off the list: the view's own row lands only while the address is listed", async () => {
    const { key, sharingPath, token } = await setupAllowList();
    const jsonPath = `/shared/${token}.json`;
    const messages = capturedMessages();
    await api("POST", jsonPath, { body: { email: "ada@example.com" } });
    const { code } = await deliveredLink(messages);
    const session = (await api("POST", jsonPath, { body: { code } })).body.shareToken as string;
    // Ada's view is served; the owner takes her off the list before the view is recorded (after the response).
    const ran = beforeWrites([
      [
        /^update "sharing_configurations" set "view_count"/,
        async () => (await api("PATCH", sharingPath, { key, body: { allowed_emails: ["lin@example.com"] } })).status,
      ],
    ]);
    const viewed = await api("GET", jsonPath, { headers: { Authorization: `Bearer ${session}` } });
    expect(viewed.status).toBe(200);
    await vi.waitFor(async () => expect(ran).toEqual([200]));
    await vi.waitFor(async () => expect((await api("GET", sharingPath, { key })).body.view_count).toBe(1));
    vi.restoreAllMocks();
    const sharing = await api("GET", sharingPath, { key });
    expect([sharing.body.allowed_emails, sharing.body.verified_viewers]).toEqual([["lin@example.com"], []]);
  });
});
