import { describe, expect, it } from "vitest";
import { addMember, api, createApiKey, errorBody, ISO_TIMESTAMP, setupOrganization, UUID } from "../support/harness";

const keyShape = (fields: Record<string, unknown>) => ({
  id: expect.stringMatching(UUID),
  mask_value: expect.stringMatching(/^phx_\.\.\.[0-9A-Za-z]{4}$/),
  created_at: expect.stringMatching(ISO_TIMESTAMP),
  last_used_at: null,
  scoped_organizations: [],
  scoped_teams: [],
  ...fields,
});

describe("POST /api/personal_api_keys", () => {
  it("creates a key, shows its value once, and the key works", async () => {
    const { owner, key } = await setupOrganization();
    const response = await api("POST", "/api/personal_api_keys", {
      key,
      body: { label: "CI", scopes: ["project:read", "organization:read"] },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual(
      keyShape({
        label: "CI",
        user_id: owner.id,
        scopes: ["project:read", "organization:read"],
        value: expect.stringMatching(/^phx_[0-9A-Za-z]{44}$/),
      }),
    );
    expect(response.body.mask_value).toBe(`phx_...${response.body.value.slice(-4)}`);

    const read = await api("GET", `/api/personal_api_keys/${response.body.id}`, { key });
    const { value: _value, ...withoutValue } = response.body;
    expect(read.body).toEqual(withoutValue);
    expect((await api("GET", "/api/projects", { key: response.body.value })).status).toBe(200);
  });

  it("creates keys scoped to the caller's organizations and projects", async () => {
    const { organization, project, key } = await setupOrganization();
    const response = await api("POST", "/api/personal_api_keys", {
      key,
      body: { label: "scoped", scopes: ["*"], scoped_organizations: [organization.id], scoped_teams: [project.id] },
    });
    expect(response.status).toBe(201);
    expect(response.body.scoped_organizations).toEqual([organization.id]);
    expect(response.body.scoped_teams).toEqual([project.id]);
  });

  it("refuses scopes the calling key does not have, and wider organization scopes", async () => {
    const { organization, owner } = await setupOrganization();
    const limited = await createApiKey(owner, {
      scopes: ["personal_api_key:write", "project:write"],
      scopedOrganizations: [organization.id],
    });
    for (const [scope, allowed] of [["project:read", true], ["dashboard:read", false], ["*", false]] as const) {
      const response = await api("POST", "/api/personal_api_keys", {
        key: limited.value,
        body: { label: scope, scopes: [scope], scoped_organizations: [organization.id] },
      });
      if (allowed) {
        expect(response.status).toBe(201);
      } else {
        expect(response.status, scope).toBe(403);
        expect(response.body).toEqual(
          errorBody("authentication_error", "permission_denied", `API key cannot grant scope '${scope}' that it does not have itself`),
        );
      }
    }
    const unscoped = await api("POST", "/api/personal_api_keys", {
      key: limited.value,
      body: { label: "wider", scopes: ["project:read"] },
    });
    expect(unscoped.status).toBe(403);
    expect(unscoped.body.detail).toBe("API key cannot grant access to organizations outside its own scope");
  });

  it("validates each field", async () => {
    const { key } = await setupOrganization();
    const other = await setupOrganization();
    const cases: [Record<string, unknown>, string, string, string][] = [
      [{ scopes: ["*"] }, "label", "required", "This field is required."],
      [{ label: "", scopes: ["*"] }, "label", "blank", "This field may not be blank."],
      [{ label: "x".repeat(41), scopes: ["*"] }, "label", "max_length", "Ensure this field has no more than 40 characters."],
      [{ label: "k" }, "scopes", "required", "This field is required."],
      [{ label: "k", scopes: [] }, "scopes", "min_length", "Ensure this field has at least 1 elements."],
      [{ label: "k", scopes: ["everything"] }, "scopes.0", "invalid_choice", '"everything" is not a valid choice.'],
      [
        { label: "k", scopes: ["*"], scoped_organizations: [other.organization.id] },
        "scoped_organizations",
        "invalid_input",
        "You must be a member of all organizations that you are scoping the key to.",
      ],
      [
        { label: "k", scopes: ["*"], scoped_teams: [other.project.id] },
        "scoped_teams",
        "invalid_input",
        "You must be a member of all projects that you are scoping the key to.",
      ],
    ];
    for (const [body, attr, code, detail] of cases) {
      const response = await api("POST", "/api/personal_api_keys", { key, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body).toEqual(errorBody("validation_error", code, detail, attr));
    }
    expect((await api("GET", "/api/personal_api_keys", { key })).body).toHaveLength(1);
  });

  it("needs personal_api_key:write", async () => {
    const { key } = await setupOrganization({ scopes: ["personal_api_key:read"] });
    const response = await api("POST", "/api/personal_api_keys", { key, body: { label: "x", scopes: ["*"] } });
    expect(response.status).toBe(403);
    expect(response.body.detail).toBe("API key missing required scope 'personal_api_key:write'");
  });
});

describe("GET /api/personal_api_keys", () => {
  it("lists only the caller's keys, newest first, masked", async () => {
    const { organization, owner, key } = await setupOrganization();
    const created = await api("POST", "/api/personal_api_keys", { key, body: { label: "second", scopes: ["user:read"] } });
    await addMember(organization.id, 1);
    const response = await api("GET", "/api/personal_api_keys", { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      keyShape({ id: created.body.id, label: "second", user_id: owner.id, scopes: ["user:read"] }),
      keyShape({ label: "test key", user_id: owner.id, scopes: ["*"], last_used_at: expect.anything() }),
    ]);
    expect(JSON.stringify(response.body)).not.toContain(created.body.value);
  });
});

describe("GET and DELETE /api/personal_api_keys/:id", () => {
  it("answers 404 for unknown ids and other users' keys", async () => {
    const { key } = await setupOrganization();
    const other = await setupOrganization();
    const [othersKey] = (await api("GET", "/api/personal_api_keys", { key: other.key })).body;
    for (const id of ["0190a0a0-0000-7000-8000-000000000000", othersKey.id]) {
      for (const method of ["GET", "DELETE"]) {
        const response = await api(method, `/api/personal_api_keys/${id}`, { key });
        expect(response.status, `${method} ${id}`).toBe(404);
        expect(response.body).toEqual(errorBody("invalid_request", "not_found", "Not found."));
      }
    }
    expect((await api("GET", "/api/organizations", { key: other.key })).status).toBe(200);
  });

  it("revokes a key with 204", async () => {
    const { key } = await setupOrganization();
    const created = await api("POST", "/api/personal_api_keys", { key, body: { label: "gone", scopes: ["*"] } });
    const response = await api("DELETE", `/api/personal_api_keys/${created.body.id}`, { key });
    expect(response.status).toBe(204);
    expect(response.text).toBe("");
    expect((await api("GET", `/api/personal_api_keys/${created.body.id}`, { key })).status).toBe(404);
    expect((await api("GET", "/api/users/@me", { key: created.body.value })).status).toBe(401);
  });
});
