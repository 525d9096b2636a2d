import { afterEach, describe, expect, it, vi } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import {
  addMember,
  api,
  createApiKey,
  createProject,
  errorBody,
  ISO_TIMESTAMP,
  setupOrganization,
  UUID,
  nextLink,
} from "../support/harness";
import { NOT_AUTHENTICATED, NOT_FOUND, expectError, missingScope } from "../support/error-bodies";

const organizationExports = (organizationId: string) => `/api/organizations/${organizationId}/batch_exports`;

const S3_EXPORT = {
  name: "Events to S3",
  interval: "day",
  destination: {
    type: "S3",
    config: {
      bucket_name: "b",
      region: "eu-west-1",
      prefix: "",
      aws_access_key_id: "id",
      aws_secret_access_key: "secret",
    },
  },
};

type CreatedExport = { id: string; team_id: number; created_at: string; last_updated_at: string; name: string };

/** Exports are managed in their project; these tests read and pause them from the organization. */
async function createExport(projectId: number, key: string, name = "Events to S3"): Promise<CreatedExport> {
  const response = await api("POST", `/api/environments/${projectId}/batch_exports`, {
    key,
    body: { ...S3_EXPORT, name },
  });
  expect(response.status).toBe(201);
  return response.body;
}

const exportBody = (created: CreatedExport, changes: Record<string, unknown> = {}) => ({
  id: created.id,
  team_id: created.team_id,
  name: created.name,
  model: "events",
  destination: { type: "S3", config: { bucket_name: "b", region: "eu-west-1", prefix: "" } },
  interval: "day",
  paused: false,
  created_at: created.created_at,
  last_updated_at: created.last_updated_at,
  last_paused_at: null,
  start_at: null,
  end_at: null,
  hogql_query: "",
  filters: null,
  timezone: "UTC",
  offset_day: null,
  offset_hour: null,
  latest_runs: [],
  schema: null,
  ...changes,
});

afterEach(() => {
  vi.useRealTimers();
});

describe("GET /api/organizations/:organization_id/batch_exports", () => {
  it("lists the live exports of every project of the organization, newest first, paginated", async () => {
    const { organization, project, key } = await setupOrganization();
    const second = await createProject(organization.id);
    const at = (time: string) => vi.setSystemTime(new Date(`2030-01-01T${time}Z`));
    vi.useFakeTimers({ toFake: ["Date"] });
    at("01:00:00");
    const first = await createExport(project.id, key, "first");
    at("02:00:00");
    const other = await createExport(second.id, key, "second project");
    at("03:00:00");
    const newest = await createExport(project.id, key, "newest");
    const removed = await createExport(second.id, key, "removed");
    vi.useRealTimers();
    await api("DELETE", `/api/environments/${second.id}/batch_exports/${removed.id}`, { key });
    const stranger = await setupOrganization();
    await createExport(stranger.project.id, stranger.key);

    const page = await api("GET", `${organizationExports(organization.id)}/?limit=2`, { key });
    expect(page.status).toBe(200);
    expect(page.body).toEqual({
      count: 3,
      next: nextLink(`${organizationExports(organization.id)}/`, 2, 2, [other.created_at, other.id]),
      previous: null,
      results: [exportBody(newest), exportBody(other)],
    });
    expect(other.team_id).toBe(second.id);
    // Membership, count and page in one batch.
    expect(page.cost.queries).toBe(1);
    const rest = await api("GET", `${organizationExports("@current")}?limit=2&offset=2`, { key });
    expect(rest.body.results).toEqual([exportBody(first)]);
  });

  it("hides exports of a private project from members without access; refuses a key scoped to projects", async () => {
    const { organization, owner, project, key } = await setupOrganization();
    const privateProject = await createProject(organization.id, { access_control: true });
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2030-01-01T01:00:00Z"));
    const open = await createExport(project.id, key, "open");
    vi.setSystemTime(new Date("2030-01-01T02:00:00Z"));
    const hidden = await createExport(privateProject.id, key, "private");
    vi.useRealTimers();
    const member = await addMember(organization.id, MembershipLevel.member);
    const admin = await addMember(organization.id, MembershipLevel.admin);

    const asMember = await api("GET", organizationExports(organization.id), { key: member.key });
    expect(asMember.body).toEqual({ count: 1, next: null, previous: null, results: [exportBody(open)] });
    const asAdmin = await api("GET", organizationExports(organization.id), { key: admin.key });
    expect(asAdmin.body.results).toEqual([exportBody(hidden), exportBody(open)]);
    const scoped = await createApiKey(owner, { scopes: ["batch_export:read"], scopedTeams: [privateProject.id] });
    const asScoped = await api("GET", organizationExports(organization.id), { key: scoped.value });
    expectError(
      asScoped,
      403,
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key with scoped projects are only supported on project-based views.",
      ),
    );
  });

  it("needs batch_export:read (403), a key (401) and membership (404)", async () => {
    const { organization, owner } = await setupOrganization();
    const wrongScope = await createApiKey(owner, { scopes: ["organization:read"] });
    const denied = await api("GET", organizationExports(organization.id), { key: wrongScope.value });
    expectError(denied, 403, missingScope("batch_export:read"));
    const anonymous = await api("GET", organizationExports(organization.id));
    expectError(anonymous, 401, NOT_AUTHENTICATED);
    const scopedElsewhere = await createApiKey(owner, {
      scopes: ["*"],
      scopedOrganizations: ["0192a000-0000-7000-8000-000000000000"],
    });
    expectError(
      await api("GET", organizationExports(organization.id), { key: scopedElsewhere.value }),
      403,
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key does not have access to the requested organization",
      ),
    );
    const stranger = await setupOrganization();
    const response = await api("GET", organizationExports(organization.id), { key: stranger.key });
    expectError(response, 404, NOT_FOUND);
  });
});

describe("GET /api/organizations/:organization_id/batch_exports/:id", () => {
  it("retrieves an export of the organization; another organization's is 404", async () => {
    const { organization, project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    const response = await api("GET", `${organizationExports(organization.id)}/${created.id}`, { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(exportBody(created));
    expect(response.body.id).toMatch(UUID);
    expect(response.cost.queries).toBe(1);

    const stranger = await setupOrganization();
    const theirs = await createExport(stranger.project.id, stranger.key);
    for (const path of [
      `${organizationExports(organization.id)}/${theirs.id}`,
      `${organizationExports(stranger.organization.id)}/${theirs.id}`,
      `${organizationExports(organization.id)}/00000000-0000-7000-8000-000000000000`,
    ]) {
      const missing = await api("GET", path, { key });
      expectError(missing, 404, NOT_FOUND);
    }
  });

  it("does not show a private project's export to a member without access", async () => {
    const { organization, key } = await setupOrganization();
    const privateProject = await createProject(organization.id, { access_control: true });
    const hidden = await createExport(privateProject.id, key);
    const member = await addMember(organization.id, MembershipLevel.member);
    const path = `${organizationExports(organization.id)}/${hidden.id}`;
    expect((await api("GET", path, { key: member.key })).status).toBe(404);
    expect((await api("POST", `${path}/pause`, { key: member.key })).status).toBe(404);
    expect((await api("GET", path, { key })).body.paused).toBe(false);
  });
});

describe("POST /api/organizations/:organization_id/batch_exports/:id/pause and /unpause", () => {
  it("pauses, records when, and pausing again changes nothing", async () => {
    const { organization, project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    const path = `${organizationExports(organization.id)}/${created.id}`;
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2030-02-01T08:00:00Z"));

    const paused = await api("POST", `${path}/pause/`, { key });
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ paused: true });
    // The membership check and one conditional UPDATE ... RETURNING: never a read, then a write.
    expect(paused.cost.queries).toBe(2);
    const pausedAt = {
      paused: true,
      last_paused_at: "2030-02-01T08:00:00.000Z",
      last_updated_at: "2030-02-01T08:00:00.000Z",
    };
    expect((await api("GET", path, { key })).body).toEqual(exportBody(created, pausedAt));

    vi.setSystemTime(new Date("2030-02-02T08:00:00Z"));
    const again = await api("POST", `${path}/pause`, { key, body: { paused: false, name: "ignored" } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ paused: true });
    expect((await api("GET", path, { key })).body).toEqual(exportBody(created, pausedAt));
  });

  it("unpauses, keeping last_paused_at; unpausing again changes nothing", async () => {
    const { organization, project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    const path = `${organizationExports(organization.id)}/${created.id}`;
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2030-03-01T00:00:00Z"));
    await api("POST", `${path}/pause`, { key });
    vi.setSystemTime(new Date("2030-03-02T00:00:00Z"));

    const unpaused = await api("POST", `${path}/unpause`, { key });
    expect(unpaused.status).toBe(200);
    expect(unpaused.body).toEqual({ paused: false });
    expect(unpaused.cost.queries).toBe(2);
    const running = {
      paused: false,
      last_paused_at: "2030-03-01T00:00:00.000Z",
      last_updated_at: "2030-03-02T00:00:00.000Z",
    };
    expect((await api("GET", path, { key })).body).toEqual(exportBody(created, running));

    vi.setSystemTime(new Date("2030-03-03T00:00:00Z"));
    const again = await api("POST", `${path}/unpause`, { key });
    expect(again.body).toEqual({ paused: false });
    expect((await api("GET", path, { key })).body).toEqual(exportBody(created, running));
    expect((await api("GET", `/api/environments/${project.id}/batch_exports/${created.id}`, { key })).body).toEqual(
      exportBody(created, running),
    );
  });

  it("is open to any member with batch_export:write", async () => {
    const { organization, project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    const member = await addMember(organization.id, MembershipLevel.member, ["batch_export:write"]);
    const response = await api("POST", `${organizationExports(organization.id)}/${created.id}/pause`, {
      key: member.key,
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ paused: true });
  });

  it("needs batch_export:write (403) and a key (401); never reaches another organization's export (404)", async () => {
    const { organization, owner, project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    const readOnly = await createApiKey(owner, { scopes: ["batch_export:read"] });
    for (const action of ["pause", "unpause"]) {
      const path = `${organizationExports(organization.id)}/${created.id}/${action}`;
      const denied = await api("POST", path, { key: readOnly.value });
      expectError(denied, 403, missingScope("batch_export:write"));
      expect((await api("POST", path)).status).toBe(401);
    }

    const stranger = await setupOrganization();
    const theirs = await createExport(stranger.project.id, stranger.key);
    for (const path of [
      `${organizationExports(organization.id)}/${theirs.id}/pause`,
      `${organizationExports(stranger.organization.id)}/${theirs.id}/pause`,
      `${organizationExports(organization.id)}/00000000-0000-7000-8000-000000000000/unpause`,
    ]) {
      const missing = await api("POST", path, { key });
      expectError(missing, 404, NOT_FOUND);
    }
    const untouched = await api("GET", `${organizationExports(stranger.organization.id)}/${theirs.id}`, {
      key: stranger.key,
    });
    expect(untouched.body).toEqual(exportBody(theirs));
    expect(untouched.body.last_updated_at).toMatch(ISO_TIMESTAMP);
  });

  it("answers GET on pause with 405", async () => {
    const { organization, project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    const response = await api("GET", `${organizationExports(organization.id)}/${created.id}/pause`, { key });
    expect(response.status).toBe(405);
    expect(response.headers.get("Allow")).toBe("POST");
    expect(response.body).toEqual(errorBody("invalid_request", "method_not_allowed", 'Method "GET" not allowed.'));
  });
});
