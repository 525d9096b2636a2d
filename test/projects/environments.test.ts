import { describe, expect, it } from "vitest";
import { expectError, missingScope, NOT_FOUND } from "../support/error-bodies";
import { addMember, api, createApiKey, createProject, errorBody, setupOrganization } from "../support/harness";
import { expectKeyAndMembershipRequired } from "../support/people";
import { expectedProject } from "../support/projects";

describe("GET /api/environments/:id", () => {
  it("answers the environment as PostHog's Team: its project's fields, by id and @current, in one query", async () => {
    const { organization, project } = await setupOrganization();
    const member = await addMember(organization.id, 1);
    const expected = {
      ...expectedProject({ id: project.id, organization: organization.id, name: project.name, level: 1 }),
      uuid: project.uuid,
      api_token: project.apiToken,
      created_at: project.createdAt,
      updated_at: project.updatedAt,
      project_id: project.id,
    };
    for (const id of [project.id, "@current"]) {
      const response = await api("GET", `/api/environments/${id}`, { key: member.key });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(expected);
    }
    expect((await api("GET", `/api/environments/${project.id}`, { key: member.key })).cost.queries).toBe(1);
  });

  it("hides a private project's environment from members without access", async () => {
    const { organization, key } = await setupOrganization();
    const secret = await createProject(organization.id, { access_control: true });
    const member = await addMember(organization.id, 1);
    expect((await api("GET", `/api/environments/${secret.id}`, { key })).status).toBe(200);
    expectError(await api("GET", `/api/environments/${secret.id}`, { key: member.key }), 404, NOT_FOUND);
  });

  it("keeps a key scoped to other projects out with 403", async () => {
    const { organization, owner, project } = await setupOrganization();
    const other = await createProject(organization.id);
    const scoped = await createApiKey(owner, { scopedTeams: [other.id] });
    for (const method of ["GET", "PATCH"]) {
      const response = await api(method, `/api/environments/${project.id}`, {
        key: scoped.value,
        body: method === "PATCH" ? { name: "x" } : undefined,
      });
      expectError(
        response,
        403,
        errorBody("authentication_error", "permission_denied", "API key does not have access to the requested project"),
      );
    }
  });

  it("needs project:read and a key, and answers 404 across organizations and for unknown ids", async () => {
    const { key, project } = await setupOrganization({ scopes: ["dashboard:read"] });
    expectError(await api("GET", `/api/environments/${project.id}`, { key }), 403, missingScope("project:read"));
    expectError(
      await api("GET", "/api/environments/999999999", { key: (await setupOrganization()).key }),
      404,
      NOT_FOUND,
    );
    expectError(
      await api("GET", "/api/environments/not-a-number", { key: (await setupOrganization()).key }),
      404,
      NOT_FOUND,
    );
    await expectKeyAndMembershipRequired("GET", `/api/environments/${project.id}`);
  });
});
