import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import * as schema from "../../src/db/schema";
import { failsOnStaleVersion, raisedVersion } from "../../src/platform/conditional-requests";
import { MembershipLevel } from "../../src/platform/levels";
import { expectError, INSUFFICIENT_LEVEL, NOT_FOUND } from "../support/error-bodies";
import { addMember, addMembership, api, createProject, db, errorBody, setupOrganization } from "../support/harness";
import { expectedOrganization } from "../support/organizations";
import { expectedProject, PROJECT_PATHS } from "../support/projects";
import { createDashboard, dashboardsPath } from "../environments/dashboard-fixtures";

const PRECONDITION_FAILED = errorBody(
  "invalid_request",
  "precondition_failed",
  "The resource has changed since the version If-Match names.",
);

type ProjectRow = Awaited<ReturnType<typeof createProject>>;

/** A resource's entity tag: its id and version, weak. */
const tag = (resource: { id: string | number }, version: number) => `W/"${resource.id}.${version}"`;
const ifMatch = (resource: { id: string | number }, version: number) => ({ "If-Match": tag(resource, version) });

/** The organization's activity-log entries, counted in D1. */
const activityCount = (organizationId: string) =>
  db.$count(schema.activityLog, eq(schema.activityLog.organizationId, organizationId));

describe.each(PROJECT_PATHS)("conditional requests on a project, through the $tree path", ({ path }) => {
  const whole = (project: ProjectRow, name: string) => ({
    ...expectedProject({ id: project.id, organization: project.organizationId, name, level: 15 }),
    uuid: project.uuid,
    api_token: project.apiToken,
  });

  it("tags the project with its version and answers If-None-Match with 304 while it holds", async () => {
    const { key, project } = await setupOrganization();
    const read = await api("GET", path(project), { key });
    expect([read.status, read.headers.get("ETag")]).toEqual([200, tag(project, 1)]);
    expect(read.body).toEqual(whole(project, "Default project"));
    const fresh = await api("GET", path(project), { key, headers: { "If-None-Match": tag(project, 1) } });
    expect([fresh.status, fresh.text, fresh.headers.get("ETag")]).toEqual([304, "", tag(project, 1)]);
    expect((await api("GET", path(project), { key, headers: { "If-None-Match": "*" } })).status).toBe(304);
    const other = await api("GET", path(project), { key, headers: { "If-None-Match": '"7", W/"8"' } });
    expect(other.status).toBe(200);

    const patched = await api("PATCH", path(project), { key, body: { name: "Renamed" } });
    expect([patched.status, patched.headers.get("ETag")]).toEqual([200, tag(project, 2)]);
    const stale = await api("GET", path(project), { key, headers: { "If-None-Match": tag(project, 1) } });
    expect([stale.status, stale.headers.get("ETag"), stale.body]).toEqual([
      200,
      tag(project, 2),
      whole(project, "Renamed"),
    ]);
  });

  it("writes with If-Match naming the version, and refuses another with 412, changing nothing", async () => {
    const { key, organization, project } = await setupOrganization();
    const patched = await api("PATCH", path(project), { key, headers: ifMatch(project, 1), body: { name: "First" } });
    expect([patched.status, patched.headers.get("ETag"), patched.body]).toEqual([
      200,
      tag(project, 2),
      whole(project, "First"),
    ]);
    const before = (await api("GET", path(project), { key })).body;
    const entries = await activityCount(organization.id);

    for (const method of ["PATCH", "PUT"]) {
      const refused = await api(method, path(project), { key, headers: ifMatch(project, 1), body: { name: "Second" } });
      expectError(refused, 412, PRECONDITION_FAILED);
    }
    expectError(await api("DELETE", path(project), { key, headers: ifMatch(project, 1) }), 412, PRECONDITION_FAILED);
    const garbled = await api("PATCH", path(project), { key, headers: { "If-Match": "two" }, body: { name: "X" } });
    expectError(garbled, 412, PRECONDITION_FAILED);

    const after = await api("GET", path(project), { key });
    expect([after.headers.get("ETag"), after.body]).toEqual([tag(project, 2), before]);
    expect(await activityCount(organization.id)).toBe(entries);

    const put = await api("PUT", path(project), {
      key,
      headers: { "If-Match": `"${project.id}.2"` },
      body: { name: "Third" },
    });
    expect([put.status, put.headers.get("ETag"), put.body.name]).toEqual([200, tag(project, 3), "Third"]);
    const any = await api("PATCH", path(project), { key, headers: { "If-Match": "*" }, body: { is_demo: true } });
    expect([any.status, any.headers.get("ETag")]).toEqual([200, tag(project, 4)]);
    expect((await api("DELETE", path(project), { key, headers: ifMatch(project, 4) })).status).toBe(204);
    expectError(await api("GET", path(project), { key }), 404, NOT_FOUND);
  });

  it("keeps a private project private and its project whole when a stale DELETE is refused", async () => {
    const { key, organization } = await setupOrganization();
    const project = await createProject(organization.id, { name: "Secret", access_control: true });
    await api("PATCH", path(project), { key, body: { timezone: "Europe/Paris" } });
    expectError(await api("DELETE", path(project), { key, headers: ifMatch(project, 1) }), 412, PRECONDITION_FAILED);
    const member = await addMember(organization.id, MembershipLevel.member);
    // Still private: the refused batch removed no rule.
    expectError(await api("GET", path(project), { key: member.key }), 404, NOT_FOUND);
    const read = await api("GET", path(project), { key });
    expect([read.status, read.headers.get("ETag"), read.body.access_control]).toEqual([200, tag(project, 2), true]);
  });

  it("answers 404 and 403 before any precondition: If-Match reveals nothing, and lifts no level", async () => {
    const { key, organization, project } = await setupOrganization();
    const stranger = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    for (const method of ["PATCH", "DELETE"]) {
      const body = method === "PATCH" ? { name: "Mine" } : undefined;
      const foreign = await api(method, path(project), { key: stranger.key, headers: ifMatch(project, 1), body });
      expectError(foreign, 404, NOT_FOUND);
      const refused = await api(method, path(project), { key: member.key, headers: ifMatch(project, 1), body });
      expectError(refused, 403, INSUFFICIENT_LEVEL);
    }
    expectError(
      await api("GET", path(project), { key: stranger.key, headers: { "If-None-Match": "*" } }),
      404,
      NOT_FOUND,
    );
    const read = await api("GET", path(project), { key });
    expect([read.headers.get("ETag"), read.body.name]).toEqual([tag(project, 1), "Default project"]);
  });
});

describe("concurrent writers of a project", () => {
  it("lets exactly one of two writers holding the same version win: the write itself checks it", async () => {
    const { key, organization, project } = await setupOrganization();
    const path = `/api/projects/${project.id}`;
    for (const version of [1, 2, 3, 4]) {
      const entries = await activityCount(organization.id);
      const responses = await Promise.all(
        [`One ${version}`, `Two ${version}`].map((name) =>
          api("PATCH", path, {
            key,
            headers: { "If-Match": `"${project.id}.${version}"` },
            body: { name, is_demo: version % 2 === 0 },
          }),
        ),
      );
      expect(responses.map((response) => response.status).sort()).toEqual([200, 412]);
      const winner = responses.find((response) => response.status === 200)!;
      const loser = responses.find((response) => response.status === 412)!;
      expect(loser.body).toEqual(PRECONDITION_FAILED);
      const after = await api("GET", path, { key });
      expect([after.headers.get("ETag"), after.body.name]).toEqual([tag(project, version + 1), winner.body.name]);
      const environment = await api("GET", `/api/environments/${project.id}`, { key });
      expect(environment.body.name).toBe(winner.body.name);
      // The loser's entry went with its batch.
      expect(await activityCount(organization.id)).toBe(entries + 1);
    }
  });

  it("raises the version when the project's privacy changes through its access controls", async () => {
    const { key, project } = await setupOrganization();
    const path = `/api/environments/${project.id}`;
    const ruled = await api("PUT", `${path}/access_controls`, { key, body: { access_level: "none" } });
    expect(ruled.status).toBe(200);
    const read = await api("GET", path, { key, headers: { "If-None-Match": tag(project, 1) } });
    expect([read.status, read.headers.get("ETag"), read.body.access_control]).toEqual([200, tag(project, 2), true]);
    expectError(
      await api("PATCH", path, { key, headers: ifMatch(project, 1), body: { name: "X" } }),
      412,
      PRECONDITION_FAILED,
    );
  });

  it("tags a created project with its first version", async () => {
    const { key, organization } = await setupOrganization();
    const created = await api("POST", `/api/organizations/${organization.id}/projects`, { key, body: { name: "New" } });
    expect([created.status, created.headers.get("ETag")]).toEqual([201, tag(created.body, 1)]);
  });
});

describe("conditional requests on an organization", () => {
  it("tags the organization with its version and answers If-None-Match with 304 while it holds", async () => {
    const { key, organization, project } = await setupOrganization();
    const path = `/api/organizations/${organization.id}`;
    const read = await api("GET", path, { key });
    expect([read.status, read.headers.get("ETag")]).toEqual([200, tag(organization, 1)]);
    expect(read.body).toEqual(expectedOrganization(organization, { level: 15, projects: [project] }));
    const fresh = await api("GET", path, { key, headers: { "If-None-Match": tag(organization, 1) } });
    expect([fresh.status, fresh.text, fresh.headers.get("ETag")]).toEqual([304, "", tag(organization, 1)]);
    const current = await api("GET", "/api/organizations/@current", {
      key,
      headers: { "If-None-Match": `"${organization.id}.1"` },
    });
    expect(current.status).toBe(304);

    const patched = await api("PATCH", path, { key, headers: ifMatch(organization, 1), body: { name: "Renamed" } });
    expect([patched.status, patched.headers.get("ETag")]).toEqual([200, tag(organization, 2)]);
    expect(patched.body).toEqual(
      expectedOrganization(
        { ...organization, name: "Renamed", updatedAt: undefined },
        { level: 15, projects: [project] },
      ),
    );
    const stale = await api("GET", path, { key, headers: { "If-None-Match": tag(organization, 1) } });
    expect([stale.status, stale.headers.get("ETag"), stale.body.name]).toEqual([200, tag(organization, 2), "Renamed"]);
  });

  it("refuses PATCH, PUT and DELETE with a stale If-Match with 412, changing and recording nothing", async () => {
    const { key, organization } = await setupOrganization();
    const path = `/api/organizations/${organization.id}`;
    await api("PATCH", path, { key, body: { members_can_invite: false } });
    const before = (await api("GET", path, { key })).body;
    const entries = await activityCount(organization.id);
    const cases: [string, unknown][] = [
      ["PATCH", { name: "Stale" }],
      ["PUT", { name: "Stale", members_can_invite: true }],
      ["DELETE", undefined],
    ];
    for (const [method, body] of cases) {
      expectError(await api(method, path, { key, headers: ifMatch(organization, 1), body }), 412, PRECONDITION_FAILED);
    }
    const after = await api("GET", path, { key });
    expect([after.headers.get("ETag"), after.body]).toEqual([tag(organization, 2), before]);
    expect(await activityCount(organization.id)).toBe(entries);

    const put = await api("PUT", path, { key, headers: ifMatch(organization, 2), body: { name: "Fresh" } });
    expect([put.status, put.headers.get("ETag"), put.body.name]).toEqual([200, tag(organization, 3), "Fresh"]);
    expect((await api("DELETE", path, { key, headers: ifMatch(organization, 3) })).status).toBe(204);
    expectError(await api("GET", path, { key }), 404, NOT_FOUND);
  });

  it("lets exactly one of two writers holding the same version win", async () => {
    const { key, organization } = await setupOrganization();
    const path = `/api/organizations/${organization.id}`;
    for (const version of [1, 2, 3]) {
      const entries = await activityCount(organization.id);
      const responses = await Promise.all(
        [`One ${version}`, `Two ${version}`].map((name) =>
          api("PATCH", path, { key, headers: ifMatch(organization, version), body: { name } }),
        ),
      );
      expect(responses.map((response) => response.status).sort()).toEqual([200, 412]);
      const winner = responses.find((response) => response.status === 200)!;
      const after = await api("GET", path, { key });
      expect([after.headers.get("ETag"), after.body.name]).toEqual([tag(organization, version + 1), winner.body.name]);
      expect(await activityCount(organization.id)).toBe(entries + 1);
    }
  });

  it("answers 404 and 403 before any precondition", async () => {
    const { key, organization } = await setupOrganization();
    const stranger = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const member = await addMember(organization.id, MembershipLevel.member);
    const path = `/api/organizations/${organization.id}`;
    const foreign = await api("PATCH", path, {
      key: stranger.key,
      headers: ifMatch(organization, 1),
      body: { name: "Mine" },
    });
    expectError(foreign, 404, NOT_FOUND);
    expect(
      (await api("PATCH", path, { key: member.key, headers: ifMatch(organization, 1), body: { name: "Mine" } })).status,
    ).toBe(403);
    // Deleting needs the owner, whatever the tag.
    expect((await api("DELETE", path, { key: admin.key, headers: ifMatch(organization, 1) })).status).toBe(403);
    const read = await api("GET", path, { key });
    expect([read.headers.get("ETag"), read.body.name]).toEqual([tag(organization, 1), organization.name]);
  });

  it("tags a created organization with its first version", async () => {
    const { key } = await setupOrganization();
    const created = await api("POST", "/api/organizations", { key, body: { name: "Tagged" } });
    expect([created.status, created.headers.get("ETag")]).toEqual([201, tag(created.body, 1)]);
  });
});

describe("conditional requests on @current, once it names another organization or project", () => {
  it("refuses a DELETE whose If-Match was read while @current named another organization", async () => {
    const first = await setupOrganization();
    const second = await setupOrganization();
    await addMembership(second.organization.id, first.owner, MembershipLevel.owner);
    const key = first.key;
    const read = await api("GET", "/api/organizations/@current", { key });
    expect([read.body.id, read.headers.get("ETag")]).toEqual([first.organization.id, tag(first.organization, 1)]);
    // Another client of the same user moves @current meanwhile.
    await api("PATCH", "/api/users/@me", { key, body: { set_current_organization: second.organization.id } });

    const headers = { "If-Match": read.headers.get("ETag")! };
    expectError(await api("DELETE", "/api/organizations/@current", { key, headers }), 412, PRECONDITION_FAILED);
    expect((await api("GET", `/api/organizations/${second.organization.id}`, { key: second.key })).status).toBe(200);
    // Revalidating the copy of the first: 200 with the second, not 304.
    const revalidated = await api("GET", "/api/organizations/@current", {
      key,
      headers: { "If-None-Match": read.headers.get("ETag")! },
    });
    expect([revalidated.status, revalidated.body.id]).toEqual([200, second.organization.id]);
    expect(revalidated.headers.get("ETag")).toBe(tag(second.organization, 1));
  });

  it("refuses a DELETE whose If-Match was read while @current named another project", async () => {
    const { key, organization, project } = await setupOrganization();
    const other = await createProject(organization.id, { name: "Production" });
    const read = await api("GET", "/api/projects/@current", { key });
    expect([read.body.id, read.headers.get("ETag")]).toEqual([project.id, tag(project, 1)]);
    await api("PATCH", "/api/users/@me", { key, body: { set_current_team: other.id } });

    const headers = { "If-Match": read.headers.get("ETag")! };
    expectError(await api("DELETE", "/api/projects/@current", { key, headers }), 412, PRECONDITION_FAILED);
    const still = await api("GET", `/api/projects/${other.id}`, { key });
    expect([still.status, still.body.name]).toEqual([200, "Production"]);
  });

  it("refuses a tag of the old form, the version alone", async () => {
    const { key, project } = await setupOrganization();
    const path = `/api/projects/${project.id}`;
    expectError(
      await api("PATCH", path, { key, headers: { "If-Match": 'W/"1"' }, body: { name: "X" } }),
      412,
      PRECONDITION_FAILED,
    );
    expect((await api("GET", path, { key, headers: { "If-None-Match": 'W/"1"' } })).status).toBe(200);
  });
});

describe("a dashboard write with an invalid body and a stale If-Match", () => {
  /** A dashboard at version 2, and the tag of its version 1. */
  async function staleDashboard(body: Record<string, unknown> = { name: "Board" }) {
    const team = await setupOrganization();
    const dashboard = await createDashboard(team.key, team.project.id, body);
    const path = `${dashboardsPath(team.project.id)}/${dashboard.id}`;
    const changed = await api("PATCH", path, { key: team.key, body: { description: "moved on" } });
    expect(changed.headers.get("ETag")).toBe(tag(dashboard, 2));
    return { ...team, dashboard, path, stale: ifMatch(dashboard, 1) };
  }

  it("answers 400 naming the tile, not 412: a body that is invalid is 400 whatever the tag", async () => {
    const { key, path, stale } = await staleDashboard();
    const unknownTile = await api("PATCH", path, { key, headers: stale, body: { tiles: [{ id: 999_999_999 }] } });
    expectError(
      unknownTile,
      400,
      errorBody("validation_error", "invalid_input", "Tile 999999999 is not on this dashboard.", "tiles.0.id"),
    );
    const noText = await api("PATCH", path, { key, headers: stale, body: { tiles: [{ color: "red" }] } });
    expect([noText.status, noText.body.code, noText.body.attr]).toEqual([400, "required", "tiles.0.text"]);
  });

  it("checks a tile change that reads as no change too: another tile's text id is 400, tagged or not", async () => {
    const { key, path, stale } = await staleDashboard();
    const withTexts = await api("PATCH", path, {
      key,
      body: { tiles: [{ text: { body: "first" } }, { text: { body: "second" } }] },
    });
    const [first, second] = withTexts.body.tiles as { id: number; text: { id: number } }[];
    const body = { text: { id: second!.text.id, body: "first" } };
    const notItsText = errorBody(
      "validation_error",
      "invalid_input",
      `Text ${second!.text.id} is not this tile's text.`,
      "text.id",
    );
    expectError(await api("PATCH", `${path}/tiles/${first!.id}`, { key, body }), 400, notItsText);
    expectError(await api("PATCH", `${path}/tiles/${first!.id}`, { key, body, headers: stale }), 400, notItsText);
  });

  it("answers a tile's own PATCH giving an insight tile a text body with 400, not 412", async () => {
    const { key, dashboard, path, stale } = await staleDashboard({ use_template: "DEFAULT_APP" });
    const insightTile = dashboard.tiles.find((tile) => tile.insight !== null)!;
    const response = await api("PATCH", `${path}/tiles/${insightTile.id}`, {
      key,
      headers: stale,
      body: { text: { body: "not for an insight" } },
    });
    expectError(
      response,
      400,
      errorBody("validation_error", "invalid_input", "Only a text tile has a text body.", "text"),
    );
  });
});

describe("raisedVersion", () => {
  it("fails the whole batch when the stored version is not the expected one, whatever the request read", async () => {
    const { organization, project } = await setupOrganization();
    const rename = (expected: number) =>
      db.update(schema.projects).set({ name: "Raced", version: raisedVersion(schema.projects.version, expected) });
    const write = db.batch([
      db.update(schema.organizations).set({ name: "Raced" }).where(eq(schema.organizations.id, organization.id)),
      rename(7).where(eq(schema.projects.id, project.id)),
    ]);
    await expect(failsOnStaleVersion(schema.projects.version, write)).rejects.toMatchObject({ status: 412 });
    const [organizationRow] = await db
      .select()
      .from(schema.organizations)
      .where(eq(schema.organizations.id, organization.id));
    const [projectRow] = await db.select().from(schema.projects).where(eq(schema.projects.id, project.id));
    expect([organizationRow!.name, projectRow!.name, projectRow!.version]).toEqual([
      organization.name,
      "Default project",
      1,
    ]);
    await failsOnStaleVersion(schema.projects.version, rename(1).where(eq(schema.projects.id, project.id)));
    const [renamed] = await db.select().from(schema.projects).where(eq(schema.projects.id, project.id));
    expect([renamed!.name, renamed!.version]).toEqual(["Raced", 2]);
  });
});

describe("what HTTP caches may keep of an authenticated answer", () => {
  /** The header's comma-separated values, lower-cased. */
  const values = (headers: Headers, name: string) =>
    (headers.get(name) ?? "")
      .toLowerCase()
      .split(/\s*,\s*/)
      .filter(Boolean);

  it("is the caller's alone: private, revalidated per key; no browser hands one key's answer to another", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const path = `/api/projects/${project.id}`;
    const owners = await api("GET", path, { key, headers: { Origin: "https://app.example.com" } });
    expect(owners.body.effective_membership_level).toBe(MembershipLevel.owner);
    // The tag leaves out the caller's own fields: a 304 to another key is right only because no
    // cache may answer that key from this entry (`Vary: Authorization`).
    const revalidated = await api("GET", path, {
      key: member.key,
      headers: { "If-None-Match": owners.headers.get("ETag")! },
    });
    expect(revalidated.status).toBe(304);
    for (const answer of [owners, revalidated]) {
      expect(values(answer.headers, "Cache-Control")).toEqual(["private", "no-cache"]);
      expect(values(answer.headers, "Vary")).toContain("authorization");
    }
    // A key in the query string: no shared cache keeps the answer either.
    const byQuery = await api("GET", `/api/organizations/${organization.id}/members?personal_api_key=${key}`);
    expect(byQuery.status).toBe(200);
    expect(values(byQuery.headers, "Cache-Control")).toEqual(["private", "no-cache"]);
    // An answer holding a secret keeps its stricter rule.
    const created = await api("POST", "/api/personal_api_keys", { key, body: { label: "k", scopes: ["*"] } });
    expect(created.status).toBe(201);
    expect(values(created.headers, "Cache-Control")).toEqual(["no-store"]);
  });
});
