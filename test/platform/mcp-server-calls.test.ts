import { describe, expect, it } from "vitest";
import { expectDecoded, type Shape } from "../support/client-shapes";
import { api, createApiKey, setupOrganization } from "../support/harness";

/*
 * Every call PostHog's MCP server (github.com/PostHog/posthog, `services/mcp/src`) makes on the
 * resources this API serves, sent as its `ApiClient` sends them (`src/api/client.ts`: `fetch`
 * with the key as a Bearer token, `X-PostHog-Client: mcp`, `Content-Type: application/json` only
 * with a body, a query string after the path's trailing slash), and each answer checked for the
 * fields the server reads: `src/lib/StateManager.ts` (which project and organization a session
 * uses), `src/schema/api.ts` (ApiUserSchema, ApiRedactedPersonalApiKeySchema) and the generated
 * tools of `src/tools/generated/` (dashboards.ts, batch_exports.ts, activity_logs.ts), typed by
 * the `Schemas` of `src/api/generated.ts`.
 */

/** `src/schema/api.ts`: ApiUserSchema. */
const USER: Shape = {
  distinct_id: "string",
  organizations: [{ id: "string" }],
  team: { id: "integer", organization: "string" },
  organization: { id: "string" },
};
/** `src/schema/api.ts`: ApiRedactedPersonalApiKeySchema (arrays, never null: the state manager reads `.length`). */
const CURRENT_KEY: Shape = { scopes: ["string"], scoped_teams: ["integer"], scoped_organizations: ["string"] };
/** `Schemas.OrganizationBasic`. */
const ORGANIZATION: Shape = { id: "string", name: "string", slug: "string" };
/** `Schemas.ProjectBackwardCompat`. */
const PROJECT: Shape = { id: "integer", name: "string", organization: "string" };
/** `Schemas.PaginatedDashboardBasicList`; each item gets a URL from its `id`. */
const DASHBOARD_PAGE: Shape = {
  count: "integer",
  next: "string?",
  previous: "string?",
  results: [{ id: "integer", name: "string", description: "string?" }],
};
/** `Schemas.Dashboard`, as the tools read it (`id` for the URL) and trim it (`tiles.*`). */
const DASHBOARD: Shape = { id: "integer", name: "string", description: "string?", tiles: [{ id: "integer" }] };
/** `Schemas.BatchExport`: the fields `batch-exports-list` picks and the get/update tools return. */
const BATCH_EXPORT: Shape = {
  id: "string",
  name: "string",
  model: "string?",
  destination: { type: "string", config: "object" },
  interval: "string",
  paused: "boolean",
  created_at: "string",
  last_updated_at: "string?",
  start_at: "string?",
  end_at: "string?",
};
/** `Schemas.PaginatedActivityLogList`. */
const ACTIVITY_PAGE: Shape = {
  next: "string?",
  results: [{ id: "string", activity: "string", scope: "string", item_id: "string?", created_at: "string" }],
};

/** `Schemas.PaginatedOrganizationMemberList`: what `org-members-list` returns. */
const MEMBER_PAGE: Shape = {
  count: "integer",
  next: "string?",
  results: [{ id: "string", level: "integer", user: { uuid: "string", email: "string" }, joined_at: "string" }],
};

/** A request as `ApiClient.request` sends it. */
function mcp(
  method: string,
  path: string,
  key: string,
  options: { body?: unknown; query?: Record<string, unknown> } = {},
) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined) query.append(name, String(value));
  }
  const url = query.size > 0 ? `${path}?${query}` : path;
  const headers: Record<string, string> = { "User-Agent": "posthog/mcp", "X-PostHog-Client": "mcp" };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  return api(method, url, {
    key,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    headers,
  });
}

async function decoded(
  method: string,
  path: string,
  key: string,
  shape: Shape,
  options: { body?: unknown; query?: Record<string, unknown> } = {},
) {
  return expectDecoded(await mcp(method, path, key, options), shape, `${method} ${path}`);
}

describe("PostHog's MCP server", () => {
  it("picks a session's organization and project from @me and the key (StateManager.ts)", async () => {
    const { organization, project, key } = await setupOrganization();
    const user = await decoded("GET", "/api/users/@me/", key, USER);
    expect(user.organization.id).toBe(organization.id);
    expect(user.team).toMatchObject({ id: project.id, organization: organization.id });
    const current = await decoded("GET", "/api/personal_api_keys/@current", key, CURRENT_KEY);
    expect(current).toMatchObject({ scoped_teams: [], scoped_organizations: [] });
  });

  it("reads an organization-scoped key, its organization and its projects (client.ts)", async () => {
    const { organization, project, owner } = await setupOrganization();
    const scoped = await createApiKey(owner, { scopedOrganizations: [organization.id] });
    const current = await decoded("GET", "/api/personal_api_keys/@current", scoped.value, CURRENT_KEY);
    expect(current.scoped_organizations).toEqual([organization.id]);
    const organizations = await decoded("GET", "/api/organizations/", scoped.value, { results: [ORGANIZATION] });
    expect(organizations.results.map((item: { id: string }) => item.id)).toEqual([organization.id]);
    await decoded("GET", `/api/organizations/${organization.id}/`, scoped.value, ORGANIZATION);
    const projects = await decoded("GET", `/api/organizations/${organization.id}/projects/`, scoped.value, {
      results: [PROJECT],
    });
    expect(projects.results[0]).toMatchObject({ id: project.id, organization: organization.id });
    await decoded("GET", `/api/projects/${project.id}/`, scoped.value, PROJECT);
  });

  it("reads a project-scoped key's one project from scoped_teams (StateManager.ts)", async () => {
    const { project, owner } = await setupOrganization();
    const scoped = await createApiKey(owner, { scopedTeams: [project.id] });
    const current = await decoded("GET", "/api/personal_api_keys/@current", scoped.value, CURRENT_KEY);
    expect(current.scoped_teams).toEqual([project.id]);
    await decoded("GET", `/api/projects/${project.id}/`, scoped.value, PROJECT);
  });

  it("runs the dashboard tools: list, create, get, update, reorder tiles, delete (dashboards.ts)", async () => {
    const { project, key } = await setupOrganization();
    const collection = `/api/projects/${project.id}/dashboards/`;
    const created = await decoded("POST", collection, key, DASHBOARD, {
      body: { name: "From an agent", description: "Made by a tool", pinned: false, tags: ["mcp"] },
    });
    expect(created).toMatchObject({ name: "From an agent", description: "Made by a tool" });
    const list = await decoded("GET", collection, key, DASHBOARD_PAGE, {
      query: { limit: 10, offset: 0, search: undefined },
    });
    expect(list.results.map((item: { id: number }) => item.id)).toContain(created.id);
    const item = `${collection}${created.id}/`;
    const withTiles = await decoded("PATCH", item, key, DASHBOARD, {
      body: { tiles: [{ text: { body: "First" } }, { text: { body: "Second" } }] },
    });
    const tileIds = withTiles.tiles.map((tile: { id: number }) => tile.id);
    expect(tileIds).toHaveLength(2);
    const reordered = await decoded("POST", `${item}reorder_tiles/`, key, DASHBOARD, {
      body: { tile_order: [...tileIds].reverse() },
    });
    expect(reordered.id).toBe(created.id);
    expect(reordered.tiles.map((tile: { text: { body: string } }) => tile.text.body)).toEqual(["Second", "First"]);
    const fetched = await decoded("GET", item, key, DASHBOARD);
    expect(fetched.tiles.map((tile: { id: number }) => tile.id)).toEqual([...tileIds].reverse());
    expect(await decoded("PATCH", item, key, DASHBOARD, { body: { name: "Renamed" } })).toMatchObject({
      name: "Renamed",
    });
    expect(await decoded("PATCH", item, key, DASHBOARD, { body: { deleted: true } })).toMatchObject({ deleted: true });
  });

  it("runs the batch export tools: create, list, get, update, delete (batch_exports.ts)", async () => {
    const { project, key } = await setupOrganization();
    const collection = `/api/projects/${project.id}/batch_exports/`;
    const destination = { type: "S3", config: { bucket_name: "b", region: "eu-west-1", prefix: "events/" } };
    const created = await decoded("POST", collection, key, BATCH_EXPORT, {
      body: { name: "Events to S3", model: "events", destination, interval: "hour", paused: false },
    });
    const list = await decoded("GET", collection, key, { results: [BATCH_EXPORT] }, { query: { limit: 100 } });
    expect(list.results.map((item: { id: string }) => item.id)).toContain(created.id);
    const item = `${collection}${created.id}/`;
    await decoded("GET", item, key, BATCH_EXPORT);
    expect(await decoded("PATCH", item, key, BATCH_EXPORT, { body: { interval: "day" } })).toMatchObject({
      interval: "day",
    });
    // `request` reads an empty answer as `{}`.
    const deleted = await mcp("DELETE", item, key);
    expect({ status: deleted.status, text: deleted.text }).toEqual({ status: 204, text: "" });
  });

  it("takes the nulls the batch export tools' schema allows: a time zone is then UTC, a query none", async () => {
    // `timezone`, `hogql_query`: `zod.string().nullish()` in the tools' body schemas (generated/batch_exports/api.ts).
    const { project, key } = await setupOrganization();
    const collection = `/api/projects/${project.id}/batch_exports/`;
    const destination = { type: "S3", config: { bucket_name: "b", region: "eu-west-1", prefix: "events/" } };
    // Newer versions' AwsS3 destination: the config's non-secret keys, defaults applied, nulls as sent.
    const awsS3 = {
      type: "AwsS3",
      config: {
        ...destination.config,
        file_format: "JSONLines",
        compression: null,
        max_file_size_mb: null,
        encryption: null,
        kms_key_id: null,
      },
    };
    const created = await decoded("POST", collection, key, BATCH_EXPORT, {
      body: {
        name: "Nightly",
        destination: awsS3,
        interval: "day",
        timezone: null,
        offset_day: null,
        offset_hour: null,
      },
    });
    expect(created).toMatchObject({ timezone: "UTC", offset_hour: null });
    const item = `${collection}${created.id}/`;
    await decoded("PATCH", item, key, BATCH_EXPORT, { body: { timezone: "Europe/Paris" } });
    expect((await decoded("PATCH", item, key, BATCH_EXPORT, { body: { name: "Renamed" } })).timezone).toBe(
      "Europe/Paris",
    );
    // Sent null, as PostHog's `validate_timezone` reads it: UTC.
    const reset = await decoded("PATCH", item, key, BATCH_EXPORT, { body: { timezone: null, hogql_query: null } });
    expect(reset).toMatchObject({ name: "Renamed", timezone: "UTC", hogql_query: "" });
    expect((await decoded("GET", item, key, BATCH_EXPORT)).timezone).toBe("UTC");
  });

  it("lists the activity log with the tool's filters (activity_logs.ts)", async () => {
    const { project, key } = await setupOrganization();
    const dashboard = await decoded("POST", `/api/projects/${project.id}/dashboards/`, key, DASHBOARD, {
      body: { name: "Logged" },
    });
    const log = await decoded("GET", `/api/projects/${project.id}/activity_log/`, key, ACTIVITY_PAGE, {
      query: { scope: "Dashboard", item_id: String(dashboard.id), scopes: undefined, user: undefined },
    });
    expect(log.results.map((entry: { activity: string; item_id: string }) => [entry.activity, entry.item_id])).toEqual([
      ["created", String(dashboard.id)],
    ]);
  });
  it("lists an organization's members with the tool's search and order (org-members-list)", async () => {
    const { organization, owner, key } = await setupOrganization();
    const page = await decoded("GET", `/api/organizations/${organization.id}/members/`, key, MEMBER_PAGE, {
      query: { search: owner.email.slice(0, 5), order: "-joined_at", limit: 10 },
    });
    expect(page.results.map((member: { user: { uuid: string } }) => member.user.uuid)).toEqual([owner.uuid]);
  });

  it("reads and updates the user as `@me` encoded in the path, /api/users/%40me/ (core.ts user-get)", async () => {
    // `/api/users/${encodeURIComponent(params.uuid)}/`, the uuid described as "User UUID, or `@me`".
    const { owner, key, project } = await setupOrganization();
    const read = await mcp("GET", "/api/users/%40me/", key);
    expect({ status: read.status, uuid: read.body.uuid }).toEqual({ status: 200, uuid: owner.uuid });
    // As `@me` is, read with a key scoped to a project too.
    const scoped = await createApiKey(owner, { scopedTeams: [project.id] });
    expect((await mcp("GET", "/api/users/%40me/", scoped.value)).status).toBe(200);
    const changed = await mcp("PATCH", "/api/users/%40me/", key, { body: { first_name: "Agent" } });
    expect({ status: changed.status, first_name: changed.body.first_name }).toEqual({
      status: 200,
      first_name: "Agent",
    });
  });

  it("lists the activity log for a kind this API does not log: an empty page (activity_logs.ts)", async () => {
    // The tool's `scope` is any text, its examples "FeatureFlag", "Insight", "Dashboard", "Experiment".
    const { project, key } = await setupOrganization();
    const log = await decoded("GET", `/api/projects/${project.id}/activity_log/`, key, ACTIVITY_PAGE, {
      query: { scope: "Insight" },
    });
    expect(log.results).toEqual([]);
  });
});

/*
 * Bodies the MCP's generated tool schemas allow (`services/mcp/src/generated/core/api.ts`,
 * UsersPartialUpdateBody: `theme_mode: union([enum(['light','dark','system']), enum(['']), null()])`,
 * `anonymize_data: boolean().nullish()`; `src/generated/dashboards/api.ts`, DashboardsCreateBody and
 * DashboardsPartialUpdateBody: `name: string().max(400).nullish()`, `delete_insights: boolean().default(false)`).
 */
describe("PostHog's MCP server: values its tools' schemas allow", () => {
  it("user-settings-update takes theme_mode '' and anonymize_data null, and answers them as sent", async () => {
    const { key } = await setupOrganization();
    const changed = await mcp("PATCH", "/api/users/%40me/", key, { body: { theme_mode: "", anonymize_data: null } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ theme_mode: "", anonymize_data: null });
    const back = await mcp("PATCH", "/api/users/%40me/", key, { body: { theme_mode: "dark", anonymize_data: true } });
    expect(back.body).toMatchObject({ theme_mode: "dark", anonymize_data: true });
  });

  it("dashboard-create and dashboard-update take name null: as if not sent", async () => {
    const { project, key } = await setupOrganization();
    const collection = `/api/projects/${project.id}/dashboards/`;
    const created = await mcp("POST", collection, key, { body: { name: null, delete_insights: false } });
    expect(created.status).toBe(201);
    const named = await mcp("POST", collection, key, { body: { name: "Named", delete_insights: false } });
    const kept = await mcp("PATCH", `${collection}${named.body.id}/`, key, {
      body: { name: null, delete_insights: false },
    });
    expect(kept.status).toBe(200);
    expect(kept.body.name).toBe("Named");
  });

  // services/mcp/src/generated/batch_exports/api.ts: the create and update bodies' `model` is one of events,
  // persons, sessions or hogql ("The hogql model exports the results of hogql_query", which it requires).
  it("batch-export-create and -update take model hogql with its hogql_query", async () => {
    const { project, key } = await setupOrganization();
    const collection = `/api/projects/${project.id}/batch_exports/`;
    const destination = {
      type: "AwsS3",
      integration_id: 7,
      config: { bucket_name: "b", region: "eu-west-1", prefix: "" },
    };
    const query = "SELECT event, timestamp FROM events";
    const created = await decoded("POST", collection, key, BATCH_EXPORT, {
      body: { name: "Query", model: "hogql", destination, interval: "hour", hogql_query: query, hogql_modifiers: {} },
    });
    expect(created).toMatchObject({ model: "hogql", hogql_query: query });
    const edited = await mcp("PATCH", `${collection}${created.id}/`, key, {
      body: { hogql_query: `${query} LIMIT 5` },
    });
    expect([edited.status, edited.body.model, edited.body.hogql_query]).toEqual([200, "hogql", `${query} LIMIT 5`]);
    // As in PostHog, a query's export does not become a model's: a new export is made instead.
    const switched = await mcp("PATCH", `${collection}${created.id}/`, key, { body: { model: "events" } });
    expect([switched.status, switched.body.attr]).toEqual([400, "model"]);
  });

  // The same file: the AwsS3 destination's config has `legacy_parquet_extension: zod.boolean().optional()`.
  it("batch-export-create and -update take the AwsS3 config's legacy_parquet_extension", async () => {
    const { project, key } = await setupOrganization();
    const collection = `/api/projects/${project.id}/batch_exports/`;
    const config = { bucket_name: "b", region: "us-east-1", prefix: "events/", file_format: "Parquet" };
    const created = await decoded("POST", collection, key, BATCH_EXPORT, {
      body: { name: "Parquet", interval: "hour", destination: { type: "AwsS3", config } },
    });
    const updated = await mcp("PATCH", `${collection}${created.id}/`, key, {
      body: { destination: { type: "AwsS3", config: { ...config, legacy_parquet_extension: false } } },
    });
    expect([updated.status, updated.body.destination.config]).toEqual([
      200,
      { ...config, legacy_parquet_extension: false },
    ]);
  });
});
