import { expect, it } from "vitest";
import { createProject, setupOrganization } from "../test/support/harness";
import { measure, report } from "./report";

it("organizations and projects", async () => {
  const small = await setupOrganization();
  const large = await setupOrganization();
  for (let index = 1; index < 50; index += 1) await createProject(large.organization.id);

  const requests: [string, (o: typeof small) => string][] = [
    ["GET /api/users/@me", () => "/api/users/@me"],
    ["GET /api/organizations", () => "/api/organizations"],
    ["GET /api/organizations/:id", (o) => `/api/organizations/${o.organization.id}`],
    ["GET /api/organizations/:id/projects", (o) => `/api/organizations/${o.organization.id}/projects`],
    ["GET /api/organizations/:id/projects?limit=2", (o) => `/api/organizations/${o.organization.id}/projects?limit=2`],
    [
      "GET /api/organizations/:id/projects/:id",
      (o) => `/api/organizations/${o.organization.id}/projects/${o.project.id}`,
    ],
    ["GET /api/projects", () => "/api/projects"],
    ["GET /api/projects/:id", (o) => `/api/projects/${o.project.id}`],
    ["GET /api/environments/:id", (o) => `/api/environments/${o.project.id}`],
  ];
  const measurements = [];
  for (const [label, path] of requests) {
    measurements.push({
      label,
      small: await measure("GET", path(small), small.key),
      large: await measure("GET", path(large), large.key),
    });
  }
  report("Foundation reads (warm key cache)", [1, 50], measurements);
  for (const m of measurements) expect(m.large.queries, m.label).toBe(m.small.queries);
});
