import { expect, it } from "vitest";
import { createDashboard, dashboardsPath } from "../test/environments/dashboard-fixtures";
import { api, setupOrganization } from "../test/support/harness";
import { measure, report } from "./report";

const notes = (count: number) =>
  Array.from({ length: count }, (_, index) => ({
    text: { body: `note ${index}` },
    layouts: { sm: { x: 0, y: index, w: 6, h: 2 } },
  }));

it("dashboards", async () => {
  const small = await setupOrganization();
  const large = await setupOrganization();
  const smallDashboard = await createDashboard(small.key, small.project.id, { name: "Small" });
  await api("PATCH", `${dashboardsPath(small.project.id)}/${smallDashboard.id}`, {
    key: small.key,
    body: { tiles: notes(1) },
  });
  const largeDashboard = await createDashboard(large.key, large.project.id, {
    name: "Large",
    use_template: "DEFAULT_APP",
  });
  await api("PATCH", `${dashboardsPath(large.project.id)}/${largeDashboard.id}`, {
    key: large.key,
    body: { tiles: notes(35) },
  });
  for (let index = 1; index < 50; index += 1) await createDashboard(large.key, large.project.id, { name: `D${index}` });

  const measurements = [
    {
      label: "GET .../dashboards/:id (1 vs 40 tiles)",
      small: await measure("GET", `${dashboardsPath(small.project.id)}/${smallDashboard.id}`, small.key),
      large: await measure("GET", `${dashboardsPath(large.project.id)}/${largeDashboard.id}`, large.key),
    },
    {
      label: "GET .../dashboards (1 vs 50 dashboards)",
      small: await measure("GET", dashboardsPath(small.project.id), small.key),
      large: await measure("GET", dashboardsPath(large.project.id), large.key),
    },
    {
      label: "GET .../dashboards?limit=2 (1 vs 50)",
      small: await measure("GET", `${dashboardsPath(small.project.id)}?limit=2`, small.key),
      large: await measure("GET", `${dashboardsPath(large.project.id)}?limit=2`, large.key),
    },
  ];
  report("Environment dashboards (warm key cache)", [1, 50], measurements);
  for (const m of measurements) expect(m.large.queries, m.label).toBe(m.small.queries);
});
