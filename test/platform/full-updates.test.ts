import { describe, expect, it } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { addMember, api, setupOrganization } from "../support/harness";

type Organization = Awaited<ReturnType<typeof setupOrganization>>;

/** A 400 naming the required field left out of a PUT. */
async function expectRequired(path: string, key: string, body: Record<string, unknown>, attr: string) {
  const response = await api("PUT", path, { key, body });
  expect({ status: response.status, attr: response.body.attr, type: response.body.type }).toEqual({
    status: 400,
    attr,
    type: "validation_error",
  });
}

const orgPath = (organization: Organization) => `/api/organizations/${organization.organization.id}`;

describe("PUT, PostHog's full update", () => {
  it("of an organization requires its name and keeps the fields left out", async () => {
    const organization = await setupOrganization();
    await api("PATCH", orgPath(organization), { key: organization.key, body: { members_can_invite: false } });
    await expectRequired(orgPath(organization), organization.key, { members_can_invite: true }, "name");
    const response = await api("PUT", `${orgPath(organization)}/`, {
      key: organization.key,
      body: { name: "Renamed" },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ name: "Renamed", members_can_invite: false });
  });

  it("of a project, under the three paths, takes what PATCH takes", async () => {
    const organization = await setupOrganization();
    const id = organization.project.id;
    for (const [path, name] of [
      [`${orgPath(organization)}/projects/${id}/`, "One"],
      [`/api/projects/${id}/`, "Two"],
      [`/api/environments/${id}/`, "Three"],
    ] as const) {
      const response = await api("PUT", path, { key: organization.key, body: { name, timezone: "Europe/Paris" } });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ name, timezone: "Europe/Paris" });
    }
  });

  it("of a member sets the level, as PATCH does", async () => {
    const organization = await setupOrganization();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const response = await api("PUT", `${orgPath(organization)}/members/${member.user.uuid}/`, {
      key: organization.key,
      body: { level: MembershipLevel.admin },
    });
    expect(response.status).toBe(200);
    expect(response.body.level).toBe(MembershipLevel.admin);
  });

  it("of a domain requires `domain` and keeps the fields left out", async () => {
    const organization = await setupOrganization();
    const domain = `put-${crypto.randomUUID().slice(0, 8)}.example.com`;
    const created = await api("POST", `${orgPath(organization)}/domains`, {
      key: organization.key,
      body: { domain, saml_entity_id: "entity" },
    });
    expect(created.status).toBe(201);
    const path = `${orgPath(organization)}/domains/${created.body.id}`;
    await expectRequired(path, organization.key, { jit_provisioning_enabled: true }, "domain");
    const response = await api("PUT", path, { key: organization.key, body: { domain, saml_acs_url: "https://a.b/c" } });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ domain, saml_entity_id: "entity", saml_acs_url: "https://a.b/c" });
  });

  it("of a batch export requires name, interval and destination", async () => {
    const organization = await setupOrganization();
    const exportsPath = `/api/environments/${organization.project.id}/batch_exports`;
    const destination = { type: "S3", config: { bucket_name: "b", region: "us-east-1", prefix: "p/" } };
    const created = await api("POST", exportsPath, {
      key: organization.key,
      body: { name: "Events", interval: "hour", destination, timezone: "Europe/Paris" },
    });
    expect(created.status).toBe(201);
    const path = `${exportsPath}/${created.body.id}`;
    await expectRequired(path, organization.key, { interval: "day", destination }, "name");
    await expectRequired(path, organization.key, { name: "Events", destination }, "interval");
    await expectRequired(path, organization.key, { name: "Events", interval: "day" }, "destination");
    const response = await api("PUT", `${path}/`, {
      key: organization.key,
      body: { name: "Daily", interval: "day", destination: { type: "S3" } },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ name: "Daily", interval: "day", destination, timezone: "Europe/Paris" });
    // A time zone sent null is UTC, as PostHog's `validate_timezone` makes it.
    const reset = await api("PUT", `${path}/`, {
      key: organization.key,
      body: { name: "Daily", interval: "day", destination: { type: "S3" }, timezone: null },
    });
    expect(reset.body).toMatchObject({ name: "Daily", timezone: "UTC" });
  });
});
