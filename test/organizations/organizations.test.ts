import { count, eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { MembershipLevel } from "../../src/platform/levels";
import { changedMeanwhile, expectError, INSUFFICIENT_LEVEL, missingScope, NOT_FOUND } from "../support/error-bodies";
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
  grantProjectAccess,
  UUID,
} from "../support/harness";
import { expectedOrganization } from "../support/organizations";
import { beforeWrites } from "../support/races";
import { expectKeyAndMembershipRequired } from "../support/people";

const API_KEYS_REFUSED = errorBody(
  "authentication_error",
  "permission_denied",
  "Your organization does not allow members using personal API keys.",
);

describe("organizations", () => {
  it("lists the caller's organizations in creation order, as PostHog's Organization", async () => {
    const { key, organization, project } = await setupOrganization();
    const response = await api("GET", "/api/organizations", { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      count: 1,
      next: null,
      previous: null,
      results: [expectedOrganization(organization, { level: 15, projects: [project] })],
    });
  });

  it("creates an organization owned by the caller, with a default project and a slug from its name", async () => {
    const { key } = await setupOrganization();
    const response = await api("POST", "/api/organizations", { key, body: { name: "  Acme, Inc.  " } });
    expect(response.status).toBe(201);
    const [project] = await db
      .select()
      .from(schema.projects)
      .where(eq(schema.projects.organizationId, response.body.id));
    expect(response.body).toEqual(
      expectedOrganization(
        { id: expect.stringMatching(UUID), name: "Acme, Inc.", slug: "acme-inc" },
        { level: 15, projects: [project!] },
      ),
    );
    expect(response.body.created_at).toMatch(ISO_TIMESTAMP);
    expect(response.body.updated_at).toBe(response.body.created_at);
    const listed = await api("GET", "/api/organizations", { key });
    expect(listed.body.count).toBe(2);
  });

  it("keeps slugs unique, also when organizations of one name are created at once", async () => {
    const { key } = await setupOrganization();
    const name = `Globex ${crypto.randomUUID().slice(0, 8)}`;
    const base = name.toLowerCase().replace(" ", "-");
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => api("POST", "/api/organizations", { key, body: { name } })),
    );
    expect(responses.map((response) => response.status)).toEqual([201, 201, 201, 201]);
    expect(responses.map((response) => response.body.slug).sort()).toEqual([
      base,
      `${base}-2`,
      `${base}-3`,
      `${base}-4`,
    ]);
  });

  it("gives a name without letters or digits a slug all the same", async () => {
    const { key } = await setupOrganization();
    const response = await api("POST", "/api/organizations", { key, body: { name: "★★★" } });
    expect(response.status).toBe(201);
    expect(response.body.slug).toMatch(/^organization(-\d+)?$/);
  });

  it("validates the name and creates nothing on bad input", async () => {
    const { key } = await setupOrganization();
    const cases: [unknown, string, string][] = [
      [{}, "required", "This field is required."],
      [{ name: "" }, "blank", "This field may not be blank."],
      [{ name: "   " }, "blank", "This field may not be blank."],
      [{ name: 42 }, "invalid_input", "Expected string, received number."],
      [{ name: "x".repeat(65) }, "max_length", "Ensure this field has no more than 64 characters."],
    ];
    for (const [body, code, detail] of cases) {
      const response = await api("POST", "/api/organizations", { key, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body).toEqual(errorBody("validation_error", code, detail, "name"));
    }
    expect((await api("GET", "/api/organizations", { key })).body.count).toBe(1);
  });

  it("needs organization:write to create", async () => {
    const { key } = await setupOrganization({ scopes: ["organization:read"] });
    const response = await api("POST", "/api/organizations", { key, body: { name: "Acme" } });
    expectError(response, 403, missingScope("organization:write"));
  });

  it("retrieves an organization by id and @current, with caller's level and member count, in one query", async () => {
    const { organization, project } = await setupOrganization();
    const member = await addMember(organization.id, 1);
    const expected = expectedOrganization(organization, { level: 1, projects: [project], memberCount: 2 });
    for (const id of [organization.id, "@current"]) {
      const response = await api("GET", `/api/organizations/${id}`, { key: member.key });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(expected);
      expect(response.cost.queries).toBeLessThanOrEqual(2);
    }
    const warm = await api("GET", `/api/organizations/${organization.id}`, { key: member.key });
    expect(warm.cost.queries).toBe(1);
  });

  it("lists only the projects the caller sees in `teams` and `projects`", async () => {
    const { organization, project } = await setupOrganization();
    await createProject(organization.id, { name: "Secret", access_control: true });
    const member = await addMember(organization.id, 1);
    const response = await api("GET", `/api/organizations/${organization.id}`, { key: member.key });
    expect(response.body.projects.map((item: { id: number }) => item.id)).toEqual([project.id]);
    expect(response.body.teams.map((item: { id: number }) => item.id)).toEqual([project.id]);
  });

  it("answers 404 for unknown ids and other organizations", async () => {
    const { key } = await setupOrganization();
    const other = await setupOrganization();
    for (const id of ["0190a0a0-0000-7000-8000-000000000000", other.organization.id, "not-a-uuid"]) {
      const response = await api("GET", `/api/organizations/${id}`, { key });
      expect(response.status, id).toBe(404);
      expect(response.body).toEqual(NOT_FOUND);
    }
  });
});

describe("PATCH /api/organizations/:id", () => {
  const settings = {
    name: "Renamed",
    logo_media_id: "0190a0a0-0000-7000-8000-000000000001",
    is_member_join_email_enabled: false,
    enforce_2fa: true,
    members_can_invite: false,
    members_can_use_personal_api_keys: false,
    allow_publicly_shared_resources: false,
  };

  it("renames and configures the organization; the slug stays", async () => {
    const { key, organization, project } = await setupOrganization();
    const response = await api("PATCH", `/api/organizations/${organization.id}`, { key, body: settings });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      expectedOrganization(
        { ...organization, name: "Renamed", updatedAt: undefined },
        {
          level: 15,
          projects: [project],
          overrides: {
            logo_media_id: settings.logo_media_id,
            is_member_join_email_enabled: false,
            enforce_2fa: true,
            members_can_invite: false,
            members_can_use_personal_api_keys: false,
            allow_publicly_shared_resources: false,
          },
        },
      ),
    );
    expect(response.body.updated_at > organization.updatedAt).toBe(true);
    expect((await api("GET", `/api/organizations/${organization.id}`, { key })).body).toEqual(response.body);
  });

  it("changes only the fields sent", async () => {
    const { key, organization } = await setupOrganization();
    await api("PATCH", `/api/organizations/${organization.id}`, { key, body: { members_can_invite: false } });
    const response = await api("PATCH", `/api/organizations/@current`, { key, body: { enforce_2fa: null } });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ name: organization.name, members_can_invite: false, enforce_2fa: null });
  });

  it("lets admins configure, not members", async () => {
    const { organization } = await setupOrganization();
    const admin = await addMember(organization.id, 8);
    const member = await addMember(organization.id, 1);
    expect(
      (await api("PATCH", `/api/organizations/${organization.id}`, { key: admin.key, body: { name: "By admin" } }))
        .status,
    ).toBe(200);
    const refused = await api("PATCH", `/api/organizations/${organization.id}`, {
      key: member.key,
      body: { name: "By member" },
    });
    expectError(refused, 403, INSUFFICIENT_LEVEL);
  });

  it("needs organization:write, a key, and membership", async () => {
    const { organization } = await setupOrganization({ scopes: ["organization:read"] });
    const reader = await setupOrganization({ scopes: ["organization:read"] });
    const response = await api("PATCH", `/api/organizations/${reader.organization.id}`, {
      key: reader.key,
      body: { name: "x" },
    });
    expectError(response, 403, missingScope("organization:write"));
    await expectKeyAndMembershipRequired("PATCH", `/api/organizations/${organization.id}`, { name: "x" });
  });

  it("refuses each invalid field with 400 naming it, and changes nothing", async () => {
    const { key, organization } = await setupOrganization();
    const cases: [Record<string, unknown>, string, string, string][] = [
      [{ name: "" }, "name", "blank", "This field may not be blank."],
      [{ name: "x".repeat(65) }, "name", "max_length", "Ensure this field has no more than 64 characters."],
      [{ name: null }, "name", "null", "This field may not be null."],
      [{ logo_media_id: "logo.png" }, "logo_media_id", "invalid_input", "Invalid UUID"],
      [
        { is_member_join_email_enabled: "yes" },
        "is_member_join_email_enabled",
        "invalid_input",
        "Expected boolean, received string.",
      ],
      [{ enforce_2fa: 1 }, "enforce_2fa", "invalid_input", "Expected boolean, received number."],
      [{ members_can_invite: null }, "members_can_invite", "null", "This field may not be null."],
      [
        { members_can_use_personal_api_keys: "false" },
        "members_can_use_personal_api_keys",
        "invalid_input",
        "Expected boolean, received string.",
      ],
      [
        { allow_publicly_shared_resources: [] },
        "allow_publicly_shared_resources",
        "invalid_input",
        "Expected boolean, received list.",
      ],
    ];
    for (const [body, attr, code, detail] of cases) {
      // A valid change sent alongside must not land either.
      const withValidChange = { is_member_join_email_enabled: false, ...body };
      const response = await api("PATCH", `/api/organizations/${organization.id}`, { key, body: withValidChange });
      expectError(response, 400, errorBody("validation_error", code, detail, attr));
    }
    const unchanged = await api("GET", `/api/organizations/${organization.id}`, { key });
    expect(unchanged.body).toMatchObject({
      name: organization.name,
      is_member_join_email_enabled: true,
      updated_at: organization.updatedAt,
    });
  });

  it("answers 404 for another organization", async () => {
    const { key } = await setupOrganization();
    const other = await setupOrganization();
    expectError(
      await api("PATCH", `/api/organizations/${other.organization.id}`, { key, body: { name: "x" } }),
      404,
      NOT_FOUND,
    );
  });
});

describe("PATCH and DELETE with a key scoped to other organizations", () => {
  it("answers 403 and changes nothing", async () => {
    const { owner, organization } = await setupOrganization();
    const elsewhere = await setupOrganization();
    await addMembership(elsewhere.organization.id, owner, 15);
    const scoped = await createApiKey(owner, { scopedOrganizations: [elsewhere.organization.id] });
    const outOfScope = errorBody(
      "authentication_error",
      "permission_denied",
      "API key does not have access to the requested organization",
    );
    const path = `/api/organizations/${organization.id}`;
    expectError(await api("PATCH", path, { key: scoped.value, body: { name: "x" } }), 403, outOfScope);
    expectError(await api("DELETE", path, { key: scoped.value }), 403, outOfScope);
    const [row] = await db.select().from(schema.organizations).where(eq(schema.organizations.id, organization.id));
    expect(row!.name).toBe(organization.name);
  });
});

describe("organization settings, enforced", () => {
  it("members_can_invite: false leaves inviting to admins and owners", async () => {
    const { key, organization } = await setupOrganization();
    const admin = await addMember(organization.id, 8);
    const member = await addMember(organization.id, 1);
    const path = `/api/organizations/${organization.id}/invites`;
    await api("PATCH", `/api/organizations/${organization.id}`, { key, body: { members_can_invite: false } });

    expectError(
      await api("POST", path, { key: member.key, body: { target_email: "a@example.com" } }),
      403,
      INSUFFICIENT_LEVEL,
    );
    expectError(
      await api("POST", `${path}/bulk`, { key: member.key, body: [{ target_email: "a@example.com" }] }),
      403,
      INSUFFICIENT_LEVEL,
    );
    expect((await api("POST", path, { key: admin.key, body: { target_email: "b@example.com" } })).status).toBe(201);

    await api("PATCH", `/api/organizations/${organization.id}`, { key, body: { members_can_invite: true } });
    expect((await api("POST", path, { key: member.key, body: { target_email: "c@example.com" } })).status).toBe(201);
  });

  it("members_can_use_personal_api_keys: false refuses plain members' keys on the organization's routes", async () => {
    const { key, organization, project } = await setupOrganization();
    const admin = await addMember(organization.id, 8);
    const member = await addMember(organization.id, 1);
    await api("PATCH", `/api/organizations/${organization.id}`, {
      key,
      body: { members_can_use_personal_api_keys: false },
    });

    const paths = [
      `/api/organizations/${organization.id}`,
      "/api/organizations/@current",
      `/api/organizations/${organization.id}/members`,
      `/api/organizations/${organization.id}/projects/${project.id}`,
      `/api/projects/${project.id}`,
      `/api/environments/${project.id}/dashboards`,
      `/api/projects/@current/dashboards`,
    ];
    for (const path of paths) {
      expectError(await api("GET", path, { key: member.key }), 403, API_KEYS_REFUSED);
      expect((await api("GET", path, { key: admin.key })).status, path).toBe(200);
    }
    // The key still says who its owner is.
    expect((await api("GET", "/api/users/@me", { key: member.key })).status).toBe(200);
  });

  it("members_can_use_personal_api_keys: false holds for a member whom a project rule makes its admin", async () => {
    const { key, organization, project } = await setupOrganization();
    const member = await addMember(organization.id, 1);
    await grantProjectAccess(project.id, member.membership.id, "admin");
    await api("PATCH", `/api/organizations/${organization.id}`, {
      key,
      body: { members_can_use_personal_api_keys: false },
    });

    for (const path of [
      `/api/projects/${project.id}`,
      `/api/environments/${project.id}/dashboards`,
      "/api/projects/@current/dashboards",
    ]) {
      expectError(await api("GET", path, { key: member.key }), 403, API_KEYS_REFUSED);
    }
    const write = await api("PATCH", `/api/projects/${project.id}`, { key: member.key, body: { name: "Taken over" } });
    expectError(write, 403, API_KEYS_REFUSED);
  });

  it("allow_publicly_shared_resources is stored and returned", async () => {
    const { key, organization } = await setupOrganization();
    const response = await api("PATCH", `/api/organizations/${organization.id}`, {
      key,
      body: { allow_publicly_shared_resources: false },
    });
    expect(response.body.allow_publicly_shared_resources).toBe(false);
    const [row] = await db.select().from(schema.organizations).where(eq(schema.organizations.id, organization.id));
    expect(row!.allowPubliclySharedResources).toBe(false);
  });
});

describe("writes racing an organization's deletion", () => {
  it("answer what they did or 404, never a 500; a second DELETE at once is 404", async () => {
    const seen = new Set<string>();
    for (let round = 0; round < 6; round += 1) {
      const { organization, project, key } = await setupOrganization();
      const path = `/api/organizations/${organization.id}`;
      const writes: [string, number, Promise<{ status: number }>][] = [
        ["role", 201, api("POST", `${path}/roles`, { key, body: { name: `Role ${round}` } })],
        ["invite", 201, api("POST", `${path}/invites`, { key, body: { target_email: `x${round}@example.com` } })],
        ["project", 201, api("POST", `${path}/projects`, { key, body: { name: `P ${round}` } })],
        ["rename", 200, api("PATCH", path, { key, body: { name: `Renamed ${round}` } })],
        ["dashboard", 201, api("POST", `/api/environments/${project.id}/dashboards`, { key, body: { name: "D" } })],
        [
          "rule",
          200,
          api("PUT", `/api/projects/${project.id}/access_controls`, { key, body: { access_level: "none" } }),
        ],
      ];
      const deletions = [api("DELETE", path, { key }), api("DELETE", path, { key })];
      for (const [name, done, request] of writes) {
        const { status } = await request;
        expect([done, 404], name).toContain(status);
        seen.add(`${name} ${status}`);
      }
      expect((await Promise.all(deletions)).map((response) => response.status).sort()).toEqual([204, 404]);
      expect((await api("GET", path, { key })).status).toBe(404);
    }
  });
});

describe("DELETE /api/organizations/:id", () => {
  async function rowsOf(organizationId: string) {
    const [[projects], [memberships], [dashboards]] = await db.batch([
      db.select({ value: count() }).from(schema.projects).where(eq(schema.projects.organizationId, organizationId)),
      db
        .select({ value: count() })
        .from(schema.organizationMemberships)
        .where(eq(schema.organizationMemberships.organizationId, organizationId)),
      db
        .select({ value: count() })
        .from(schema.dashboards)
        .innerJoin(schema.environments, eq(schema.environments.id, schema.dashboards.environmentId))
        .where(eq(schema.environments.organizationId, organizationId)),
    ]);
    return { projects: projects!.value, memberships: memberships!.value, dashboards: dashboards!.value };
  }

  it("removes the organization and everything in it; others are untouched", async () => {
    const { key, organization, project } = await setupOrganization();
    const other = await setupOrganization();
    await addMember(organization.id, 1);
    await api("POST", `/api/environments/${project.id}/dashboards`, {
      key,
      body: { name: "Gone", use_template: "DEFAULT_APP" },
    });
    await api("POST", `/api/environments/${other.project.id}/dashboards`, { key: other.key, body: { name: "Kept" } });
    await api("POST", `/api/organizations/${organization.id}/invites`, {
      key,
      body: { target_email: "x@example.com" },
    });
    expect(await rowsOf(organization.id)).toEqual({ projects: 1, memberships: 2, dashboards: 1 });

    const response = await api("DELETE", `/api/organizations/${organization.id}`, { key });
    expect(response.status).toBe(204);
    expect(response.text).toBe("");
    expectError(await api("GET", `/api/organizations/${organization.id}`, { key }), 404, NOT_FOUND);
    expectError(await api("GET", `/api/projects/${project.id}`, { key }), 404, NOT_FOUND);
    // The memberships at once, the rest in the background (organization-deletion.test.ts).
    await expect
      .poll(() => rowsOf(organization.id), { timeout: 20_000, interval: 200 })
      .toEqual({ projects: 0, memberships: 0, dashboards: 0 });
    expect(await rowsOf(other.organization.id)).toEqual({ projects: 1, memberships: 1, dashboards: 1 });
  });

  it("is for owners only", async () => {
    const { organization } = await setupOrganization();
    const admin = await addMember(organization.id, 8);
    expectError(
      await api("DELETE", `/api/organizations/${organization.id}`, { key: admin.key }),
      403,
      INSUFFICIENT_LEVEL,
    );
    expect((await rowsOf(organization.id)).projects).toBe(1);
  });

  it("needs organization:write, a key, and membership", async () => {
    const reader = await setupOrganization({ scopes: ["organization:read"] });
    expectError(
      await api("DELETE", `/api/organizations/${reader.organization.id}`, { key: reader.key }),
      403,
      missingScope("organization:write"),
    );
    await expectKeyAndMembershipRequired("DELETE", `/api/organizations/${reader.organization.id}`);
    expect((await rowsOf(reader.organization.id)).projects).toBe(1);
  });
});

describe("organization writes hold the caller's level when they land", () => {
  afterEach(() => vi.restoreAllMocks());

  it("an admin demoted to member meanwhile does not change the organization's settings", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const demotion = beforeWrites([
      [
        /^update "organizations"/,
        async () =>
          (
            await api("PATCH", `/api/organizations/${organization.id}/members/${admin.user.uuid}`, {
              key,
              body: { level: 1 },
            })
          ).status,
      ],
    ]);
    const changed = await api("PATCH", `/api/organizations/${organization.id}`, {
      key: admin.key,
      body: { name: "Renamed after demotion", allow_publicly_shared_resources: false },
    });
    vi.restoreAllMocks();
    expect(demotion).toEqual([200]);
    expectError(changed, 403, INSUFFICIENT_LEVEL);
    const after = await api("GET", `/api/organizations/${organization.id}`, { key });
    expect(after.body).toMatchObject({ name: organization.name, allow_publicly_shared_resources: true });
  });

  it("an owner demoted to admin meanwhile does not delete the organization", async () => {
    const { organization, key } = await setupOrganization();
    const secondOwner = await addMember(organization.id, MembershipLevel.owner);
    const demotion = beforeWrites([
      [
        /^update "organizations"/,
        async () =>
          (
            await api("PATCH", `/api/organizations/${organization.id}/members/${secondOwner.user.uuid}`, {
              key,
              body: { level: 8 },
            })
          ).status,
      ],
    ]);
    const deleted = await api("DELETE", `/api/organizations/${organization.id}`, { key: secondOwner.key });
    vi.restoreAllMocks();
    expect(demotion).toEqual([200]);
    expectError(deleted, 403, INSUFFICIENT_LEVEL);
    expect((await api("GET", `/api/organizations/${organization.id}`, { key })).status).toBe(200);
  });
});

describe("concurrent creates of one organization name", () => {
  it("never answers 500 however many creates of one name race for its slug", async () => {
    const { key } = await setupOrganization();
    const name = `Initech ${crypto.randomUUID().slice(0, 8)}`;
    const responses = await Promise.all(
      Array.from({ length: 12 }, () => api("POST", "/api/organizations", { key, body: { name } })),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(12).fill(201));
    expect(new Set(responses.map((response) => response.body.slug)).size).toBe(12);
  });
});

describe("an organization PATCH over a setting changed meanwhile", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is refused (409) rather than put the setting back unlogged; sent again, it lands with its entry", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const path = `/api/organizations/${organization.id}`;
    // The admin read public links as allowed; the owner turns them off before the admin's write lands.
    const ran = beforeWrites([
      [
        /^update "organizations"/,
        async () => (await api("PATCH", path, { key, body: { allow_publicly_shared_resources: false } })).status,
      ],
    ]);
    const raced = await api("PATCH", path, { key: admin.key, body: { allow_publicly_shared_resources: true } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(raced, 409, changedMeanwhile("organization"));
    expect((await api("GET", path, { key })).body.allow_publicly_shared_resources).toBe(false);

    const again = await api("PATCH", path, { key: admin.key, body: { allow_publicly_shared_resources: true } });
    expect([again.status, again.body.allow_publicly_shared_resources]).toEqual([200, true]);
    const log = await api("GET", `${path}/activity_log?scope=Organization`, { key });
    const changes = log.body.results
      .filter((entry: { activity: string }) => entry.activity === "updated")
      .map((entry: { detail: { changes: { field: string; before: unknown; after: unknown }[] } }) =>
        entry.detail.changes.map(({ field, before, after }) => [field, before, after]),
      );
    expect(changes).toEqual([
      [["allow_publicly_shared_resources", false, true]],
      [["allow_publicly_shared_resources", true, false]],
    ]);
  });
});
