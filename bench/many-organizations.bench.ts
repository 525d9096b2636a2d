import { expect, it } from "vitest";
import { api, setupOrganization } from "../test/support/harness";
import { emptySeedRows, insertSeedRows, seedMembershipsOf, seedOtherOrganizations } from "../test/support/seed";
import { measure, report, type Measurement } from "./report";

/** A user in one organization, and one in 1,001: what their organizations cost to read, per organization shown. */
const MANY = 1000;

it("a user's organizations: 1 vs 1,001", async () => {
  const small = await setupOrganization();
  const large = await setupOrganization();
  const rows = emptySeedRows();
  seedOtherOrganizations(rows, MANY);
  seedMembershipsOf(
    rows,
    large.owner.id,
    rows.organizations.map((organization) => organization.id),
  );
  await insertSeedRows(rows);

  const both = async (label: string, path: string): Promise<Measurement> => ({
    label,
    small: await measure("GET", path, small.key),
    large: await measure("GET", path, large.key),
  });
  const previousOfLast = async (key: string) => {
    const { body } = await api("GET", "/api/organizations?limit=10&offset=991", { key });
    const url = body.previous ? new URL(body.previous) : undefined;
    return measure("GET", url ? `${url.pathname}${url.search}` : "/api/organizations?limit=10", key);
  };
  const measurements = [
    await both("GET /api/organizations (100 a page)", "/api/organizations"),
    await both("GET /api/organizations?limit=10", "/api/organizations?limit=10"),
    await both("GET /api/organizations?limit=10&offset=991", "/api/organizations?limit=10&offset=991"),
    {
      label: "GET /api/organizations page before last via previous",
      small: await previousOfLast(small.key),
      large: await previousOfLast(large.key),
    },
    await both("GET /api/users/@me", "/api/users/@me"),
    await both("GET /api/organizations/@current", "/api/organizations/@current"),
  ];
  report("A user's organizations (each with one project)", [1, MANY + 1], measurements);
  const me = await api("GET", "/api/users/@me", { key: large.key });
  expect(me.body.organizations).toHaveLength(MANY + 1);
  for (const m of measurements) expect(m.large.queries, m.label).toBe(m.small.queries);
});
