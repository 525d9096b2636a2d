import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  createProject,
  createUser,
  db,
  deleteProjectRow,
  errorBody,
  grantProjectAccess,
  ISO_TIMESTAMP,
  setupOrganization,
  streamedBody,
  userBasic,
  UUID,
  nextLink,
  previousLink,
} from "../support/harness";
import {
  daysAgo,
  expectKeyAndMembershipRequired,
  FAKE_TRANSPORT_URL,
  insertInvite,
  restoreTestDoubles,
  useEmailTransport,
  INVITE_WRITE,
} from "../support/people";
import * as schema from "../../src/db/schema";
import { changedMeanwhile, expectError } from "../support/error-bodies";
import { beforeWrites } from "../support/races";

afterEach(restoreTestDoubles);

const invitesPath = (organizationId: string) => `/api/organizations/${organizationId}/invites`;

/**
 * The owner's invites to `withHidden`, naming a private project hidden from the plain member made
 * beside them, and to `without`, naming none.
 */
async function invitesNamingHiddenProject(withHidden: string, without: string) {
  const { organization, key } = await setupOrganization();
  const member = await addMember(organization.id, MembershipLevel.member);
  const hidden = await createProject(organization.id, { name: "Secret", access_control: true });
  for (const [email, access] of [
    [withHidden, [{ id: hidden.id, level: "member" }]],
    [without, null],
  ] as const) {
    const sent = await api("POST", invitesPath(organization.id), {
      key,
      body: { target_email: email, send_email: false, private_project_access: access },
    });
    expect(sent.status).toBe(201);
  }
  return { organization, key, member, hidden };
}

/** Each invite's `private_project_access` as the caller's list shows it, by e-mail. */
async function accessListedBy(organizationId: string, callerKey: string) {
  const listed = await api("GET", invitesPath(organizationId), { key: callerKey });
  expect(listed.status).toBe(200);
  return Object.fromEntries(
    listed.body.results.map((invite: { target_email: string; private_project_access: unknown }) => [
      invite.target_email,
      invite.private_project_access,
    ]),
  );
}
const PROJECT_NOT_INVITABLE =
  "Project does not exist on this organization, or it is private and you do not have access to it.";

const alreadyMember = (attr: string) =>
  errorBody(
    "validation_error",
    "invalid_input",
    "A user with this email address already belongs to the organization.",
    attr,
  );

const INVITE_TOKEN = /^phi_[0-9A-Za-z]{44}$/;
/** An invite as lists show it: the acceptance token is in the creating response only. */
const withoutToken = ({ token: _token, ...invite }: Record<string, unknown>) => invite;

async function listInviteEmails(organizationId: string, key: string) {
  const response = await api("GET", `${invitesPath(organizationId)}?limit=1000`, { key });
  expect(response.status).toBe(200);
  return response.body.results.map((invite: { target_email: string }) => invite.target_email);
}

describe("POST /api/organizations/:organization_id/invites", () => {
  it("creates an invite with its defaults, the e-mail trimmed and lower-cased", async () => {
    const { organization, owner, key } = await setupOrganization();

    const response = await api("POST", invitesPath(organization.id), {
      key,
      body: { target_email: "  Jane.Doe@Example.COM " },
    });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(UUID),
      target_email: "jane.doe@example.com",
      first_name: "",
      emailing_attempt_made: false,
      email_status: "not_configured",
      level: 1,
      is_expired: false,
      created_by: userBasic(owner),
      created_at: expect.stringMatching(ISO_TIMESTAMP),
      updated_at: response.body.created_at,
      message: null,
      private_project_access: null,
      send_email: true,
      combine_pending_invites: false,
      token: expect.stringMatching(INVITE_TOKEN),
    });
    const listed = await api("GET", invitesPath(organization.id), { key });
    expect(listed.body.results).toEqual([withoutToken(response.body)]);
  });

  it("stores every field sent, private project access included, at the inviter's level", async () => {
    const { organization, owner, key } = await setupOrganization();
    const privateProject = await createProject(organization.id, { access_control: true });

    const response = await api("POST", invitesPath(organization.id), {
      key,
      body: {
        target_email: "boss@example.com",
        first_name: "Boss",
        level: 15,
        message: "Welcome aboard",
        private_project_access: [
          { id: privateProject.id, level: "member" },
          { id: privateProject.id, level: "admin" },
        ],
        send_email: false,
        id: "ignored",
        is_expired: true,
      },
    });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(UUID),
      target_email: "boss@example.com",
      first_name: "Boss",
      emailing_attempt_made: false,
      email_status: "not_sent",
      level: 15,
      is_expired: false,
      created_by: userBasic(owner),
      created_at: expect.stringMatching(ISO_TIMESTAMP),
      updated_at: expect.stringMatching(ISO_TIMESTAMP),
      message: "Welcome aboard",
      private_project_access: [{ id: privateProject.id, level: "admin" }],
      send_email: false,
      combine_pending_invites: false,
      token: expect.stringMatching(INVITE_TOKEN),
    });
  });

  it.each([
    [{}, "required", "This field is required.", "target_email"],
    [{ target_email: "not-an-email" }, "invalid_input", "Enter a valid email address.", "target_email"],
    [
      { target_email: `${"a".repeat(243)}@example.com` },
      "max_length",
      "Ensure this field has no more than 254 characters.",
      "target_email",
    ],
    [
      { target_email: "a@example.com", first_name: "x".repeat(31) },
      "max_length",
      "Ensure this field has no more than 30 characters.",
      "first_name",
    ],
    [{ target_email: "a@example.com", level: 5 }, "invalid_choice", '"5" is not a valid choice.', "level"],
    [
      { target_email: "a@example.com", send_email: "yes" },
      "invalid_input",
      "Expected boolean, received string.",
      "send_email",
    ],
    [
      { target_email: "a@example.com", private_project_access: "all" },
      "invalid_input",
      "Expected array, received string.",
      "private_project_access",
    ],
    [
      { target_email: "a@example.com", private_project_access: [{ id: 1, level: "owner" }] },
      "invalid_choice",
      '"owner" is not a valid choice.',
      "private_project_access.0.level",
    ],
  ])("refuses %j with 400 %s and creates nothing", async (body, code, detail, attr) => {
    const { organization, key } = await setupOrganization();

    const response = await api("POST", invitesPath(organization.id), { key, body });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(errorBody("validation_error", code, detail, attr));
    expect(await listInviteEmails(organization.id, key)).toEqual([]);
  });

  it("refuses private project access to a project of another organization, or an unknown one", async () => {
    const { organization, key } = await setupOrganization();
    const other = await setupOrganization();

    for (const projectId of [other.project.id, 987654321]) {
      const response = await api("POST", invitesPath(organization.id), {
        key,
        body: { target_email: "a@example.com", private_project_access: [{ id: projectId, level: "member" }] },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(
        errorBody("validation_error", "invalid_input", PROJECT_NOT_INVITABLE, "private_project_access"),
      );
    }
    expect(await listInviteEmails(organization.id, key)).toEqual([]);
  });

  it("lets a member grant only the private projects they hold, at no higher level than theirs", async () => {
    const { organization } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const hidden = await createProject(organization.id, { access_control: true });
    const granted = await createProject(organization.id, { access_control: true });
    const open = await createProject(organization.id);
    await grantProjectAccess(granted.id, member.membership.id);
    const invite = (access: { id: number; level: string }[]) =>
      api("POST", invitesPath(organization.id), {
        key: member.key,
        body: { target_email: "a@example.com", private_project_access: access },
      });

    const toHidden = await invite([{ id: hidden.id, level: "member" }]);
    expect(toHidden.status).toBe(400);
    expect(toHidden.body).toEqual(
      errorBody("validation_error", "invalid_input", PROJECT_NOT_INVITABLE, "private_project_access"),
    );
    const aboveOwnGrant = await invite([{ id: granted.id, level: "admin" }]);
    expect(aboveOwnGrant.status).toBe(400);
    expect(aboveOwnGrant.body).toEqual(
      errorBody(
        "validation_error",
        "invalid_input",
        "You cannot invite to a private project with a higher level than your own.",
        "private_project_access",
      ),
    );
    const allowed = await invite([
      { id: granted.id, level: "member" },
      { id: open.id, level: "member" },
    ]);
    expect(allowed.status).toBe(201);
    expect(allowed.body.private_project_access).toEqual([
      { id: granted.id, level: "member" },
      { id: open.id, level: "member" },
    ]);
  });

  it("refuses a plain member's invite granting admin on a public project, where they are only a member", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const open = await createProject(organization.id);
    const raisedToAdmin = await createProject(organization.id);
    await grantProjectAccess(raisedToAdmin.id, member.membership.id, "admin");

    const response = await api("POST", invitesPath(organization.id), {
      key: member.key,
      body: {
        target_email: "accomplice@example.com",
        level: 1,
        private_project_access: [{ id: open.id, level: "admin" }],
      },
    });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(
      errorBody(
        "validation_error",
        "invalid_input",
        "You cannot invite to a private project with a higher level than your own.",
        "private_project_access",
      ),
    );
    expect(await listInviteEmails(organization.id, key)).toEqual([]);
    const asProjectAdmin = await api("POST", invitesPath(organization.id), {
      key: member.key,
      body: {
        target_email: "colleague@example.com",
        private_project_access: [{ id: raisedToAdmin.id, level: "admin" }],
      },
    });
    expect(asProjectAdmin.status).toBe(201);
    expect(asProjectAdmin.body.private_project_access).toEqual([{ id: raisedToAdmin.id, level: "admin" }]);
  });

  it("lets an admin grant any project of the organization, private or not", async () => {
    const { organization } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const hidden = await createProject(organization.id, { access_control: true });

    const response = await api("POST", invitesPath(organization.id), {
      key: admin.key,
      body: { target_email: "a@example.com", level: 8, private_project_access: [{ id: hidden.id, level: "admin" }] },
    });

    expect(response.status).toBe(201);
    expect(response.body.private_project_access).toEqual([{ id: hidden.id, level: "admin" }]);
    expect(response.body.created_by).toEqual(userBasic(admin.user));
  });

  it("holds the level rules on the invite as combined: a member cannot combine into an admin invite", async () => {
    const { organization, owner, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const adminInvite = await insertInvite(organization.id, owner, { targetEmail: "jane@example.com", level: 8 });

    const response = await api("POST", invitesPath(organization.id), {
      key: member.key,
      body: { target_email: "jane@example.com", combine_pending_invites: true },
    });

    expect(response.status).toBe(403);
    expect(response.body).toEqual(
      errorBody(
        "authentication_error",
        "permission_denied",
        "You cannot invite a user with a higher permission level than your own.",
      ),
    );
    const listed = await api("GET", invitesPath(organization.id), { key });
    expect(listed.body.results.map((invite: { id: string }) => invite.id)).toEqual([adminInvite.id]);
  });

  it("refuses a level above the inviter's own with 403, and lets any member invite members", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const denied = errorBody(
      "authentication_error",
      "permission_denied",
      "You cannot invite a user with a higher permission level than your own.",
    );

    for (const [inviterKey, level] of [
      [member.key, 8],
      [admin.key, 15],
    ] as const) {
      const response = await api("POST", invitesPath(organization.id), {
        key: inviterKey,
        body: { target_email: "a@example.com", level },
      });
      expect(response.status).toBe(403);
      expect(response.body).toEqual(denied);
    }
    expect(await listInviteEmails(organization.id, key)).toEqual([]);

    const byMember = await api("POST", invitesPath(organization.id), {
      key: member.key,
      body: { target_email: "a@example.com" },
    });
    expect(byMember.status).toBe(201);
    expect(byMember.body.created_by).toEqual(userBasic(member.user));
  });

  it("refuses the e-mail of a current member, whatever its case", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);

    const response = await api("POST", invitesPath(organization.id), {
      key,
      body: { target_email: member.user.email.toUpperCase() },
    });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(alreadyMember("target_email"));
    expect(await listInviteEmails(organization.id, key)).toEqual([]);
  });

  it("accepts the e-mail of a member of another organization", async () => {
    const { organization, key } = await setupOrganization();
    const other = await setupOrganization();

    const response = await api("POST", invitesPath(organization.id), {
      key,
      body: { target_email: other.owner.email },
    });

    expect(response.status).toBe(201);
  });

  it("replaces earlier invites for the same e-mail, expired ones included, and keeps the others", async () => {
    const { organization, owner, key } = await setupOrganization();
    await insertInvite(organization.id, owner, { targetEmail: "jane@example.com", level: 8 });
    await insertInvite(organization.id, owner, { targetEmail: "jane@example.com", createdAt: daysAgo(10) });
    const kept = await insertInvite(organization.id, owner, { targetEmail: "joe@example.com" });

    const response = await api("POST", invitesPath(organization.id), {
      key,
      body: { target_email: "jane@example.com" },
    });

    expect(response.status).toBe(201);
    expect(response.body.level).toBe(1);
    const listed = await api("GET", invitesPath(organization.id), { key });
    expect(listed.body.results.map((invite: { id: string }) => invite.id)).toEqual([response.body.id, kept.id]);
  });

  it("with combine_pending_invites, checks and keeps the projects only the pending invite names", async () => {
    const { organization, owner, key } = await setupOrganization();
    const onlyPending = await createProject(organization.id, { access_control: true });
    await insertInvite(organization.id, owner, {
      targetEmail: "kim@example.com",
      privateProjectAccess: [{ id: onlyPending.id, level: "admin" }],
    });

    const response = await api("POST", invitesPath(organization.id), {
      key,
      body: { target_email: "kim@example.com", combine_pending_invites: true },
    });

    expect(response.status).toBe(201);
    expect(response.body.private_project_access).toEqual([{ id: onlyPending.id, level: "admin" }]);
  });

  it("answers a member's combine alike, whether or not another's invite names a project hidden from them", async () => {
    const { organization, member } = await invitesNamingHiddenProject("hidden@example.com", "plain@example.com");
    const combine = (email: string) =>
      api("POST", invitesPath(organization.id), {
        key: member.key,
        body: { target_email: email, send_email: false, combine_pending_invites: true },
      });
    // The owner's invites, which a member may not replace: 403 both, the hidden project never judged.
    const refused = errorBody(
      "authentication_error",
      "permission_denied",
      "Only an admin can replace an invite someone else sent to this e-mail address.",
    );
    expectError(await combine("hidden@example.com"), 403, refused);
    expectError(await combine("plain@example.com"), 403, refused);
  });

  it("combines a member's own invite alike whether its project was since hidden from them or deleted", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const hidden = await createProject(organization.id, { name: "Later hidden" });
    const deleted = await createProject(organization.id, { name: "Later deleted" });
    for (const [email, project] of [
      ["kim@example.com", hidden],
      ["lee@example.com", deleted],
    ] as const) {
      const sent = await api("POST", invitesPath(organization.id), {
        key: member.key,
        body: { target_email: email, send_email: false, private_project_access: [{ id: project.id, level: "member" }] },
      });
      expect(sent.status).toBe(201);
    }
    await grantProjectAccess(hidden.id!, member.membership.id, "none");
    expect((await api("DELETE", `/api/projects/${deleted.id}`, { key })).status).toBe(204);
    expect(await accessListedBy(organization.id, member.key)).toEqual({
      "kim@example.com": null,
      "lee@example.com": null,
    });

    const combine = (email: string) =>
      api("POST", invitesPath(organization.id), {
        key: member.key,
        body: { target_email: email, send_email: false, combine_pending_invites: true },
      });
    // Both left out, not refused: the member told apart a hidden project and a deleted one no more than the list does.
    for (const email of ["lee@example.com", "kim@example.com"]) {
      const combined = await combine(email);
      expect([email, combined.status, combined.body.private_project_access]).toEqual([email, 201, null]);
    }
  });

  it("records each open invite it replaces as cancelled, as a DELETE does, combined or not", async () => {
    const { organization, owner, key } = await setupOrganization();
    const otherAdmin = await addMember(organization.id, MembershipLevel.admin);
    const replaced = await insertInvite(organization.id, otherAdmin.user, { targetEmail: "r@example.com", level: 8 });
    const combined = await insertInvite(organization.id, owner, { targetEmail: "c@example.com", level: 8 });
    const log = async () =>
      (await api("GET", `/api/organizations/${organization.id}/activity_log?scope=OrganizationInvite`, { key })).body
        .results as { activity: string; item_id: string; detail: { name: string } }[];
    const before = (await log()).length;
    for (const body of [
      { target_email: "r@example.com", send_email: false },
      { target_email: "c@example.com", send_email: false, combine_pending_invites: true },
    ]) {
      expect((await api("POST", invitesPath(organization.id), { key, body })).status).toBe(201);
    }
    const appended = (await log()).slice(0, -before || undefined);
    const sent = await accessListedBy(organization.id, key);
    expect(Object.keys(sent).sort()).toEqual(["c@example.com", "r@example.com"]);
    expect(
      appended
        .map((entry) => [entry.activity, entry.item_id, entry.detail.name])
        .filter(([activity]) => activity === "cancelled"),
    ).toEqual([
      ["cancelled", combined.id, "c@example.com"],
      ["cancelled", replaced.id, "r@example.com"],
    ]);
  });

  it("refuses (409) an invite racing one it would replace unread: none goes without its entry", async () => {
    const { organization, key } = await setupOrganization();
    const body = { target_email: "racing@example.com", send_email: false };
    const otherAdmin = await addMember(organization.id, MembershipLevel.admin);
    // Another admin's invite lands between this one's reads (no open invite then) and its write.
    const ran = beforeWrites([
      [
        INVITE_WRITE,
        async () => (await api("POST", invitesPath(organization.id), { key: otherAdmin.key, body })).status,
      ],
    ]);
    const sent = await api("POST", invitesPath(organization.id), { key, body });
    vi.restoreAllMocks();
    expect([ran, sent.status]).toEqual([[201], 409]);
    expect(Object.keys(await accessListedBy(organization.id, key))).toEqual(["racing@example.com"]);
  });

  it("lets a member replace only their own open invites: another's stays, as DELETE leaves it to admins", async () => {
    const { organization, owner, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const ownerInvite = await api("POST", invitesPath(organization.id), {
      key,
      body: { target_email: "new.admin@example.com", level: MembershipLevel.admin },
    });
    expect(ownerInvite.status).toBe(201);

    const replacing = await api("POST", invitesPath(organization.id), {
      key: member.key,
      body: { target_email: "new.admin@example.com" },
    });

    expectError(
      replacing,
      403,
      errorBody(
        "authentication_error",
        "permission_denied",
        "Only an admin can replace an invite someone else sent to this e-mail address.",
      ),
    );
    expect((await api("GET", `/api/signup/${ownerInvite.body.token}`)).status).toBe(200);
    expect(await listInviteEmails(organization.id, key)).toEqual(["new.admin@example.com"]);
    // Their own invite, or one past its expiry, a member replaces.
    const first = await api("POST", invitesPath(organization.id), {
      key: member.key,
      body: { target_email: "a@example.com" },
    });
    const again = await api("POST", invitesPath(organization.id), {
      key: member.key,
      body: { target_email: "a@example.com" },
    });
    expect(again.status).toBe(201);
    expect((await api("GET", `/api/signup/${first.body.token}`)).status).toBe(404);
    await insertInvite(organization.id, owner, { targetEmail: "b@example.com", createdAt: daysAgo(10) });
    expect(
      (await api("POST", invitesPath(organization.id), { key: member.key, body: { target_email: "b@example.com" } }))
        .status,
    ).toBe(201);
  });

  it("never lets a member's invite cancel another's open invite sent after its checks read none", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const body = { target_email: "racing@example.com" };
    // The owner's invite lands between the member's reads (no open invite then) and their write.
    const ran = beforeWrites([
      [INVITE_WRITE, async () => (await api("POST", invitesPath(organization.id), { key, body })).body],
    ]);
    const members = await api("POST", invitesPath(organization.id), { key: member.key, body });
    vi.restoreAllMocks();
    expect(members.status).toBe(201);
    const [ownerInvite] = ran as [{ token: string }];
    // Both stand: the member's write deleted only their own and expired invites.
    expect((await api("GET", `/api/signup/${ownerInvite.token}`)).status).toBe(200);
    expect((await api("GET", `/api/signup/${members.body.token}`)).status).toBe(200);
  });

  it("with combine_pending_invites, merges the unexpired pending invites: highest level, union of access", async () => {
    const { organization, owner, key } = await setupOrganization();
    const first = await createProject(organization.id, { access_control: true });
    const second = await createProject(organization.id, { access_control: true });
    await insertInvite(organization.id, owner, {
      targetEmail: "jane@example.com",
      level: 8,
      privateProjectAccess: [
        { id: first.id, level: "admin" },
        { id: second.id, level: "member" },
      ],
    });
    // Expired: neither its level nor its access count.
    await insertInvite(organization.id, owner, {
      targetEmail: "jane@example.com",
      level: 15,
      privateProjectAccess: [{ id: 424242, level: "admin" }],
      createdAt: daysAgo(3, 1000),
    });

    const response = await api("POST", invitesPath(organization.id), {
      key,
      body: {
        target_email: "jane@example.com",
        level: 1,
        private_project_access: [
          { id: second.id, level: "admin" },
          { id: first.id, level: "member" },
        ],
        combine_pending_invites: true,
      },
    });

    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      level: 8,
      private_project_access: [
        { id: second.id, level: "admin" },
        { id: first.id, level: "admin" },
      ],
      combine_pending_invites: true,
    });
    const listed = await api("GET", invitesPath(organization.id), { key });
    expect(listed.body.results).toEqual([withoutToken(response.body)]);
  });

  it("answers 404 to a caller who is not a member of the organization, and creates nothing", async () => {
    const { organization, key } = await setupOrganization();
    const outsider = await setupOrganization();

    const response = await api("POST", invitesPath(organization.id), {
      key: outsider.key,
      body: { target_email: "a@example.com" },
    });

    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorBody("invalid_request", "not_found", "Not found."));
    expect(await listInviteEmails(organization.id, key)).toEqual([]);
  });

  it("needs organization_member:write", async () => {
    const { organization, key } = await setupOrganization({ scopes: ["organization_member:read"] });

    const response = await api("POST", invitesPath(organization.id), { key, body: { target_email: "a@example.com" } });

    expect(response.status).toBe(403);
    expect(response.body).toEqual(
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key missing required scope 'organization_member:write'",
      ),
    );
  });

  it("costs two D1 round trips: the membership with what the body names, then one atomic write", async () => {
    const { organization, key } = await setupOrganization();
    await api("GET", `/api/organizations/${organization.id}`, { key });

    const response = await api("POST", invitesPath(organization.id), {
      key,
      body: { target_email: "a@example.com", combine_pending_invites: true },
    });

    expect(response.status).toBe(201);
    expect(response.cost.queries).toBe(2);
  });

  it("reads what the body names after validating a body without Content-Length (three round trips)", async () => {
    const { organization, owner, key } = await setupOrganization();
    await api("GET", `/api/organizations/${organization.id}`, { key });

    const created = await api("POST", invitesPath(organization.id), {
      key,
      body: streamedBody({ target_email: "Streamed@Example.com" }),
    });
    expect(created.status).toBe(201);
    expect(created.body.target_email).toBe("streamed@example.com");
    expect(created.cost.queries).toBe(3);
    // The checks still see the organization: the owner's own e-mail is refused.
    const refused = await api("POST", invitesPath(organization.id), {
      key,
      body: streamedBody({ target_email: owner.email }),
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(alreadyMember("target_email"));
  });
});

describe("an invite's end, 3 days after it was made", () => {
  it("is one instant for every path: open a millisecond before, expired from it on", async () => {
    const { owner, key } = await setupOrganization();
    await db.update(schema.users).set({ isEmailVerified: true }).where(eq(schema.users.id, owner.id));
    const inviting = await setupOrganization({ name: "Inviting" });
    const member = await addMember(inviting.organization.id, MembershipLevel.member);
    const sent = await api("POST", invitesPath(inviting.organization.id), {
      key: inviting.key,
      body: { target_email: owner.email },
    });
    const end = Date.parse(sent.body.created_at) + 3 * 24 * 3600 * 1000;
    const seen = async () => ({
      listed: (await api("GET", invitesPath(inviting.organization.id), { key: inviting.key })).body.results[0]
        .is_expired,
      preview: (await api("GET", `/api/signup/${sent.body.token}`)).status,
      pending: (await api("GET", "/api/users/@me", { key })).body.pending_invites.length,
    });
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(end - 1);
    expect(await seen()).toEqual({ listed: false, preview: 200, pending: 1 });
    vi.setSystemTime(end);
    expect(await seen()).toEqual({ listed: true, preview: 400, pending: 0 });
    // Expired for everyone alike: a member's new invite to the address replaces it.
    const replacing = await api("POST", invitesPath(inviting.organization.id), {
      key: member.key,
      body: { target_email: owner.email },
    });
    expect(replacing.status).toBe(201);
    const left = await db.select().from(schema.invites).where(eq(schema.invites.id, sent.body.id));
    expect(left).toEqual([]);
  });
});

describe("GET /api/organizations/:organization_id/invites", () => {
  it("names in an invite's project access only the projects the caller sees; an admin sees them all", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const hidden = await createProject(organization.id, { name: "Secret", access_control: true });
    const granted = await createProject(organization.id, { name: "Granted", access_control: true });
    await grantProjectAccess(granted.id!, member.membership.id, "member");
    const access = [
      { id: hidden.id, level: "admin" },
      { id: granted.id, level: "member" },
    ];
    const sent = await api("POST", invitesPath(organization.id), {
      key,
      body: { target_email: "cfo@example.com", private_project_access: access },
    });
    expect(sent.status).toBe(201);
    await api("POST", invitesPath(organization.id), { key, body: { target_email: "open@example.com" } });
    const accessListed = (caller: string) => accessListedBy(organization.id, caller);

    expect(await accessListed(member.key)).toEqual({
      "cfo@example.com": [{ id: granted.id, level: "member" }],
      "open@example.com": null,
    });
    expect(await accessListed(key)).toEqual({ "cfo@example.com": access, "open@example.com": null });
  });

  it("lists an invite naming only projects hidden from a member as one naming none: null", async () => {
    const { organization, key, member, hidden } = await invitesNamingHiddenProject(
      "cfo@example.com",
      "open@example.com",
    );
    const accessListed = (caller: string) => accessListedBy(organization.id, caller);
    expect(await accessListed(member.key)).toEqual({ "cfo@example.com": null, "open@example.com": null });
    expect(await accessListed(key)).toEqual({
      "cfo@example.com": [{ id: hidden.id, level: "member" }],
      "open@example.com": null,
    });
  });

  it("names no deleted project, even to a member whose rules on it went with it, nor to an admin", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const hidden = await createProject(organization.id, { name: "Secret", access_control: true });
    const granted = await createProject(organization.id, { name: "Granted", access_control: true });
    await grantProjectAccess(granted.id!, member.membership.id, "member");
    // Public, but not to this member: their own rule says `none`.
    const open = await createProject(organization.id, { name: "Open but not to them" });
    await grantProjectAccess(open.id!, member.membership.id, "none");
    const sent = await api("POST", invitesPath(organization.id), {
      key,
      body: {
        target_email: "cfo@example.com",
        private_project_access: [
          { id: hidden.id, level: "admin" },
          { id: open.id, level: "admin" },
          { id: granted.id, level: "member" },
        ],
      },
    });
    expect(sent.status).toBe(201);
    const accessListed = async (caller: string) => (await accessListedBy(organization.id, caller))["cfo@example.com"];
    expect(await accessListed(member.key)).toEqual([{ id: granted.id, level: "member" }]);

    // Being deleted, their rules (the private default, the member's `none`) are gone already.
    for (const project of [hidden, open]) {
      expect((await api("DELETE", `/api/projects/${project.id}`, { key })).status).toBe(204);
    }
    expect(await accessListed(member.key)).toEqual([{ id: granted.id, level: "member" }]);
    expect(await accessListed(key)).toEqual([{ id: granted.id, level: "member" }]);
    // Once the background job has removed the rows, the same.
    await deleteProjectRow(hidden.id!);
    await deleteProjectRow(open.id!);
    expect(await accessListed(member.key)).toEqual([{ id: granted.id, level: "member" }]);
    expect(await accessListed(key)).toEqual([{ id: granted.id, level: "member" }]);
  });

  it("lists newest first, paginated, with the creator embedded and expiry computed", async () => {
    const { organization, owner, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const oldest = await insertInvite(organization.id, owner, { createdAt: daysAgo(4), updatedAt: daysAgo(4) });
    const middle = await insertInvite(organization.id, admin.user, { createdAt: daysAgo(1), level: 8 });
    const newest = await insertInvite(organization.id, owner, { privateProjectAccess: null, message: "hi" });
    await insertInvite((await setupOrganization()).organization.id, owner);

    const firstPage = await api("GET", `${invitesPath(organization.id)}?limit=2`, { key });

    expect(firstPage.status).toBe(200);
    expect(firstPage.body).toEqual({
      count: 3,
      next: nextLink(invitesPath(organization.id), 2, 2, [
        firstPage.body.results[1].created_at,
        firstPage.body.results[1].id,
      ]),
      previous: null,
      results: [
        {
          id: newest.id,
          target_email: newest.targetEmail,
          first_name: "",
          emailing_attempt_made: false,
          email_status: "not_sent",
          level: 1,
          is_expired: false,
          created_by: userBasic(owner),
          created_at: newest.createdAt,
          updated_at: newest.updatedAt,
          message: "hi",
          private_project_access: null,
          send_email: false,
          combine_pending_invites: false,
        },
        expect.objectContaining({ id: middle.id, level: 8, is_expired: false, created_by: userBasic(admin.user) }),
      ],
    });
    const secondPage = await api("GET", firstPage.body.next.replace("http://localhost", ""), { key });
    expect(secondPage.body.results).toEqual([
      expect.objectContaining({ id: oldest.id, is_expired: true, created_at: oldest.createdAt }),
    ]);
    expect(secondPage.body.previous).toBe(
      previousLink(invitesPath(organization.id), 2, 0, [oldest.createdAt, oldest.id]),
    );
  });

  it("shows a null creator once that user is gone", async () => {
    const { organization, key } = await setupOrganization();
    const gone = await createUser();
    const invite = await insertInvite(organization.id, gone);
    await db.delete(schema.users).where(eq(schema.users.id, gone.id));

    const response = await api("GET", invitesPath(organization.id), { key });

    expect(response.body.results).toEqual([expect.objectContaining({ id: invite.id, created_by: null })]);
  });

  it("turns is_expired on once three days have passed", async () => {
    const { organization, key } = await setupOrganization();
    const created = await api("POST", invitesPath(organization.id), { key, body: { target_email: "a@example.com" } });
    const createdAt = Date.parse(created.body.created_at);
    vi.useFakeTimers({ toFake: ["Date"] });

    vi.setSystemTime(createdAt + 3 * 24 * 60 * 60 * 1000 - 1000);
    const justBefore = await api("GET", invitesPath(organization.id), { key });
    vi.setSystemTime(createdAt + 3 * 24 * 60 * 60 * 1000 + 1000);
    const justAfter = await api("GET", invitesPath(organization.id), { key });

    expect(justBefore.body.results[0].is_expired).toBe(false);
    expect(justAfter.body.results[0].is_expired).toBe(true);
  });

  it("costs the same D1 round trips for 1 invite and for 30", async () => {
    const { organization, owner, key } = await setupOrganization();
    await insertInvite(organization.id, owner);
    await api("GET", invitesPath(organization.id), { key });
    const one = await api("GET", invitesPath(organization.id), { key });
    for (let index = 0; index < 29; index += 1) await insertInvite(organization.id, owner);

    const thirty = await api("GET", invitesPath(organization.id), { key });

    expect(thirty.body.count).toBe(30);
    expect(one.cost.queries).toBe(1);
    expect(thirty.cost.queries).toBe(one.cost.queries);
  });

  it("is readable with organization_member:read, not with another resource's scope", async () => {
    const { organization, key } = await setupOrganization({ scopes: ["organization_member:read"] });
    const other = await setupOrganization({ scopes: ["project:read"] });
    await addMembership(organization.id, other.owner, MembershipLevel.member);

    const allowed = await api("GET", invitesPath(organization.id), { key });
    const denied = await api("GET", invitesPath(organization.id), { key: other.key });

    expect(allowed.status).toBe(200);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual(
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key missing required scope 'organization_member:read'",
      ),
    );
  });

  it("answers 401 without a key or with a bad one, and 404 to non-members, on every route", async () => {
    const { organization, owner } = await setupOrganization();
    const invite = await insertInvite(organization.id, owner);

    await expectKeyAndMembershipRequired("GET", invitesPath(organization.id));
    await expectKeyAndMembershipRequired("POST", invitesPath(organization.id), { target_email: "a@example.com" });
    await expectKeyAndMembershipRequired("POST", `${invitesPath(organization.id)}/bulk`, [
      { target_email: "a@example.com" },
    ]);
    await expectKeyAndMembershipRequired("DELETE", `${invitesPath(organization.id)}/${invite.id}`);
  });
});

describe("DELETE /api/organizations/:organization_id/invites/:id", () => {
  it("lets an admin cancel an invite", async () => {
    const { organization, owner, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const invite = await insertInvite(organization.id, owner);
    const kept = await insertInvite(organization.id, owner);

    const response = await api("DELETE", `${invitesPath(organization.id)}/${invite.id}/`, { key: admin.key });

    expect(response.status).toBe(204);
    expect(response.text).toBe("");
    expect(await listInviteEmails(organization.id, key)).toEqual([kept.targetEmail]);
  });

  it("refuses a member with 403 and deletes nothing", async () => {
    const { organization, owner, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const invite = await insertInvite(organization.id, owner);

    const response = await api("DELETE", `${invitesPath(organization.id)}/${invite.id}`, { key: member.key });

    expect(response.status).toBe(403);
    expect(response.body).toEqual(
      errorBody("authentication_error", "permission_denied", "Your organization access level is insufficient."),
    );
    expect(await listInviteEmails(organization.id, key)).toEqual([invite.targetEmail]);
  });

  it("answers 404 for an unknown id and for another organization's invite, which stays", async () => {
    const { organization, key } = await setupOrganization();
    const other = await setupOrganization();
    const othersInvite = await insertInvite(other.organization.id, other.owner);

    const unknown = await api("DELETE", `${invitesPath(organization.id)}/${crypto.randomUUID()}`, { key });
    const foreign = await api("DELETE", `${invitesPath(organization.id)}/${othersInvite.id}`, { key });

    for (const response of [unknown, foreign]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual(errorBody("invalid_request", "not_found", "Not found."));
    }
    expect(await listInviteEmails(other.organization.id, other.key)).toEqual([othersInvite.targetEmail]);
  });

  it("needs organization_member:write", async () => {
    const { organization, owner, key } = await setupOrganization();
    const invite = await insertInvite(organization.id, owner);
    const readOnly = await createApiKey(owner, { scopes: ["organization_member:read"] });

    const response = await api("DELETE", `${invitesPath(organization.id)}/${invite.id}`, { key: readOnly.value });

    expect(response.status).toBe(403);
    expect(response.body).toEqual(
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key missing required scope 'organization_member:write'",
      ),
    );
    expect(await listInviteEmails(organization.id, key)).toEqual([invite.targetEmail]);
  });

  it("answers 405 with Allow to a method the invite does not take", async () => {
    const { organization, owner, key } = await setupOrganization();
    const invite = await insertInvite(organization.id, owner);

    const response = await api("PATCH", `${invitesPath(organization.id)}/${invite.id}`, { key, body: {} });

    expect(response.status).toBe(405);
    expect(response.headers.get("Allow")).toBe("DELETE");
    expect(response.body).toEqual(errorBody("invalid_request", "method_not_allowed", 'Method "PATCH" not allowed.'));
  });
});

describe("POST /api/organizations/:organization_id/invites/bulk", () => {
  const bulkPath = (organizationId: string) => `${invitesPath(organizationId)}/bulk`;
  const someInvites = (count: number) =>
    Array.from({ length: count }, (_, index) => ({
      target_email: `person-${index}@example.com`,
      first_name: `P${index}`,
    }));

  it("creates all the invites in one go and answers 201 with them, in the order sent, as PostHog does", async () => {
    const { organization, owner, key } = await setupOrganization();
    await insertInvite(organization.id, owner, { targetEmail: "person-1@example.com", level: 8 });

    const response = await api("POST", bulkPath(organization.id), {
      key,
      body: [{ target_email: "Person-0@Example.com", level: 8 }, { target_email: "person-1@example.com" }],
    });

    expect(response.status).toBe(201);
    const invite = (targetEmail: string, level: number) => ({
      id: expect.stringMatching(UUID),
      target_email: targetEmail,
      first_name: "",
      emailing_attempt_made: false,
      email_status: "not_configured",
      level,
      is_expired: false,
      created_by: userBasic(owner),
      created_at: expect.stringMatching(ISO_TIMESTAMP),
      updated_at: expect.stringMatching(ISO_TIMESTAMP),
      message: null,
      private_project_access: null,
      send_email: true,
      combine_pending_invites: false,
      token: expect.stringMatching(INVITE_TOKEN),
    });
    expect(response.body).toEqual([invite("person-0@example.com", 8), invite("person-1@example.com", 1)]);
    expect((await listInviteEmails(organization.id, key)).sort()).toEqual([
      "person-0@example.com",
      "person-1@example.com",
    ]);
  });

  it("creates the most a request may send (20), each with project access, in one batch", async () => {
    const { organization, project, key } = await setupOrganization();
    const sent = someInvites(20).map((invite) => ({
      ...invite,
      message: "Welcome aboard",
      private_project_access: [{ id: project.id, level: "member" }],
    }));

    const created = await api("POST", bulkPath(organization.id), { key, body: sent });

    expect(created.status).toBe(201);
    expect((await listInviteEmails(organization.id, key)).sort()).toEqual(
      sent.map((invite) => invite.target_email).sort(),
    );
  });

  it("lists the invites of one request newest first: their ids count up within a millisecond", async () => {
    const { organization, key } = await setupOrganization();
    const sent = someInvites(6);

    const created = await api("POST", bulkPath(organization.id), { key, body: sent });

    expect(created.status).toBe(201);
    const ids = (created.body as { id: string }[]).map((invite) => invite.id);
    expect([...ids].sort()).toEqual(ids);
    expect(await listInviteEmails(organization.id, key)).toEqual(sent.map((invite) => invite.target_email).reverse());
  });

  it("creates nothing, and replaces nothing, when the 7th invite is invalid", async () => {
    const { organization, owner, key } = await setupOrganization();
    const earlier = await insertInvite(organization.id, owner, { targetEmail: "person-0@example.com", level: 8 });
    const invites = someInvites(10);
    invites[6] = { target_email: "not-an-email", first_name: "Seven" };

    const response = await api("POST", bulkPath(organization.id), { key, body: invites });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(
      errorBody("validation_error", "invalid_input", "Enter a valid email address.", "6.target_email"),
    );
    const listed = await api("GET", invitesPath(organization.id), { key });
    expect(listed.body.results).toEqual([expect.objectContaining({ id: earlier.id, level: 8 })]);
  });

  it("creates nothing when a later invite breaks a rule checked against the database", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const invites = [...someInvites(6), { target_email: member.user.email }];

    const response = await api("POST", bulkPath(organization.id), { key, body: invites });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(alreadyMember("6.target_email"));
    expect(await listInviteEmails(organization.id, key)).toEqual([]);
  });

  it("creates nothing when one invite is above the inviter's level", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);

    const response = await api("POST", bulkPath(organization.id), {
      key: admin.key,
      body: [...someInvites(3), { target_email: "boss@example.com", level: 15 }],
    });

    expect(response.status).toBe(403);
    expect(await listInviteEmails(organization.id, key)).toEqual([]);
  });

  it.each([
    [{ target_email: "a@example.com" }, "parse_error", "Invalid data. Expected a list, but got dictionary."],
    [[], "min_length", "Send at least one invite."],
    ["21 invites", "max_length", "A maximum of 20 invites can be sent in a single request."],
  ])("refuses %j with 400 %s", async (body, code, detail) => {
    const { organization, key } = await setupOrganization();

    const response = await api("POST", bulkPath(organization.id), {
      key,
      body: body === "21 invites" ? someInvites(21) : body,
    });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(errorBody("validation_error", code, detail, null));
    expect(await listInviteEmails(organization.id, key)).toEqual([]);
  });

  it("refuses the same e-mail twice in one request", async () => {
    const { organization, key } = await setupOrganization();

    const response = await api("POST", bulkPath(organization.id), {
      key,
      body: [{ target_email: "a@example.com" }, { target_email: "b@example.com" }, { target_email: "A@example.com" }],
    });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(
      errorBody(
        "validation_error",
        "unique",
        "This email address is already invited earlier in this request.",
        "2.target_email",
      ),
    );
    expect(await listInviteEmails(organization.id, key)).toEqual([]);
  });

  it("costs the same two D1 round trips for 1 invite and for 20", async () => {
    const { organization, key } = await setupOrganization();
    await api("GET", `/api/organizations/${organization.id}`, { key });

    const one = await api("POST", bulkPath(organization.id), { key, body: someInvites(1) });
    const twenty = await api("POST", bulkPath(organization.id), {
      key,
      body: someInvites(20).map((invite) => ({ ...invite, combine_pending_invites: true })),
    });

    expect(twenty.status).toBe(201);
    expect(twenty.body).toHaveLength(20);
    expect(one.cost.queries).toBe(2);
    expect(twenty.cost.queries).toBe(2);
  });

  it("sends one e-mail per invite that wants one", async () => {
    const { organization, key } = await setupOrganization();
    useEmailTransport();
    const transport = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));

    const response = await api("POST", bulkPath(organization.id), {
      key,
      body: [
        { target_email: "a@example.com" },
        { target_email: "b@example.com", send_email: false },
        { target_email: "c@example.com" },
      ],
    });

    expect(response.body.map((invite: { email_status: string }) => invite.email_status)).toEqual([
      "pending",
      "not_sent",
      "pending",
    ]);
    expect(response.body.map((invite: { emailing_attempt_made: boolean }) => invite.emailing_attempt_made)).toEqual([
      true,
      false,
      true,
    ]);
    await vi.waitFor(async () => {
      const listed = (await api("GET", invitesPath(organization.id), { key })).body.results;
      expect(listed.map((invite: { email_status: string }) => invite.email_status).sort()).toEqual([
        "not_sent",
        "sent",
        "sent",
      ]);
    }, 5000);
    // Only posts to the transport: earlier tests' background work may fetch through the same spy.
    const recipients = transport.mock.calls
      .filter(([input]) => String(input instanceof Request ? input.url : input) === FAKE_TRANSPORT_URL)
      .map(([, init]) => JSON.parse(String(init?.body)).to);
    expect(recipients.sort()).toEqual(["a@example.com", "c@example.com"]);
  });

  it("needs organization_member:write", async () => {
    const { organization, key } = await setupOrganization({ scopes: ["organization_member:read"] });

    const response = await api("POST", bulkPath(organization.id), { key, body: someInvites(1) });

    expect(response.status).toBe(403);
    expect(response.body).toEqual(
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key missing required scope 'organization_member:write'",
      ),
    );
  });
});

describe("an invite replacing another, sent by an admin demoted meanwhile", () => {
  afterEach(() => vi.restoreAllMocks());

  it("cancels no invite someone else sent: the owner's owner-level invite still opens", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const invitesPath = `/api/organizations/${organization.id}/invites`;
    const ownersInvite = await api("POST", invitesPath, {
      key,
      body: { target_email: "boss@example.com", level: MembershipLevel.owner, send_email: false },
    });
    expect(ownersInvite.status).toBe(201);
    const memberPath = `/api/organizations/${organization.id}/members/${admin.user.uuid}`;
    const demote = async () =>
      (await api("PATCH", memberPath, { key, body: { level: MembershipLevel.member } })).status;
    const demotion = beforeWrites([[INVITE_WRITE, demote]]);
    const replacing = await api("POST", invitesPath, {
      key: admin.key,
      body: { target_email: "boss@example.com", level: MembershipLevel.member, send_email: false },
    });
    vi.restoreAllMocks();
    expect(demotion).toEqual([200]);
    // Judged as an admin's, it is written as a member's would be: beside the owner's, not over it.
    expect(replacing.status).toBe(201);
    const preview = await api("GET", `/api/signup/${ownersInvite.body.token}`);
    expect([preview.status, preview.body.level]).toEqual([200, MembershipLevel.owner]);
  });
});

describe("an invite whose project is deleted between its checks and its write", () => {
  it("is not made naming it: 409, nothing written", async () => {
    const { organization, key } = await setupOrganization();
    const doomed = await createProject(organization.id, { access_control: true, name: "Doomed" });
    const ran = beforeWrites([
      [INVITE_WRITE, async () => (await api("DELETE", `/api/projects/${doomed.id}/`, { key })).status],
    ]);
    const invited = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key,
      body: { target_email: "late@example.com", private_project_access: [{ id: doomed.id, level: "member" }] },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    expectError(invited, 409, changedMeanwhile("project"));
    expect((await api("GET", `/api/organizations/${organization.id}/invites`, { key })).body.count).toBe(0);
  });
});

describe("combining with a pending invite whose project was deleted", () => {
  it("leaves that project out instead of refusing an entry the caller never sent", async () => {
    const { organization, owner, key } = await setupOrganization();
    const doomed = await createProject(organization.id, { name: "Doomed", access_control: true });
    await insertInvite(organization.id, owner, {
      targetEmail: "kim@example.com",
      privateProjectAccess: [{ id: doomed.id, level: "member" }],
    });
    await deleteProjectRow(doomed.id);

    const combined = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key,
      body: { target_email: "kim@example.com", combine_pending_invites: true },
    });
    expect(combined.status, JSON.stringify(combined.body)).toBe(201);
    expect(combined.body.private_project_access).toBeNull();
    // Named in the body, it is still refused.
    const named = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key,
      body: { target_email: "kim@example.com", private_project_access: [{ id: doomed.id, level: "member" }] },
    });
    expect(named.status).toBe(400);
    expect(named.body.attr).toBe("private_project_access");
  });
});
