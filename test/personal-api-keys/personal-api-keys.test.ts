import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { MembershipLevel } from "../../src/platform/levels";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  createProject,
  db,
  deleteProjectRow,
  errorBody,
  ISO_TIMESTAMP,
  setupOrganization,
  UUID,
} from "../support/harness";
import { AUTHENTICATION_FAILED, expectCreatedUpTo } from "../support/error-bodies";
import { insertInvite } from "../support/people";
import { beforeWrites } from "../support/races";

const keyShape = (fields: Record<string, unknown>) => ({
  id: expect.stringMatching(UUID),
  mask_value: expect.stringMatching(/^phx_\.\.\.[0-9A-Za-z]{4}$/),
  created_at: expect.stringMatching(ISO_TIMESTAMP),
  last_used_at: null,
  scoped_organizations: [],
  scoped_teams: [],
  expires_at: null,
  last_rolled_at: null,
  previous_value_expires_at: null,
  ...fields,
});

describe("POST /api/personal_api_keys", () => {
  it("creates a key, shows its value once, and the key works", async () => {
    const { owner, key } = await setupOrganization();
    const response = await api("POST", "/api/personal_api_keys", {
      key,
      body: { label: "CI", scopes: ["project:read", "organization:read"] },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual(
      keyShape({
        label: "CI",
        user_id: owner.id,
        scopes: ["project:read", "organization:read"],
        value: expect.stringMatching(/^phx_[0-9A-Za-z]{44}$/),
      }),
    );
    expect(response.body.mask_value).toBe(`phx_...${response.body.value.slice(-4)}`);

    const read = await api("GET", `/api/personal_api_keys/${response.body.id}`, { key });
    const { value: _value, ...withoutValue } = response.body;
    expect(read.body).toEqual(withoutValue);
    expect((await api("GET", "/api/projects", { key: response.body.value })).status).toBe(200);
  });

  it("creates keys scoped to the caller's organizations and projects", async () => {
    const { organization, project, key } = await setupOrganization();
    const response = await api("POST", "/api/personal_api_keys", {
      key,
      body: { label: "scoped", scopes: ["*"], scoped_organizations: [organization.id], scoped_teams: [project.id] },
    });
    expect(response.status).toBe(201);
    expect(response.body.scoped_organizations).toEqual([organization.id]);
    expect(response.body.scoped_teams).toEqual([project.id]);
  });

  it("reads project ids sent as strings of digits, as PostHog does, and refuses any other string", async () => {
    const { project, key } = await setupOrganization();
    const response = await api("POST", "/api/personal_api_keys", {
      key,
      body: { label: "from a form", scopes: ["*"], scoped_teams: [String(project.id)] },
    });
    expect(response.status).toBe(201);
    expect(response.body.scoped_teams).toEqual([project.id]);
    const refused = await api("POST", "/api/personal_api_keys", {
      key,
      body: { label: "bad", scopes: ["*"], scoped_teams: ["one"] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ type: "validation_error", attr: "scoped_teams.0" });
  });

  it("refuses scopes the calling key does not have, and wider organization scopes", async () => {
    const { organization, owner } = await setupOrganization();
    const limited = await createApiKey(owner, {
      scopes: ["personal_api_key:write", "project:write"],
      scopedOrganizations: [organization.id],
    });
    for (const [scope, allowed] of [
      ["project:read", true],
      ["dashboard:read", false],
      ["*", false],
    ] as const) {
      const response = await api("POST", "/api/personal_api_keys", {
        key: limited.value,
        body: { label: scope, scopes: [scope], scoped_organizations: [organization.id] },
      });
      if (allowed) {
        expect(response.status).toBe(201);
      } else {
        expect(response.status, scope).toBe(403);
        expect(response.body).toEqual(
          errorBody(
            "authentication_error",
            "permission_denied",
            `API key cannot grant scope '${scope}' that it does not have itself`,
          ),
        );
      }
    }
    const unscoped = await api("POST", "/api/personal_api_keys", {
      key: limited.value,
      body: { label: "wider", scopes: ["project:read"] },
    });
    expect(unscoped.status).toBe(403);
    expect(unscoped.body.detail).toBe("API key cannot grant access to organizations outside its own scope");
  });

  it("refuses, to a key scoped to organizations, a project of another organization in a key it writes", async () => {
    const { organization, owner } = await setupOrganization();
    const elsewhere = await setupOrganization();
    await addMembership(elsewhere.organization.id, owner, MembershipLevel.owner);
    const limited = await createApiKey(owner, { scopedOrganizations: [organization.id] });
    const outside = errorBody(
      "authentication_error",
      "permission_denied",
      "API key cannot grant access to organizations outside its own scope",
    );
    const created = await api("POST", "/api/personal_api_keys", {
      key: limited.value,
      body: {
        label: "x",
        scopes: ["*"],
        scoped_organizations: [organization.id],
        scoped_teams: [elsewhere.project.id],
      },
    });
    expect(created.status).toBe(403);
    expect(created.body).toEqual(outside);
    const own = await createApiKey(owner, { scopedOrganizations: [organization.id] });
    const updated = await api("PATCH", `/api/personal_api_keys/${own.id}`, {
      key: limited.value,
      body: { scoped_teams: [elsewhere.project.id] },
    });
    expect(updated.status).toBe(403);
    expect(updated.body).toEqual(outside);
    const keys = await db.select().from(schema.personalApiKeys).where(eq(schema.personalApiKeys.userId, owner.id));
    expect(keys.filter((key) => key.scopedTeams.includes(elsewhere.project.id))).toEqual([]);
  });

  it("lets a key scoped to organizations make and manage a key naming only projects of them", async () => {
    const { organization, owner, project } = await setupOrganization();
    const elsewhere = await setupOrganization();
    await addMembership(elsewhere.organization.id, owner, MembershipLevel.owner);
    const limited = await createApiKey(owner, { scopedOrganizations: [organization.id] });
    // A key naming one of its projects reaches that organization alone: no more than the calling key.
    const created = await api("POST", "/api/personal_api_keys", {
      key: limited.value,
      body: { label: "one project", scopes: ["*"], scoped_teams: [project.id] },
    });
    expect([created.status, created.body.scoped_teams]).toEqual([201, [project.id]]);
    const patched = await api("PATCH", `/api/personal_api_keys/${created.body.id}`, {
      key: limited.value,
      body: { label: "renamed" },
    });
    const rolled = await api("POST", `/api/personal_api_keys/${created.body.id}/roll`, { key: limited.value });
    const revoked = await api("DELETE", `/api/personal_api_keys/${created.body.id}`, { key: limited.value });
    expect([patched.status, rolled.status, revoked.status]).toEqual([200, 200, 204]);
    // One naming only another organization's project is still outside it.
    const outside = await api("POST", "/api/personal_api_keys", {
      key: limited.value,
      body: { label: "elsewhere", scopes: ["*"], scoped_teams: [elsewhere.project.id] },
    });
    expect([outside.status, outside.body.detail]).toEqual([
      403,
      "API key cannot grant access to organizations outside its own scope",
    ]);
    const theirs = await createApiKey(owner, { scopedTeams: [elsewhere.project.id] });
    const widened = await api("PATCH", `/api/personal_api_keys/${theirs.id}`, {
      key: limited.value,
      body: { label: "x" },
    });
    expect(widened.status).toBe(404);
  });

  it("tells a key scoped to organizations nothing of its user's others: outside ids answer 403 alike", async () => {
    const { organization, owner } = await setupOrganization();
    const joined = await setupOrganization();
    await addMembership(joined.organization.id, owner, MembershipLevel.member);
    const stranger = await setupOrganization();
    const limited = await createApiKey(owner, { scopedOrganizations: [organization.id] });
    const probe = (scoping: Record<string, unknown>) =>
      api("POST", "/api/personal_api_keys", {
        key: limited.value,
        body: { label: "probe", scopes: ["*"], ...scoping },
      });
    const outside = errorBody(
      "authentication_error",
      "permission_denied",
      "API key cannot grant access to organizations outside its own scope",
    );
    // Whether its user belongs to an organization, or sees a project, the key does not reach is not its to learn.
    for (const scoping of [
      { scoped_organizations: [joined.organization.id] },
      { scoped_organizations: [stranger.organization.id] },
      { scoped_teams: [joined.project.id] },
      { scoped_teams: [stranger.project.id] },
      { scoped_teams: [999999] },
      { scoped_organizations: [organization.id], scoped_teams: [joined.project.id] },
      { scoped_organizations: [organization.id], scoped_teams: [stranger.project.id] },
    ]) {
      const response = await probe(scoping);
      expect({ scoping, status: response.status, body: response.body }).toEqual({
        scoping,
        status: 403,
        body: outside,
      });
    }
  });

  it("lets a key scoped to organizations manage its user's key naming a project being deleted or gone", async () => {
    const { organization, owner, project } = await setupOrganization();
    const marked = await createProject(organization.id, { name: "marked" });
    const gone = await createProject(organization.id, { name: "gone" });
    const limited = await createApiKey(owner, { scopedOrganizations: [organization.id] });
    const withMarked = await createApiKey(owner, { scopedTeams: [project.id, marked.id] });
    const withGone = await createApiKey(owner, { scopedTeams: [project.id, gone.id] });
    await env.DB.prepare("update projects set deletion_scheduled_at = ? where id = ?")
      .bind(new Date().toISOString(), marked.id)
      .run();
    await deleteProjectRow(gone.id);
    // Each reaches this organization alone (a project deleted since reaches nothing): the key may manage them.
    const relabelled = await api("PATCH", `/api/personal_api_keys/${withMarked.id}`, {
      key: limited.value,
      body: { label: "renamed" },
    });
    expect([relabelled.status, relabelled.body.label]).toEqual([200, "renamed"]);
    const revoked = await api("DELETE", `/api/personal_api_keys/${withGone.id}`, { key: limited.value });
    expect(revoked.status).toBe(204);
  });

  it("validates each field", async () => {
    const { key } = await setupOrganization();
    const other = await setupOrganization();
    const cases: [Record<string, unknown>, string, string, string][] = [
      [{ scopes: ["*"] }, "label", "required", "This field is required."],
      [{ label: "", scopes: ["*"] }, "label", "blank", "This field may not be blank."],
      [
        { label: "x".repeat(41), scopes: ["*"] },
        "label",
        "max_length",
        "Ensure this field has no more than 40 characters.",
      ],
      [{ label: "k" }, "scopes", "required", "This field is required."],
      [{ label: "k", scopes: [] }, "scopes", "min_length", "Ensure this field has at least 1 elements."],
      [{ label: "k", scopes: ["everything"] }, "scopes.0", "invalid_choice", '"everything" is not a valid choice.'],
      [
        { label: "k", scopes: ["*"], scoped_organizations: [other.organization.id] },
        "scoped_organizations",
        "invalid_input",
        "You must be a member of all organizations that you are scoping the key to.",
      ],
      [
        { label: "k", scopes: ["*"], scoped_teams: [other.project.id] },
        "scoped_teams",
        "invalid_input",
        "You must be a member of all projects that you are scoping the key to.",
      ],
    ];
    for (const [body, attr, code, detail] of cases) {
      const response = await api("POST", "/api/personal_api_keys", { key, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body).toEqual(errorBody("validation_error", code, detail, attr));
    }
    expect((await api("GET", "/api/personal_api_keys", { key })).body).toHaveLength(1);
  });

  it("answers a private project the caller cannot see exactly like an unknown id", async () => {
    const { organization } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const hidden = await createProject(organization.id, { access_control: true });
    const open = await createProject(organization.id);
    const refused = errorBody(
      "validation_error",
      "invalid_input",
      "You must be a member of all projects that you are scoping the key to.",
      "scoped_teams",
    );

    const forHidden = await api("POST", "/api/personal_api_keys", {
      key: member.key,
      body: { label: "probe", scopes: ["*"], scoped_teams: [hidden.id] },
    });
    const forUnknown = await api("POST", "/api/personal_api_keys", {
      key: member.key,
      body: { label: "probe", scopes: ["*"], scoped_teams: [99_999_999] },
    });
    const forOpen = await api("POST", "/api/personal_api_keys", {
      key: member.key,
      body: { label: "fine", scopes: ["*"], scoped_teams: [open.id] },
    });

    expect([forHidden.status, forUnknown.status]).toEqual([400, 400]);
    expect(forHidden.body).toEqual(refused);
    expect(forUnknown.body).toEqual(refused);
    expect(forOpen.status).toBe(201);
  });

  it("takes up to 1,000 scoped ids in one check, past D1's parameter limit, and refuses more", async () => {
    const { key } = await setupOrganization();
    const ids = Array.from({ length: 150 }, (_, index) => 50_000_000 + index);
    await api("GET", "/api/personal_api_keys/@current", { key });

    const many = await api("POST", "/api/personal_api_keys", {
      key,
      body: { label: "k", scopes: ["*"], scoped_teams: ids },
    });
    const tooMany = await api("POST", "/api/personal_api_keys", {
      key,
      body: {
        label: "k",
        scopes: ["*"],
        scoped_organizations: Array.from({ length: 1001 }, () => crypto.randomUUID()),
      },
    });

    expect(many.status).toBe(400);
    expect(many.body.attr).toBe("scoped_teams");
    expect(many.cost.queries).toBe(1);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toEqual(
      errorBody(
        "validation_error",
        "max_length",
        "Ensure this field has no more than 1000 elements.",
        "scoped_organizations",
      ),
    );
  });

  it("is refused to a key scoped to projects: a project key cannot mint a wider one", async () => {
    const { owner, project } = await setupOrganization();
    const projectKey = await createApiKey(owner, { scopedTeams: [project.id] });

    const response = await api("POST", "/api/personal_api_keys", {
      key: projectKey.value,
      body: { label: "escape", scopes: ["*"] },
    });

    expect(response.status).toBe(403);
    expect(response.body).toEqual(
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key with scoped projects are only supported on project-based views.",
      ),
    );
    expect((await api("GET", "/api/personal_api_keys/@current", { key: projectKey.value })).body.scoped_teams).toEqual([
      project.id,
    ]);
  });

  it("needs personal_api_key:write", async () => {
    const { key } = await setupOrganization({ scopes: ["personal_api_key:read"] });
    const response = await api("POST", "/api/personal_api_keys", { key, body: { label: "x", scopes: ["*"] } });
    expect(response.status).toBe(403);
    expect(response.body.detail).toBe("API key missing required scope 'personal_api_key:write'");
  });
});

describe("GET /api/personal_api_keys/@current", () => {
  it("answers the calling key, masked, to any valid key whatever its scopes", async () => {
    const { organization, owner } = await setupOrganization();
    const narrow = await createApiKey(owner, { scopes: ["dashboard:read"], scopedOrganizations: [organization.id] });

    const response = await api("GET", "/api/personal_api_keys/@current/", { key: narrow.value });

    expect(response.status).toBe(200);
    // Written after the first response: null, or already this request's use.
    const { last_used_at: lastUsedAt, ...rest } = response.body;
    expect(lastUsedAt === null || ISO_TIMESTAMP.test(lastUsedAt)).toBe(true);
    expect(rest).toEqual({
      id: narrow.id,
      label: "test key",
      mask_value: narrow.maskValue,
      created_at: narrow.createdAt,
      user_id: owner.id,
      scopes: ["dashboard:read"],
      scoped_organizations: [organization.id],
      scoped_teams: [],
      expires_at: null,
      last_rolled_at: null,
      previous_value_expires_at: null,
      owner_kind: "user",
      rate_limits: { per_minute: 480, per_hour: 4800 },
    });
    expect(response.text).not.toContain(narrow.value);
  });

  it("answers 401 without a key or with a revoked one", async () => {
    const { owner } = await setupOrganization();
    const revoked = await createApiKey(owner);
    await api("DELETE", `/api/personal_api_keys/${revoked.id}`, { key: revoked.value });

    const anonymous = await api("GET", "/api/personal_api_keys/@current");
    const afterRevoking = await api("GET", "/api/personal_api_keys/@current", { key: revoked.value });

    expect(anonymous.status).toBe(401);
    expect(afterRevoking.status).toBe(401);
    expect(afterRevoking.body).toEqual(
      errorBody("authentication_error", "authentication_failed", "Personal API key is invalid."),
    );
  });
});

describe("GET /api/personal_api_keys", () => {
  it("lists only the caller's keys, newest first, masked", async () => {
    const { organization, owner, key } = await setupOrganization();
    const created = await api("POST", "/api/personal_api_keys", {
      key,
      body: { label: "second", scopes: ["user:read"] },
    });
    await addMember(organization.id, 1);
    const response = await api("GET", "/api/personal_api_keys", { key });
    expect(response.status).toBe(200);
    // A bare array, as PostHog answers (its list has no pagination; a user holds at most 10 keys).
    expect(response.body).toEqual([
      keyShape({ id: created.body.id, label: "second", user_id: owner.id, scopes: ["user:read"] }),
      keyShape({ label: "test key", user_id: owner.id, scopes: ["*"], last_used_at: expect.anything() }),
    ]);
    expect(JSON.stringify(response.body)).not.toContain(created.body.value);
  });

  it("shows a key scoped to organizations no key naming another organization or its project", async () => {
    const alpha = await setupOrganization({ name: "Alpha" });
    const beta = await setupOrganization({ name: "Beta" });
    const user = alpha.owner;
    await addMembership(beta.organization.id, user, MembershipLevel.member);
    const betaProject = await createProject(beta.organization.id, { name: "Beta launch" });
    const betaKey = await createApiKey(user, { scopedOrganizations: [beta.organization.id] });
    // Scoped to Alpha, naming Beta's project: it reaches nothing, and still names the project.
    const strayKey = await createApiKey(user, {
      scopedOrganizations: [alpha.organization.id],
      scopedTeams: [betaProject.id],
    });
    const alphaKey = await createApiKey(user, { scopedOrganizations: [alpha.organization.id] });
    const alphaProjectKey = await createApiKey(user, {
      scopedOrganizations: [alpha.organization.id],
      scopedTeams: [alpha.project.id],
    });

    // The user's own unscoped key sees every key.
    const everyKey = await api("GET", "/api/personal_api_keys", { key: alpha.key });
    expect(everyKey.body).toHaveLength(5);
    const unscoped = everyKey.body.find(
      (key: { scoped_organizations: string[] }) => key.scoped_organizations.length === 0,
    );

    const listed = await api("GET", "/api/personal_api_keys", { key: alphaKey.value });
    expect(listed.status).toBe(200);
    expect(listed.body.map((key: { id: string }) => key.id)).toEqual([alphaProjectKey.id, alphaKey.id, unscoped.id]);
    expect(listed.text).not.toContain(beta.organization.id);
    // Hidden alike from every route of one key: read, changed, rolled or revoked, 404.
    for (const hidden of [betaKey.id, strayKey.id]) {
      for (const [method, suffix, body] of [
        ["GET", "", undefined],
        ["PATCH", "", { scoped_teams: [] }],
        ["POST", "/roll", {}],
        ["DELETE", "", undefined],
      ] as const) {
        const one = await api(method, `/api/personal_api_keys/${hidden}${suffix}`, { key: alphaKey.value, body });
        expect([method, one.status, one.body]).toEqual([
          method,
          404,
          errorBody("invalid_request", "not_found", "Not found."),
        ]);
      }
    }
    expect((await api("GET", `/api/personal_api_keys/${strayKey.id}`, { key: alpha.key })).body.scoped_teams).toEqual([
      betaProject.id,
    ]);
    expect((await api("GET", `/api/personal_api_keys/${alphaProjectKey.id}`, { key: alphaKey.value })).body).toEqual(
      keyShape({
        id: alphaProjectKey.id,
        label: expect.any(String),
        user_id: user.id,
        scopes: ["*"],
        scoped_organizations: [alpha.organization.id],
        scoped_teams: [alpha.project.id],
      }),
    );
  });

  it("holds at most 10 keys per user, as PostHog, and lists them in one query", async () => {
    const { owner, key } = await setupOrganization();
    for (let index = 0; index < 8; index += 1) await createApiKey(owner);
    const tenth = await api("POST", "/api/personal_api_keys", { key, body: { label: "tenth", scopes: ["*"] } });
    const eleventh = await api("POST", "/api/personal_api_keys", { key, body: { label: "eleventh", scopes: ["*"] } });
    const listed = await api("GET", "/api/personal_api_keys", { key });

    expect(tenth.status).toBe(201);
    expect(eleventh.status).toBe(400);
    expect(eleventh.body).toEqual(
      errorBody(
        "validation_error",
        "max_keys",
        "You can only have 10 personal API keys. Remove an existing key before creating a new one.",
      ),
    );
    expect(listed.body).toHaveLength(10);
    expect(listed.body[0].id).toBe(tenth.body.id);
    expect(listed.cost.queries).toBe(1);
  });

  it("holds the limit under concurrent creates: the ones past it get the same 400 and write nothing", async () => {
    const { organization, key } = await setupOrganization();
    const creates = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        api("POST", "/api/personal_api_keys", { key, body: { label: `parallel ${index}`, scopes: ["*"] } }),
      ),
    );
    expectCreatedUpTo(
      creates,
      9,
      errorBody(
        "validation_error",
        "max_keys",
        "You can only have 10 personal API keys. Remove an existing key before creating a new one.",
      ),
    );
    expect((await api("GET", "/api/personal_api_keys", { key })).body).toHaveLength(10);
    const log = await api("GET", `/api/organizations/${organization.id}/activity_log?scope=PersonalAPIKey`, { key });
    expect(log.body.results).toHaveLength(9);
  });
});

describe("GET and DELETE /api/personal_api_keys/:id", () => {
  it("answers 404 for unknown ids and other users' keys", async () => {
    const { key } = await setupOrganization();
    const other = await setupOrganization();
    const [othersKey] = (await api("GET", "/api/personal_api_keys", { key: other.key })).body;
    for (const id of ["0190a0a0-0000-7000-8000-000000000000", othersKey.id]) {
      for (const [method, suffix] of [
        ["GET", ""],
        ["PATCH", ""],
        ["POST", "/roll"],
        ["DELETE", ""],
      ] as const) {
        const body = method === "GET" ? undefined : {};
        const response = await api(method, `/api/personal_api_keys/${id}${suffix}`, { key, body });
        expect(response.status, `${method} ${id}`).toBe(404);
        expect(response.body).toEqual(errorBody("invalid_request", "not_found", "Not found."));
      }
    }
    expect((await api("GET", "/api/organizations", { key: other.key })).status).toBe(200);
  });

  it("revokes a key with 204", async () => {
    const { key } = await setupOrganization();
    const created = await api("POST", "/api/personal_api_keys", { key, body: { label: "gone", scopes: ["*"] } });
    const response = await api("DELETE", `/api/personal_api_keys/${created.body.id}`, { key });
    expect(response.status).toBe(204);
    expect(response.text).toBe("");
    expect((await api("GET", `/api/personal_api_keys/${created.body.id}`, { key })).status).toBe(404);
    expect((await api("GET", "/api/users/@me", { key: created.body.value })).status).toBe(401);
  });
});

const logPath = (organizationId: string) => `/api/organizations/${organizationId}/activity_log`;

/** Bob, a member of organizations A and B, and his key naming only B's project (labelled `label`). */
async function keyOfBOnly(label: string) {
  const a = await setupOrganization();
  const b = await setupOrganization();
  const bob = await addMember(a.organization.id, MembershipLevel.member);
  await addMembership(b.organization.id, bob.user, MembershipLevel.member);
  const created = await api("POST", "/api/personal_api_keys", {
    key: bob.key,
    body: { label, scopes: ["dashboard:read"], scoped_teams: [b.project.id] },
  });
  expect(created.status).toBe(201);
  return { a, b, bob, keyId: created.body.id as string };
}

describe("a personal key that reaches only another organization's projects", () => {
  it("is not recorded in the logs of the owner's other organizations, which it never reaches", async () => {
    // Bob is a member of A and of B; his key names only a project of B, and so reaches B alone: A's
    // admins learn nothing of it (its label, its scopes, that Bob works on another organization's project).
    const { a, b, bob, keyId } = await keyOfBOnly("Acme B nightly import");
    const rolled = await api("POST", `/api/personal_api_keys/${keyId}/roll`, { key: bob.key, body: {} });
    expect(rolled.status).toBe(200);
    const revoked = await api("DELETE", `/api/personal_api_keys/${keyId}`, { key: bob.key });
    expect(revoked.status).toBe(204);

    // B's log records the key: it reaches B.
    const inB = await api("GET", `${logPath(b.organization.id)}?item_id=${keyId}`, { key: b.key });
    expect(inB.status).toBe(200);
    expect(inB.body.results.map((entry: { activity: string }) => entry.activity)).toEqual([
      "revoked",
      "rolled",
      "created",
    ]);
    // A's admins see nothing of it, neither in the log nor in the events feed webhooks are built from.
    const inA = await api("GET", `${logPath(a.organization.id)}?item_id=${keyId}`, { key: a.key });
    expect(inA.status).toBe(200);
    expect(inA.body.results).toEqual([]);
    const feed = await api("GET", `/api/organizations/${a.organization.id}/events?limit=1000`, { key: a.key });
    expect(feed.status).toBe(200);
    expect(JSON.stringify(feed.body.results)).not.toContain("Acme B nightly import");
  });
});

/** A's admins block Bob's own key; with it, Bob revokes `keyId`: the revocation's answer. */
async function revokeWithBlockedKey(
  a: Awaited<ReturnType<typeof setupOrganization>>,
  bob: Awaited<ReturnType<typeof addMember>>,
  keyId: string,
) {
  const current = await api("GET", "/api/personal_api_keys/@current", { key: bob.key });
  const blocked = await api("DELETE", `/api/organizations/${a.organization.id}/api_keys/${current.body.id}`, {
    key: a.key,
  });
  expect(blocked.status).toBe(204);
  return api("DELETE", `/api/personal_api_keys/${keyId}`, { key: bob.key });
}

describe("a key blocked in one organization, acting on a key that never reached it", () => {
  it("may still revoke its user's key that names only another organization's project", async () => {
    // A block in A holds for the keys that reach A, and Bob's B-only key does not.
    const { a, bob, keyId } = await keyOfBOnly("B only");
    expect((await revokeWithBlockedKey(a, bob, keyId)).status).toBe(204);
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** What a producer answers, for a send the test keeps from the queue (the deletion job has not run yet). */
const NOT_SENT = { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } };

/**
 * Bob, a member of A and B, holds a key naming a project of A ("Doomed") and one of B; A's admin
 * then deletes Doomed. The deletion's background job has not run yet (the project is marked, its
 * row still there), as for any deletion until its queue message is consumed.
 * From then on the key reaches B alone: A's routes refuse it and A's `api_keys` list leaves it out.
 */
async function keyOfADeletedProjectAndB(label: string) {
  const a = await setupOrganization();
  const b = await setupOrganization();
  const bob = await addMember(a.organization.id, MembershipLevel.member);
  await addMembership(b.organization.id, bob.user, MembershipLevel.member);
  const doomed = await createProject(a.organization.id, { name: "Doomed" });
  const created = await api("POST", "/api/personal_api_keys", {
    key: bob.key,
    body: { label, scopes: ["dashboard:read"], scoped_teams: [doomed.id, b.project.id] },
  });
  expect(created.status).toBe(201);
  vi.spyOn(env.BACKGROUND_JOBS, "send").mockResolvedValue(NOT_SENT as never);
  expect((await api("DELETE", `/api/projects/${doomed.id}`, { key: a.key })).status).toBe(204);
  // The key no longer reaches A: A's list of the keys reaching it leaves it out.
  const listed = await api("GET", `/api/organizations/${a.organization.id}/api_keys`, { key: a.key });
  expect(listed.status).toBe(200);
  expect(listed.body.results.map((item: { id: string }) => item.id)).not.toContain(created.body.id);
  return { a, b, bob, keyId: created.body.id as string };
}

describe("a key naming a project marked for deletion, and one of another organization", () => {
  it("a key blocked in A may revoke its user's key that reaches only B (its A project being deleted)", async () => {
    const { a, bob, keyId } = await keyOfADeletedProjectAndB("B and a doomed A project");
    expect((await revokeWithBlockedKey(a, bob, keyId)).status).toBe(204);
  });

  it("rolling a key that reaches only B is not held to A's api_key_max_lifetime_days", async () => {
    const { a, bob, keyId } = await keyOfADeletedProjectAndB("B only now");
    const limited = await api("PATCH", `/api/organizations/${a.organization.id}`, {
      key: a.key,
      body: { api_key_max_lifetime_days: 30 },
    });
    expect(limited.status).toBe(200);

    // B has no limit, and the roll's own write (keyWouldOutliveLifetime) finds none over the key's reach.
    const rolled = await api("POST", `/api/personal_api_keys/${keyId}/roll`, { key: bob.key, body: {} });
    expect(rolled.status).toBe(200);
  });

  it("a change to a key that reaches only B is not written into A's activity log", async () => {
    const { a, b, bob, keyId } = await keyOfADeletedProjectAndB("Before");
    const renamed = await api("PATCH", `/api/personal_api_keys/${keyId}`, {
      key: bob.key,
      body: { label: "Acme B nightly import" },
    });
    expect(renamed.status).toBe(200);

    const inB = await api("GET", `${logPath(b.organization.id)}?item_id=${keyId}`, { key: b.key });
    expect(inB.body.results.map((entry: { activity: string }) => entry.activity)).toEqual(["updated", "created"]);
    // A saw the key created (it reached A then); its new label is none of A's business.
    const inA = await api("GET", `${logPath(a.organization.id)}?item_id=${keyId}`, { key: a.key });
    expect(inA.status).toBe(200);
    expect(inA.body.results.map((entry: { activity: string }) => entry.activity)).toEqual(["created"]);
    expect(JSON.stringify(inA.body.results)).not.toContain("Acme B nightly import");
  });
});

describe("a key blocked in an organization its user was removed from", () => {
  it("mints no key that would reach it once its user is invited back", async () => {
    const a = await setupOrganization();
    const b = await setupOrganization();
    const bob = await addMember(a.organization.id, MembershipLevel.member);
    await addMembership(b.organization.id, bob.user, MembershipLevel.member);
    const current = await api("GET", "/api/personal_api_keys/@current", { key: bob.key });
    // A's admin blocks Bob's (leaked) key, and removes Bob while looking into it.
    expect(
      (await api("DELETE", `/api/organizations/${a.organization.id}/api_keys/${current.body.id}`, { key: a.key }))
        .status,
    ).toBe(204);
    expect(
      (await api("DELETE", `/api/organizations/${a.organization.id}/members/${bob.user.uuid}`, { key: a.key })).status,
    ).toBe(204);

    // Whoever holds the blocked key mints a fresh unscoped key (it reaches every organization of Bob's).
    const minted = await api("POST", "/api/personal_api_keys", {
      key: bob.key,
      body: { label: "fresh", scopes: ["*"] },
    });

    // Bob is invited back and joins with another, unblocked key of his, as docs/keys.md tells him to.
    const invite = await insertInvite(a.organization.id, a.owner, { targetEmail: bob.user.email });
    const other = await createApiKey(bob.user);
    expect((await api("POST", "/api/signup", { key: other.value, body: { token: invite.token } })).status).toBe(201);

    // The blocked key made no key that reaches A: an unscoped one would, once Bob is back.
    expect([minted.status, minted.body.detail]).toEqual([
      403,
      "API key cannot act on keys that reach an organization whose admins revoked its access",
    ]);
  });
});

const BLOCKED_REACH = "API key cannot act on keys that reach an organization whose admins revoked its access";

describe("a key blocked in an organization its user joins while the key's write runs", () => {
  it("makes no unscoped key: the write holds the block for every organization its scoping reaches", async () => {
    // Bob, of B, is invited to A. His key K asks for a fresh unscoped key; between that request's
    // reads and its write, Bob joins A and A's owner blocks K there: the write holds the block in
    // every organization the new key reaches, A too.
    const a = await setupOrganization();
    const b = await setupOrganization();
    const bob = await addMember(b.organization.id, MembershipLevel.member);
    const calling = (await api("GET", "/api/personal_api_keys/@current", { key: bob.key })).body.id as string;
    const invite = await insertInvite(a.organization.id, a.owner, { targetEmail: bob.user.email });
    const other = await createApiKey(bob.user);
    const ran = beforeWrites([
      [
        /^insert into "personal_api_keys"/,
        async () => [
          (await api("POST", "/api/signup", { key: other.value, body: { token: invite.token } })).status,
          (await api("DELETE", `/api/organizations/${a.organization.id}/api_keys/${calling}`, { key: a.key })).status,
        ],
      ],
    ]);
    const made = await api("POST", "/api/personal_api_keys", {
      key: bob.key,
      body: { label: "fresh", scopes: ["*"] },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([[201, 204]]);
    const reachesA = made.body.value
      ? (await api("GET", `/api/organizations/${a.organization.id}`, { key: made.body.value })).status
      : null;
    expect({ status: made.status, detail: made.body.detail, reachesA }).toEqual({
      status: 403,
      detail: BLOCKED_REACH,
      reachesA: null,
    });
  });
});

describe("a key revoked or rolled while its key write runs", () => {
  it("makes, changes or rolls no key (401): none outlives the value that asked", async () => {
    const { owner, key } = await setupOrganization();
    const other = await createApiKey(owner, { scopes: ["organization:read"] });
    const otherPath = `/api/personal_api_keys/${other.id}`;
    const writes: [RegExp, string, string, unknown][] = [
      [/^insert into "personal_api_keys"/, "POST", "/api/personal_api_keys", { label: "fresh", scopes: ["*"] }],
      [/^update "personal_api_keys"/, "PATCH", otherPath, { label: "renamed" }],
      [/^update "personal_api_keys"/, "POST", `${otherPath}/roll`, {}],
    ];
    for (const [write, method, path, body] of writes) {
      for (const loseValue of ["revoke", "roll", "roll with an overlap"] as const) {
        const calling = await createApiKey(owner);
        const callingPath = `/api/personal_api_keys/${calling.id}`;
        const manager = await createApiKey(owner);
        // Rolled with an overlap, the value that asked is a replaced one, which manages no key.
        const overlap = loseValue === "roll" ? {} : { overlap_seconds: 3600 };
        const lose = () =>
          loseValue === "revoke"
            ? api("DELETE", callingPath, { key: manager.value })
            : api("POST", `${callingPath}/roll`, { key: manager.value, body: overlap });
        const ran = beforeWrites([[write, async () => (await lose()).status]]);
        const refused = await api(method, path, { key: calling.value, body });
        vi.restoreAllMocks();
        const what = `${method} ${path} (${loseValue})`;
        expect(ran, what).toEqual([loseValue === "revoke" ? 204 : 200]);
        expect([refused.status, refused.body], what).toEqual([401, AUTHENTICATION_FAILED]);
        if (loseValue !== "revoke") await api("DELETE", callingPath, { key: manager.value });
        await api("DELETE", `/api/personal_api_keys/${manager.id}`, { key: manager.value });
      }
    }
    const labels = (await api("GET", "/api/personal_api_keys", { key })).body.map(
      (key: { label: string }) => key.label,
    );
    expect(labels).not.toContain("fresh");
    expect(labels).not.toContain("renamed");
  });
});
