import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../../src/db/schema";
import worker from "../../../src/index";
import { EMAIL_ATTEMPTS } from "../../../src/organizations/invites/invite-email-queue";
import type { InviteEmailMessage } from "../../../src/organizations/invites/invite-emails";
import { MembershipLevel } from "../../../src/platform/levels";
import {
  AUTHENTICATION_FAILED,
  changedMeanwhile,
  expectError,
  INSUFFICIENT_LEVEL,
  NOT_FOUND,
} from "../../support/error-bodies";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  createProject,
  createUser,
  db,
  errorBody,
  setupOrganization,
} from "../../support/harness";
import { mintInviteToken } from "../../../src/organizations/invites/invite-tokens";
import { apiKeyCacheKey } from "../../../src/platform/auth/api-keys";
import { sha256Hex } from "../../../src/platform/ids";
import {
  daysAgo,
  FAKE_TRANSPORT_TOKEN,
  FAKE_TRANSPORT_URL,
  insertInvite,
  restoreTestDoubles,
  useEmailTransport,
} from "../../support/people";
import {
  attemptsFrom,
  consumeAttempt,
  consumeDeadLetter,
  expectAttemptsBeforeDeadLetters,
  retryDelays,
} from "../../support/queues";
import { beforeWrites } from "../../support/races";
import { eventually, RECEIVER, receiver } from "../../support/webhooks";

afterEach(restoreTestDoubles);

const invitesPath = (organizationId: string) => `/api/organizations/${organizationId}/invites`;

/** The transport: what is posted to it, its JSON body parsed; it answers `status`. */
function transport(status: number) {
  const received = receiver(status);
  return {
    count: () => received.length,
    emails: () => received.map((post) => ({ ...post, body: JSON.parse(post.body) as Record<string, string> })),
  };
}

/** The messages the invite writes put on the queue, kept off the real queue for the test's own consumer calls. */
function capturedMessages() {
  const sent: InviteEmailMessage[] = [];
  vi.spyOn(env.INVITE_EMAILS, "sendBatch").mockImplementation(async (messages) => {
    sent.push(...[...messages].map((message) => message.body as InviteEmailMessage));
    return { metadata: { metrics: { backlogCount: sent.length, backlogBytes: 0 } } };
  });
  return sent;
}

const consume = (queue: string, inviteId: string, attempt: number) =>
  consumeAttempt<InviteEmailMessage>(queue, { inviteId }, attempt);

/** The token in an invite e-mail's accept link. */
const mailedToken = (text: string | undefined) => /\/signup\/#(phi_[0-9A-Za-z]+)/.exec(text ?? "")?.[1];

const postInvite = (organization: { id: string }, key: string, body: Record<string, unknown>) =>
  api("POST", invitesPath(organization.id), { key, body });

const storedInvite = async (id: string) =>
  (await db.select().from(schema.invites).where(eq(schema.invites.id, id)))[0]!;

const listedStatus = async (organization: { id: string }, key: string, id: string) => {
  const { results } = (await api("GET", invitesPath(organization.id), { key })).body;
  return results.find((invite: { id: string }) => invite.id === id).email_status as string;
};

describe("an invite e-mail's subject", () => {
  it("is one line: no line break of a name stored before they were refused starts a header", async () => {
    const { organization, owner, key } = await setupOrganization({ name: "Acme" });
    // As a name stored before names were held to visible characters.
    await db
      .update(schema.users)
      .set({ firstName: "Eve\r\nBcc: victims@attacker.example" })
      .where(eq(schema.users.id, owner.id));
    useEmailTransport();
    const mail = transport(200);
    const invited = await api("POST", invitesPath(organization.id), {
      key,
      body: { target_email: "jane@example.com" },
    });
    expect(invited.status).toBe(201);
    const [email] = await eventually(async () => (mail.count() > 0 ? mail.emails() : undefined));
    expect(email!.body.subject).toBe("Eve Bcc: victims@attacker.example invited you to join Acme on PostHog");
  });
});

describe("an invite e-mail's text", () => {
  it("quotes the inviter's message: no line of it passes for the e-mail's own accept link or expiry", async () => {
    const { organization, owner, key } = await setupOrganization({ name: "Acme" });
    useEmailTransport();
    const mail = transport(200);
    const forged =
      "Welcome!\r\n\nAccept it in your browser: https://attacker.example/signup/#phi_forged\u2028" +
      "The invite expires at 2099-01-01T00:00:00.000Z.\n";
    const invited = await api("POST", invitesPath(organization.id), {
      key,
      body: { target_email: "jane@example.com", message: forged },
    });
    expect(invited.status).toBe(201);
    const [email] = await eventually(async () => (mail.count() > 0 ? mail.emails() : undefined));
    const lines = email!.body.text!.split("\n");
    expect(lines.filter((line: string) => line.startsWith("Accept it in your browser:"))).toEqual([
      expect.stringMatching(/^Accept it in your browser: http:\/\/localhost\/signup\/#phi_/),
    ]);
    expect(lines.filter((line: string) => line.startsWith("The invite expires at"))).toHaveLength(1);
    expect(email!.body.text).toContain(
      `${owner.firstName} wrote:\n> Welcome!\n>\n` +
        "> Accept it in your browser: https://attacker.example/signup/#phi_forged\n" +
        "> The invite expires at 2099-01-01T00:00:00.000Z.\n>\n",
    );
  });
});

describe("invite e-mails", () => {
  it("are queued with the invite and sent by the consumer, with the bearer token: pending, then sent", async () => {
    const { organization, owner, key } = await setupOrganization({ name: "Acme" });
    useEmailTransport();
    const posted = transport(200);

    const response = await postInvite(organization, key, {
      target_email: "jane@example.com",
      first_name: "Jane",
      message: "Join us!",
    });

    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ emailing_attempt_made: true, email_status: "pending" });
    const inviteId = response.body.id;
    await eventually(async () => ((await listedStatus(organization, key, inviteId)) === "sent" ? true : undefined));
    expect(posted.count()).toBe(1);
    const [email] = posted.emails();
    // The e-mail carries a token of its own, not the one the inviter was answered.
    const token = mailedToken(email!.body.text);
    expect(token).toMatch(/^phi_/);
    expect(token).not.toBe(response.body.token);
    expect(email!.body.text).not.toContain(response.body.token);
    expect(email!.url).toBe(FAKE_TRANSPORT_URL);
    expect(email!.headers).toMatchObject({
      authorization: `Bearer ${FAKE_TRANSPORT_TOKEN}`,
      "content-type": "application/json",
      "idempotency-key": inviteId,
    });
    expect(email!.body).toEqual({
      to: "jane@example.com",
      subject: `${owner.firstName} invited you to join Acme on PostHog`,
      text: expect.stringContaining(`Accept it in your browser: http://localhost/signup/#${token}`),
    });
    expect(email!.body.text).toContain(
      `Or with the API: POST http://localhost/api/signup with the JSON body {"token": "${token}"}`,
    );
    // No link puts the token where a server logs it: only after `#`, or in a body.
    expect(email!.body.text).not.toContain(`/${token}`);
    expect(email!.body.text).toContain(`${owner.firstName} wrote:\n> Join us!\n`);
    // Once sent, the row no longer holds the e-mail.
    expect(await storedInvite(inviteId)).toMatchObject({
      emailStatus: "sent",
      emailAttempts: 1,
      emailNextAttemptAt: null,
      emailOutbox: null,
    });

    // A duplicate message (at-least-once) finds the e-mail sent and sends nothing.
    expect((await consume("invite-emails", inviteId, 1)).explicitAcks).toEqual(["message"]);
    expect(posted.count()).toBe(1);
  });

  it("holds the e-mail in the invite's row, sealed, while it is pending", async () => {
    const { organization, key } = await setupOrganization();
    useEmailTransport();
    const messages = capturedMessages();

    const response = await postInvite(organization, key, { target_email: "a@example.com" });

    expect(messages).toEqual([{ inviteId: response.body.id }]);
    const stored = await storedInvite(response.body.id);
    expect(stored).toMatchObject({ emailStatus: "pending", emailAttempts: 0 });
    expect(stored.emailOutbox).toMatch(/^enc:v1:/);
    expect(stored.emailOutbox).not.toContain(response.body.token);
    expect(stored.emailOutbox).not.toContain("a@example.com");
  });

  it("retries a failing transport, then dead-letters it: failed, logged without the address, resent", async () => {
    const { organization, key } = await setupOrganization();
    useEmailTransport();
    const messages = capturedMessages();
    const posted = transport(503);
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);

    const response = await postInvite(organization, key, { target_email: "a@example.com" });
    expect(response.status).toBe(201);
    const inviteId = response.body.id;
    expect(messages).toEqual([{ inviteId }]);

    const queue = "invite-emails";
    const delays = await retryDelays(queue, { inviteId }, [1]);
    const pending = await storedInvite(inviteId);
    expect(pending).toMatchObject({ emailStatus: "pending", emailAttempts: 1 });
    expect(Date.parse(pending.emailNextAttemptAt!) - Date.now()).toBeGreaterThan(20_000);
    delays.push(...(await retryDelays(queue, { inviteId }, attemptsFrom(2, EMAIL_ATTEMPTS))));
    // 30 s, 5 min, 30 min, 2 h; the last retry has no delay: Queues moves it to the dead letters.
    expect(delays).toEqual([30, 300, 1_800, 7_200, undefined]);
    expect(posted.count()).toBe(EMAIL_ATTEMPTS);
    expect(await storedInvite(inviteId)).toMatchObject({
      emailStatus: "pending",
      emailAttempts: EMAIL_ATTEMPTS,
      emailNextAttemptAt: null,
    });
    // One JSON line per failed attempt, naming the invite, never its address.
    const lines = errors.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(lines[0]).toEqual({
      level: "error",
      run_id: expect.any(String),
      queue: "invite-emails",
      task: "invite e-mail",
      invite_id: inviteId,
      attempt: 1,
      status: 503,
      error: "HTTP 503",
    });
    expect(JSON.stringify(lines)).not.toContain("a@example.com");
    // As many attempts as the consumer lets Queues make before the dead-letter queue.
    expectAttemptsBeforeDeadLetters("invite-emails", EMAIL_ATTEMPTS, "invite-emails-dead-letters");

    const deadLetters = await consumeDeadLetter<InviteEmailMessage>("invite-emails-dead-letters", { inviteId });
    expect(deadLetters.ackAll).toBe(true);
    expect(deadLetters.warnings).toEqual([
      {
        level: "warn",
        run_id: expect.any(String),
        queue: "invite-emails-dead-letters",
        task: "invite e-mail dead letter",
        invite_id: inviteId,
        organization_id: organization.id,
        attempts: EMAIL_ATTEMPTS,
      },
    ]);
    expect(await listedStatus(organization, key, inviteId)).toBe("failed");

    // An admin sends it again once the transport is back: the same e-mail, its attempts from the start.
    const delivered = transport(200);
    messages.length = 0;
    const resent = await api("POST", `${invitesPath(organization.id)}/${inviteId}/resend_email`, { key });
    expect(resent.status).toBe(202);
    expect(resent.body).toMatchObject({ id: inviteId, email_status: "pending", emailing_attempt_made: true });
    expect(messages).toEqual([{ inviteId }]);
    expect((await consume("invite-emails", inviteId, 1)).explicitAcks).toEqual(["message"]);
    expect(await listedStatus(organization, key, inviteId)).toBe("sent");
    expect(delivered.emails().map((email) => email.body.to)).toEqual(["a@example.com"]);
    expect(delivered.emails()[0]!.body.text).toBe(posted.emails()[0]!.body.text);
  });

  it("a dead letter delivered again after the e-mail was sent again leaves the new sending alone", async () => {
    const { organization, key } = await setupOrganization();
    useEmailTransport();
    const messages = capturedMessages();
    const failing = transport(503);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const inviteId = (await postInvite(organization, key, { target_email: "a@example.com" })).body.id;
    await retryDelays("invite-emails", { inviteId }, attemptsFrom(1, EMAIL_ATTEMPTS));
    const first = await consumeDeadLetter<InviteEmailMessage>("invite-emails-dead-letters", { inviteId });
    expect(first.warnings).toHaveLength(1);
    expect(failing.count()).toBe(EMAIL_ATTEMPTS);
    expect(await listedStatus(organization, key, inviteId)).toBe("failed");
    messages.length = 0;
    const delivered = transport(200);
    expect((await api("POST", `${invitesPath(organization.id)}/${inviteId}/resend_email`, { key })).status).toBe(202);

    // Queues delivers a message at least once: the old dead letter comes again, before the new sending.
    const late = await consumeDeadLetter<InviteEmailMessage>("invite-emails-dead-letters", { inviteId });
    // Acked, with no line logged since the first time (the warnings' spy keeps its calls).
    expect(late).toEqual({ ackAll: true, warnings: first.warnings });
    expect(await listedStatus(organization, key, inviteId)).toBe("pending");
    expect(messages).toEqual([{ inviteId }]);
    expect((await consume("invite-emails", inviteId, 1)).explicitAcks).toEqual(["message"]);
    expect(await listedStatus(organization, key, inviteId)).toBe("sent");
    expect(delivered.count()).toBe(1);
  });

  it("counts an e-mail that cannot be opened as a failed attempt, retried on the schedule", async () => {
    const { organization, key } = await setupOrganization();
    useEmailTransport();
    capturedMessages();
    const posted = transport(200);
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const inviteId = (await postInvite(organization, key, { target_email: "a@example.com" })).body.id;
    // As an outbox sealed under a key since removed from the keyring.
    await db
      .update(schema.invites)
      .set({ emailOutbox: "enc:v1:AAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAAAA" })
      .where(eq(schema.invites.id, inviteId));

    expect(await retryDelays("invite-emails", { inviteId }, attemptsFrom(1, EMAIL_ATTEMPTS))).toEqual([
      30,
      300,
      1_800,
      7_200,
      undefined,
    ]);
    expect(posted.count()).toBe(0);
    expect(await storedInvite(inviteId)).toMatchObject({
      emailStatus: "pending",
      emailAttempts: EMAIL_ATTEMPTS,
      emailNextAttemptAt: null,
    });
    const lines = errors.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(lines[0]).toMatchObject({ level: "error", task: "invite e-mail", invite_id: inviteId, attempt: 1 });
    expect(lines[0].status).toBeNull();
    await consumeDeadLetter<InviteEmailMessage>("invite-emails-dead-letters", { inviteId });
    expect(await listedStatus(organization, key, inviteId)).toBe("failed");
  });

  it("sends again only a failed e-mail, of an unexpired invite, for an admin", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    useEmailTransport();
    capturedMessages();
    const resend = (inviteId: string, as = key) =>
      api("POST", `${invitesPath(organization.id)}/${inviteId}/resend_email`, { key: as });
    const pending = await postInvite(organization, key, { target_email: "a@example.com" });
    const failed = await postInvite(organization, key, { target_email: "b@example.com" });
    await db.update(schema.invites).set({ emailStatus: "failed" }).where(eq(schema.invites.id, failed.body.id));

    expectError(
      await resend(pending.body.id),
      409,
      errorBody("conflict", "conflict", "Only an invite e-mail that failed can be sent again."),
    );
    expectError(await resend(failed.body.id, member.key), 403, INSUFFICIENT_LEVEL);
    expectError(await resend(crypto.randomUUID()), 404, NOT_FOUND);
    await db
      .update(schema.invites)
      .set({ createdAt: daysAgo(4) })
      .where(eq(schema.invites.id, failed.body.id));
    expect((await resend(failed.body.id)).body.detail).toBe("This invite has expired: invite again to send a new one.");
    expect(await listedStatus(organization, key, failed.body.id)).toBe("failed");
  });

  it("answers the invite sent again as the list shows it: no deleted project in its project access", async () => {
    const { organization, key } = await setupOrganization();
    useEmailTransport();
    capturedMessages();
    const kept = await createProject(organization.id, { name: "Kept", access_control: true });
    const gone = await createProject(organization.id, { name: "Gone", access_control: true });
    const failed = await postInvite(organization, key, {
      target_email: "b@example.com",
      private_project_access: [
        { id: gone.id, level: "member" },
        { id: kept.id, level: "admin" },
      ],
    });
    await db.update(schema.invites).set({ emailStatus: "failed" }).where(eq(schema.invites.id, failed.body.id));
    expect((await api("DELETE", `/api/projects/${gone.id}`, { key })).status).toBe(204);
    const resent = await api("POST", `${invitesPath(organization.id)}/${failed.body.id}/resend_email`, { key });
    expect([resent.status, resent.body.private_project_access]).toEqual([202, [{ id: kept.id, level: "admin" }]]);
  });

  it("sends nothing with send_email false (not_sent), or with no transport configured (not_configured)", async () => {
    const { organization, key } = await setupOrganization();
    const messages = capturedMessages();
    const posted = transport(200);

    const withoutTransport = await postInvite(organization, key, { target_email: "a@example.com" });
    useEmailTransport();
    const notWanted = await postInvite(organization, key, { target_email: "b@example.com", send_email: false });

    expect(withoutTransport.body).toMatchObject({ emailing_attempt_made: false, email_status: "not_configured" });
    expect(notWanted.body).toMatchObject({ emailing_attempt_made: false, email_status: "not_sent" });
    expect((await storedInvite(notWanted.body.id)).emailOutbox).toBeNull();
    expect(messages).toEqual([]);
    expect(posted.count()).toBe(0);
  });

  it("the cron re-sends a lost message, and fails an exhausted e-mail whose dead letter was lost", async () => {
    const { organization, key } = await setupOrganization();
    useEmailTransport();
    const messages = capturedMessages();
    const lost = await postInvite(organization, key, { target_email: "a@example.com" });
    const exhausted = await postInvite(organization, key, { target_email: "b@example.com" });
    const recent = await postInvite(organization, key, { target_email: "c@example.com" });
    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();
    await db
      .update(schema.invites)
      .set({ emailNextAttemptAt: hoursAgo(1) })
      .where(eq(schema.invites.id, lost.body.id));
    await db
      .update(schema.invites)
      .set({ emailNextAttemptAt: null, emailAttempts: EMAIL_ATTEMPTS, updatedAt: hoursAgo(2) })
      .where(eq(schema.invites.id, exhausted.body.id));
    messages.length = 0;
    vi.spyOn(console, "warn").mockImplementation(() => undefined);

    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);

    expect(messages).toEqual([{ inviteId: lost.body.id }]);
    expect(await listedStatus(organization, key, exhausted.body.id)).toBe("failed");
    expect(await listedStatus(organization, key, recent.body.id)).toBe("pending");
  });

  it("the cron re-sends a lost message once, for two runs at once and for the next while it waits", async () => {
    const { organization, key } = await setupOrganization();
    useEmailTransport();
    const messages = capturedMessages();
    const lost = await postInvite(organization, key, { target_email: "lost@example.com" });
    await db
      .update(schema.invites)
      .set({ emailNextAttemptAt: new Date(Date.now() - 3_600_000).toISOString() })
      .where(eq(schema.invites.id, lost.body.id));
    messages.length = 0;
    const cron = () => worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);

    await Promise.all([cron(), cron()]);
    await cron();

    // Two messages would each send the e-mail: only a transport honouring Idempotency-Key drops one.
    expect(messages).toEqual([{ inviteId: lost.body.id }]);
    expect(await listedStatus(organization, key, lost.body.id)).toBe("pending");
  });
});

describe("an address", () => {
  /** An invite to `address` from a new organization, sent by e-mail: the answer's token and the e-mail's. */
  async function invitedByEmail(address: string) {
    const inviting = await setupOrganization({ name: "Mailing" });
    useEmailTransport();
    const mail = transport(200);
    const invite = await postInvite(inviting.organization, inviting.key, { target_email: address });
    expect(invite.status).toBe(201);
    const [email] = await eventually(async () => (mail.count() > 0 ? mail.emails() : undefined));
    return { handedOver: invite.body.token as string, mailed: mailedToken(email!.body.text)!, inviting };
  }

  /** An invite to `address` from another organization, which its user's pending invites may list. */
  async function pendingInviteTo(address: string) {
    const other = await setupOrganization({ name: "Other (confidential)" });
    const invite = await postInvite(other.organization, other.key, { target_email: address, send_email: false });
    expect(invite.status).toBe(201);
    return { id: invite.body.id, organization_id: other.organization.id, organization_name: "Other (confidential)" };
  }

  it("is proven by signing up with the e-mail's own token: verified, and shown its pending invites", async () => {
    const address = `proven-${crypto.randomUUID()}@example.com`;
    const { mailed } = await invitedByEmail(address);
    const signup = await api("POST", "/api/signup", { body: { token: mailed } });
    expect(signup.status).toBe(201);
    expect(signup.body.user.is_email_verified).toBe(true);

    const pending = await pendingInviteTo(address);
    const me = await api("GET", "/api/users/@me", { key: signup.body.personal_api_key.value });
    expect(me.body.is_email_verified).toBe(true);
    expect(me.body.pending_invites).toEqual([{ ...pending, target_email: address, created_at: expect.any(String) }]);
  });

  it("is not proven by the token its inviter was answered: no other organization's invite is shown to it", async () => {
    // Anyone may make an organization, invite any address and receive that invite's token.
    const address = `squatted-${crypto.randomUUID()}@example.com`;
    const { handedOver } = await invitedByEmail(address);
    const signup = await api("POST", "/api/signup", { body: { token: handedOver } });
    expect(signup.status).toBe(201);
    expect(signup.body.user.is_email_verified).toBe(false);

    await pendingInviteTo(address);
    const me = await api("GET", "/api/users/@me", { key: signup.body.personal_api_key.value });
    expect(me.body.is_email_verified).toBe(false);
    expect(me.body.pending_invites).toEqual([]);
  });

  it("is proven by an existing account accepting with its key and the e-mail's own token", async () => {
    const address = `existing-${crypto.randomUUID()}@example.com`;
    const first = await invitedByEmail(address);
    const signup = await api("POST", "/api/signup", { body: { token: first.handedOver } });
    expect(signup.body.user.is_email_verified).toBe(false);
    const key = signup.body.personal_api_key.value;

    const second = await invitedByEmail(address);
    const joined = await api("POST", "/api/signup", { key, body: { token: second.mailed } });
    expect(joined.status).toBe(201);
    expect(joined.body.user.is_email_verified).toBe(true);
    expect((await api("GET", "/api/users/@me", { key })).body.is_email_verified).toBe(true);
  });

  /** An account made for `address` with the token its inviter was answered, and a second key its maker added. */
  async function squatted(address: string, policy: Record<string, unknown> = {}) {
    const { handedOver, inviting } = await invitedByEmail(address);
    const orgPath = `/api/organizations/${inviting.organization.id}`;
    expect((await api("PATCH", orgPath, { key: inviting.key, body: policy })).status).toBe(200);
    const signup = await api("POST", "/api/signup", { body: { token: handedOver, first_name: "Squatter" } });
    expect([signup.status, signup.body.user.is_email_verified]).toEqual([201, false]);
    const first: string = signup.body.personal_api_key.value;
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const spare = {
      label: "spare",
      scopes: ["*"],
      ...(policy.api_key_max_lifetime_days ? { expires_at: expiresAt } : {}),
    };
    const added = await api("POST", "/api/personal_api_keys", { key: first, body: spare });
    expect(added.status).toBe(201);
    return { uuid: signup.body.user.uuid as string, keys: [first, added.body.value as string], inviting };
  }

  it("is taken back from an account made with the inviter's token: keys revoked, owner given a key", async () => {
    const address = `claimed-${crypto.randomUUID()}@example.com`;
    const account = await squatted(address);

    const { mailed, inviting } = await invitedByEmail(address);
    const claim = await api("POST", "/api/signup", {
      body: { token: mailed, first_name: "Owner", claim_account: true },
    });

    expect(claim.status).toBe(201);
    expect(claim.body).toMatchObject({
      user: { uuid: account.uuid, email: address, first_name: "Owner", is_email_verified: true },
      organization_id: inviting.organization.id,
      personal_api_key: { label: "First key (signed up by invite)", scopes: ["*"], value: expect.any(String) },
    });
    for (const key of account.keys) expect((await api("GET", "/api/users/@me", { key })).status).toBe(401);
    const me = await api("GET", "/api/users/@me", { key: claim.body.personal_api_key.value });
    expect(me.body).toMatchObject({ uuid: account.uuid, is_email_verified: true });
    // The account's memberships stay: the organization its maker joined it to, and the new one.
    expect(me.body.organizations).toHaveLength(2);
    const keys = await api("GET", "/api/personal_api_keys", { key: claim.body.personal_api_key.value });
    expect(keys.body.map((key: { label: string }) => key.label)).toEqual(["First key (signed up by invite)"]);
    const log = await api(
      "GET",
      `/api/organizations/${inviting.organization.id}/activity_log?scope=OrganizationMembership`,
      {
        key: inviting.key,
      },
    );
    expect(log.body.results).toEqual([
      expect.objectContaining({
        activity: "joined",
        user: expect.objectContaining({ uuid: account.uuid }),
        detail: expect.objectContaining({ context: { user_uuid: account.uuid, account_claimed: true } }),
      }),
    ]);
  });

  it("is not taken unless asked: account_exists names claim_account, and the account and its keys stay", async () => {
    const address = `unasked-${crypto.randomUUID()}@example.com`;
    const account = await squatted(address);
    const { mailed } = await invitedByEmail(address);

    for (const body of [{ token: mailed }, { token: mailed, claim_account: false }]) {
      const refused = await api("POST", "/api/signup", { body });
      expect([refused.status, refused.body]).toEqual([
        400,
        errorBody(
          "validation_error",
          "account_exists",
          "An account with this email address already exists, its address not proven. Accept the invite with that " +
            "account's personal API key; or, if you did not make it, send claim_account: true to take it over " +
            "(every key it has is revoked).",
          "claim_account",
        ),
      ]);
    }
    const notBoolean = await api("POST", "/api/signup", { body: { token: mailed, claim_account: "true" } });
    expect([notBoolean.status, notBoolean.body.attr]).toEqual([400, "claim_account"]);
    for (const key of account.keys) {
      expect((await api("GET", "/api/users/@me", { key })).body).toMatchObject({ is_email_verified: false });
    }
  });

  it("is outlived by no key nor joining its earlier holder's key makes while the claim runs: 401", async () => {
    const claimOf = (token: string) => api("POST", "/api/signup", { body: { token, claim_account: true } });
    const writes: [RegExp, (key: string, theirToken: string) => ReturnType<typeof api>][] = [
      [
        /^insert into "personal_api_keys"/,
        (key) => api("POST", "/api/personal_api_keys", { key, body: { label: "backdoor", scopes: ["*"] } }),
      ],
      [/^insert into "organization_memberships"/, (key, token) => api("POST", "/api/signup", { key, body: { token } })],
    ];
    for (const [statement, write] of writes) {
      const address = `raced-${crypto.randomUUID()}@example.com`;
      const account = await squatted(address);
      const { mailed } = await invitedByEmail(address);
      const theirs = await invitedByEmail(address);
      // The earlier holder's write has authenticated and read; the claim lands before it runs.
      const meanwhile = beforeWrites([[statement, () => claimOf(mailed)]]);

      const refused = await write(account.keys[0]!, theirs.handedOver);

      vi.restoreAllMocks();
      const [claim] = meanwhile as [Awaited<ReturnType<typeof claimOf>>];
      expect(claim.status).toBe(201);
      expectError(refused, 401, AUTHENTICATION_FAILED);
      const owner = claim.body.personal_api_key.value;
      const keys = await api("GET", "/api/personal_api_keys", { key: owner });
      expect(keys.body.map((key: { label: string }) => key.label)).toEqual(["First key (signed up by invite)"]);
      const me = await api("GET", "/api/users/@me", { key: owner });
      expect(me.body.organizations.map((organization: { id: string }) => organization.id)).not.toContain(
        theirs.inviting.organization.id,
      );
    }
  });

  it("records its first key in every organization the account belongs to, and makes @current the new one", async () => {
    const address = `logged-${crypto.randomUUID()}@example.com`;
    const account = await squatted(address);
    const { mailed, inviting } = await invitedByEmail(address);

    const claim = await api("POST", "/api/signup", { body: { token: mailed, claim_account: true } });

    expect(claim.status).toBe(201);
    const keyId: string = claim.body.personal_api_key.id;
    for (const organization of [account.inviting, inviting]) {
      const log = await api(
        "GET",
        `/api/organizations/${organization.organization.id}/activity_log?scope=PersonalAPIKey`,
        {
          key: organization.key,
        },
      );
      const created = log.body.results.filter(
        (entry: { activity: string; item_id: string }) => entry.activity === "created" && entry.item_id === keyId,
      );
      expect(created).toHaveLength(1);
    }
    const current = await api("GET", "/api/organizations/@current", { key: claim.body.personal_api_key.value });
    expect(current.body.id).toBe(inviting.organization.id);
  });

  it("is given a first key within the key lifetime limit of every organization the account belongs to", async () => {
    const address = `limited-${crypto.randomUUID()}@example.com`;
    await squatted(address, { api_key_max_lifetime_days: 7 });

    const { mailed } = await invitedByEmail(address);
    const claim = await api("POST", "/api/signup", { body: { token: mailed, claim_account: true } });

    expect(claim.status).toBe(201);
    const expiresAt = Date.parse(claim.body.personal_api_key.expires_at);
    expect(expiresAt).toBeGreaterThan(Date.now() + 6 * 86_400_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 7 * 86_400_000);
  });

  it("is not taken from an account whose address is proven: the e-mail's token answers account_exists", async () => {
    const address = `kept-${crypto.randomUUID()}@example.com`;
    const first = await invitedByEmail(address);
    const signup = await api("POST", "/api/signup", { body: { token: first.mailed } });
    expect(signup.body.user.is_email_verified).toBe(true);

    const second = await invitedByEmail(address);
    const claim = await api("POST", "/api/signup", { body: { token: second.mailed, claim_account: true } });

    expect(claim.status).toBe(400);
    expect(claim.body.code).toBe("account_exists");
    expect((await api("GET", "/api/users/@me", { key: signup.body.personal_api_key.value })).status).toBe(200);
    expect((await api("GET", `/api/signup/${second.mailed}`)).status).toBe(200);
  });

  it("is taken once when another e-mail's token claims it meanwhile: the later claim gets account_exists", async () => {
    const address = `raced-${crypto.randomUUID()}@example.com`;
    const account = await squatted(address);
    const [later, earlier] = [(await invitedByEmail(address)).mailed, (await invitedByEmail(address)).mailed];
    const claimOf = (token: string) => api("POST", "/api/signup", { body: { token, claim_account: true } });
    const meanwhile = beforeWrites([
      [/^delete from "personal_api_keys" where \("personal_api_keys"\."user_id"/, () => claimOf(earlier)],
    ]);

    const lost = await claimOf(later);

    vi.restoreAllMocks();
    const [won] = meanwhile as [Awaited<ReturnType<typeof claimOf>>];
    expect(won.status).toBe(201);
    expect([lost.status, lost.body.code]).toEqual([400, "account_exists"]);
    const me = await api("GET", "/api/users/@me", { key: won.body.personal_api_key.value });
    expect(me.body).toMatchObject({ uuid: account.uuid, is_email_verified: true });
    const keys = await api("GET", "/api/personal_api_keys", { key: won.body.personal_api_key.value });
    expect(keys.body).toHaveLength(1);
  });
});

describe("an account's earlier holder, once its address's owner has claimed it", () => {
  /**
   * An account made for `address` without proving it, admin of the organization `held`, with a
   * key; and the address's owner's invite to another organization, with the token only its e-mail carried.
   */
  async function squattedAdmin() {
    const address = `claimed-${crypto.randomUUID()}@example.com`;
    const held = await setupOrganization({ name: "Held" });
    const squatter = await createUser({ email: address, isEmailVerified: false });
    await addMembership(held.organization.id, squatter, MembershipLevel.admin);
    const squatterKey = (await createApiKey(squatter)).value;
    const inviting = await setupOrganization({ name: "Inviting" });
    const mailed = await mintInviteToken();
    await insertInvite(inviting.organization.id, inviting.owner, {
      targetEmail: address,
      mailedTokenHash: mailed.hash,
    });
    const claim = () => api("POST", "/api/signup", { body: { token: mailed.value, claim_account: true } });
    return { held, squatterKey, claim };
  }

  const inviteFrom = (organizationId: string, key: string) =>
    api("POST", `/api/organizations/${organizationId}/invites`, {
      key,
      body: {
        target_email: `other-${crypto.randomUUID()}@example.com`,
        level: MembershipLevel.admin,
        send_email: false,
      },
    });

  it("gets no way back through an invite they sent from it: it opens nothing", async () => {
    const { held, squatterKey, claim } = await squattedAdmin();
    const sent = await inviteFrom(held.organization.id, squatterKey);
    expect(sent.status).toBe(201);

    expect((await claim()).status).toBe(201);

    expectError(await api("POST", "/api/signup", { body: { token: sent.body.token } }), 404, NOT_FOUND);
    // No one's invite now: listed for the organization's admins without its sender.
    const invites = await api("GET", `/api/organizations/${held.organization.id}/invites`, { key: held.key });
    expect(
      invites.body.results.map((invite: { id: string; created_by: unknown }) => [invite.id, invite.created_by]),
    ).toEqual([[sent.body.id, null]]);
  });

  it("gets no way back through an invite their key sends between the claim's read and its write", async () => {
    const { held, squatterKey, claim } = await squattedAdmin();
    const meanwhile = beforeWrites([
      [/^insert into "personal_api_keys"/, () => inviteFrom(held.organization.id, squatterKey)],
    ]);

    const claimed = await claim();

    vi.restoreAllMocks();
    expect(claimed.status).toBe(201);
    const [sent] = meanwhile as [Awaited<ReturnType<typeof api>>];
    expect(sent.status).toBe(201);
    expectError(await api("POST", "/api/signup", { body: { token: sent.body.token } }), 404, NOT_FOUND);
  });

  it("sends no invite with their key while the claim lands: 401", async () => {
    const { held, squatterKey, claim } = await squattedAdmin();
    const meanwhile = beforeWrites([[/^insert into "invites"/, () => claim()]]);

    const refused = await inviteFrom(held.organization.id, squatterKey);

    vi.restoreAllMocks();
    const [claimed] = meanwhile as [Awaited<ReturnType<typeof claim>>];
    expect(claimed.status).toBe(201);
    expectError(refused, 401, AUTHENTICATION_FAILED);
    const invites = await api("GET", `/api/organizations/${held.organization.id}/invites`, { key: held.key });
    expect(invites.body.results).toEqual([]);
  });

  it("has their webhooks turned off, each with Webhook.disabled by the system", async () => {
    const { held, squatterKey, claim } = await squattedAdmin();
    const created = await api("POST", `/api/organizations/${held.organization.id}/webhooks`, {
      key: squatterKey,
      body: { url: `${RECEIVER}/squatter`, events: ["*"] },
    });
    expect(created.status).toBe(201);

    expect((await claim()).status).toBe(201);

    const webhookPath = `/api/organizations/${held.organization.id}/webhooks/${created.body.id}`;
    expect((await api("GET", webhookPath, { key: held.key })).body.enabled).toBe(false);
    const log = await api("GET", `/api/organizations/${held.organization.id}/activity_log?scope=Webhook`, {
      key: held.key,
    });
    expect(log.body.results[0]).toMatchObject({
      activity: "disabled",
      item_id: created.body.id,
      is_system: true,
      detail: { context: { reason: "Its creator's account was taken over by the owner of its e-mail address." } },
    });
    // The claim's other entries there stand beside it: its first key's creation.
    const keys = await api("GET", `/api/organizations/${held.organization.id}/activity_log?scope=PersonalAPIKey`, {
      key: held.key,
    });
    expect(keys.body.results.map((entry: { activity: string }) => entry.activity)).toContain("created");
  });

  it("turns no webhook on again nor sends an invite with their key still cached elsewhere: 401", async () => {
    const { held, squatterKey, claim } = await squattedAdmin();
    const hooks = `/api/organizations/${held.organization.id}/webhooks`;
    const created = await api("POST", hooks, { key: squatterKey, body: { url: `${RECEIVER}/earlier`, events: ["*"] } });
    expect(created.status).toBe(201);
    // The key's cache entry, as another location's KV keeps it for up to a minute after a revocation.
    const entryName = apiKeyCacheKey(await sha256Hex(squatterKey));
    const cached = await eventually(async () => (await env.API_KEY_CACHE.get(entryName)) ?? undefined);
    expect((await claim()).status).toBe(201);
    await env.API_KEY_CACHE.put(entryName, cached, { expirationTtl: 60 });

    const turnedOn = await api("PATCH", `${hooks}/${created.body.id}`, { key: squatterKey, body: { enabled: true } });
    const another = await api("POST", hooks, { key: squatterKey, body: { url: `${RECEIVER}/another`, events: ["*"] } });
    const invited = await inviteFrom(held.organization.id, squatterKey);

    for (const refused of [turnedOn, another, invited]) expectError(refused, 401, AUTHENTICATION_FAILED);
    const listed = await api("GET", hooks, { key: held.key });
    expect(
      listed.body.results.map((webhook: { id: string; enabled: boolean }) => [webhook.id, webhook.enabled]),
    ).toEqual([[created.body.id, false]]);
  });

  it("turning a webhook on while the claim is read makes it answer 409, and a retry turns it off", async () => {
    const { held, squatterKey, claim } = await squattedAdmin();
    const meanwhile = beforeWrites([
      [
        /^insert into "personal_api_keys"/,
        () =>
          api("POST", `/api/organizations/${held.organization.id}/webhooks`, {
            key: squatterKey,
            body: { url: `${RECEIVER}/late`, events: ["*"] },
          }),
      ],
    ]);

    const refused = await claim();

    vi.restoreAllMocks();
    const [late] = meanwhile as [Awaited<ReturnType<typeof api>>];
    expect(late.status).toBe(201);
    expectError(refused, 409, changedMeanwhile("account"));
    expect((await claim()).status).toBe(201);
    const webhook = await api("GET", `/api/organizations/${held.organization.id}/webhooks/${late.body.id}`, {
      key: held.key,
    });
    expect(webhook.body.enabled).toBe(false);
  });
});

describe("the e-mail of an invite that opens nothing", () => {
  it("is not sent once its inviter is removed, nor once its organization is being deleted", async () => {
    const { organization, key } = await setupOrganization({ name: "Acme" });
    const admin = await addMember(organization.id, MembershipLevel.admin);
    useEmailTransport();
    capturedMessages();
    const byRemoved = await postInvite(organization, admin.key, {
      target_email: "victim@example.com",
      message: "Sign in at https://attacker.example to accept",
    });
    expect(byRemoved.body.email_status).toBe("pending");
    const removal = `/api/organizations/${organization.id}/members/${admin.user.uuid}`;
    expect((await api("DELETE", removal, { key })).status).toBe(204);

    const deleted = await setupOrganization({ name: "Deleted Inc" });
    const beforeDeletion = await postInvite(deleted.organization, deleted.key, { target_email: "late@example.com" });
    expect(beforeDeletion.body.email_status).toBe("pending");
    vi.spyOn(env.BACKGROUND_JOBS, "send").mockResolvedValue({
      metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } },
    });
    expect((await api("DELETE", `/api/organizations/${deleted.organization.id}`, { key: deleted.key })).status).toBe(
      204,
    );

    const posted = transport(200);
    for (const invite of [byRemoved, beforeDeletion]) {
      expect((await api("GET", `/api/signup/${invite.body.token}`)).status).toBe(404);
      const consumed = await consume("invite-emails", invite.body.id, 1);
      expect(consumed.explicitAcks).toEqual(["message"]);
      expect(await storedInvite(invite.body.id)).toMatchObject({ emailStatus: "failed", emailOutbox: null });
    }
    expect(posted.count()).toBe(0);
  });

  it("is not sent once the invite has expired: a message the cron sends again days later opens nothing", async () => {
    const { organization, key } = await setupOrganization({ name: "Acme" });
    useEmailTransport();
    capturedMessages();
    const invite = await postInvite(organization, key, { target_email: "late-reader@example.com" });
    expect(invite.body.email_status).toBe("pending");
    // Sent four days ago by an owner of a week: past its 3 days, and opening nothing else would refuse.
    await db
      .update(schema.invites)
      .set({ createdAt: daysAgo(4) })
      .where(eq(schema.invites.id, invite.body.id));
    await db
      .update(schema.organizationMemberships)
      .set({ joinedAt: daysAgo(7) })
      .where(eq(schema.organizationMemberships.organizationId, organization.id));

    const posted = transport(200);
    const consumed = await consume("invite-emails", invite.body.id, 1);
    expect(consumed.explicitAcks).toEqual(["message"]);
    expect(await storedInvite(invite.body.id)).toMatchObject({ emailStatus: "failed", emailOutbox: null });
    expect(posted.count()).toBe(0);
  });
});

describe("the e-mail transport's credentials in a log line", () => {
  it("an invite e-mail the transport URL cannot be fetched from is logged without the URL's credentials", async () => {
    const { organization, key } = await setupOrganization();
    // An operator's relay URL with its credentials, mistyped (a port out of range): fetch refuses it.
    env.EMAIL_TRANSPORT_URL = "https://mailer:relay-password-42@mail.example.test:99999/send";
    const sent: InviteEmailMessage[] = [];
    vi.spyOn(env.INVITE_EMAILS, "sendBatch").mockImplementation(async (messages) => {
      sent.push(...[...messages].map((message) => message.body as InviteEmailMessage));
      return { metadata: { metrics: { backlogCount: sent.length, backlogBytes: 0 } } };
    });
    const invite = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key,
      body: { target_email: "jane@example.com" },
    });
    expect(invite.status).toBe(201);
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);

    await consumeAttempt<InviteEmailMessage>("invite-emails", { inviteId: invite.body.id }, 1);

    const lines = errors.mock.calls.map(([line]) => String(line));
    expect(lines.some((line) => line.includes("invite e-mail"))).toBe(true);
    for (const line of lines) expect(line).not.toContain("relay-password-42");
  });
});
