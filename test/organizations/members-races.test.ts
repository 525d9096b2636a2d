import { afterEach, describe, expect, it, vi } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { changedMeanwhile, expectError } from "../support/error-bodies";
import { addMember, api, errorBody, setupOrganization } from "../support/harness";
import { beforeWrites } from "../support/races";

afterEach(() => vi.restoreAllMocks());

const memberPath = (organizationId: string, uuid: string) => `/api/organizations/${organizationId}/members/${uuid}`;

const levelsOf = async (organizationId: string, key: string) => {
  const members = await api("GET", `/api/organizations/${organizationId}/members`, { key });
  return Object.fromEntries(
    (members.body.results as { user: { uuid: string }; level: number }[]).map((m) => [m.user.uuid, m.level]),
  );
};

const CHANGED_MEANWHILE = changedMeanwhile("member");

describe("a member's level or removal, judged on the caller's level as read", () => {
  it("an admin demoted meanwhile does not promote a member to admin", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const member = await addMember(organization.id, MembershipLevel.member);
    const demotion = beforeWrites([
      [
        /^update "organization_memberships"/,
        async () =>
          (await api("PATCH", memberPath(organization.id, admin.user.uuid), { key, body: { level: 1 } })).status,
      ],
    ]);
    const promoted = await api("PATCH", memberPath(organization.id, member.user.uuid), {
      key: admin.key,
      body: { level: MembershipLevel.admin },
    });
    vi.restoreAllMocks();
    expect(demotion).toEqual([200]);
    expectError(promoted, 409, CHANGED_MEANWHILE);
    expect((await levelsOf(organization.id, key))[member.user.uuid]).toBe(MembershipLevel.member);
    const retried = await api("PATCH", memberPath(organization.id, member.user.uuid), {
      key: admin.key,
      body: { level: MembershipLevel.admin },
    });
    expectError(
      retried,
      403,
      errorBody("authentication_error", "permission_denied", "You can only edit others if you are an admin."),
    );
  });

  it("an admin demoted meanwhile does not remove another admin", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const otherAdmin = await addMember(organization.id, MembershipLevel.admin);
    const demotion = beforeWrites([
      [
        /^delete from "organization_memberships"/,
        async () =>
          (await api("PATCH", memberPath(organization.id, admin.user.uuid), { key, body: { level: 1 } })).status,
      ],
    ]);
    const removed = await api("DELETE", memberPath(organization.id, otherAdmin.user.uuid), { key: admin.key });
    vi.restoreAllMocks();
    expect(demotion).toEqual([200]);
    expectError(removed, 409, CHANGED_MEANWHILE);
    expect((await levelsOf(organization.id, key))[otherAdmin.user.uuid]).toBe(MembershipLevel.admin);
  });
});
