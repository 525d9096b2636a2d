import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Scope } from "../../src/platform/auth/scopes";
import { MembershipLevel } from "../../src/platform/levels";
import { createDashboard } from "../environments/dashboard-fixtures";
import { addMember, api, createProject, errorBody, setupOrganization } from "../support/harness";

const corsAtStart = env.CORS_ORIGINS;

// A route's scope is checked when it compiles (`npm test` runs tsc first): a typo fails the build.
// @ts-expect-error "dashbord" is not a resource
const misspelledScope: Scope = "dashbord:read";
const spelledScope: Scope = "dashboard:read";

describe("HTTP conventions", () => {
  it("knows a route's scopes by name", () => {
    expect([misspelledScope, spelledScope]).toEqual(["dashbord:read", "dashboard:read"]);
  });

  it("answers unknown /api paths with a JSON 404", async () => {
    const response = await api("GET", "/api/no-such-thing");
    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorBody("invalid_request", "not_found", "Endpoint not found."));
  });

  it("answers a known path with a wrong method with 405 and Allow", async () => {
    const { key } = await setupOrganization();
    const response = await api("PUT", "/api/organizations/", { key, body: {} });
    expect(response.status).toBe(405);
    expect(response.headers.get("Allow")).toBe("GET, POST");
    expect(response.body).toEqual(errorBody("invalid_request", "method_not_allowed", 'Method "PUT" not allowed.'));
  });

  it("accepts paths with and without a trailing slash", async () => {
    const { organization, key } = await setupOrganization();
    for (const path of [`/api/organizations/${organization.id}`, `/api/organizations/${organization.id}/`]) {
      const response = await api("GET", path, { key });
      expect(response.status, path).toBe(200);
      expect(response.body.id).toBe(organization.id);
    }
  });

  it("answers JSON with its charset and reports D1 cost in Server-Timing", async () => {
    const { key } = await setupOrganization();
    const response = await api("GET", "/api/users/@me", { key });
    expect(response.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("Server-Timing")).toMatch(
      /^d1;dur=\d+;desc="queries=\d+ rows_read=\d+ rows_written=\d+"$/,
    );
  });

  it("tells in Server-Timing only the round trips of a refusal, whatever it was refused", async () => {
    // Two refusals the API makes alike must cost alike in the header too: rows read there would
    // tell that an organization exists, what a filter matches in it, or in a hidden project.
    const victim = await setupOrganization();
    const member = await addMember(victim.organization.id, MembershipLevel.member);
    const hidden = await createProject(victim.organization.id, { name: "Secret", access_control: true });
    await createDashboard(victim.key, hidden.id, { name: "Layoffs" });
    const outsider = await setupOrganization();
    const unknownOrganization = "0190c2c6-0000-7000-8000-000000000000";
    const members = (organizationId: string, query: string) =>
      api("GET", `/api/organizations/${organizationId}/members${query}`, { key: outsider.key });
    const dashboards = (environmentId: number, search: string) =>
      api("GET", `/api/environments/${environmentId}/dashboards?search=${search}`, { key: member.key });
    const log = (user: string) =>
      api("GET", `/api/organizations/${victim.organization.id}/activity_log?page=1&user=${user}`, { key: member.key });
    await api("GET", "/api/users/@me", { key: outsider.key });
    await api("GET", "/api/users/@me", { key: member.key });

    const alike = [
      [404, await members(victim.organization.id, ""), await members(unknownOrganization, "")],
      [
        404,
        await members(victim.organization.id, "?search=First"),
        await members(victim.organization.id, "?search=zz"),
      ],
      [
        404,
        await members(victim.organization.id, `?email=${encodeURIComponent(member.user.email)}`),
        await members(victim.organization.id, `?email=${encodeURIComponent(outsider.owner.email)}`),
      ],
      [404, await dashboards(hidden.id, "Layoffs"), await dashboards(99_999_999, "Layoffs")],
      [403, await log(victim.owner.uuid), await log(member.user.uuid)],
    ] as const;
    for (const [status, one, other] of alike) {
      expect([one.status, other.status]).toEqual([status, status]);
      expect(one.headers.get("Server-Timing")).toMatch(/^d1;desc="queries=\d+"$/);
      expect(one.headers.get("Server-Timing")).toBe(other.headers.get("Server-Timing"));
    }
  });

  it("answers a body that is not JSON with 400 parse_error and changes nothing", async () => {
    const { key } = await setupOrganization();
    const malformed = await api("POST", "/api/organizations", { key, body: "{not json" });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({
      type: "validation_error",
      code: "parse_error",
      detail: expect.stringMatching(/^JSON parse error - /),
      attr: null,
    });
    const list = await api("POST", "/api/organizations", { key, body: [{ name: "x" }] });
    expect(list.status).toBe(400);
    expect(list.body).toEqual(
      errorBody("validation_error", "parse_error", "Invalid data. Expected a dictionary, but got list."),
    );
    const organizations = await api("GET", "/api/organizations", { key });
    expect(organizations.body.count).toBe(1);
  });

  it("takes JSON whatever the form of its Content-Type's parameters, as HTTP allows them", async () => {
    const { key, organization } = await setupOrganization();
    // An empty parameter and white space before `;` are both valid (RFC 9110, 8.3.1).
    const forms = ["application/json;", "application/json; charset=utf-8;", "application/json ; charset=utf-8"];
    for (const [index, contentType] of forms.entries()) {
      const response = await api("PATCH", `/api/organizations/${organization.id}`, {
        key,
        body: JSON.stringify({ name: `Renamed ${index}` }),
        headers: { "Content-Type": contentType },
      });
      expect(response.status, contentType).toBe(200);
      expect(response.body.name).toBe(`Renamed ${index}`);
    }
  });

  it("answers a body of another media type with 415 as DRF does, and takes an empty one of any type", async () => {
    const { organization, key } = await setupOrganization();
    for (const contentType of ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"]) {
      const refused = await api("POST", "/api/organizations", {
        key,
        body: "name=x",
        headers: { "Content-Type": contentType },
      });
      expect(refused.status, contentType).toBe(415);
      const mediaType = contentType.split(";")[0];
      expect(refused.body).toEqual(
        errorBody("invalid_request", "unsupported_media_type", `Unsupported media type "${mediaType}" in request.`),
      );
    }
    // PostHog's web app deletes and runs actions with a form-typed empty body.
    const project = await api("POST", `/api/organizations/${organization.id}/projects`, {
      key,
      body: { name: "Short-lived" },
    });
    const member = await api("GET", `/api/organizations/${organization.id}/invites`, { key });
    expect(member.status).toBe(200);
    const invite = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key,
      body: { target_email: "form@example.com" },
    });
    const deleted = await api("DELETE", `/api/organizations/${organization.id}/invites/${invite.body.id}`, {
      key,
      body: "",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(deleted.status).toBe(204);
    const refreshed = await api("PATCH", `/api/organizations/${organization.id}/projects/${project.body.id}`, {
      key,
      body: "",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(refreshed.body).toEqual(expect.objectContaining({ id: project.body.id }));
    expect(refreshed.status).toBe(200);
    const organizations = await api("GET", "/api/organizations", { key });
    expect(organizations.body.count).toBe(1);
  });

  it("says how to authenticate on every 401", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { Authorization: "Bearer phx_not-a-key" },
      { Authorization: "Basic abc" },
    ];
    for (const headers of attempts) {
      const response = await api("GET", "/api/users/@me", { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get("WWW-Authenticate")).toBe('Bearer realm="api"');
    }
  });

  it("lets a browser send and read X-D1-Bookmark across origins, for read-your-writes", async () => {
    env.CORS_ORIGINS = "https://app.example.com";
    try {
      const preflight = await exports.default.fetch(
        new Request("http://localhost/api/users/@me", {
          method: "OPTIONS",
          headers: {
            Origin: "https://app.example.com",
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "x-d1-bookmark",
          },
        }),
      );
      expect(preflight.headers.get("Access-Control-Allow-Headers")?.toLowerCase()).toContain("x-d1-bookmark");
      // A preflight is a response too: it reports its cost (no query) as every other does.
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("Server-Timing")).toMatch(/^d1;.*queries=0/);
      const { key } = await setupOrganization();
      const response = await api("GET", "/api/users/@me", { key, headers: { Origin: "https://app.example.com" } });
      expect(response.headers.get("Access-Control-Expose-Headers")?.toLowerCase().split(/,\s*/)).toEqual(
        expect.arrayContaining(["x-d1-bookmark", "x-request-id", "etag", "idempotent-replayed"]),
      );
    } finally {
      env.CORS_ORIGINS = corsAtStart;
    }
  });

  it("refuses bodies over 1 MiB with 413", async () => {
    const { key } = await setupOrganization();
    const response = await api("POST", "/api/organizations", { key, body: { name: "x".repeat(1024 * 1024) } });
    expect(response.status).toBe(413);
    expect(response.body).toEqual(
      errorBody("invalid_request", "payload_too_large", "Request body is too large (over 1 MiB)."),
    );
  });

  it("authenticates before it reads the body", async () => {
    const response = await api("POST", "/api/organizations", { body: "{not json" });
    expect(response.status).toBe(401);
  });
});

describe("OpenAPI document", () => {
  it("lists every route with the scope it requires", async () => {
    const response = await api("GET", "/api/schema");
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe("3.1.0");
    const operations = Object.entries(
      response.body.paths as Record<string, Record<string, { security: unknown }>>,
    ).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation.security]),
    );
    expect(Object.fromEntries(operations)).toMatchObject({
      "GET /api/users/@me": [{ PersonalAPIKey: ["user:read"] }],
      "PATCH /api/users/@me": [{ PersonalAPIKey: ["user:write"] }],
      "PATCH /api/organizations/{organization_id}": [{ PersonalAPIKey: ["organization:write"] }],
      "DELETE /api/organizations/{organization_id}": [{ PersonalAPIKey: ["organization:write"] }],
      "PATCH /api/organizations/{organization_id}/projects/{id}": [{ PersonalAPIKey: ["project:write"] }],
      "PATCH /api/projects/{project_id}": [{ PersonalAPIKey: ["project:write"] }],
      "GET /api/environments/{project_id}": [{ PersonalAPIKey: ["project:read"] }],
      "PATCH /api/environments/{project_id}": [{ PersonalAPIKey: ["project:write"] }],
      "GET /api/organizations": [{ PersonalAPIKey: ["organization:read"] }],
      "POST /api/organizations": [{ PersonalAPIKey: ["organization:write"] }],
      "GET /api/organizations/{organization_id}": [{ PersonalAPIKey: ["organization:read"] }],
      "GET /api/organizations/{organization_id}/projects": [{ PersonalAPIKey: ["project:read"] }],
      "POST /api/organizations/{organization_id}/projects": [{ PersonalAPIKey: ["project:write"] }],
      "GET /api/organizations/{organization_id}/projects/{id}": [{ PersonalAPIKey: ["project:read"] }],
      "GET /api/projects": [{ PersonalAPIKey: ["project:read"] }],
      "GET /api/projects/{project_id}": [{ PersonalAPIKey: ["project:read"] }],
      "GET /api/personal_api_keys": [{ PersonalAPIKey: ["personal_api_key:read"] }],
      "POST /api/personal_api_keys": [{ PersonalAPIKey: ["personal_api_key:write"] }],
      "GET /api/personal_api_keys/{id}": [{ PersonalAPIKey: ["personal_api_key:read"] }],
      "DELETE /api/personal_api_keys/{id}": [{ PersonalAPIKey: ["personal_api_key:write"] }],
      "PATCH /api/personal_api_keys/{id}": [{ PersonalAPIKey: ["personal_api_key:write"] }],
      "POST /api/personal_api_keys/{id}/roll": [{ PersonalAPIKey: ["personal_api_key:write"] }],
    });
    expect(response.body.components.securitySchemes.PersonalAPIKey).toMatchObject({ type: "http", scheme: "bearer" });
  });
});
