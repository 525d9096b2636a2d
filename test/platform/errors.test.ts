import { afterEach, describe, expect, it, vi } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { expectError, maxLength, NOT_FOUND } from "../support/error-bodies";
import { emulateD1TooBig } from "../support/d1-limits";
import { addMember, api, setupOrganization } from "../support/harness";
import { beforeWrites } from "../support/races";

afterEach(() => vi.restoreAllMocks());

const memberPath = (organizationId: string, uuid: string) => `/api/organizations/${organizationId}/members/${uuid}`;

/**
 * A guarded update (`unchangedSinceRead`, or a where on the row as read) that matched nothing
 * answers 404 when the row was deleted meanwhile, as a moment later (`changedOrGone`), and 409
 * only when it was changed.
 */
describe("an update racing the deletion of what it updates answers 404, not 409", () => {
  it("domain PATCH racing the domain's DELETE", async () => {
    const { organization, key } = await setupOrganization();
    const path = `/api/organizations/${organization.id}/domains`;
    const domain = `d-${crypto.randomUUID().slice(0, 8)}.example.com`;
    const created = await api("POST", path, { key, body: { domain } });
    expect(created.status).toBe(201);
    const item = `${path}/${created.body.id}`;
    const ran = beforeWrites([[/^update "domains"/, async () => (await api("DELETE", item, { key })).status]]);
    const patched = await api("PATCH", item, { key, body: { jit_provisioning_enabled: false } });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    expect([patched.status, patched.body]).toEqual([404, NOT_FOUND]);
  });

  it("member DELETE sent twice at once (the second)", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const path = memberPath(organization.id, member.user.uuid);
    const ran = beforeWrites([
      [/^delete from "organization_memberships"/, async () => (await api("DELETE", path, { key })).status],
    ]);
    const second = await api("DELETE", path, { key });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    expect([second.status, second.body]).toEqual([404, NOT_FOUND]);
  });

  it("member PATCH racing the member's removal", async () => {
    const { organization, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const path = memberPath(organization.id, member.user.uuid);
    const ran = beforeWrites([
      [/^update "organization_memberships"/, async () => (await api("DELETE", path, { key })).status],
    ]);
    const patched = await api("PATCH", path, { key, body: { level: MembershipLevel.admin } });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    expect([patched.status, patched.body]).toEqual([404, NOT_FOUND]);
  });

  it("personal key PATCH and roll racing the key's DELETE", async () => {
    const { key } = await setupOrganization();
    for (const [method, suffix, body] of [
      ["PATCH", "", { label: "CI 2" }],
      ["POST", "/roll", {}],
    ] as const) {
      const created = await api("POST", "/api/personal_api_keys", { key, body: { label: "CI", scopes: ["*"] } });
      expect(created.status).toBe(201);
      const item = `/api/personal_api_keys/${created.body.id}`;
      const ran = beforeWrites([
        [/^update "personal_api_keys"/, async () => (await api("DELETE", item, { key })).status],
      ]);
      const written = await api(method, `${item}${suffix}`, { key, body });
      vi.restoreAllMocks();
      expect(ran, `${method} ${suffix}`).toEqual([204]);
      expect([written.status, written.body], `${method} ${suffix}`).toEqual([404, NOT_FOUND]);
    }
  });

  it("service key PATCH and roll racing the key's DELETE", async () => {
    const { organization, key } = await setupOrganization();
    const path = `/api/organizations/${organization.id}/service_keys`;
    for (const [method, suffix, body] of [
      ["PATCH", "", { label: "Nightly 2" }],
      ["POST", "/roll", {}],
    ] as const) {
      const created = await api("POST", path, { key, body: { label: "Nightly", scopes: ["*"] } });
      expect(created.status).toBe(201);
      const item = `${path}/${created.body.id}`;
      const ran = beforeWrites([
        [/^update "service_api_keys"/, async () => (await api("DELETE", item, { key })).status],
      ]);
      const written = await api(method, `${item}${suffix}`, { key, body });
      vi.restoreAllMocks();
      expect(ran, `${method} ${suffix}`).toEqual([204]);
      expect([written.status, written.body], `${method} ${suffix}`).toEqual([404, NOT_FOUND]);
    }
  });

  it("batch export PATCH racing the export's DELETE", async () => {
    const { project, key } = await setupOrganization();
    const path = `/api/environments/${project.id}/batch_exports`;
    const config = {
      bucket_name: "my-bucket",
      region: "us-east-1",
      prefix: "posthog/",
      aws_access_key_id: "AKIAEXAMPLE",
      aws_secret_access_key: "s3cr3t",
    };
    const created = await api("POST", path, {
      key,
      body: { name: "Events to S3", interval: "hour", destination: { type: "S3", config } },
    });
    expect(created.status).toBe(201);
    const item = `${path}/${created.body.id}`;
    const ran = beforeWrites([[/^update "batch_exports"/, async () => (await api("DELETE", item, { key })).status]]);
    const patched = await api("PATCH", item, { key, body: { name: "Renamed" } });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    expect([patched.status, patched.body]).toEqual([404, NOT_FOUND]);
  });
});

describe("a value D1 refuses as too large (SQLITE_TOOBIG)", () => {
  it("answers 400, not 500, on a route that does not expect it, and writes nothing", async () => {
    const { key, owner } = await setupOrganization();
    // As D1 would refuse a value past 2,000,000 bytes in the write.
    emulateD1TooBig({ refuse: (query) => query.startsWith('update "users"') });
    const response = await api("PATCH", "/api/users/@me", { key, body: { first_name: "Grown" } });
    vi.restoreAllMocks();
    expectError(response, 400, maxLength("A value sent is larger, once stored, than the database holds."));
    expect((await api("GET", "/api/users/@me", { key })).body.first_name).toBe(owner.firstName);
  });
});
