import { afterEach, describe, expect, it, vi } from "vitest";
import { KEY_BLOCKED } from "../../../src/platform/auth/key-policy";
import { MembershipLevel } from "../../../src/platform/levels";
import { addMembership, api, createApiKey, createUser, setupOrganization } from "../../support/harness";
import { beforeWrites } from "../../support/races";

/*
 * Writes held on the caller's rights in a project (`projectLevelInEnvironment`,
 * `callerStillSeesProject`) hold the calling key not blocked in the organization too: a block
 * landing between the request's read and its write refuses it (403), nothing written.
 */
afterEach(() => vi.restoreAllMocks());

const blockPath = (organizationId: string, keyId: string) => `/api/organizations/${organizationId}/api_keys/${keyId}`;

/** A member of the organization at `level`, with a personal key whose id an admin can block. */
async function memberWithKey(organizationId: string, level: number) {
  const user = await createUser();
  const membership = await addMembership(organizationId, user, level);
  const key = await createApiKey(user);
  return { user, membership, key: key.value, keyId: key.id };
}

const S3_EXPORT = {
  name: "Events to S3",
  interval: "hour",
  destination: {
    type: "S3",
    config: {
      bucket_name: "my-bucket",
      region: "us-east-1",
      prefix: "posthog/events/",
      aws_access_key_id: "AKIAEXAMPLE",
      aws_secret_access_key: "s3cr3t",
    },
  },
};

describe("project writes hold the calling key not blocked in the organization", () => {
  it("an admin whose key is blocked meanwhile deletes no project (403 KEY_BLOCKED, project kept)", async () => {
    const { organization, project, key: ownerKey } = await setupOrganization();
    const admin = await memberWithKey(organization.id, MembershipLevel.admin);
    // Its next request would be refused: the block holds on every route of the organization's projects.
    const ran = beforeWrites([
      [
        /^update "projects"/,
        async () => (await api("DELETE", blockPath(organization.id, admin.keyId), { key: ownerKey })).status,
      ],
    ]);
    const deleted = await api("DELETE", `/api/projects/${project.id}`, { key: admin.key });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    const after = await api("GET", `/api/projects/${project.id}`, { key: ownerKey });
    expect({ status: deleted.status, detail: deleted.body?.detail, projectStill: after.status }).toEqual({
      status: 403,
      detail: KEY_BLOCKED,
      projectStill: 200,
    });
  });

  it("a member whose key is blocked meanwhile creates no batch export (403 KEY_BLOCKED, none made)", async () => {
    const { organization, project, key: ownerKey } = await setupOrganization();
    const member = await memberWithKey(organization.id, MembershipLevel.member);
    const ran = beforeWrites([
      [
        /^insert into "batch_exports"/,
        async () => (await api("DELETE", blockPath(organization.id, member.keyId), { key: ownerKey })).status,
      ],
    ]);
    const created = await api("POST", `/api/environments/${project.id}/batch_exports`, {
      key: member.key,
      body: S3_EXPORT,
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    const listed = await api("GET", `/api/environments/${project.id}/batch_exports`, { key: ownerKey });
    expect({ status: created.status, detail: created.body?.detail, exports: listed.body.count }).toEqual({
      status: 403,
      detail: KEY_BLOCKED,
      exports: 0,
    });
  });
});
