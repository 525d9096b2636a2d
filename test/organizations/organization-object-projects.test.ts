import { describe, expect, it } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { addMember, api, createApiKey, createProject, deleteProjectRow, setupOrganization } from "../support/harness";

/*
 * The organization object lists its projects (`teams`, `projects`) in its own read of the
 * projects table. Whatever the writes, each caller's object must list exactly what the
 * organization's projects list answers them.
 */

type Listed = { id: number; project_id?: number };

/**
 * The whole projects list, as the caller sees it: the SQL side of the visibility rules. A key
 * scoped to projects may not list an organization's: it lists its projects across organizations.
 */
async function listedProjects(organizationId: string, key: string, scopedToProjects = false) {
  const path = scopedToProjects
    ? "/api/projects?limit=1000"
    : `/api/organizations/${organizationId}/projects?limit=1000`;
  const response = await api("GET", path, { key });
  expect(response.status).toBe(200);
  return response.body.results as Listed[];
}

describe("the organization object's projects", () => {
  it("are what the projects list answers each caller, after writes of every kind", async () => {
    const team = await setupOrganization();
    const organizationId = team.organization.id;
    const projectsPath = `/api/organizations/${organizationId}/projects`;
    const create = async (body: Record<string, unknown>) =>
      (await api("POST", projectsPath, { key: team.key, body })).body as { id: number };
    const rule = (projectId: number, body: Record<string, unknown>) =>
      api("PUT", `/api/projects/${projectId}/access_controls`, { key: team.key, body });

    const plain = await addMember(organizationId, MembershipLevel.member);
    const granted = await addMember(organizationId, MembershipLevel.member);
    const refused = await addMember(organizationId, MembershipLevel.member);
    const admin = await addMember(organizationId, MembershipLevel.admin);

    const renamed = await create({ name: "Open" });
    const secret = await create({ name: "Secret", access_control: true });
    const reopened = await create({ name: "Reopened" });
    const hiddenByDefault = await create({ name: "Hidden by its default rule" });

    // Every listed field changes; privacy on and off again; rules of both kinds, one removed.
    const patched = await api("PATCH", `/api/projects/${renamed.id}`, {
      key: team.key,
      body: {
        name: "Renamed",
        timezone: "Europe/Paris",
        is_demo: true,
        completed_snippet_onboarding: true,
        has_completed_onboarding_for: { product_analytics: true },
      },
    });
    expect(patched.status).toBe(200);
    await api("PATCH", `/api/projects/${reopened.id}`, { key: team.key, body: { access_control: true } });
    await api("PATCH", `/api/projects/${reopened.id}`, { key: team.key, body: { access_control: false } });
    expect((await rule(secret.id, { access_level: "member", organization_member: granted.membership.id })).status).toBe(
      200,
    );
    expect((await rule(renamed.id, { access_level: "none", organization_member: refused.membership.id })).status).toBe(
      200,
    );
    expect((await rule(hiddenByDefault.id, { access_level: "none" })).status).toBe(200);
    expect(
      (await rule(hiddenByDefault.id, { access_level: "member", organization_member: plain.membership.id })).status,
    ).toBe(200);
    expect((await rule(reopened.id, { access_level: "none" })).status).toBe(200);
    expect((await rule(reopened.id, { access_level: null })).status).toBe(204);

    // Racing creates and PATCHes, then more projects.
    await Promise.all([
      ...[1, 2, 3].map((index) => create({ name: `Race ${index}`, access_control: index === 2 })),
      api("PATCH", `/api/projects/${secret.id}`, { key: team.key, body: { name: "Secret, renamed" } }),
      api("PATCH", `/api/projects/${reopened.id}`, { key: team.key, body: { timezone: "Asia/Tokyo" } }),
    ]);
    for (let index = 0; index < 130; index += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, offset) => createProject(organizationId, { name: `Filler ${index + offset}` })),
      );
    }
    // A project removed as the deletion job removes one, after the mark.
    await deleteProjectRow(reopened.id);

    const scoped = await createApiKey(team.owner, { scopedTeams: [renamed.id, secret.id] });
    const callers = {
      owner: team.key,
      admin: admin.key,
      plain: plain.key,
      granted: granted.key,
      refused: refused.key,
      scoped: scoped.value,
    };
    for (const [caller, key] of Object.entries(callers)) {
      const expected = await listedProjects(organizationId, key, caller === "scoped");
      const object = await api("GET", `/api/organizations/${organizationId}`, { key });
      const me = await api("GET", "/api/users/@me", { key });
      const listed = await api("GET", "/api/organizations?limit=100", { key });
      // A key scoped to projects reaches no organization route; it still sees `@me`.
      const reached =
        caller === "scoped"
          ? []
          : [object.body, listed.body.results.find((item: { id: string }) => item.id === organizationId)];
      expect([object.status, listed.status], caller).toEqual(caller === "scoped" ? [403, 403] : [200, 200]);
      for (const found of [me.body.organization, ...reached]) {
        expect(found.projects, caller).toEqual(expected);
        expect(found.teams, caller).toEqual(expected.map((project) => ({ ...project, project_id: project.id })));
      }
    }
    const ids = async (key: string) => (await listedProjects(organizationId, key)).map((project) => project.id);
    expect(await ids(team.key)).toHaveLength(4 + 3 + 130 + 1 - 1);
    expect(await ids(plain.key)).not.toContain(secret.id);
    expect(await ids(plain.key)).toContain(hiddenByDefault.id);
    expect(await ids(granted.key)).toContain(secret.id);
    expect(await ids(granted.key)).not.toContain(hiddenByDefault.id);
    expect(await ids(refused.key)).not.toContain(renamed.id);
    expect((await listedProjects(organizationId, scoped.value, true)).map((project) => project.id)).toEqual([
      renamed.id,
      secret.id,
    ]);
    const [first] = (await api("GET", `/api/organizations/${organizationId}`, { key: team.key })).body.projects.filter(
      (project: Listed) => project.id === renamed.id,
    );
    expect(first).toMatchObject({
      name: "Renamed",
      timezone: "Europe/Paris",
      is_demo: true,
      completed_snippet_onboarding: true,
    });
    expect(first.has_completed_onboarding_for).toEqual({ product_analytics: true });
  });
});
