import { describe, expect, it } from "vitest";
import { addMember, api, errorBody, ISO_TIMESTAMP, setupOrganization, UUID } from "../support/harness";

describe("organizations", () => {
  it("lists the caller's organizations in creation order", async () => {
    const { key, organization } = await setupOrganization();
    const response = await api("GET", "/api/organizations", { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      count: 1,
      next: null,
      previous: null,
      results: [
        {
          id: organization.id,
          name: organization.name,
          created_at: organization.createdAt,
          updated_at: organization.updatedAt,
          membership_level: 15,
        },
      ],
    });
  });

  it("creates an organization owned by the caller, with a default project", async () => {
    const { key } = await setupOrganization();
    const response = await api("POST", "/api/organizations", { key, body: { name: "  Acme  " } });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(UUID),
      name: "Acme",
      created_at: expect.stringMatching(ISO_TIMESTAMP),
      updated_at: response.body.created_at,
      membership_level: 15,
    });
    const projects = await api("GET", `/api/organizations/${response.body.id}/projects`, { key });
    expect(projects.body.results.map((project: { name: string }) => project.name)).toEqual(["Default project"]);
    const listed = await api("GET", "/api/organizations", { key });
    expect(listed.body.count).toBe(2);
  });

  it("validates the name and creates nothing on bad input", async () => {
    const { key } = await setupOrganization();
    const cases: [unknown, string, string][] = [
      [{}, "required", "This field is required."],
      [{ name: "" }, "blank", "This field may not be blank."],
      [{ name: "   " }, "blank", "This field may not be blank."],
      [{ name: 42 }, "invalid_input", "Expected string, received number."],
      [{ name: "x".repeat(65) }, "max_length", "Ensure this field has no more than 64 characters."],
    ];
    for (const [body, code, detail] of cases) {
      const response = await api("POST", "/api/organizations", { key, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body).toEqual(errorBody("validation_error", code, detail, "name"));
    }
    expect((await api("GET", "/api/organizations", { key })).body.count).toBe(1);
  });

  it("needs organization:write to create", async () => {
    const { key } = await setupOrganization({ scopes: ["organization:read"] });
    const response = await api("POST", "/api/organizations", { key, body: { name: "Acme" } });
    expect(response.status).toBe(403);
    expect(response.body.detail).toBe("API key missing required scope 'organization:write'");
  });

  it("retrieves an organization by id and by @current, with the caller's level", async () => {
    const { organization } = await setupOrganization();
    const member = await addMember(organization.id, 1);
    const expected = {
      id: organization.id,
      name: organization.name,
      created_at: organization.createdAt,
      updated_at: organization.updatedAt,
      membership_level: 1,
    };
    for (const id of [organization.id, "@current"]) {
      const response = await api("GET", `/api/organizations/${id}`, { key: member.key });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(expected);
    }
  });

  it("answers 404 for unknown ids and other organizations", async () => {
    const { key } = await setupOrganization();
    const other = await setupOrganization();
    for (const id of ["0190a0a0-0000-7000-8000-000000000000", other.organization.id, "not-a-uuid"]) {
      const response = await api("GET", `/api/organizations/${id}`, { key });
      expect(response.status, id).toBe(404);
      expect(response.body).toEqual(errorBody("invalid_request", "not_found", "Not found."));
    }
  });
});
