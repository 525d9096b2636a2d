import { describe, expect, it } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { REPLACED_VALUE_REFUSED } from "../../src/platform/auth/key-policy";
import { SERVICE_KEY_REFUSED } from "../../src/platform/route";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  createProject,
  errorBody,
  setupOrganization,
} from "../support/harness";
import { emptySeedRows, insertSeedRows, seedOrganization } from "../support/seed";

type Operation = {
  method: string;
  path: string;
  scope: string | undefined;
  /** Every scope it requires (a few routes require two). */
  scopes: string[];
  minimumLevel: number | undefined;
  serviceKeys: boolean;
  managesKeys: boolean;
};

type PublishedOperation = {
  security?: Record<string, string[]>[];
  "x-minimum-level"?: number;
  "x-service-keys"?: boolean;
  "x-manages-keys"?: boolean;
};

/** Every authenticated operation, as the OpenAPI document publishes it. */
async function authenticatedOperations(): Promise<Operation[]> {
  const document = (await api("GET", "/api/schema")).body as {
    paths: Record<string, Record<string, PublishedOperation>>;
  };
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => (operation.security ?? []).length > 0)
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        scope: operation.security?.[0]?.PersonalAPIKey?.[0],
        scopes: operation.security?.[0]?.PersonalAPIKey ?? [],
        minimumLevel: operation["x-minimum-level"],
        serviceKeys: operation["x-service-keys"] === true,
        managesKeys: operation["x-manages-keys"] === true,
      })),
  );
}

type Tenant = { organizationId: string; projectId: number };

/**
 * One request to the operation with the tenant's organization and project in its path. Keys,
 * scopes, tenancy and levels are all decided before any other id is looked up, so `1` stands
 * for those.
 */
function call(operation: Operation, tenant: Tenant, key?: string, body: unknown = {}) {
  const path = operation.path
    .replace("{organization_id}", tenant.organizationId)
    .replace("{project_id}", String(tenant.projectId))
    // The caller, as PostHog's MCP server names them (`@me`, encoded).
    .replace("{user_uuid}", "%40me")
    .replace(/\{[a-z_]+\}/g, "1");
  return api(operation.method, path, { key, body: operation.method === "GET" ? undefined : body });
}

/** What a key's scoping may reach, as the security model states it (docs/security.md, "Who may do what"). */
const CALLER_OPERATIONS = [
  "GET /api/users/@me",
  "GET /api/users/{user_uuid}",
  "GET /api/personal_api_keys/@current",
  "GET /api/service_keys/@current",
];
const SERVICE_KEY_INTROSPECTION = "GET /api/service_keys/@current";
const isCallerOperation = (operation: Operation) => CALLER_OPERATIONS.includes(label(operation));
const isProjectOperation = (operation: Operation) =>
  (operation.path.includes("{project_id}") || operation.path.startsWith("/api/projects")) &&
  // A new project in the caller's current organization is the organization's act.
  label(operation) !== "POST /api/projects";
const namesTenant = (operation: Operation) => /\{(organization_id|project_id)\}/.test(operation.path);

/** A service key of the organization, made through the API by the holder of `key` (its owner). */
async function createServiceKey(organizationId: string, key: string, body: Record<string, unknown>) {
  const created = await api("POST", `/api/organizations/${organizationId}/service_keys`, {
    key,
    body: { label: "Matrix", ...body },
  });
  expect(created.status).toBe(201);
  return created.body.value as string;
}

const denied = (detail: string) => errorBody("authentication_error", "permission_denied", detail);

const label = (operation: Operation) => `${operation.method} ${operation.path}`;

const NOT_AUTHENTICATED = errorBody(
  "authentication_error",
  "not_authenticated",
  "Authentication credentials were not provided.",
);
const AUTHENTICATION_FAILED = errorBody(
  "authentication_error",
  "authentication_failed",
  "Personal API key is invalid.",
);
const NOT_FOUND = errorBody("invalid_request", "not_found", "Not found.");

describe("every authenticated route", () => {
  it("is published with its scope", async () => {
    const operations = await authenticatedOperations();
    expect(operations.length).toBeGreaterThan(40);
    // Declaring no scope: the calling key's own description, which any key may read.
    expect(operations.filter((operation) => !operation.scope).map(label)).toEqual([
      "GET /api/personal_api_keys/@current",
      SERVICE_KEY_INTROSPECTION,
    ]);
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
    // One key per unrelated scope, not one per operation: the list of routes keeps growing.
    const userReader = await createApiKey(owner, { scopes: ["user:read"] });
    const dashboardReader = await createApiKey(owner, { scopes: ["dashboard:read"] });
    for (const operation of await authenticatedOperations()) {
      if (!operation.scope) continue;
      const key = operation.scope.startsWith("user:") ? dashboardReader : userReader;
      const response = await call(operation, tenant, key.value);
      expect(response.status, label(operation)).toBe(403);
      expect(response.body, label(operation)).toEqual(
        errorBody("authentication_error", "permission_denied", `API key missing required scope '${operation.scope}'`),
      );
    }
  });

  it("answers 403 naming the missing one to a key holding all but one of a route's scopes", async () => {
    const { organization, project, owner } = await setupOrganization();
    const tenant = { organizationId: organization.id, projectId: project.id };
    const several = (await authenticatedOperations()).filter((operation) => operation.scopes.length > 1);
    // Subscribing a webhook reads the activity log: its routes require both.
    expect(several.map(label)).toEqual([
      "POST /api/organizations/{organization_id}/webhooks",
      "PATCH /api/organizations/{organization_id}/webhooks/{id}",
    ]);
    for (const operation of several) {
      for (const missing of operation.scopes) {
        const others = operation.scopes.filter((scope) => scope !== missing);
        const key = await createApiKey(owner, { scopes: others });
        const response = await call(operation, tenant, key.value);
        expect(response.body, `${label(operation)} without ${missing}`).toEqual(
          errorBody("authentication_error", "permission_denied", `API key missing required scope '${missing}'`),
        );
      }
    }
  });

  it("answers 404 for another organization's or project's resources, never leaking them", async () => {
    const { key } = await setupOrganization();
    const other = await setupOrganization();
    const tenant = { organizationId: other.organization.id, projectId: other.project.id };
    for (const operation of await authenticatedOperations()) {
      if (!operation.scope || !namesTenant(operation)) continue;
      // An empty body, and one no route takes: the path's 404 comes before any 400 about the body.
      for (const body of [{}, []]) {
        const response = await call(operation, tenant, key, body);
        expect(response.status, `${label(operation)} ${JSON.stringify(body)}`).toBe(404);
        expect(response.body, label(operation)).toEqual(NOT_FOUND);
      }
    }
  });

  it("holds a key scoped to another project to it: 403 on every other project and organization route", async () => {
    const { organization, project, owner } = await setupOrganization();
    const elsewhere = await createProject(organization.id);
    const key = (await createApiKey(owner, { scopedTeams: [elsewhere.id] })).value;
    const tenant = { organizationId: organization.id, projectId: project.id };
    for (const operation of await authenticatedOperations()) {
      const response = await call(operation, tenant, key);
      if (label(operation) === SERVICE_KEY_INTROSPECTION) {
        // A personal key is no service key.
        expect(response.status, label(operation)).toBe(404);
      } else if (isCallerOperation(operation) || label(operation) === "GET /api/projects") {
        expect(response.status, label(operation)).toBe(200);
      } else if (isProjectOperation(operation)) {
        expect(response.status, label(operation)).toBe(403);
        expect(response.body, label(operation)).toEqual(
          denied("API key does not have access to the requested project"),
        );
      } else {
        expect(response.status, label(operation)).toBe(403);
        expect(response.body, label(operation)).toEqual(
          denied("API key with scoped projects are only supported on project-based views."),
        );
      }
    }
  });

  it("holds a key scoped to another organization to it: 403 on this one's routes and projects", async () => {
    const { organization, project, owner } = await setupOrganization();
    const elsewhere = await setupOrganization();
    await addMembership(elsewhere.organization.id, owner, MembershipLevel.owner);
    const key = (await createApiKey(owner, { scopedOrganizations: [elsewhere.organization.id] })).value;
    const tenant = { organizationId: organization.id, projectId: project.id };
    for (const operation of await authenticatedOperations()) {
      const response = await call(operation, tenant, key);
      if (namesTenant(operation)) {
        expect(response.status, label(operation)).toBe(403);
        expect(response.body, label(operation)).toEqual(
          denied("API key does not have access to the requested organization"),
        );
      } else if (label(operation) === "POST /api/organizations") {
        expect(response.status, label(operation)).toBe(403);
        expect(response.body, label(operation)).toEqual(
          denied("API key with scoped organizations cannot create organizations."),
        );
      } else {
        // The caller's own resources (user, keys, lists filtered to the key's scope).
        expect(response.status, label(operation)).not.toBe(403);
        expect(response.status, label(operation)).toBeLessThan(500);
      }
    }
  });

  it("answers a service key of another organization 404 or 403 on every route, never success", async () => {
    const { organization, key } = await setupOrganization();
    const other = await setupOrganization();
    const serviceKey = await createServiceKey(organization.id, key, { scopes: ["*"] });
    const tenant = { organizationId: other.organization.id, projectId: other.project.id };
    const operations = await authenticatedOperations();
    expect(operations.filter((operation) => operation.serviceKeys).length).toBeGreaterThan(5);
    for (const operation of operations) {
      const response = await call(operation, tenant, serviceKey);
      if (label(operation) === SERVICE_KEY_INTROSPECTION) {
        // The key itself, which names no tenant: it describes its own organization.
        expect(response.status, label(operation)).toBe(200);
        expect(response.body.organization_id, label(operation)).toBe(organization.id);
      } else if (operation.serviceKeys) {
        expect(namesTenant(operation), label(operation)).toBe(true);
        expect(response.status, label(operation)).toBe(404);
        expect(response.body, label(operation)).toEqual(NOT_FOUND);
      } else {
        expect(response.status, label(operation)).toBe(403);
        expect(response.body, label(operation)).toEqual(denied(SERVICE_KEY_REFUSED));
      }
    }
  }, 30_000);

  it("holds a service key scoped to a project to it: 403 elsewhere, every read on its project", async () => {
    const { organization, project, key } = await setupOrganization();
    const elsewhere = await createProject(organization.id);
    const serviceKey = await createServiceKey(organization.id, key, { scopes: ["*"], scoped_teams: [elsewhere.id] });
    const tenant = { organizationId: organization.id, projectId: project.id };
    const operations = await authenticatedOperations();
    expect(
      operations.filter((operation) => operation.serviceKeys && isProjectOperation(operation)).length,
    ).toBeGreaterThan(20);
    for (const operation of operations) {
      const response = await call(operation, tenant, serviceKey);
      if (label(operation) === SERVICE_KEY_INTROSPECTION) {
        expect(response.status, label(operation)).toBe(200);
        expect(response.body.scoped_teams, label(operation)).toEqual([elsewhere.id]);
      } else if (!isCallerOperation(operation) && !isProjectOperation(operation)) {
        expect(response.status, label(operation)).toBe(403);
        expect(response.body, label(operation)).toEqual(
          denied("API key with scoped projects are only supported on project-based views."),
        );
      } else if (operation.serviceKeys) {
        expect(response.status, label(operation)).toBe(403);
        expect(response.body, label(operation)).toEqual(
          denied("API key does not have access to the requested project"),
        );
      } else {
        expect(response.status, label(operation)).toBe(403);
        expect(response.body, label(operation)).toEqual(denied(SERVICE_KEY_REFUSED));
      }
    }
    // On its own project, every read it is admitted to answers.
    const ownTenant = { organizationId: organization.id, projectId: elsewhere.id };
    for (const operation of operations) {
      if (!operation.serviceKeys || !isProjectOperation(operation) || operation.method !== "GET") continue;
      if (/\{(?!project_id)[a-z_]+\}/.test(operation.path)) continue;
      const response = await call(operation, ownTenant, serviceKey);
      expect(response.status, label(operation)).toBe(200);
    }
  }, 30_000);

  it("refuses a value a roll replaced on every write of a key, and marks each such route", async () => {
    const { organization, project, key } = await setupOrganization();
    const tenant = { organizationId: organization.id, projectId: project.id };
    const created = await api("POST", "/api/personal_api_keys", { key, body: { label: "Rolled", scopes: ["*"] } });
    const rolled = await api("POST", `/api/personal_api_keys/${created.body.id}/roll`, {
      key,
      body: { overlap_seconds: 600 },
    });
    expect([created.status, rolled.status]).toEqual([201, 200]);
    const replaced = created.body.value as string;
    const operations = await authenticatedOperations();
    // Every write under a path of keys (personal, service, an organization's view of its members' keys),
    // and an organization's deletion, which revokes its service keys and closes it to every other key.
    const keyWrites = operations.filter(
      (operation) =>
        (operation.method !== "GET" && /\/(personal_api_keys|service_keys|api_keys)(\/|$)/.test(operation.path)) ||
        (operation.method === "DELETE" && operation.path === "/api/organizations/{organization_id}"),
    );
    expect(keyWrites.filter((operation) => !operation.managesKeys).map(label)).toEqual([]);
    expect(operations.filter((operation) => operation.managesKeys)).toEqual(keyWrites);
    for (const operation of keyWrites) {
      const response = await call(operation, tenant, replaced);
      expect([response.status, response.body], label(operation)).toEqual([403, denied(REPLACED_VALUE_REFUSED)]);
    }
    // The replaced value still reads, within its overlap.
    expect((await api("GET", "/api/personal_api_keys/@current", { key: replaced })).status).toBe(200);
  });

  it("answers 403 to a plain member on every route that needs a higher level, before looking anything up", async () => {
    const { organization, project } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const tenant = { organizationId: organization.id, projectId: project.id };
    const levelled = (await authenticatedOperations()).filter(
      (operation) => (operation.minimumLevel ?? 0) > MembershipLevel.member,
    );
    expect(levelled.length).toBeGreaterThan(5);
    for (const operation of levelled) {
      const response = await call(operation, tenant, member.key);
      expect(response.status, label(operation)).toBe(403);
      expect(response.body, label(operation)).toEqual(denied("Your organization access level is insufficient."));
    }
  });
});

/**
 * Reads cost one D1 round trip with a warm key: the caller's membership (or project and rights)
 * goes in the same `db.batch` as the data. Each read is called with real ids of one organization
 * holding a few rows of every kind, by id and as `@current`: a project's `@current` is chosen in
 * a round trip of its own first (the statement that chooses it is too large to repeat).
 */
describe("every authenticated read", () => {
  /** What `{id}` stands for, by the collection it follows. */
  const idsByCollection = (
    seeded: Awaited<ReturnType<typeof seedOrganization>>,
    created: Record<string, string>,
  ): Record<string, string> => ({
    projects: String(seeded.project.id),
    domains: seeded.domainId,
    batch_exports: seeded.batchExportId,
    dashboards: String(seeded.dashboardId),
    personal_api_keys: seeded.personalApiKeyId,
    users: seeded.owner.uuid,
    ...created,
  });

  function pathOf(
    operation: Operation,
    ids: Record<string, string>,
    tenant: { organization: string; project: string },
  ) {
    return operation.path
      .replace("{organization_id}", tenant.organization)
      .replace("{project_id}", tenant.project)
      .replace("{dashboard_id}", ids.dashboards!)
      .replace("{version}", ids.versions!)
      .replace("{role_id}", ids.roles!)
      .replace("{user_uuid}", ids.users!)
      .replace(/\/([a-z_]+)\/\{id\}/, (_match, collection: string) => `/${collection}/${ids[collection]}`);
  }

  it("answers in one round trip, by id and as @current", async () => {
    const rows = emptySeedRows();
    const seeded = await seedOrganization(rows, 3);
    await insertSeedRows(rows);
    const webhook = await api("POST", `/api/organizations/${seeded.organization.id}/webhooks`, {
      key: seeded.key,
      body: { url: "http://127.0.0.1:9/hook", events: ["Dashboard.updated"] },
    });
    expect(webhook.status).toBe(201);
    // An entry of the project's log (so in the organization's too), and an export that has succeeded (its download).
    const projectLog = await api("GET", `/api/environments/${seeded.project.id}/activity_log?limit=1`, {
      key: seeded.key,
    });
    const exportsPath = `/api/organizations/${seeded.organization.id}/activity_log/exports`;
    const created = await api("POST", exportsPath, {
      key: seeded.key,
      body: { from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z" },
    });
    await expect
      .poll(async () => (await api("GET", `${exportsPath}/${created.body.id}`, { key: seeded.key })).body.status, {
        timeout: 10_000,
      })
      .toBe("succeeded");
    // A change to the seeded dashboard, for a version to read.
    const changed = await api("PATCH", `/api/environments/${seeded.project.id}/dashboards/${seeded.dashboardId}`, {
      key: seeded.key,
      body: { description: "Versioned" },
    });
    expect(changed.headers.get("ETag")).toBe(`W/"${seeded.dashboardId}.2"`);
    const serviceKey = await api("POST", `/api/organizations/${seeded.organization.id}/service_keys`, {
      key: seeded.key,
      body: { label: "Reads", scopes: ["*"] },
    });
    const rolesPath = `/api/organizations/${seeded.organization.id}/roles`;
    const role = await api("POST", rolesPath, { key: seeded.key, body: { name: "Readers" } });
    const roleMembership = await api("POST", `${rolesPath}/${role.body.id}/role_memberships`, {
      key: seeded.key,
      body: { user_uuid: seeded.owner.uuid },
    });
    expect(roleMembership.status).toBe(201);
    // Used once, so that KV holds it, as `seeded.key` is held.
    await api("GET", "/api/service_keys/@current", { key: serviceKey.body.value });
    const ids = idsByCollection(seeded, {
      versions: "2",
      service_keys: serviceKey.body.id,
      webhooks: webhook.body.id,
      activity_log: projectLog.body.results[0].id,
      exports: created.body.id,
      roles: role.body.id,
      role_memberships: roleMembership.body.id,
    });
    const reads = (await authenticatedOperations()).filter((operation) => operation.method === "GET");
    expect(reads.length).toBeGreaterThan(30);
    await api("GET", "/api/users/@me", { key: seeded.key });
    // The sharing configuration is created by its first read (a write).
    await api("GET", `/api/environments/${seeded.project.id}/dashboards/${seeded.dashboardId}/sharing`, {
      key: seeded.key,
    });
    // The key's first `@current` read chooses the project first; later ones check the choice in their round trip.
    const first = await api("GET", "/api/environments/@current/dashboards", { key: seeded.key });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.cost.queries).toBe(2);
    const firstAsService = await api("GET", "/api/environments/@current/dashboards", { key: serviceKey.body.value });
    expect(firstAsService.status, JSON.stringify(firstAsService.body)).toBe(200);
    const tenants = [
      { organization: seeded.organization.id, project: String(seeded.project.id) },
      { organization: "@current", project: "@current" },
    ];
    for (const tenant of tenants) {
      for (const operation of reads) {
        const path = pathOf(operation, ids, tenant);
        // The calling service key describes itself: only a service key can call it.
        const key = label(operation) === SERVICE_KEY_INTROSPECTION ? serviceKey.body.value : seeded.key;
        const response = await api("GET", path, { key });
        expect(response.status, path).toBe(200);
        expect(response.cost.queries, path).toBe(1);
        // The caller's alone: kept by no shared cache, by a browser only for this key (or not at all).
        expect(response.headers.get("Cache-Control"), path).toMatch(/^(private, no-cache|no-store)$/);
        expect(response.headers.get("Vary"), path).toMatch(/\bAuthorization\b/);
        if (!operation.serviceKeys) continue;
        // A service key reads what it is admitted to as an admin would, in the same round trip.
        const asService = await api("GET", path, { key: serviceKey.body.value });
        expect(asService.status, `${path} ${JSON.stringify(asService.body)}`).toBe(200);
        expect(asService.cost.queries, path).toBe(1);
      }
    }
  }, 60_000);
});
