import { describe, expect, it } from "vitest";
import { api, createApiKey, errorBody, setupOrganization } from "../support/harness";

type Operation = { method: string; path: string; scope: string | undefined };

/** Every authenticated operation, as the OpenAPI document publishes it. */
async function authenticatedOperations(): Promise<Operation[]> {
  const document = (await api("GET", "/api/schema")).body as {
    paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
  };
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => (operation.security ?? []).length > 0)
      .map(([method, operation]) => ({ method: method.toUpperCase(), path, scope: operation.security?.[0]?.PersonalAPIKey?.[0] })),
  );
}

/**
 * One request to the operation with the tenant's organization and project in its path. Keys,
 * scopes and tenancy are all decided before any other id is looked up, so `1` stands for those.
 */
function call(operation: Operation, tenant: { organizationId: string; projectId: number }, key?: string) {
  const path = operation.path
    .replace("{organization_id}", tenant.organizationId)
    .replace("{project_id}", String(tenant.projectId))
    .replace(/\{[a-z_]+\}/g, "1");
  return api(operation.method, path, { key, body: operation.method === "GET" ? undefined : {} });
}

const label = (operation: Operation) => `${operation.method} ${operation.path}`;

const NOT_AUTHENTICATED = errorBody("authentication_error", "not_authenticated", "Authentication credentials were not provided.");
const AUTHENTICATION_FAILED = errorBody("authentication_error", "authentication_failed", "Personal API key is invalid.");
const NOT_FOUND = errorBody("invalid_request", "not_found", "Not found.");

describe("every authenticated route", () => {
  it("is published with its scope", async () => {
    const operations = await authenticatedOperations();
    expect(operations.length).toBeGreaterThan(40);
    expect(operations.filter((operation) => !operation.scope)).toEqual([]);
  });

  it("answers 401 without a key and with a bad one", async () => {
    const { organization, project } = await setupOrganization();
    const tenant = { organizationId: organization.id, projectId: project.id };
    for (const operation of await authenticatedOperations()) {
      const anonymous = await call(operation, tenant);
      expect(anonymous.status, label(operation)).toBe(401);
      expect(anonymous.body, label(operation)).toEqual(NOT_AUTHENTICATED);
      const badKey = await call(operation, tenant, `phx_${"x".repeat(44)}`);
      expect(badKey.status, label(operation)).toBe(401);
      expect(badKey.body, label(operation)).toEqual(AUTHENTICATION_FAILED);
    }
  });

  it("answers 403 naming the scope to a key without it", async () => {
    const { organization, project, owner } = await setupOrganization();
    const tenant = { organizationId: organization.id, projectId: project.id };
    for (const operation of await authenticatedOperations()) {
      if (!operation.scope) continue;
      const unrelated = operation.scope.startsWith("user:") ? "dashboard:read" : "user:read";
      const key = await createApiKey(owner, { scopes: [unrelated] });
      const response = await call(operation, tenant, key.value);
      expect(response.status, label(operation)).toBe(403);
      expect(response.body, label(operation)).toEqual(
        errorBody("authentication_error", "permission_denied", `API key missing required scope '${operation.scope}'`),
      );
    }
  });

  it("answers 404 for another organization's or project's resources, never leaking them", async () => {
    const { key } = await setupOrganization();
    const other = await setupOrganization();
    const tenant = { organizationId: other.organization.id, projectId: other.project.id };
    for (const operation of await authenticatedOperations()) {
      if (!operation.scope || !/\{(organization_id|project_id)\}/.test(operation.path)) continue;
      const response = await call(operation, tenant, key);
      expect(response.status, label(operation)).toBe(404);
      expect(response.body, label(operation)).toEqual(NOT_FOUND);
    }
  });
});
