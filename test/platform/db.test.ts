import { afterEach, describe, expect, it, vi } from "vitest";
import { onBoundStatements } from "../support/races";
import { api, setupOrganization } from "../support/harness";

describe("statements sent to D1", () => {
  afterEach(() => vi.restoreAllMocks());

  it("bind no LIMIT as a bare parameter, which SQLite would compile again each time it is bound", async () => {
    const { key, organization, project } = await setupOrganization();
    await api("POST", `/api/environments/${project.id}/dashboards/`, { key, body: { name: "Limits" } });
    const queries: string[] = [];
    onBoundStatements((query, _values, bound) => {
      queries.push(query);
      return bound;
    });
    for (const path of [
      "/api/users/@me",
      `/api/organizations/${organization.id}/projects/${project.id}`,
      `/api/organizations/${organization.id}/projects?limit=100`,
      `/api/environments/${project.id}/dashboards`,
      `/api/organizations/${organization.id}/members/`,
    ]) {
      expect((await api("GET", path, { key })).status).toBe(200);
    }
    expect(queries.filter((query) => /\blimit \+\?/.test(query)).length).toBeGreaterThan(0);
    expect(queries.filter((query) => /\blimit \?/i.test(query))).toEqual([]);
  });
});
