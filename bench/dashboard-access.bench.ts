import { expect, it } from "vitest";
import { MembershipLevel } from "../src/platform/levels";
import { createDashboard, dashboardsPath } from "../test/environments/dashboard-fixtures";
import { addMember, api, setupOrganization } from "../test/support/harness";
import { measure, report } from "./report";

/** An organization with a level-37 dashboard and `size` members, each a collaborator with a rule. */
async function setupDashboard(size: number) {
  const team = await setupOrganization();
  const dashboard = await createDashboard(team.key, team.project.id, { name: "Board", restriction_level: 37 });
  const path = `${dashboardsPath(team.project.id)}/${dashboard.id}`;
  for (let index = 0; index < size; index += 1) {
    const member = await addMember(team.organization.id, MembershipLevel.member);
    await api("POST", `${path}/collaborators`, { key: team.key, body: { user_uuid: member.user.uuid, level: 37 } });
    await api("PUT", `${path}/access_controls`, {
      key: team.key,
      body: { access_level: "viewer", organization_member: member.membership.id },
    });
    await createDashboard(team.key, team.project.id, { name: `D${index}` });
  }
  await api("GET", `${path}/sharing`, { key: team.key });
  return { ...team, path };
}

it("collaborators, sharing and access controls", async () => {
  const small = await setupDashboard(1);
  const large = await setupDashboard(50);
  const both = async (label: string, suffix: (team: typeof small) => string) => ({
    label,
    small: await measure("GET", suffix(small), small.key),
    large: await measure("GET", suffix(large), large.key),
  });
  const measurements = [
    await both("GET .../collaborators (1 vs 50)", (team) => `${team.path}/collaborators`),
    await both("GET .../dashboards/:id/access_controls (1 vs 50)", (team) => `${team.path}/access_controls`),
    await both("GET .../sharing", (team) => `${team.path}/sharing`),
    await both("GET .../dashboards, 1 vs 50 rules and dashboards", (team) => dashboardsPath(team.project.id)),
  ];
  report("Collaborators, sharing, access controls (warm key cache)", [1, 50], measurements);
  for (const m of measurements) expect(m.large.queries, m.label).toBe(m.small.queries);
});
