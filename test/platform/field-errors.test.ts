import { describe, expect, it } from "vitest";
import { databaseDigest, markKeysUsed } from "../support/database-digest";
import { api, setupOrganization } from "../support/harness";

/**
 * Each invalid field of the key, sharing, tile-order and organization-policy writes answers 400
 * naming the field in `attr`, and the database is left as it was.
 */
type Case = { method: string; path: string; body: Record<string, unknown>; attr: string; code: string };

async function fixtures() {
  const { organization, project, key } = await setupOrganization();
  const dashboard = await api("POST", `/api/environments/${project.id}/dashboards`, {
    key,
    body: { name: "Fields", tiles: [{ text: { body: "one" } }] },
  });
  const personalKey = await api("POST", "/api/personal_api_keys", { key, body: { label: "Fields", scopes: ["*"] } });
  const serviceKeys = `/api/organizations/${organization.id}/service_keys`;
  const serviceKey = await api("POST", serviceKeys, { key, body: { label: "Fields", scopes: ["*"] } });
  expect([dashboard.status, personalKey.status, serviceKey.status]).toEqual([201, 201, 201]);
  return {
    key,
    organizationPath: `/api/organizations/${organization.id}`,
    dashboardPath: `/api/environments/${project.id}/dashboards/${dashboard.body.id}`,
    personalKeyPath: `/api/personal_api_keys/${personalKey.body.id}`,
    serviceKeysPath: serviceKeys,
    serviceKeyPath: `${serviceKeys}/${serviceKey.body.id}`,
  };
}

function casesFor(paths: Omit<Awaited<ReturnType<typeof fixtures>>, "key">): Case[] {
  const past = "2020-01-01T00:00:00Z";
  const { organizationPath, dashboardPath, personalKeyPath, serviceKeysPath, serviceKeyPath } = paths;
  return [
    { method: "PATCH", path: personalKeyPath, body: { label: "" }, attr: "label", code: "blank" },
    {
      method: "PATCH",
      path: personalKeyPath,
      body: { scopes: ["dashboard:fly"] },
      attr: "scopes.0",
      code: "invalid_choice",
    },
    { method: "PATCH", path: personalKeyPath, body: { expires_at: past }, attr: "expires_at", code: "invalid_input" },
    {
      method: "PATCH",
      path: personalKeyPath,
      body: { scoped_teams: ["x"] },
      attr: "scoped_teams.0",
      code: "invalid_choice",
    },
    {
      method: "POST",
      path: `${personalKeyPath}/roll`,
      body: { overlap_seconds: -1 },
      attr: "overlap_seconds",
      code: "min_value",
    },
    {
      method: "POST",
      path: `${personalKeyPath}/roll`,
      body: { overlap_seconds: 86_401 },
      attr: "overlap_seconds",
      code: "max_value",
    },
    { method: "POST", path: serviceKeysPath, body: { scopes: ["*"] }, attr: "label", code: "required" },
    { method: "POST", path: serviceKeysPath, body: { label: "x" }, attr: "scopes", code: "required" },
    {
      method: "POST",
      path: serviceKeysPath,
      body: { label: "x", scopes: ["*"], expires_at: "soon" },
      attr: "expires_at",
      code: "invalid_input",
    },
    { method: "PATCH", path: serviceKeyPath, body: { scoped_teams: "1" }, attr: "scoped_teams", code: "invalid_input" },
    {
      method: "POST",
      path: `${serviceKeyPath}/roll`,
      body: { overlap_seconds: 1.5 },
      attr: "overlap_seconds",
      code: "invalid_input",
    },
    {
      method: "PATCH",
      path: `${dashboardPath}/sharing`,
      body: { expires_at: "tomorrow" },
      attr: "expires_at",
      code: "invalid_input",
    },
    {
      method: "PATCH",
      path: `${dashboardPath}/sharing`,
      body: { enabled: "false" },
      attr: "enabled",
      code: "invalid_input",
    },
    {
      method: "POST",
      path: `${dashboardPath}/sharing/passwords`,
      body: { raw_password: "short" },
      attr: "raw_password",
      code: "min_length",
    },
    {
      method: "POST",
      path: `${dashboardPath}/sharing/passwords`,
      body: { note: "n".repeat(101) },
      attr: "note",
      code: "max_length",
    },
    {
      method: "POST",
      path: `${dashboardPath}/reorder_tiles`,
      body: { tile_order: [] },
      attr: "tile_order",
      code: "min_length",
    },
    {
      method: "POST",
      path: `${dashboardPath}/reorder_tiles`,
      body: { tile_order: ["a"] },
      attr: "tile_order.0",
      code: "invalid_input",
    },
    {
      method: "PATCH",
      path: organizationPath,
      body: { share_link_max_lifetime_days: 0 },
      attr: "share_link_max_lifetime_days",
      code: "min_value",
    },
    {
      method: "PATCH",
      path: organizationPath,
      body: { activity_log_retention_days: "90" },
      attr: "activity_log_retention_days",
      code: "invalid_input",
    },
  ];
}

describe("field errors of the newer writes", () => {
  it("name the field in `attr` with a 400, and change nothing", async () => {
    const { key, ...paths } = await fixtures();
    await markKeysUsed();
    const before = await databaseDigest();
    for (const { method, path, body, attr, code } of casesFor(paths)) {
      const response = await api(method, path, { key, body });
      const request = `${method} ${path} ${JSON.stringify(body)}`;
      const answer = { request, status: response.status, attr: response.body.attr, code: response.body.code };
      expect.soft(answer).toEqual({ request, status: 400, attr, code });
    }
    expect(await databaseDigest()).toEqual(before);
  });
});
