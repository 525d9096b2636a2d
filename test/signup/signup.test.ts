import { and, eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { mintInviteToken } from "../../src/organizations/invites/invite-tokens";
import { nowIso } from "../../src/platform/ids";
import { KEY_BLOCKED, keysOutliveLifetime } from "../../src/platform/auth/key-policy";
import { MembershipLevel } from "../../src/platform/levels";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  createProject,
  createUser,
  db,
  errorBody,
  grantProjectAccess,
  ISO_TIMESTAMP,
  setupOrganization,
  userBasic,
  UUID,
} from "../support/harness";
import { changedMeanwhile, expectError } from "../support/error-bodies";
import { organizationBasic } from "../support/organizations";
import { daysAgo, INVITE_WRITE, insertInvite, restoreTestDoubles } from "../support/people";
import { beforeWrites } from "../support/races";

afterEach(restoreTestDoubles);

const signupPath = (token: string) => `/api/signup/${token}`;
const notFound = errorBody("invalid_request", "not_found", "Not found.");
const expired = errorBody(
  "validation_error",
  "expired",
  "This invite has expired. Please ask your admin for a new one.",
);

async function membershipIdOf(organizationId: string, email: string, key: string): Promise<string> {
  const response = await api("GET", `/api/organizations/${organizationId}/members?email=${encodeURIComponent(email)}`, {
    key,
  });
  return response.body.results[0].id;
}

/** The context of the invite's `OrganizationInvite.accepted` entry: what the joining granted. */
async function acceptedContext(organizationId: string, inviteId: string, key: string) {
  const path = `/api/organizations/${organizationId}/activity_log?scope=OrganizationInvite&item_id=${inviteId}`;
  const log = await api("GET", path, { key });
  const accepted = log.body.results.filter((entry: { activity: string }) => entry.activity === "accepted");
  expect(accepted).toHaveLength(1);
  return accepted[0].detail.context;
}

async function inviteEmails(organizationId: string, key: string) {
  const response = await api("GET", `/api/organizations/${organizationId}/invites`, { key });
  return response.body.results.map((invite: { target_email: string }) => invite.target_email);
}

describe("GET /api/signup/:token", () => {
  it("previews the invite without a key: masked e-mail, first name, organization name", async () => {
    const { organization, owner } = await setupOrganization({ name: "Acme" });
    const invite = await insertInvite(organization.id, owner, {
      targetEmail: "jane.doe@example.com",
      firstName: "Jane",
    });

    const response = await api("GET", signupPath(invite.token));

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: invite.id,
      target_email: "j*******@example.com",
      first_name: "Jane",
      organization_name: "Acme",
      level: MembershipLevel.member,
    });
    expect(response.cost.queries).toBe(1);
    // Its address is a secret: no cache keeps the answer.
    expect(response.headers.get("Cache-Control")).toBe("no-store");
  });

  it("masks a one-letter local part whole", async () => {
    const { organization, owner } = await setupOrganization();
    const invite = await insertInvite(organization.id, owner, { targetEmail: "j@example.com" });

    const response = await api("GET", `${signupPath(invite.token)}/`);

    expect(response.body.target_email).toBe("*@example.com");
  });

  it("answers 404 to an unknown invite and 400 expired to one past its 3 days", async () => {
    const { organization, owner } = await setupOrganization();
    const old = await insertInvite(organization.id, owner, { createdAt: daysAgo(3, 1000) });

    const unknown = await api("GET", signupPath(crypto.randomUUID()));
    const tooOld = await api("GET", signupPath(old.token));

    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(notFound);
    expect(tooOld.status).toBe(400);
    expect(tooOld.body).toEqual(expired);
    // As the published document tells clients.
    const document = (await api("GET", "/api/schema")).body;
    expect(document.paths["/api/signup/{token}"].get.description).toContain(
      "an unknown or used token answers 404, an expired one 400 `expired`",
    );
  });
});

describe("an invite of an organization being deleted", () => {
  it("is 404 to preview and to accept: one written as the deletion began opens nothing", async () => {
    const { organization, owner } = await setupOrganization();
    // As a write racing the DELETE leaves it: an invite stored after the organization was marked.
    await db
      .update(schema.organizations)
      .set({ deletionScheduledAt: nowIso() })
      .where(eq(schema.organizations.id, organization.id));
    const invite = await insertInvite(organization.id, owner, { targetEmail: "late@example.com" });
    expectError(await api("GET", signupPath(invite.token)), 404, notFound);
    expectError(await api("POST", signupPath(invite.token), { body: { first_name: "Late" } }), 404, notFound);
    const memberships = await db
      .select()
      .from(schema.organizationMemberships)
      .where(eq(schema.organizationMemberships.organizationId, organization.id));
    expect(memberships.map((row) => row.userId)).toEqual([owner.id]);
  });
});

describe("POST /api/signup/:token, as a new user", () => {
  it("creates the user with a first key shown once, joins at the invite's level, and uses up the invite", async () => {
    const { organization, owner, key } = await setupOrganization();
    const invite = await insertInvite(organization.id, owner, {
      targetEmail: "jane@example.com",
      firstName: "Jane",
      level: MembershipLevel.admin,
    });
    await insertInvite(organization.id, owner, { targetEmail: "jane@example.com" });
    const otherInvite = await insertInvite(organization.id, owner, { targetEmail: "joe@example.com" });
    const elsewhere = await setupOrganization();
    const inviteElsewhere = await insertInvite(elsewhere.organization.id, elsewhere.owner, {
      targetEmail: "jane@example.com",
    });

    const response = await api("POST", signupPath(invite.token), { body: { last_name: "Doe" } });

    expect(response.status).toBe(201);
    const user = {
      id: expect.any(Number),
      uuid: expect.stringMatching(UUID),
      distinct_id: expect.stringMatching(/^[0-9A-Za-z]{43}$/),
      first_name: "Jane",
      last_name: "Doe",
      email: "jane@example.com",
      is_email_verified: false,
      hedgehog_config: null,
      role_at_organization: "",
    };
    expect(response.body).toEqual({
      user,
      organization_id: organization.id,
      personal_api_key: {
        id: expect.stringMatching(UUID),
        label: "First key (signed up by invite)",
        mask_value: `phx_...${response.body.personal_api_key.value.slice(-4)}`,
        created_at: expect.stringMatching(ISO_TIMESTAMP),
        last_used_at: null,
        user_id: response.body.user.id,
        scopes: ["*"],
        scoped_organizations: [],
        scoped_teams: [],
        expires_at: null,
        last_rolled_at: null,
        previous_value_expires_at: null,
        value: expect.stringMatching(/^phx_[0-9A-Za-z]{44}$/),
      },
    });
    expect(response.cost.queries).toBe(2);

    const newKey = response.body.personal_api_key.value;
    const me = await api("GET", "/api/users/@me", { key: newKey });
    // `@me` answers a blank role as null, as PostHog's User serializer writes it.
    const { role_at_organization: _blankRole, ...createdUser } = response.body.user;
    expect(me.body).toMatchObject({
      ...createdUser,
      role_at_organization: null,
      organizations: [organizationBasic(organization, 8)],
      organization: { id: organization.id, membership_level: 8 },
    });
    expect(await inviteEmails(organization.id, key)).toEqual([otherInvite.targetEmail]);
    expect(await inviteEmails(elsewhere.organization.id, elsewhere.key)).toEqual([inviteElsewhere.targetEmail]);
    // Shown once: listing keys gives the mask only.
    const keys = await api("GET", "/api/personal_api_keys", { key: newKey });
    const { value: _shownOnce, ...maskedKey } = response.body.personal_api_key;
    expect(keys.body).toEqual([{ ...maskedKey, last_used_at: expect.stringMatching(ISO_TIMESTAMP) }]);
  });

  it("grants the invite's private project access, skipping projects deleted since", async () => {
    const { organization, owner } = await setupOrganization();
    const secret = await createProject(organization.id, { access_control: true });
    const otherSecret = await createProject(organization.id, { access_control: true });
    const invite = await insertInvite(organization.id, owner, {
      privateProjectAccess: [
        { id: 999999, level: "member" },
        { id: secret.id, level: "admin" },
      ],
    });

    const response = await api("POST", signupPath(invite.token), { body: {} });

    expect(response.status).toBe(201);
    const newKey = response.body.personal_api_key.value;
    const projectPath = (id: number) => `/api/organizations/${organization.id}/projects/${id}`;
    expect((await api("GET", projectPath(secret.id), { key: newKey })).status).toBe(200);
    expect((await api("GET", projectPath(otherSecret.id), { key: newKey })).status).toBe(404);
  });

  it("grants no rule on a project being deleted since the invite was sent, nor names it as granted", async () => {
    const { organization, owner, key } = await setupOrganization();
    const doomed = await createProject(organization.id, { access_control: true, name: "Doomed" });
    const kept = await createProject(organization.id, { access_control: true, name: "Kept" });
    const invite = await insertInvite(organization.id, owner, {
      privateProjectAccess: [
        { id: doomed.id, level: "admin" },
        { id: kept.id, level: "member" },
      ],
    });
    expect((await api("DELETE", `/api/projects/${doomed.id}/`, { key })).status).toBe(204);

    const joined = await api("POST", signupPath(invite.token), { body: {} });

    expect(joined.status).toBe(201);
    expect(await acceptedContext(organization.id, invite.id, key)).toMatchObject({
      private_project_access: [{ id: kept.id, level: "member" }],
    });
    const rules = await db
      .select({ resourceId: schema.accessControls.resourceId })
      .from(schema.accessControls)
      .where(
        and(eq(schema.accessControls.resource, "project"), eq(schema.accessControls.resourceId, String(doomed.id))),
      );
    expect(rules).toEqual([]);
  });

  it("grants no more than the inviter may grant when the invite is redeemed", async () => {
    const { organization, key } = await setupOrganization();
    const inviter = await addMember(organization.id, MembershipLevel.member);
    const wasAdmin = await createProject(organization.id);
    const nowHidden = await createProject(organization.id);
    const invite = await insertInvite(organization.id, inviter.user, {
      privateProjectAccess: [
        { id: wasAdmin.id, level: "admin" },
        { id: nowHidden.id, level: "member" },
      ],
    });
    // Since the invite was sent, the inviter is a plain member of one project and cannot see the other.
    await grantProjectAccess(nowHidden.id, inviter.membership.id, "none");

    const response = await api("POST", signupPath(invite.token), { body: {} });

    expect(response.status).toBe(201);
    const rules = await api("GET", `/api/projects/${wasAdmin.id}/access_controls`, { key });
    const newMembership = await membershipIdOf(organization.id, response.body.user.email, key);
    expect(rules.body.access_controls).toEqual([
      expect.objectContaining({ organization_member: newMembership, access_level: "member" }),
    ]);
    const hiddenRules = await api("GET", `/api/projects/${nowHidden.id}/access_controls`, { key });
    expect(
      hiddenRules.body.access_controls.map((rule: { organization_member: string }) => rule.organization_member),
    ).toEqual([inviter.membership.id]);
    // The log says what the joining granted, not what the invite asked for.
    expect(await acceptedContext(organization.id, invite.id, key)).toEqual({
      level: MembershipLevel.member,
      private_project_access: [{ id: wasAdmin.id, level: "member" }],
    });
  });

  it("grants the level its inviter has now at most, and the log says which", async () => {
    const { organization, key } = await setupOrganization();
    const inviter = await addMember(organization.id, MembershipLevel.owner);
    const email = `demoted-inviter-${organization.id.slice(-6)}@example.com`;
    const invite = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key: inviter.key,
      body: { target_email: email, level: MembershipLevel.owner },
    });
    expect(invite.status).toBe(201);
    const demoted = await api("PATCH", `/api/organizations/${organization.id}/members/${inviter.user.uuid}`, {
      key,
      body: { level: MembershipLevel.admin },
    });
    expect(demoted.status).toBe(200);

    expect((await api("POST", signupPath(invite.body.token), { body: {} })).status).toBe(201);
    const members = await api("GET", `/api/organizations/${organization.id}/members?email=${email}`, { key });
    expect(members.body.results.map((member: { level: number }) => member.level)).toEqual([MembershipLevel.admin]);
    expect(await acceptedContext(organization.id, invite.body.id, key)).toEqual({
      level: MembershipLevel.admin,
      private_project_access: [],
    });
  });

  it("grants nothing from an invite whose inviter has left the organization: 404, no membership", async () => {
    const { organization, key } = await setupOrganization();
    const inviter = await addMember(organization.id, MembershipLevel.admin);
    const secret = await createProject(organization.id, { access_control: true });
    const invite = await insertInvite(organization.id, inviter.user, {
      privateProjectAccess: [{ id: secret.id, level: "admin" }],
    });
    expect(
      (await api("DELETE", `/api/organizations/${organization.id}/members/${inviter.user.uuid}`, { key })).status,
    ).toBe(204);

    const response = await api("POST", signupPath(invite.token), { body: {} });

    expect([response.status, response.body]).toEqual([404, notFound]);
  });

  it("keeps an invite closed when its inviter, removed, comes back: only a new invite opens", async () => {
    const { organization, key } = await setupOrganization();
    const orgPath = `/api/organizations/${organization.id}`;
    const inviter = await addMember(organization.id, MembershipLevel.member);
    const sent = await api("POST", `${orgPath}/invites`, {
      key: inviter.key,
      body: { target_email: "accomplice@example.com", send_email: false },
    });
    expect(sent.status).toBe(201);
    expect((await api("DELETE", `${orgPath}/members/${inviter.user.uuid}`, { key })).status).toBe(204);
    expect((await api("GET", signupPath(sent.body.token))).status).toBe(404);

    // Invited back, the inviter accepts with their own key.
    const back = await api("POST", `${orgPath}/invites`, {
      key,
      body: { target_email: inviter.user.email, send_email: false },
    });
    expect((await api("POST", "/api/signup", { key: inviter.key, body: { token: back.body.token } })).status).toBe(201);

    expect([(await api("GET", signupPath(sent.body.token))).status]).toEqual([404]);
    const joined = await api("POST", signupPath(sent.body.token), { body: {} });
    expect([joined.status, joined.body]).toEqual([404, notFound]);
    const members = await api("GET", `${orgPath}/members?email=accomplice@example.com`, { key });
    expect(members.body.results).toEqual([]);
    // An invite the inviter sends now opens.
    const fresh = await api("POST", `${orgPath}/invites`, {
      key: inviter.key,
      body: { target_email: "accomplice@example.com", send_email: false },
    });
    expect((await api("GET", signupPath(fresh.body.token))).status).toBe(200);
  });

  it("keeps an invite closed when its inviter leaves and comes back between the signup's read and write", async () => {
    const { organization, key } = await setupOrganization();
    const inviter = await addMember(organization.id, MembershipLevel.admin);
    const invite = await insertInvite(organization.id, inviter.user, { targetEmail: "accomplice@example.com" });
    const ran = beforeWrites([
      [
        /^insert into "organization_memberships"/,
        async () => {
          await db
            .delete(schema.organizationMemberships)
            .where(
              and(
                eq(schema.organizationMemberships.organizationId, organization.id),
                eq(schema.organizationMemberships.userId, inviter.user.id),
              ),
            );
          await new Promise((resolve) => setTimeout(resolve, 5));
          return (await addMembership(organization.id, inviter.user, MembershipLevel.admin)).joinedAt;
        },
      ],
    ]);

    const joined = await api("POST", signupPath(invite.token), { body: {} });
    vi.restoreAllMocks();

    expect(ran).toHaveLength(1);
    expect([joined.status, joined.body]).toEqual([404, notFound]);
    const members = await api("GET", `/api/organizations/${organization.id}/members?email=accomplice@example.com`, {
      key,
    });
    expect(members.body.results).toEqual([]);
  });

  it("gives a new user's first key the key lifetime limit an admin sets meanwhile, or refuses (409)", async () => {
    const { organization, owner, key } = await setupOrganization();
    const invite = await insertInvite(organization.id, owner, { targetEmail: `limit-${Date.now()}@example.com` });
    const limit = beforeWrites([
      [
        /^insert into "users"/,
        async () =>
          (
            await api("PATCH", `/api/organizations/${organization.id}`, {
              key,
              body: { api_key_max_lifetime_days: 30 },
            })
          ).status,
      ],
    ]);
    const joined = await api("POST", signupPath(invite.token), { body: {} });
    vi.restoreAllMocks();
    expect(limit).toEqual([200]);
    expectError(joined, 409, changedMeanwhile("organization's key policy"));
    // Nothing was made; sent again, the key expires within the limit.
    const again = await api("POST", signupPath(invite.token), { body: {} });
    expect(again.status).toBe(201);
    expect(Date.parse(again.body.personal_api_key.expires_at)).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000);
  });

  it("uses the names sent, over the invite's first name", async () => {
    const { organization, owner } = await setupOrganization();
    const invite = await insertInvite(organization.id, owner, { firstName: "Jane" });

    const response = await api("POST", signupPath(invite.token), { body: { first_name: " Janet ", last_name: "Roe" } });

    expect(response.body.user).toMatchObject({ first_name: "Janet", last_name: "Roe" });
  });

  it("refuses an e-mail that already has an account: that account must use its key", async () => {
    const { organization, owner, key } = await setupOrganization();
    const existing = await createUser();
    const invite = await insertInvite(organization.id, owner, { targetEmail: existing.email });

    const response = await api("POST", signupPath(invite.token), { body: {} });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(
      errorBody(
        "validation_error",
        "account_exists",
        "An account with this email address already exists. Accept the invite with that account's personal API key.",
      ),
    );
    expect(await inviteEmails(organization.id, key)).toEqual([existing.email]);
  });

  it("answers 404 to an unknown invite and to one already used", async () => {
    const { organization, owner } = await setupOrganization();
    const invite = await insertInvite(organization.id, owner);
    expect((await api("POST", signupPath(invite.token), { body: {} })).status).toBe(201);

    const usedAgain = await api("POST", signupPath(invite.token), { body: {} });
    const unknown = await api("POST", signupPath(crypto.randomUUID()), { body: {} });

    for (const response of [usedAgain, unknown]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual(notFound);
    }
  });

  it("refuses an expired invite with 400 and creates nothing", async () => {
    const { organization, owner, key } = await setupOrganization();
    const invite = await insertInvite(organization.id, owner, { createdAt: daysAgo(3, 1000) });

    const response = await api("POST", signupPath(invite.token), { body: {} });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(expired);
    expect(await inviteEmails(organization.id, key)).toEqual([invite.targetEmail]);
    const members = await api("GET", `/api/organizations/${organization.id}/members`, { key });
    expect(members.body.count).toBe(1);
  });

  it.each([
    [{ first_name: "x".repeat(151) }, "max_length", "Ensure this field has no more than 150 characters.", "first_name"],
    [{ last_name: 7 }, "invalid_input", "Expected string, received number.", "last_name"],
  ])("refuses %j with 400", async (body, code, detail, attr) => {
    const { organization, owner } = await setupOrganization();
    const invite = await insertInvite(organization.id, owner);

    const response = await api("POST", signupPath(invite.token), { body });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(errorBody("validation_error", code, detail, attr));
    expect((await api("GET", signupPath(invite.token))).status).toBe(200);
  });
});

describe("the other invites for the e-mail", () => {
  it("are cancelled by a joining, each with its entry: a member's invite beside an admin's one", async () => {
    const { organization, key } = await setupOrganization();
    const invitesPath = `/api/organizations/${organization.id}/invites`;
    const member = await addMember(organization.id, MembershipLevel.member);
    const body = { target_email: `both-${crypto.randomUUID()}@example.com`, send_email: false };
    // The owner's admin invite lands between the member's reads and write: both stand.
    const ran = beforeWrites([
      [
        INVITE_WRITE,
        async () => (await api("POST", invitesPath, { key, body: { ...body, level: MembershipLevel.admin } })).body,
      ],
    ]);
    const membersInvite = await api("POST", invitesPath, { key: member.key, body });
    vi.restoreAllMocks();
    const [ownersInvite] = ran as [{ id: string }];
    expect(membersInvite.status).toBe(201);
    const listed = (await api("GET", invitesPath, { key })).body.results as { id: string }[];
    expect(listed.map((invite) => invite.id).sort()).toEqual([ownersInvite.id, membersInvite.body.id].sort());

    const joined = await api("POST", "/api/signup", { body: { token: membersInvite.body.token } });
    expect(joined.status).toBe(201);
    expect((await api("GET", invitesPath, { key })).body.results).toEqual([]);
    const log = await api("GET", `/api/organizations/${organization.id}/activity_log?scope=OrganizationInvite`, {
      key,
    });
    const entries = (log.body.results as { activity: string; item_id: string; user: { uuid: string } | null }[]).map(
      (entry) => [entry.item_id, entry.activity, entry.user?.uuid ?? null],
    );
    expect(entries).toEqual([
      [membersInvite.body.id, "accepted", joined.body.user.uuid],
      [ownersInvite.id, "cancelled", joined.body.user.uuid],
      [membersInvite.body.id, "created", member.user.uuid],
      [ownersInvite.id, "created", expect.any(String)],
    ]);
  });
});

describe("the first key and the organization's key lifetime", () => {
  it("expires within api_key_max_lifetime_days, as every key reaching the organization must", async () => {
    const { organization, owner, key } = await setupOrganization();
    const policy = await api("PATCH", `/api/organizations/${organization.id}`, {
      key,
      body: { api_key_max_lifetime_days: 30 },
    });
    expect(policy.status).toBe(200);
    const invite = await insertInvite(organization.id, owner, { targetEmail: "lifetime@example.com" });
    const before = Date.now();
    const joined = await api("POST", signupPath(invite.token), { body: {} });
    expect(joined.status).toBe(201);
    const expiresAt = Date.parse(joined.body.personal_api_key.expires_at);
    const thirtyDays = 30 * 24 * 3_600_000;
    // A minute under the limit, for the database's clock, which the write checks it by.
    expect(expiresAt).toBeGreaterThanOrEqual(before + thirtyDays - 60_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + thirtyDays - 60_000);
    // Without a limit, the first key does not expire.
    const open = await setupOrganization();
    const openInvite = await insertInvite(open.organization.id, open.owner, { targetEmail: "open@example.com" });
    const joinedOpen = await api("POST", signupPath(openInvite.token), { body: {} });
    expect(joinedOpen.body.personal_api_key.expires_at).toBeNull();
  });
});

describe("the first key of a claim and the organization's key lifetime", () => {
  it("is within the limit though the Worker's clock runs a little ahead of the database's", async () => {
    const address = `claimed-${crypto.randomUUID()}@example.com`;
    const squatting = await setupOrganization({ name: "Squatter's" });
    const squatter = await createUser({ email: address, isEmailVerified: false });
    await addMembership(squatting.organization.id, squatter, MembershipLevel.member);
    const inviting = await setupOrganization({ name: "Inviting" });
    const policy = await api("PATCH", `/api/organizations/${inviting.organization.id}`, {
      key: inviting.key,
      body: { api_key_max_lifetime_days: 30 },
    });
    expect(policy.status).toBe(200);
    const mailed = await mintInviteToken();
    await insertInvite(inviting.organization.id, inviting.owner, {
      targetEmail: address,
      mailedTokenHash: mailed.hash,
    });
    // Two clocks: this Worker's, two seconds ahead, and D1's, which the write's check reads.
    vi.useFakeTimers({ now: Date.now() + 2_000, toFake: ["Date"] });

    const claimed = await api("POST", "/api/signup", { body: { token: mailed.value, claim_account: true } });

    vi.useRealTimers();
    expect(claimed.status).toBe(201);
    const expiresAt = Date.parse(claimed.body.personal_api_key.expires_at);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000);
    expect(expiresAt).toBeGreaterThan(Date.now() + 30 * 86_400_000 - 5 * 60_000);
  });
});

describe("an existing user's keys and the organization's key lifetime", () => {
  it("joins only when every key of theirs that would reach it expires within the limit", async () => {
    const acme = await setupOrganization();
    const policy = await api("PATCH", `/api/organizations/${acme.organization.id}`, {
      key: acme.key,
      body: { api_key_max_lifetime_days: 30 },
    });
    expect(policy.status).toBe(200);
    // Bob belongs to another organization only. The key he joins with expires in time; his first
    // key, unscoped, does not expire at all and would reach Acme from the joining on.
    const elsewhere = await setupOrganization();
    const bob = elsewhere.owner;
    const inTime = await api("POST", "/api/personal_api_keys", {
      key: elsewhere.key,
      body: { label: "joins", scopes: ["*"], expires_at: new Date(Date.now() + 10 * 86_400_000).toISOString() },
    });
    expect(inTime.status).toBe(201);
    const invite = await insertInvite(acme.organization.id, acme.owner, { targetEmail: bob.email });

    const refused = await api("POST", "/api/signup", { key: inTime.body.value, body: { token: invite.token } });
    expectError(refused, 403, errorBody("authentication_error", "permission_denied", keysOutliveLifetime(30)));
    const memberships = await db
      .select()
      .from(schema.organizationMemberships)
      .where(eq(schema.organizationMemberships.userId, bob.id));
    expect(memberships.map(({ organizationId }) => organizationId)).toEqual([elsewhere.organization.id]);
    expect(await inviteEmails(acme.organization.id, acme.key)).toEqual([bob.email]);

    // Scoped to the organization he already belongs to, the key never reaches Acme (403 there): he joins.
    const forever = (await api("GET", "/api/personal_api_keys/@current", { key: elsewhere.key })).body;
    const scoped = await api("PATCH", `/api/personal_api_keys/${forever.id}`, {
      key: elsewhere.key,
      body: { scoped_organizations: [elsewhere.organization.id] },
    });
    expect(scoped.status).toBe(200);
    const joined = await api("POST", "/api/signup", { key: inTime.body.value, body: { token: invite.token } });
    expect(joined.status).toBe(201);
    expect(
      (await api("GET", `/api/organizations/${acme.organization.id}/projects`, { key: inTime.body.value })).status,
    ).toBe(200);
    expect(
      (await api("GET", `/api/organizations/${acme.organization.id}/projects`, { key: elsewhere.key })).status,
    ).toBe(403);
  });

  it("counts a key naming the organization or one of its projects, left from an earlier membership", async () => {
    const acme = await setupOrganization();
    const project = await createProject(acme.organization.id);
    const bob = await createUser();
    await addMembership(acme.organization.id, bob, MembershipLevel.member);
    const byProject = await createApiKey(bob, { scopedTeams: [project.id] });
    expect(
      (await api("DELETE", `/api/organizations/${acme.organization.id}/members/${bob.uuid}`, { key: acme.key })).status,
    ).toBe(204);
    expect(
      (
        await api("PATCH", `/api/organizations/${acme.organization.id}`, {
          key: acme.key,
          body: { api_key_max_lifetime_days: 7 },
        })
      ).status,
    ).toBe(200);
    const joining = await createApiKey(bob, { scopedOrganizations: [acme.organization.id] });
    await db
      .update(schema.personalApiKeys)
      .set({ expiresAt: new Date(Date.now() + 86_400_000).toISOString() })
      .where(eq(schema.personalApiKeys.id, joining.id));
    const invite = await insertInvite(acme.organization.id, acme.owner, { targetEmail: bob.email });

    const refused = await api("POST", "/api/signup", { key: joining.value, body: { token: invite.token } });
    expectError(refused, 403, errorBody("authentication_error", "permission_denied", keysOutliveLifetime(7)));
    await db.delete(schema.personalApiKeys).where(eq(schema.personalApiKeys.id, byProject.id));
    expect((await api("POST", "/api/signup", { key: joining.value, body: { token: invite.token } })).status).toBe(201);
  });
});

describe("POST /api/signup/:token, as an existing user with their key", () => {
  it("joins the organization at the invite's level, without a new key", async () => {
    const { organization, owner, key } = await setupOrganization();
    const colleague = await setupOrganization();
    const invite = await insertInvite(organization.id, owner, { targetEmail: colleague.owner.email, level: 8 });

    const response = await api("POST", signupPath(invite.token), {
      key: colleague.key,
      body: { first_name: "Ignored" },
    });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({ user: userBasic(colleague.owner), organization_id: organization.id });
    const members = await api("GET", `/api/organizations/${organization.id}/members?email=${colleague.owner.email}`, {
      key,
    });
    expect(members.body.results).toEqual([expect.objectContaining({ level: 8, user: userBasic(colleague.owner) })]);
    expect(await inviteEmails(organization.id, key)).toEqual([]);
  });

  it("refuses a key of another user than the invite names", async () => {
    const { organization, owner } = await setupOrganization();
    const someoneElse = await setupOrganization();
    const invite = await insertInvite(organization.id, owner, { targetEmail: "jane@example.com" });

    const response = await api("POST", signupPath(invite.token), { key: someoneElse.key, body: {} });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(
      errorBody("validation_error", "invalid_recipient", "This invite is intended for another email address."),
    );
  });

  it("refuses a user who is already a member", async () => {
    const { organization, owner } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const invite = await insertInvite(organization.id, owner, { targetEmail: member.user.email });

    const response = await api("POST", signupPath(invite.token), { key: member.key, body: {} });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(
      errorBody("validation_error", "user_already_member", "You already are a member of this organization."),
    );
  });

  it("answers 401 to a bad key and 403 to a key without organization_member:write or scoped elsewhere", async () => {
    const { organization, owner } = await setupOrganization();
    const colleague = await setupOrganization();
    const invite = await insertInvite(organization.id, owner, { targetEmail: colleague.owner.email });
    const readOnly = await createApiKey(colleague.owner, { scopes: ["organization_member:read"] });
    const scoped = await createApiKey(colleague.owner, { scopedOrganizations: [colleague.organization.id] });

    const badKey = await api("POST", signupPath(invite.token), { key: `phx_${"1".repeat(44)}`, body: {} });
    const missingScope = await api("POST", signupPath(invite.token), { key: readOnly.value, body: {} });
    const outOfScope = await api("POST", signupPath(invite.token), { key: scoped.value, body: {} });

    expect(badKey.status).toBe(401);
    expect(badKey.body).toEqual(
      errorBody("authentication_error", "authentication_failed", "Personal API key is invalid."),
    );
    expect(missingScope.status).toBe(403);
    expect(missingScope.body).toEqual(
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key missing required scope 'organization_member:write'",
      ),
    );
    expect(outOfScope.status).toBe(403);
    expect(outOfScope.body).toEqual(
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key does not have access to the requested organization",
      ),
    );
    expect((await api("GET", signupPath(invite.token))).status).toBe(200);
  });
});

describe("POST /api/signup, the token in the body", () => {
  it("joins as a new user exactly as the path form does, the token never in a URL", async () => {
    const { organization, owner, key } = await setupOrganization();
    const invite = await insertInvite(organization.id, owner, { targetEmail: "jo@example.com", firstName: "Jo" });

    const response = await api("POST", "/api/signup", { body: { token: invite.token, last_name: "Doe" } });

    expect(response.status).toBe(201);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    expect(response.body).toEqual({
      user: expect.objectContaining({ email: "jo@example.com", first_name: "Jo", last_name: "Doe" }),
      organization_id: organization.id,
      personal_api_key: expect.objectContaining({
        value: expect.stringMatching(/^phx_[0-9A-Za-z]{44}$/),
        scopes: ["*"],
      }),
    });
    expect(await inviteEmails(organization.id, key)).toEqual([]);
    const again = await api("POST", "/api/signup", { body: { token: invite.token } });
    expect(again.status).toBe(404);
    expect(again.body).toEqual(notFound);
  });

  it("joins as an existing user with their key", async () => {
    const { organization, owner } = await setupOrganization();
    const existing = await createUser();
    const existingKey = await createApiKey(existing);
    const invite = await insertInvite(organization.id, owner, { targetEmail: existing.email });

    const response = await api("POST", "/api/signup", { key: existingKey.value, body: { token: invite.token } });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({ user: userBasic(existing), organization_id: organization.id });
  });

  it("answers 401 to a bad key and 403 to a key without organization_member:write, joining nothing", async () => {
    const { organization, owner, key } = await setupOrganization();
    const existing = await createUser();
    const readOnly = await createApiKey(existing, { scopes: ["organization:read"] });
    const invite = await insertInvite(organization.id, owner, { targetEmail: existing.email });

    const badKey = await api("POST", "/api/signup", { key: "phx_not-a-key", body: { token: invite.token } });
    const narrow = await api("POST", "/api/signup", { key: readOnly.value, body: { token: invite.token } });

    expect(badKey.status).toBe(401);
    expect(narrow.status).toBe(403);
    expect(narrow.body).toEqual(
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key missing required scope 'organization_member:write'",
      ),
    );
    expect(await inviteEmails(organization.id, key)).toEqual([existing.email]);
  });

  it("answers 400 naming the token when it is missing or not a string, and 404 to an unknown one", async () => {
    for (const [body, code, detail] of [
      [{}, "required", "This field is required."],
      [{ token: 42 }, "invalid_input", "Expected string, received number."],
    ] as const) {
      const response = await api("POST", "/api/signup", { body });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(errorBody("validation_error", code, detail, "token"));
    }
    const unknown = await api("POST", "/api/signup", { body: { token: `phi_${"a".repeat(44)}` } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(notFound);
  });
});

describe("an invite's level when it is redeemed", () => {
  /** Joins by `token` as a new user and answers the level the membership got. */
  async function joinedLevel(organizationId: string, ownerKey: string, token: string, email: string) {
    const joined = await api("POST", "/api/signup", { body: { token } });
    expect(joined.status).toBe(201);
    const members = await api("GET", `/api/organizations/${organizationId}/members?email=${email}`, { key: ownerKey });
    return members.body.results[0].level as number;
  }

  it("is held to what the inviter holds then: a demoted owner's owner invite makes a member", async () => {
    const { organization, key } = await setupOrganization();
    const second = await addMember(organization.id, MembershipLevel.owner);
    const kept = await addMember(organization.id, MembershipLevel.admin);
    const invite = async (inviterKey: string, email: string, level: number) => {
      const invited = await api("POST", `/api/organizations/${organization.id}/invites`, {
        key: inviterKey,
        body: { target_email: email, level, send_email: false },
      });
      expect(invited.status).toBe(201);
      return invited.body.token as string;
    };
    const fromDemoted = await invite(second.key, "demoted-owner-alt@example.com", MembershipLevel.owner);
    const fromKept = await invite(kept.key, "kept-admin-alt@example.com", MembershipLevel.admin);
    const demoted = await api("PATCH", `/api/organizations/${organization.id}/members/${second.user.uuid}`, {
      key,
      body: { level: MembershipLevel.member },
    });
    expect(demoted.status).toBe(200);
    // The preview shows the level joining would grant, not the one the invite asked.
    const previewed = async (token: string) => (await api("GET", `/api/signup/${token}`)).body.level;
    expect([await previewed(fromDemoted), await previewed(fromKept)]).toEqual([
      MembershipLevel.member,
      MembershipLevel.admin,
    ]);

    expect(await joinedLevel(organization.id, key, fromDemoted, "demoted-owner-alt@example.com")).toBe(
      MembershipLevel.member,
    );
    expect(await joinedLevel(organization.id, key, fromKept, "kept-admin-alt@example.com")).toBe(MembershipLevel.admin);
  });

  it("is nothing when the inviter has left: a removed member does not come back under another address", async () => {
    const { organization, key } = await setupOrganization();
    for (const level of [MembershipLevel.member, MembershipLevel.admin]) {
      const inviter = await addMember(organization.id, level);
      const email = `left-${level}-alt@example.com`;
      const invited = await api("POST", `/api/organizations/${organization.id}/invites`, {
        key: inviter.key,
        body: { target_email: email, level, send_email: false },
      });
      expect(invited.status).toBe(201);
      const memberPath = `/api/organizations/${organization.id}/members/${inviter.user.uuid}`;
      expect((await api("DELETE", memberPath, { key })).status).toBe(204);

      expect(await api("GET", signupPath(invited.body.token))).toMatchObject({ status: 404, body: notFound });
      expect(await api("POST", signupPath(invited.body.token), { body: {} })).toMatchObject({
        status: 404,
        body: notFound,
      });
      const members = await api("GET", `/api/organizations/${organization.id}/members?email=${email}`, { key });
      expect(members.body.results).toEqual([]);
    }
  });
});

describe("the acceptance token", () => {
  it("is the only way in: an invite id, a malformed, unknown or superseded token all answer the same 404", async () => {
    const { organization, key } = await setupOrganization();
    const invites = `/api/organizations/${organization.id}/invites`;
    const first = await api("POST", invites, { key, body: { target_email: "jane@example.com" } });
    const second = await api("POST", invites, { key, body: { target_email: "jane@example.com" } });

    const probes = [first.body.id, first.body.token, `phi_${"a".repeat(44)}`, "phi_short", second.body.id];
    for (const probe of probes) {
      for (const method of ["GET", "POST"]) {
        const response = await api(method, signupPath(probe), { body: method === "POST" ? {} : undefined });
        expect(response.status, `${method} ${probe}`).toBe(404);
        expect(response.body, `${method} ${probe}`).toEqual(notFound);
      }
    }
    expect((await api("GET", signupPath(second.body.token))).status).toBe(200);
  });

  it("is returned once, to the inviter, and never listed; the response is not cached", async () => {
    const { organization, key } = await setupOrganization();
    const invites = `/api/organizations/${organization.id}/invites`;
    const created = await api("POST", invites, { key, body: { target_email: "jane@example.com" } });
    const bulk = await api("POST", `${invites}/bulk`, { key, body: [{ target_email: "joe@example.com" }] });
    const listed = await api("GET", invites, { key });

    expect(created.body.token).toMatch(/^phi_[0-9A-Za-z]{44}$/);
    expect(bulk.body[0].token).toMatch(/^phi_[0-9A-Za-z]{44}$/);
    expect(created.headers.get("Cache-Control")).toBe("no-store");
    expect(bulk.headers.get("Cache-Control")).toBe("no-store");
    expect(listed.text).not.toContain("phi_");
    for (const invite of listed.body.results) expect(Object.keys(invite)).not.toContain("token");
  });

  it("a plain member who lists invites cannot accept one in the invitee's place", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    await api("POST", `/api/organizations/${organization.id}/invites`, {
      key,
      body: { target_email: "new-owner@example.com", level: MembershipLevel.owner },
    });
    const listed = await api("GET", `/api/organizations/${organization.id}/invites`, { key: member.key });

    const hijack = await api("POST", signupPath(listed.body.results[0].id), { body: {} });

    expect(hijack.status).toBe(404);
    expect(hijack.body).toEqual(notFound);
    expect(await inviteEmails(organization.id, key)).toEqual(["new-owner@example.com"]);
  });

  it("a key scoped to projects cannot join an organization with it", async () => {
    const { organization, owner } = await setupOrganization();
    const colleague = await setupOrganization();
    const invite = await insertInvite(organization.id, owner, { targetEmail: colleague.owner.email });
    const projectKey = await createApiKey(colleague.owner, { scopedTeams: [colleague.project.id] });

    const response = await api("POST", signupPath(invite.token), { key: projectKey.value, body: {} });

    expect(response.status).toBe(403);
    expect(response.body).toEqual(
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key with scoped projects are only supported on project-based views.",
      ),
    );
  });
});

describe("the whole journey, as README.md shows it", () => {
  it("invite, join with the link, promote, demote, remove", async () => {
    const { organization, key } = await setupOrganization();
    const members = `/api/organizations/${organization.id}/members`;

    const invite = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key,
      body: { target_email: "colleague@example.com", first_name: "Col" },
    });
    const preview = await api("GET", signupPath(invite.body.token));
    const joined = await api("POST", signupPath(invite.body.token), { body: { last_name: "League" } });
    const colleagueKey = joined.body.personal_api_key.value;
    const colleague = joined.body.user.uuid;
    const promoted = await api("PATCH", `${members}/${colleague}`, { key, body: { level: 8 } });
    const demoted = await api("PATCH", `${members}/${colleague}`, { key, body: { level: 1 } });
    const removed = await api("DELETE", `${members}/${colleague}`, { key });
    const afterRemoval = await api("GET", members, { key: colleagueKey });

    expect([invite.status, preview.status, joined.status]).toEqual([201, 200, 201]);
    expect(preview.body.first_name).toBe("Col");
    expect([promoted.body.level, demoted.body.level, removed.status]).toEqual([8, 1, 204]);
    expect(afterRemoval.status).toBe(404);
    const remaining = await api("GET", members, { key });
    expect(remaining.body.count).toBe(1);
  });
});

describe("a key an admin blocked in the organization", () => {
  it("joins it again by invite nothing: 403, no membership", async () => {
    const { organization, owner, key } = await setupOrganization();
    const user = await createUser();
    await addMembership(organization.id, user, MembershipLevel.member);
    const userKey = await createApiKey(user);
    // The admin takes the key out of the organization's reach, then removes its owner.
    expect((await api("DELETE", `/api/organizations/${organization.id}/api_keys/${userKey.id}`, { key })).status).toBe(
      204,
    );
    expect((await api("DELETE", `/api/organizations/${organization.id}/members/${user.uuid}`, { key })).status).toBe(
      204,
    );
    // Invited again later: joining is an organization-level write, which a blocked key may not make.
    const invite = await insertInvite(organization.id, owner, { targetEmail: user.email });
    const joined = await api("POST", "/api/signup", { key: userKey.value, body: { token: invite.token } });
    expectError(joined, 403, errorBody("authentication_error", "permission_denied", KEY_BLOCKED));
    const memberships = await db
      .select()
      .from(schema.organizationMemberships)
      .where(eq(schema.organizationMemberships.userId, user.id));
    expect(memberships).toEqual([]);
    // Another key of theirs, not blocked, joins.
    const otherKey = await createApiKey(user);
    const rejoined = await api("POST", "/api/signup", { key: otherKey.value, body: { token: invite.token } });
    expect(rejoined.status).toBe(201);
  });
});

describe("a claim racing the account joining another organization", () => {
  it("is refused (409), not leave that log without its first key; sent again, it records it", async () => {
    const address = `claimed-${crypto.randomUUID()}@example.com`;
    // An account someone made for the address: unproven, in their organization, with a key.
    const squatting = await setupOrganization({ name: "Squatter's" });
    const squatter = await createUser({ email: address, isEmailVerified: false });
    await addMembership(squatting.organization.id, squatter, MembershipLevel.member);
    const squatterKey = await createApiKey(squatter);
    const joinedMeanwhile = await setupOrganization({ name: "Joined meanwhile" });
    const pending = await insertInvite(joinedMeanwhile.organization.id, joinedMeanwhile.owner, {
      targetEmail: address,
    });
    // The owner's invite, with the token only its e-mail carried.
    const inviting = await setupOrganization({ name: "Inviting" });
    const mailed = await mintInviteToken();
    await insertInvite(inviting.organization.id, inviting.owner, {
      targetEmail: address,
      mailedTokenHash: mailed.hash,
    });
    const claim = () => api("POST", "/api/signup", { body: { token: mailed.value, claim_account: true } });
    const ran = beforeWrites([
      [
        /^insert into "personal_api_keys"/,
        async () =>
          (await api("POST", "/api/signup", { key: squatterKey.value, body: { token: pending.token } })).status,
      ],
    ]);

    const raced = await claim();

    vi.restoreAllMocks();
    expect(ran).toEqual([201]);
    expectError(raced, 409, changedMeanwhile("account"));
    const claimed = await claim();
    expect(claimed.status).toBe(201);
    const keyId: string = claimed.body.personal_api_key.id;
    for (const { organization, key } of [squatting, joinedMeanwhile, inviting]) {
      const log = await api("GET", `/api/organizations/${organization.id}/activity_log?scope=PersonalAPIKey`, { key });
      const created = log.body.results.filter(
        (entry: { activity: string; item_id: string }) => entry.activity === "created" && entry.item_id === keyId,
      );
      expect(created, organization.name).toHaveLength(1);
    }
  });
});
