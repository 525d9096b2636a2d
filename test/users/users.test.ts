import { describe, expect, it } from "vitest";
import { addMembership, api, createApiKey, errorBody, setupOrganization } from "../support/harness";

describe("GET /api/users/@me", () => {
  it("returns the caller with their organizations", async () => {
    const { key, owner, organization } = await setupOrganization();
    const other = await setupOrganization();
    await addMembership(other.organization.id, owner, 1);

    const response = await api("GET", "/api/users/@me", { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: owner.id,
      uuid: owner.uuid,
      distinct_id: owner.distinctId,
      first_name: owner.firstName,
      last_name: owner.lastName,
      email: owner.email,
      is_email_verified: false,
      hedgehog_config: null,
      role_at_organization: "",
      date_joined: owner.createdAt,
      organizations: [
        { id: organization.id, name: organization.name, membership_level: 15 },
        { id: other.organization.id, name: other.organization.name, membership_level: 1 },
      ],
    });
  });

  it("shows only the organizations a scoped key may reach", async () => {
    const { owner, organization } = await setupOrganization();
    const other = await setupOrganization();
    await addMembership(other.organization.id, owner, 1);
    const scoped = await createApiKey(owner, { scopedOrganizations: [other.organization.id] });
    const response = await api("GET", "/api/users/@me", { key: scoped.value });
    expect(response.body.organizations).toEqual([
      { id: other.organization.id, name: other.organization.name, membership_level: 1 },
    ]);
    expect(response.body.organizations).not.toContainEqual(expect.objectContaining({ id: organization.id }));
  });

  it("needs user:read", async () => {
    const { key } = await setupOrganization({ scopes: ["organization:read"] });
    const response = await api("GET", "/api/users/@me", { key });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(
      errorBody("authentication_error", "permission_denied", "API key missing required scope 'user:read'"),
    );
  });

  it("needs a key", async () => {
    expect((await api("GET", "/api/users/@me")).status).toBe(401);
  });
});
