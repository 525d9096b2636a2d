import { describe, expect, it } from "vitest";
import { databaseDigest, markKeysUsed } from "../support/database-digest";
import { expectError } from "../support/error-bodies";
import { api, errorBody, setupOrganization } from "../support/harness";
import { createDashboard, dashboardsPath } from "../environments/dashboard-fixtures";

const tooLong = (attr: string, characters = 65536) =>
  errorBody("validation_error", "max_length", `Ensure this field has no more than ${characters} characters.`, attr);
const tooMany = (attr: string, elements: number) =>
  errorBody("validation_error", "max_length", `Ensure this field has no more than ${elements} elements.`, attr);
const tooBig = (attr: string) =>
  errorBody("validation_error", "max_length", "Ensure this field has no more than 65536 bytes when serialized.", attr);

const text = (characters: number) => "x".repeat(characters);
/** A JSON object just over 64 KiB serialized. */
const bigObject = () => ({ blob: text(64 * 1024) });
const ids = (count: number) => Array.from({ length: count }, (_, index) => index + 1);

type Case = { method: string; path: string; body: unknown; error: ReturnType<typeof errorBody> };

async function expectEachRefused(key: string, cases: Case[]) {
  await markKeysUsed();
  for (const { method, path, body, error } of cases) {
    const before = await databaseDigest();
    const response = await api(method, path, { key, body });
    expect({ path, ...response.body }).toEqual({ path, ...error });
    expect(response.status).toBe(400);
    expect(await databaseDigest()).toEqual(before);
  }
}

describe("sizes of stored fields: 400 max_length naming the field, nothing stored", () => {
  it("dashboards: description, tags, tiles, layouts and colours", async () => {
    const { project, key } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id);
    const collection = dashboardsPath(project.id);
    const item = `${collection}/${dashboard.id}`;
    const textTile = (fields: Record<string, unknown> = {}) => ({ text: { body: "note" }, ...fields });
    await expectEachRefused(key, [
      { method: "POST", path: collection, body: { description: text(65537) }, error: tooLong("description") },
      { method: "PATCH", path: item, body: { description: text(65537) }, error: tooLong("description") },
      { method: "POST", path: collection, body: { tags: ids(101).map(String) }, error: tooMany("tags", 100) },
      { method: "PATCH", path: item, body: { tags: ["ok", text(256)] }, error: tooLong("tags.1", 255) },
      {
        method: "PATCH",
        path: item,
        body: { tiles: Array.from({ length: 501 }, () => textTile()) },
        error: tooMany("tiles", 500),
      },
      {
        method: "PATCH",
        path: item,
        body: { tiles: [textTile({ layouts: bigObject() })] },
        error: tooBig("tiles.0.layouts"),
      },
      {
        method: "PATCH",
        path: item,
        body: { tiles: [textTile({ color: text(401) })] },
        error: tooLong("tiles.0.color", 400),
      },
    ]);
  });

  it("dashboards: at most 500 live tiles, however they are added", async () => {
    const { project, key } = await setupOrganization();
    const full = await createDashboard(key, project.id);
    const other = await createDashboard(key, project.id, { name: "Other" });
    const fill = await api("PATCH", `${dashboardsPath(project.id)}/${full.id}`, {
      key,
      body: { tiles: Array.from({ length: 500 }, (_, index) => ({ text: { body: `note ${index}` } })) },
    });
    expect(fill.status).toBe(200);
    expect(fill.body.tiles).toHaveLength(500);
    const otherTile = await api("PATCH", `${dashboardsPath(project.id)}/${other.id}`, {
      key,
      body: { tiles: [{ text: { body: "mine" } }] },
    });
    const tileLimit = (attr: string) =>
      errorBody("validation_error", "max_length", "A dashboard holds at most 500 tiles.", attr);
    await expectEachRefused(key, [
      {
        method: "PATCH",
        path: `${dashboardsPath(project.id)}/${full.id}`,
        body: { tiles: [{ text: { body: "one more" } }] },
        error: tileLimit("tiles"),
      },
      {
        method: "PATCH",
        path: `${dashboardsPath(project.id)}/${other.id}/move_tile`,
        body: { tile: { id: otherTile.body.tiles[0].id }, toDashboard: full.id },
        error: tileLimit("toDashboard"),
      },
    ]);
    // Removing one makes room for one, in the same PATCH.
    const swap = await api("PATCH", `${dashboardsPath(project.id)}/${full.id}`, {
      key,
      body: { tiles: [{ id: fill.body.tiles[0].id, deleted: true }, { text: { body: "replacement" } }] },
    });
    expect(swap.status).toBe(200);
    expect(swap.body.tiles).toHaveLength(500);
  });

  it("dashboards: parallel PATCHes adding tiles never pass 500 together", async () => {
    const { project, key } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id);
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const notes = (count: number) => Array.from({ length: count }, (_, index) => ({ text: { body: `note ${index}` } }));
    expect((await api("PATCH", path, { key, body: { tiles: notes(490) } })).status).toBe(200);

    const responses = await Promise.all(
      Array.from({ length: 10 }, () => api("PATCH", path, { key, body: { tiles: notes(2) } })),
    );

    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 400)).toHaveLength(5);
    expect((await api("GET", path, { key })).body.tiles).toHaveLength(500);
  });

  it("batch exports: hogql_query, filters and destination.config", async () => {
    const { project, key } = await setupOrganization();
    const path = `/api/environments/${project.id}/batch_exports`;
    const destination = { type: "NoOp", config: {} };
    await expectEachRefused(key, [
      {
        method: "POST",
        path,
        body: { name: "q", destination, interval: "hour", hogql_query: text(65537) },
        error: tooLong("hogql_query"),
      },
      {
        method: "POST",
        path,
        body: { name: "f", destination, interval: "hour", filters: bigObject() },
        error: tooBig("filters"),
      },
      {
        method: "POST",
        path,
        body: { name: "c", destination: { type: "NoOp", config: bigObject() }, interval: "hour" },
        error: tooBig("destination.config"),
      },
    ]);
  });

  it("invites: message and private_project_access", async () => {
    const { organization, key } = await setupOrganization();
    const path = `/api/organizations/${organization.id}/invites`;
    const access = ids(1001).map((id) => ({ id, level: "member" }));
    await expectEachRefused(key, [
      {
        method: "POST",
        path,
        body: { target_email: "a@example.com", message: text(65537) },
        error: tooLong("message"),
      },
      {
        method: "POST",
        path,
        body: { target_email: "a@example.com", private_project_access: access },
        error: tooMany("private_project_access", 1000),
      },
    ]);
  });

  it("personal API keys: scoped_teams and scoped_organizations", async () => {
    const { key } = await setupOrganization();
    const body = { label: "many", scopes: ["*"] };
    await expectEachRefused(key, [
      {
        method: "POST",
        path: "/api/personal_api_keys",
        body: { ...body, scoped_teams: ids(1001) },
        error: tooMany("scoped_teams", 1000),
      },
      {
        method: "POST",
        path: "/api/personal_api_keys",
        body: { ...body, scoped_organizations: ids(1001).map(String) },
        error: tooMany("scoped_organizations", 1000),
      },
    ]);
  });

  it("projects: settings objects and lists", async () => {
    const { organization, project, key } = await setupOrganization();
    const path = `/api/organizations/${organization.id}/projects`;
    await expectEachRefused(key, [
      { method: "POST", path, body: { test_account_filters: [bigObject()] }, error: tooBig("test_account_filters") },
      { method: "POST", path, body: { session_replay_config: bigObject() }, error: tooBig("session_replay_config") },
      {
        method: "POST",
        path,
        body: { has_completed_onboarding_for: bigObject() },
        error: tooBig("has_completed_onboarding_for"),
      },
      { method: "POST", path, body: { app_urls: ids(1001).map(String) }, error: tooMany("app_urls", 1000) },
      { method: "POST", path, body: { app_urls: [text(65537)] }, error: tooLong("app_urls.0") },
      // A list of opaque JSON is one value: 64 KiB in all, however small each entry.
      {
        method: "POST",
        path,
        body: { session_recording_url_trigger_config: [{ url: text(40_000) }, { url: text(40_000) }] },
        error: tooBig("session_recording_url_trigger_config"),
      },
      {
        method: "PATCH",
        path: `${path}/${project.id}`,
        body: { session_recording_url_blocklist_config: [{ url: text(40_000) }, { url: text(40_000) }] },
        error: tooBig("session_recording_url_blocklist_config"),
      },
    ]);
  });
});

describe("lists of any length never meet D1's 100 bound parameters", () => {
  it("filters dashboards by 150 tags, and refuses more than 1,000 with a 400 on tags", async () => {
    const { project, key } = await setupOrganization();
    await createDashboard(key, project.id, { name: "Tagged", tags: ["tag-149"] });
    const tags = ids(150).map((id) => `tag-${id - 1}`);
    const response = await api("GET", `${dashboardsPath(project.id)}?tags=${tags.join(",")}`, { key });
    expect(response.status).toBe(200);
    expect(response.body.results.map((dashboard: { name: string }) => dashboard.name)).toEqual(["Tagged"]);

    const tooManyTags = ids(1001).map(String).join(",");
    expectError(
      await api("GET", `${dashboardsPath(project.id)}?tags=${tooManyTags}`, { key }),
      400,
      tooMany("tags", 1000),
    );
  });

  it("checks 150 scoped_teams on key creation with a 400, not a 500", async () => {
    const { key } = await setupOrganization();
    const response = await api("POST", "/api/personal_api_keys", {
      key,
      body: { label: "scoped", scopes: ["*"], scoped_teams: ids(150).map((id) => 1_000_000 + id) },
    });
    expect(response.status).toBe(400);
    expect(response.body.attr).toBe("scoped_teams");
  });
});
