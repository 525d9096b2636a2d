import { describe, expect, it, vi } from "vitest";
import { countBytesRead } from "../support/d1-limits";
import { MembershipLevel } from "../../src/platform/levels";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  createProject,
  deleteProjectRow,
  errorBody,
  nextLink,
  previousLink,
  setupOrganization,
} from "../support/harness";
import { expectError, INSUFFICIENT_LEVEL, missingScope, NOT_AUTHENTICATED } from "../support/error-bodies";
import { expectedProject, expectedProjectListItem } from "../support/projects";

describe("GET /api/projects", () => {
  it("lists the projects the caller can see across organizations", async () => {
    const first = await setupOrganization();
    const second = await setupOrganization();
    await addMembership(second.organization.id, first.owner, 1);
    const unrelated = await setupOrganization();

    const response = await api("GET", "/api/projects", { key: first.key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      count: 2,
      next: null,
      previous: null,
      results: [expectedProjectListItem(first.project), expectedProjectListItem(second.project)],
    });
    expect(response.body.results.map((item: { id: number }) => item.id)).not.toContain(unrelated.project.id);
  });

  it("counts what the caller sees: projects where admin, visible ones elsewhere, within the key's scope", async () => {
    const first = await setupOrganization();
    const second = await setupOrganization();
    const member = await addMember(second.organization.id, MembershipLevel.member);
    await addMembership(first.organization.id, member.user, MembershipLevel.admin);
    const hiddenFromMember = await createProject(second.organization.id, { access_control: true });
    const visible = await createProject(second.organization.id);
    const privateSeenByAdmin = await createProject(first.organization.id, { access_control: true });
    const ids = async (key: string) => {
      const response = await api("GET", "/api/projects", { key });
      expect(response.body.count).toBe(response.body.results.length);
      return response.body.results.map((item: { id: number }) => item.id);
    };

    expect(await ids(member.key)).toEqual(
      [first.project.id, second.project.id, visible.id, privateSeenByAdmin.id].sort((a, b) => a - b),
    );
    expect(await ids(member.key)).not.toContain(hiddenFromMember.id);
    const inFirst = await createApiKey(member.user, { scopedOrganizations: [first.organization.id] });
    expect(await ids(inFirst.value)).toEqual([first.project.id, privateSeenByAdmin.id]);
    const onOne = await createApiKey(member.user, { scopedTeams: [visible.id] });
    expect(await ids(onOne.value)).toEqual([visible.id]);
  });

  it("pages with limit and offset, keeping other query parameters", async () => {
    const { organization, project, key } = await setupOrganization();
    const others = [];
    for (let index = 0; index < 4; index += 1) others.push(await createProject(organization.id));
    const all = [project, ...others].map((item) => item.id);

    // The links' cursors name the sort key of the row they seek from: its creation time, its id.
    const created = [project, ...others];
    const sortKey = (index: number) => [created[index]!.createdAt, created[index]!.id];
    const first = await api("GET", "/api/projects?limit=2&format=json", { key });
    expect(first.body.count).toBe(5);
    expect(first.body.results.map((item: { id: number }) => item.id)).toEqual(all.slice(0, 2));
    expect(first.body.previous).toBeNull();
    // `format` stays where it was, between `limit` and `offset`.
    expect(first.body.next).toBe(
      nextLink("/api/projects", 2, 2, sortKey(1)).replace("?limit=2&", "?limit=2&format=json&"),
    );

    const middle = await api("GET", "/api/projects?limit=2&offset=2", { key });
    expect(middle.body.results.map((item: { id: number }) => item.id)).toEqual(all.slice(2, 4));
    expect(middle.body.previous).toBe(previousLink("/api/projects", 2, 0, sortKey(2)));
    expect(middle.body.next).toBe(nextLink("/api/projects", 2, 4, sortKey(3)));

    const last = await api("GET", "/api/projects?limit=2&offset=4", { key });
    expect(last.body.results.map((item: { id: number }) => item.id)).toEqual(all.slice(4));
    expect(last.body.next).toBeNull();

    const beyond = await api("GET", "/api/projects?offset=50", { key });
    expect(beyond.body).toEqual({
      count: 5,
      next: null,
      previous: "http://localhost/api/projects?offset=0&limit=100",
      results: [],
    });
  });

  it("answers every offset as the whole list in order, across organizations, deleted projects included", async () => {
    const first = await setupOrganization();
    const second = await setupOrganization();
    const third = await setupOrganization();
    await addMembership(second.organization.id, first.owner, MembershipLevel.admin);
    const created = async (organizationId: string, count: number) => {
      const made = [];
      for (let index = 0; index < count; index += 1) made.push(await createProject(organizationId));
      return made.map((project) => project.id);
    };
    const inFirst = [first.project.id, ...(await created(first.organization.id, 6))];
    const inSecond = [second.project.id, ...(await created(second.organization.id, 4))];
    // Deleted as the deletion job does, after the mark: gaps in both organizations' lists, one at the
    // first organization's end.
    const deleted = [inFirst[2]!, inFirst[6]!, inSecond[1]!];
    for (const id of deleted) await deleteProjectRow(id);
    // In creation order across organizations.
    const expected = [...inFirst, ...inSecond].filter((id) => !deleted.includes(id)).sort((a, b) => a - b);

    const everyOffset = async (key: string, ids: number[]) => {
      for (const limit of [1, 2, 3]) {
        for (let offset = 0; offset <= ids.length + 1; offset += 1) {
          const page = await api("GET", `/api/projects?limit=${limit}&offset=${offset}`, { key });
          expect(page.body.count).toBe(ids.length);
          expect(
            page.body.results.map((item: { id: number }) => item.id),
            `limit ${limit} offset ${offset}`,
          ).toEqual(ids.slice(offset, offset + limit));
          // Following either link answers what its offset does.
          for (const link of [page.body.next, page.body.previous].filter(Boolean)) {
            const url = new URL(link);
            const followed = await api("GET", `${url.pathname}${url.search}`, { key });
            const linked = Number(url.searchParams.get("offset"));
            expect(
              followed.body.results.map((item: { id: number }) => item.id),
              link,
            ).toEqual(ids.slice(linked, linked + limit));
          }
        }
      }
    };
    // An admin in both: counted by the organizations' counters.
    await everyOffset(first.key, expected);
    // A plain member of a third: its private project stays hidden.
    await addMembership(third.organization.id, first.owner, MembershipLevel.member);
    await createProject(third.organization.id, { access_control: true });
    await everyOffset(
      first.key,
      [...expected, third.project.id].sort((a, b) => a - b),
    );
  });

  it("falls back to the defaults for invalid values and caps limit at 1000", async () => {
    const { organization, key } = await setupOrganization();
    await createProject(organization.id);
    for (const query of ["limit=abc", "limit=-1", "limit=0", "limit=1.5", "offset=-3&limit=x", "limit=5000"]) {
      const response = await api("GET", `/api/projects?${query}`, { key });
      expect(response.status, query).toBe(200);
      expect(response.body.count).toBe(2);
      expect(response.body.results, query).toHaveLength(2);
    }
    const capped = await api("GET", "/api/projects?limit=5000&offset=1", { key });
    expect(capped.body.previous).toBe("http://localhost/api/projects?limit=1000&offset=0");
  });
});

describe("a project's settings, read where only its list item shows", () => {
  it("are read as their tags alone by @me, the organization object and the project lists", async () => {
    const { organization, project, key } = await setupOrganization();
    // Within every limit: two settings of 455 KB each, on each of three projects.
    const heavy = {
      person_display_name_properties: Array.from({ length: 7 }, () => "p".repeat(65_000)),
      live_events_columns: Array.from({ length: 7 }, () => "l".repeat(65_000)),
      tags: ["heavy"],
    };
    const projects = [project, await createProject(organization.id), await createProject(organization.id)];
    for (const { id } of projects) {
      expect((await api("PATCH", `/api/projects/${id}`, { key, body: heavy })).status).toBe(200);
    }
    const reads = [
      "/api/users/@me",
      `/api/organizations/${organization.id}`,
      "/api/organizations/@current",
      "/api/organizations",
      "/api/projects",
      `/api/organizations/${organization.id}/projects`,
    ];
    const measured = [];
    for (const read of reads) {
      const counted = countBytesRead();
      const response = await api("GET", read, { key });
      vi.restoreAllMocks();
      expect([read, response.status, JSON.stringify(response.body).includes('"tags":["heavy"]')]).toEqual([
        read,
        200,
        true,
      ]);
      // One project's settings whole are 910 KB.
      measured.push({ read, small: counted.bytes < 100_000 });
    }
    expect(measured).toEqual(reads.map((read) => ({ read, small: true })));
  }, 60_000);
});

describe("POST /api/projects", () => {
  it("creates a project in the caller's current organization, answered whole", async () => {
    const first = await setupOrganization();
    const second = await setupOrganization();
    await addMembership(second.organization.id, first.owner, MembershipLevel.owner);
    const created = await api("POST", "/api/projects", { key: first.key, body: { name: "Web app" } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual(expectedProject({ organization: first.organization.id, name: "Web app", level: 15 }));
    // `@current` follows the caller's choice of organization.
    const switched = await api("PATCH", "/api/users/@me", {
      key: first.key,
      body: { set_current_organization: second.organization.id },
    });
    expect(switched.status).toBe(200);
    const there = await api("POST", "/api/projects", { key: first.key, body: { name: "Elsewhere" } });
    expect([there.status, there.body.organization]).toEqual([201, second.organization.id]);
  });

  it("needs a key (401), project:write (403), an admin (403), and a valid body (400)", async () => {
    const { organization, owner, key } = await setupOrganization();
    expectError(await api("POST", "/api/projects", { body: { name: "x" } }), 401, NOT_AUTHENTICATED);
    const reader = await createApiKey(owner, { scopes: ["project:read"] });
    expectError(
      await api("POST", "/api/projects", { key: reader.value, body: { name: "x" } }),
      403,
      missingScope("project:write"),
    );
    const member = await addMember(organization.id, MembershipLevel.member);
    expectError(await api("POST", "/api/projects", { key: member.key, body: { name: "x" } }), 403, INSUFFICIENT_LEVEL);
    const tooLong = await api("POST", "/api/projects", { key, body: { name: "x".repeat(201) } });
    expect(tooLong.body).toMatchObject({ type: "validation_error", attr: "name" });
    const listed = await api("GET", `/api/organizations/${organization.id}/projects`, { key });
    expect(listed.body.count).toBe(1);
  });
});

describe("GET /api/projects/:id", () => {
  it("retrieves a project by id and @current", async () => {
    const { organization, project, key } = await setupOrganization();
    for (const id of [String(project.id), "@current"]) {
      const response = await api("GET", `/api/projects/${id}`, { key });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(
        expectedProject({ id: project.id, organization: organization.id, name: project.name, level: 15 }),
      );
    }
  });

  it("answers 404 for unknown ids and other organizations' projects", async () => {
    const { key } = await setupOrganization();
    const other = await setupOrganization();
    for (const id of ["424242", "nope", String(other.project.id)]) {
      const response = await api("GET", `/api/projects/${id}`, { key });
      expect(response.status, id).toBe(404);
      expect(response.body).toEqual(errorBody("invalid_request", "not_found", "Not found."));
    }
  });

  it("needs project:read", async () => {
    const { project, key } = await setupOrganization({ scopes: ["dashboard:read"] });
    const response = await api("GET", `/api/projects/${project.id}`, { key });
    expect(response.status).toBe(403);
    expect(response.body.detail).toBe("API key missing required scope 'project:read'");
  });
});
