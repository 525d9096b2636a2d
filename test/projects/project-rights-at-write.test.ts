import { and, eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { MembershipLevel } from "../../src/platform/levels";
import { expectError, INSUFFICIENT_LEVEL, NOT_FOUND } from "../support/error-bodies";
import {
  addMember,
  api,
  createProject,
  db,
  errorBody,
  grantProjectAccess,
  setupOrganization,
} from "../support/harness";
import { beforeWrites } from "../support/races";

afterEach(() => vi.restoreAllMocks());

const memberPath = (organizationId: string, uuid: string) => `/api/organizations/${organizationId}/members/${uuid}`;
const projectPath = (organizationId: string, projectId: number) =>
  `/api/organizations/${organizationId}/projects/${projectId}`;

/** The caller's project rule deleted straight in D1, as an owner's revocation leaves it. */
const revokeRule = (projectId: number, membershipId: string) =>
  db
    .delete(schema.accessControls)
    .where(
      and(
        eq(schema.accessControls.resource, "project"),
        eq(schema.accessControls.resourceId, String(projectId)),
        eq(schema.accessControls.organizationMembershipId, membershipId),
      ),
    );

const PRIVACY_REFUSED = errorBody(
  "authentication_error",
  "permission_denied",
  "Your organization access level is insufficient to configure project access restrictions.",
);

describe("projects: who may make a project private or public", () => {
  it("a project admin by rule who is only an organization member cannot turn access_control off", async () => {
    const { organization, key } = await setupOrganization();
    const secret = await createProject(organization.id, { access_control: true });
    const projectAdmin = await addMember(organization.id, MembershipLevel.member);
    await grantProjectAccess(secret.id, projectAdmin.membership.id, "admin");
    const bystander = await addMember(organization.id, MembershipLevel.member);
    const opened = await api("PATCH", projectPath(organization.id, secret.id), {
      key: projectAdmin.key,
      body: { access_control: false },
    });
    expectError(
      opened,
      403,
      errorBody(
        "authentication_error",
        "permission_denied",
        "Your organization access level is insufficient to configure project access restrictions.",
      ),
    );
    expect((await api("GET", projectPath(organization.id, secret.id), { key })).body.access_control).toBe(true);
    expect((await api("GET", `/api/projects/${secret.id}`, { key: bystander.key })).status).toBe(404);
  });
  it("cannot make a private project public through its default access rule either", async () => {
    const { organization, key } = await setupOrganization();
    const secret = await createProject(organization.id, { name: "Secret", access_control: true });
    const projectAdmin = await addMember(organization.id, MembershipLevel.member);
    await grantProjectAccess(secret.id, projectAdmin.membership.id, "admin");
    const bystander = await addMember(organization.id, MembershipLevel.member);
    // PATCH { access_control: false } is refused to them (project-rights-at-write.test.ts); the
    // default rule that `access_control` mirrors is the same switch.
    const opened = await api("PUT", `/api/projects/${secret.id}/access_controls`, {
      key: projectAdmin.key,
      body: { access_level: null },
    });
    expectError(opened, 403, PRIVACY_REFUSED);
    expect((await api("GET", `/api/projects/${secret.id}`, { key })).body.access_control).toBe(true);
    expect((await api("GET", `/api/projects/${secret.id}`, { key: bystander.key })).status).toBe(404);
  });

  it("cannot make an open project private through its default access rule either", async () => {
    const { organization, key } = await setupOrganization();
    const open = await createProject(organization.id, { name: "Open" });
    const projectAdmin = await addMember(organization.id, MembershipLevel.member);
    await grantProjectAccess(open.id, projectAdmin.membership.id, "admin");
    const bystander = await addMember(organization.id, MembershipLevel.member);
    const closed = await api("PUT", `/api/environments/${open.id}/access_controls`, {
      key: projectAdmin.key,
      body: { access_level: "none" },
    });
    expectError(closed, 403, PRIVACY_REFUSED);
    expect((await api("GET", `/api/projects/${open.id}`, { key })).body.access_control).toBe(false);
    expect((await api("GET", `/api/projects/${open.id}`, { key: bystander.key })).status).toBe(200);
  });
});

/**
 * A private project, a member whose rule makes them its admin, and that rule deleted just before
 * the next write of `projects` (after the request judged the caller's rights).
 */
async function projectAdminRevokedAtWrite() {
  const { organization, key } = await setupOrganization();
  const secret = await createProject(organization.id, { name: "Secret", access_control: true });
  const projectAdmin = await addMember(organization.id, MembershipLevel.member);
  await grantProjectAccess(secret.id, projectAdmin.membership.id, "admin");
  const revocation = beforeWrites([
    [/^update "projects"/, async () => (await revokeRule(secret.id, projectAdmin.membership.id)).meta.changes],
  ]);
  return { organization, key, secret, projectAdmin, revocation };
}

describe("projects: a project admin's rule holds when their write lands", () => {
  it("a project admin whose rule is revoked meanwhile does not rename the project", async () => {
    const { organization, key, secret, projectAdmin, revocation } = await projectAdminRevokedAtWrite();
    const renamed = await api("PATCH", projectPath(organization.id, secret.id), {
      key: projectAdmin.key,
      body: { name: "Renamed after revocation" },
    });
    vi.restoreAllMocks();
    expect(revocation).toEqual([1]);
    // Refused as to a member without the rule: 403, or 404 now that the private project is hidden from them.
    expect([403, 404]).toContain(renamed.status);
    expect((await api("GET", projectPath(organization.id, secret.id), { key })).body.name).toBe("Secret");
  });

  it("a project admin whose rule is revoked meanwhile does not delete the project", async () => {
    const { organization, key, secret, projectAdmin, revocation } = await projectAdminRevokedAtWrite();
    const deleted = await api("DELETE", projectPath(organization.id, secret.id), { key: projectAdmin.key });
    vi.restoreAllMocks();
    expect(revocation).toEqual([1]);
    expect([403, 404]).toContain(deleted.status);
    expect((await api("GET", projectPath(organization.id, secret.id), { key })).status).toBe(200);
  });

  it("an organization admin demoted meanwhile does not create a project", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const demotion = beforeWrites([
      [
        /^insert into "projects"/,
        async () =>
          (await api("PATCH", memberPath(organization.id, admin.user.uuid), { key, body: { level: 1 } })).status,
      ],
    ]);
    const created = await api("POST", `/api/organizations/${organization.id}/projects`, {
      key: admin.key,
      body: { name: "Made after demotion" },
    });
    vi.restoreAllMocks();
    expect(demotion).toEqual([200]);
    expectError(created, 403, INSUFFICIENT_LEVEL);
  });
});

describe("a project marked for deletion", () => {
  it("is not renamed by a PATCH that lands after the DELETE: its name stays free", async () => {
    const { organization, key } = await setupOrganization();
    const doomed = await createProject(organization.id, { name: "Doomed" });
    const deletion = beforeWrites([
      [/^update "projects"/, async () => (await api("DELETE", `/api/projects/${doomed.id}`, { key })).status],
    ]);
    const renamed = await api("PATCH", `/api/projects/${doomed.id}`, { key, body: { name: "Keeper" } });
    vi.restoreAllMocks();
    expect(deletion).toEqual([204]);
    expectError(renamed, 404, NOT_FOUND);
    const created = await api("POST", `/api/organizations/${organization.id}/projects`, {
      key,
      body: { name: "Keeper" },
    });
    expect(created.status).toBe(201);
  });
});
