import { afterEach, describe, expect, it, vi } from "vitest";
import { MembershipLevel } from "../../../src/platform/levels";
import { changedMeanwhile, expectError, INSUFFICIENT_LEVEL, NOT_FOUND } from "../../support/error-bodies";
import { addMember, api, createProject, errorBody, setupOrganization } from "../../support/harness";
import { insertInvite, INVITE_WRITE, restoreTestDoubles } from "../../support/people";
import { beforeWrites, onBoundStatements } from "../../support/races";

/*
 * Invite writes and member writes are held to the level they were judged on when the write runs:
 * a caller demoted or removed between the request's read and its write gets what they would get
 * a moment later, and nothing is written.
 */
afterEach(restoreTestDoubles);

const invitesPath = (organizationId: string) => `/api/organizations/${organizationId}/invites`;
const memberPath = (organizationId: string, uuid: string) => `/api/organizations/${organizationId}/members/${uuid}`;

async function inviteEmails(organizationId: string, key: string): Promise<string[]> {
  const response = await api("GET", `${invitesPath(organizationId)}?limit=1000`, { key });
  expect(response.status).toBe(200);
  return response.body.results.map((invite: { target_email: string }) => invite.target_email);
}

describe("invites judged on the caller's level as read", () => {
  it("an admin demoted meanwhile cancels no invite: 403, the write holds the admin level", async () => {
    const { organization, owner, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const invite = await insertInvite(organization.id, owner, { level: MembershipLevel.owner });
    const demotion = beforeWrites([
      [
        /^update "invites"/,
        async () =>
          (
            await api("PATCH", memberPath(organization.id, admin.user.uuid), {
              key,
              body: { level: MembershipLevel.member },
            })
          ).status,
      ],
    ]);
    const cancelled = await api("DELETE", `${invitesPath(organization.id)}/${invite.id}`, { key: admin.key });
    vi.restoreAllMocks();
    expect(demotion).toEqual([200]);
    // A moment later the same member gets 403 and the owner's invite stands: so must it now.
    expectError(cancelled, 403, INSUFFICIENT_LEVEL);
    expect(await inviteEmails(organization.id, key)).toEqual([invite.targetEmail]);
  });

  it("an admin removed meanwhile cancels no invite: 404, and the invite stands", async () => {
    const { organization, owner, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const invite = await insertInvite(organization.id, owner);
    const removal = beforeWrites([
      [
        /^update "invites"/,
        async () => (await api("DELETE", memberPath(organization.id, admin.user.uuid), { key })).status,
      ],
    ]);
    const cancelled = await api("DELETE", `${invitesPath(organization.id)}/${invite.id}`, { key: admin.key });
    vi.restoreAllMocks();
    expect(removal).toEqual([204]);
    expectError(cancelled, 404, NOT_FOUND);
    expect(await inviteEmails(organization.id, key)).toEqual([invite.targetEmail]);
  });

  it("with members_can_invite false, an admin demoted meanwhile invites no one who can then join", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const settings = await api("PATCH", `/api/organizations/${organization.id}`, {
      key,
      body: { members_can_invite: false },
    });
    expect(settings.status).toBe(200);
    const demotion = beforeWrites([
      [
        INVITE_WRITE,
        async () =>
          (
            await api("PATCH", memberPath(organization.id, admin.user.uuid), {
              key,
              body: { level: MembershipLevel.member },
            })
          ).status,
      ],
    ]);
    const invited = await api("POST", invitesPath(organization.id), {
      key: admin.key,
      body: { target_email: "sneaked-in@example.com", send_email: false },
    });
    vi.restoreAllMocks();
    expect(demotion).toEqual([200]);
    // What the landed invite opens: a stranger joins an organization where only admins may invite.
    const joined = invited.body?.token
      ? (await api("POST", "/api/signup", { body: { token: invited.body.token } })).status
      : null;
    // A plain member of this organization may not invite (403 a moment later): the write must hold to it.
    expect({ invited: invited.status, joined }).toEqual({ invited: 403, joined: null });
    expectError(invited, 403, INSUFFICIENT_LEVEL);
    expect(await inviteEmails(organization.id, key)).toEqual([]);
  });

  it("a member removed meanwhile adds no invite to the organization", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const removal = beforeWrites([
      [INVITE_WRITE, async () => (await api("DELETE", memberPath(organization.id, member.user.uuid), { key })).status],
    ]);
    const invited = await api("POST", invitesPath(organization.id), {
      key: member.key,
      body: { target_email: "after-removal@example.com", send_email: false },
    });
    vi.restoreAllMocks();
    expect(removal).toEqual([204]);
    expectError(invited, 404, NOT_FOUND);
    expect(await inviteEmails(organization.id, key)).toEqual([]);
  });
});

describe("resending an invite e-mail, judged on the invite and the caller's level as read", () => {
  /**
   * `meanwhile` runs once, between resend_email's read of the invite and its update (made outside
   * a batch); its status is in the list returned.
   */
  function beforeResendWrite(meanwhile: () => Promise<number>) {
    const ran: number[] = [];
    onBoundStatements((query, _values, bound) => {
      if (ran.length > 0 || !/^update "invites" set "email_status"/.test(query)) return bound;
      for (const method of ["all", "run", "raw", "first"] as const) {
        const original = (bound[method] as (...args: unknown[]) => Promise<unknown>).bind(bound);
        (bound as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
          if (ran.length === 0) ran.push(await meanwhile());
          return original(...args);
        };
      }
      return bound;
    });
    return ran;
  }

  const failedInvite = (organizationId: string, owner: Parameters<typeof insertInvite>[1]) =>
    insertInvite(organizationId, owner, {
      sendEmail: true,
      emailStatus: "failed",
      emailOutbox: "enc:v1:00000000:sealed",
    });

  it("an admin demoted meanwhile queues no e-mail again (resend_email is admin-only)", async () => {
    const { organization, owner, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const invite = await failedInvite(organization.id, owner);
    const path = memberPath(organization.id, admin.user.uuid);
    const demotion = beforeResendWrite(
      async () => (await api("PATCH", path, { key, body: { level: MembershipLevel.member } })).status,
    );
    const resent = await api("POST", `${invitesPath(organization.id)}/${invite.id}/resend_email`, { key: admin.key });
    vi.restoreAllMocks();
    expect(demotion).toEqual([200]);
    expectError(resent, 403, INSUFFICIENT_LEVEL);
    const listed = await api("GET", invitesPath(organization.id), { key });
    expect(listed.body.results[0].email_status).toBe("failed");
  });

  it("an invite cancelled meanwhile is 404, as a moment later", async () => {
    const { organization, owner, key } = await setupOrganization();
    const invite = await failedInvite(organization.id, owner);
    const invitePath = `${invitesPath(organization.id)}/${invite.id}`;
    const cancelled = beforeResendWrite(async () => (await api("DELETE", invitePath, { key })).status);
    const resent = await api("POST", `${invitePath}/resend_email`, { key });
    vi.restoreAllMocks();
    expect(cancelled).toEqual([204]);
    expectError(resent, 404, NOT_FOUND);
    expectError(await api("POST", `${invitePath}/resend_email`, { key }), 404, NOT_FOUND);
  });
});

describe("an invite naming a project being deleted", () => {
  it("is refused as an unknown project, as every other route answers for a project being deleted", async () => {
    const { organization, key } = await setupOrganization();
    const doomed = await createProject(organization.id, { name: "Doomed" });
    expect((await api("DELETE", `/api/projects/${doomed.id}`, { key })).status).toBe(204);
    expect((await api("GET", `/api/projects/${doomed.id}`, { key })).status).toBe(404);

    const invited = await api("POST", invitesPath(organization.id), {
      key,
      body: {
        target_email: "to-a-deleted-project@example.com",
        send_email: false,
        private_project_access: [{ id: doomed.id, level: "admin" }],
      },
    });
    expectError(
      invited,
      400,
      errorBody(
        "validation_error",
        "invalid_input",
        "Project does not exist on this organization, or it is private and you do not have access to it.",
        "private_project_access",
      ),
    );
  });
});

describe("member writes of a caller removed meanwhile", () => {
  it("an admin removed meanwhile gets 404 (as a moment later), not 409 'try again'", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const member = await addMember(organization.id, MembershipLevel.member);
    const removal = beforeWrites([
      [
        /^update "organization_memberships"/,
        async () => (await api("DELETE", memberPath(organization.id, admin.user.uuid), { key })).status,
      ],
    ]);
    const promoted = await api("PATCH", memberPath(organization.id, member.user.uuid), {
      key: admin.key,
      body: { level: MembershipLevel.admin },
    });
    vi.restoreAllMocks();
    expect(removal).toEqual([204]);
    expectError(promoted, 404, NOT_FOUND);
  });
});

describe("combine_pending_invites racing another invite to the e-mail", () => {
  it("combining drops no invite sent between its read and its write: it combines it, or is refused (409)", async () => {
    const { organization, key } = await setupOrganization();
    const project = await createProject(organization.id, { access_control: true });
    const email = "racing-combine@example.com";
    // Another admin's invite for the e-mail (level admin, access to the private project) lands
    // after the combining request read the pending invites (none then) and before its write.
    const ran = beforeWrites([
      [
        INVITE_WRITE,
        async () =>
          (
            await api("POST", `/api/organizations/${organization.id}/invites`, {
              key,
              body: {
                target_email: email,
                level: 8,
                private_project_access: [{ id: project.id, level: "admin" }],
              },
            })
          ).status,
      ],
    ]);
    const combining = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key,
      body: { target_email: email, level: 1, combine_pending_invites: true },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([201]);

    // Either the combining request is refused (the pending invites changed since it read them),
    // or its invite combines the one sent meanwhile, as it would had it run after it.
    if (combining.status === 201) {
      const listed = await api("GET", `/api/organizations/${organization.id}/invites`, { key });
      const forEmail = listed.body.results.filter((invite: { target_email: string }) => invite.target_email === email);
      expect(forEmail).toHaveLength(1);
      expect(forEmail[0]).toMatchObject({
        level: 8,
        private_project_access: [{ id: project.id, level: "admin" }],
      });
    } else {
      expect(combining.status).toBe(409);
    }
  });
});

describe("an invite racing the acceptance of the invite it replaces", () => {
  it("lands no open invite for someone who joined meanwhile: the replacing POST answers 409", async () => {
    const { organization, owner, key } = await setupOrganization();
    const email = `racing-accept-${Date.now()}@example.com`;
    // The owner's first invite, at member level.
    const first = await insertInvite(organization.id, owner, { targetEmail: email, level: MembershipLevel.member });
    // The owner sends a new one (admin level) to replace it; the invitee accepts the first one
    // after the POST read the members (not one of them yet) and before it writes.
    const ran = beforeWrites([
      [
        INVITE_WRITE,
        async () => (await api("POST", "/api/signup", { body: { token: first.token, first_name: "Quick" } })).status,
      ],
    ]);
    const replaced = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key,
      body: { target_email: email, level: MembershipLevel.admin, send_email: false },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([201]);
    const members = await api("GET", `/api/organizations/${organization.id}/members?email=${email}`, { key });
    expect(members.body.results).toHaveLength(1);
    const invites = await api("GET", `/api/organizations/${organization.id}/invites`, { key });
    const pending = (invites.body.results as { target_email: string }[]).filter((row) => row.target_email === email);
    // Run one after the other, the POST would have been 400 "already belongs to the organization"
    // and no invite would stand for a member; or it would have replaced the first invite (whose
    // accept then is 404). Meanwhile: 409, and a retry gets the 400.
    expectError(replaced, 409, changedMeanwhile("invite"));
    expect(pending).toEqual([]);
  });
});

describe("an invite's write holds members_can_invite as read", () => {
  it("refuses a plain member's invite landing after members_can_invite was turned off (403), none left", async () => {
    const { organization, key: ownerKey } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const ran = beforeWrites([
      [
        /^insert into "invites"/,
        async () =>
          (
            await api("PATCH", `/api/organizations/${organization.id}`, {
              key: ownerKey,
              body: { members_can_invite: false },
            })
          ).status,
      ],
    ]);
    const invited = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key: member.key,
      body: { target_email: "late-invite@example.com", level: MembershipLevel.member, send_email: false },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    // A moment later the member is refused (403): so must the invite written after the switch be.
    const listed = await api("GET", `/api/organizations/${organization.id}/invites`, { key: ownerKey });
    const emails = (listed.body.results as { target_email: string }[]).map((invite) => invite.target_email);
    expectError(invited, 403, INSUFFICIENT_LEVEL);
    expect(emails).toEqual([]);
  });
});
