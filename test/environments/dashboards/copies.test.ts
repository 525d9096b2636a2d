import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import * as schema from "../../../src/db/schema";
import { NOT_ADMIN_IN_BOTH } from "../../../src/environments/dashboards/dashboard-copies";
import { MembershipLevel } from "../../../src/platform/levels";
import { activityEntry, keyIdOf } from "../../support/activity-log";
import { expectError } from "../../support/error-bodies";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  createProject,
  db,
  errorBody,
  ISO_TIMESTAMP,
  setupOrganization,
  userBasic,
} from "../../support/harness";
import { createDashboard, dashboardBody, dashboardsPath } from "../dashboard-fixtures";

const INVALID_SOURCE = errorBody("validation_error", "invalid_input", "Invalid value provided", "use_dashboard");
const NOT_ADMIN = errorBody("authentication_error", "permission_denied", NOT_ADMIN_IN_BOTH);

type Tile = {
  id: number;
  layouts: Record<string, unknown>;
  color: string | null;
  show_description: boolean | null;
  insight: { id: number; name: string; query: unknown } | null;
  text: { id: number; body: string } | null;
};

/** What a note standing in for an insight of another project says. */
const noteFor = (name: string) =>
  `**${name}**\n\nThis tile showed an insight of the project this dashboard was copied from. ` +
  "Insights belong to their project, so it was not copied; copy the dashboard with " +
  "`duplicate_tiles: true` to copy its insights too.";

/**
 * A dashboard from a template, with a note of its own placed and coloured, tags, a description,
 * filters, variables and a restyled insight tile, in `team`'s project.
 */
async function richDashboard(team: Awaited<ReturnType<typeof setupOrganization>>) {
  const source = await createDashboard(team.key, team.project.id, { use_template: "DEFAULT_APP" });
  const path = `${dashboardsPath(team.project.id)}/${source.id}`;
  const note = { sm: { x: 6, y: 20, w: 6, h: 2 }, xs: { x: 0, y: 30, w: 6, h: 2 } };
  const patched = await api("PATCH", path, {
    key: team.key,
    body: {
      name: "Growth",
      description: "Weekly review",
      tags: ["kpi", "growth"],
      tiles: [
        { text: { body: "Read me" }, layouts: note, color: "purple" },
        { id: source.tiles[0]!.id, color: "green", show_description: true },
      ],
    },
  });
  expect(patched.status).toBe(200);
  await db
    .update(schema.dashboards)
    .set({ filters: { date_from: "-30d" }, variables: { region: "eu" } })
    .where(eq(schema.dashboards.id, source.id));
  const read = await api("GET", path, { key: team.key });
  return { id: source.id, path, body: read.body as { tiles: Tile[] } & Record<string, unknown> };
}

/** The caller's organizations: `home` with a source dashboard, `away` where they are admin too. */
async function twoOrganizations(levelAway: number = MembershipLevel.admin) {
  const home = await setupOrganization();
  const away = await setupOrganization();
  await addMembership(away.organization.id, home.owner, levelAway);
  return { home, away, source: await richDashboard(home) };
}

describe("POST .../dashboards with use_dashboard of another project", () => {
  it("copies into another organization, keeping every layout and colour; insights become notes", async () => {
    const { home, away, source } = await twoOrganizations();
    const response = await api("POST", dashboardsPath(away.project.id), {
      key: home.key,
      body: { name: "Growth, copied", use_dashboard: source.id },
    });
    expect([response.status, response.headers.get("ETag")]).toEqual([201, `W/"${response.body.id}.1"`]);
    const tiles = source.body.tiles.map((tile) => ({
      id: expect.any(Number),
      layouts: tile.layouts,
      color: tile.color,
      insight: null,
      text: {
        id: expect.any(Number),
        body: tile.insight ? noteFor(tile.insight.name) : tile.text!.body,
        created_by: userBasic(home.owner),
        last_modified_by: userBasic(home.owner),
        last_modified_at: expect.stringMatching(ISO_TIMESTAMP),
      },
      order: expect.any(Number),
      show_description: tile.show_description,
      transparent_background: null,
      filters_overrides: null,
    }));
    expect(response.body).toEqual(
      dashboardBody(home.owner, {
        name: "Growth, copied",
        description: "Weekly review",
        tags: ["kpi", "growth"],
        filters: { date_from: "-30d" },
        variables: { region: "eu" },
        creation_mode: "duplicate",
        team_id: away.project.id,
        tiles: expect.arrayContaining(tiles),
      }),
    );
    expect(response.body.tiles).toHaveLength(source.body.tiles.length);
    // Every layout kept, tile for tile, in the same order.
    expect(response.body.tiles.map((tile: Tile) => tile.layouts)).toEqual(
      source.body.tiles.map((tile) => tile.layouts),
    );

    const versions = await api("GET", `${dashboardsPath(away.project.id)}/${response.body.id}/versions`, {
      key: home.key,
    });
    // The copy's history and log are read by the members of its organization: the other's ids stay out.
    expect(versions.body.results.map((version: { summary: string }) => version.summary)).toEqual([
      "Created as a copy of a dashboard of another project",
    ]);
    const log = await api("GET", `/api/organizations/${away.organization.id}/activity_log?limit=1`, { key: home.key });
    expect(log.body.results).toEqual([
      activityEntry(response, {
        organizationId: away.organization.id,
        projectId: away.project.id,
        user: home.owner,
        apiKeyId: await keyIdOf(home.owner),
        dashboardId: response.body.id,
        scope: "Dashboard",
        activity: "created",
        itemId: String(response.body.id),
        name: "Growth, copied",
        context: { source_dashboard_id: null, source_project_id: null },
      }),
    ]);
    const memberAway = await addMember(away.organization.id, MembershipLevel.member);
    const projectLog = await api("GET", `/api/projects/${away.project.id}/activity_log?limit=1`, {
      key: memberAway.key,
    });
    expect(projectLog.body.results[0].detail.context).toEqual({ source_dashboard_id: null, source_project_id: null });
    // The source is as it was.
    const sourceNow = await api("GET", source.path, { key: home.key });
    expect(sourceNow.body.tiles).toEqual(source.body.tiles);
    // One round trip reads the project and the source, one batch writes the copy and reads it back.
    expect(response.cost.queries).toBe(2);
  });

  it("copies the insights too with duplicate_tiles, into the target project", async () => {
    const { home, away, source } = await twoOrganizations();
    const response = await api("POST", dashboardsPath(away.project.id), {
      key: home.key,
      body: { use_dashboard: source.id, duplicate_tiles: true, tags: ["mine"] },
    });
    expect(response.status).toBe(201);
    expect(response.body.tags).toEqual(["mine"]);
    const copied = response.body.tiles as Tile[];
    expect(copied.map((tile) => [tile.layouts, tile.color, tile.insight?.query ?? tile.text?.body])).toEqual(
      source.body.tiles.map((tile) => [tile.layouts, tile.color, tile.insight?.query ?? tile.text?.body]),
    );
    const insightIds = copied.flatMap((tile) => (tile.insight ? [tile.insight.id] : []));
    expect(insightIds).toHaveLength(4);
    const stored = await db.select().from(schema.insights).where(eq(schema.insights.environmentId, away.project.id));
    expect(stored.map((insight) => insight.id).sort()).toEqual([...insightIds].sort());
  });

  it("copies between two projects of one organization for an admin", async () => {
    const team = await setupOrganization();
    const source = await richDashboard(team);
    const admin = await addMember(team.organization.id, MembershipLevel.admin);
    const other = await createProject(team.organization.id);
    const response = await api("POST", dashboardsPath(other.id, "projects"), {
      key: admin.key,
      body: { use_dashboard: source.id },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      team_id: other.id,
      description: "Weekly review",
      creation_mode: "duplicate",
    });
    expect(response.body.tiles.map((tile: Tile) => tile.layouts)).toEqual(
      source.body.tiles.map((tile) => tile.layouts),
    );
    // Within one organization too, the copy's entry and first version name no source: the target
    // project's readers may not see the source's project.
    const log = await api("GET", `/api/projects/${other.id}/activity_log?limit=1`, { key: admin.key });
    expect(log.body.results[0].detail.context).toEqual({ source_dashboard_id: null, source_project_id: null });
    const versions = await api("GET", `${dashboardsPath(other.id)}/${response.body.id}/versions`, { key: admin.key });
    expect(versions.body.results[0].summary).toBe("Created as a copy of a dashboard of another project");
  });

  it("answers 403 to a caller who sees the source but is not admin in both organizations", async () => {
    const team = await setupOrganization();
    const source = await richDashboard(team);
    const member = await addMember(team.organization.id, MembershipLevel.member);
    const other = await createProject(team.organization.id);
    expectError(
      await api("POST", dashboardsPath(other.id), { key: member.key, body: { use_dashboard: source.id } }),
      403,
      NOT_ADMIN,
    );
    // The same member copies within the source's own project: PostHog's copy, for any member who sees it.
    const within = await api("POST", dashboardsPath(team.project.id), {
      key: member.key,
      body: { use_dashboard: source.id },
    });
    expect(within.status).toBe(201);

    const memberAway = await twoOrganizations(MembershipLevel.member);
    const adminAwayOnly = await setupOrganization();
    const sourceAsMember = await setupOrganization();
    await addMembership(sourceAsMember.organization.id, adminAwayOnly.owner, MembershipLevel.member);
    const visibleAsMember = await richDashboard(sourceAsMember);
    const refusals = [
      { key: memberAway.home.key, project: memberAway.away.project.id, source: memberAway.source.id },
      { key: adminAwayOnly.key, project: adminAwayOnly.project.id, source: visibleAsMember.id },
    ];
    for (const refusal of refusals) {
      const response = await api("POST", dashboardsPath(refusal.project), {
        key: refusal.key,
        body: { use_dashboard: refusal.source },
      });
      expectError(response, 403, NOT_ADMIN);
      const listed = await api("GET", dashboardsPath(refusal.project), { key: refusal.key });
      expect(listed.body.count).toBe(0);
    }
    expect((await api("GET", dashboardsPath(other.id), { key: team.key })).body.count).toBe(0);
  });

  it("refuses a source the caller cannot see exactly as an unknown one: nothing tells them apart", async () => {
    const { home, away, source } = await twoOrganizations();
    const stranger = await setupOrganization();
    const scopedKey = await createApiKey(home.owner, { scopedTeams: [away.project.id] });
    const privateProject = await createProject(home.organization.id, { access_control: true });
    const secret = await createDashboard(home.key, privateProject.id, { name: "Secret" });
    const member = await addMember(home.organization.id, MembershipLevel.member);
    const deleted = await createDashboard(home.key, home.project.id, { name: "Gone" });
    await api("PATCH", `${dashboardsPath(home.project.id)}/${deleted.id}`, { key: home.key, body: { deleted: true } });
    const attempts = [
      { key: stranger.key, project: stranger.project.id, source: source.id },
      { key: scopedKey.value, project: away.project.id, source: source.id },
      { key: member.key, project: home.project.id, source: secret.id },
      { key: home.key, project: away.project.id, source: deleted.id },
      { key: home.key, project: away.project.id, source: 999999999 },
    ];
    for (const attempt of attempts) {
      const response = await api("POST", dashboardsPath(attempt.project), {
        key: attempt.key,
        body: { use_dashboard: attempt.source },
      });
      expectError(response, 400, INVALID_SOURCE);
    }
    expect((await api("GET", dashboardsPath(away.project.id), { key: home.key })).body.count).toBe(0);
    expect((await api("GET", dashboardsPath(stranger.project.id), { key: stranger.key })).body.count).toBe(0);
  });
});
