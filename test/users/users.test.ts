import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { MembershipLevel } from "../../src/platform/levels";
import { nowIso, uuid7 } from "../../src/platform/ids";
import {
  AUTHENTICATION_FAILED,
  expectError,
  missingScope,
  NOT_AUTHENTICATED,
  NOT_FOUND,
  maxLength,
} from "../support/error-bodies";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  createProject,
  createUser,
  db,
  errorBody,
  setupOrganization,
  userBasic,
} from "../support/harness";
import { OPAQUE_SETTINGS } from "../support/projects";
import { emulateD1ValueCap } from "../support/d1-limits";
import { expectedOrganization, organizationBasic, teamBasic } from "../support/organizations";

const doesNotExist = (value: string | number, attr: string) =>
  errorBody("validation_error", "does_not_exist", `Object with id=${value} does not exist.`, attr);

/** The caller's own part of PostHog's User: the seed's fields and the neutral values of what we do not model. */
function expectedUser(user: Parameters<typeof userBasic>[0], overrides: Record<string, unknown> = {}) {
  return {
    ...userBasic(user),
    role_at_organization: null,
    date_joined: user.createdAt,
    pending_email: null,
    notification_settings: {},
    anonymize_data: false,
    toolbar_mode: "toolbar",
    allow_impersonation: true,
    allow_sidebar_suggestions: false,
    shortcut_position: null,
    passkeys_enabled_for_2fa: true,
    hide_mcp_hints: false,
    has_seen_product_intro_for: null,
    ui_configuration: null,
    pending_invites: [],
    has_password: false,
    is_staff: false,
    is_impersonated: false,
    is_impersonated_until: null,
    sensitive_session_expires_at: null,
    events_column_config: { active: "DEFAULT" },
    is_2fa_enabled: false,
    has_social_auth: false,
    has_sso_enforcement: false,
    scene_personalisation: [],
    theme_mode: null,
    ...overrides,
  };
}

/** Two organizations: the user owns the first (created first) and is a member of the second. */
async function userWithTwoOrganizations() {
  const first = await setupOrganization();
  const second = await setupOrganization();
  await addMembership(second.organization.id, first.owner, 1);
  return { first, second, user: first.owner, key: first.key };
}

describe("GET /api/users/@me", () => {
  it("returns the caller with their current organization and project, as PostHog's User", async () => {
    const { first, second, user, key } = await userWithTwoOrganizations();
    const response = await api("GET", "/api/users/@me", { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      expectedUser(user, {
        team: teamBasic(first.project),
        organization: expectedOrganization(first.organization, { level: 15, projects: [first.project] }),
        organizations: [organizationBasic(first.organization, 15), organizationBasic(second.organization, 1)],
      }),
    );
  });

  it("costs one D1 query once the key is cached", async () => {
    const { key } = await userWithTwoOrganizations();
    await api("GET", "/api/users/@me", { key });
    expect((await api("GET", "/api/users/@me", { key })).cost.queries).toBe(1);
  });

  it("shows the role at the organization once one is set, and null for a blank one", async () => {
    const { organization } = await setupOrganization();
    const withRole = await createUser({ roleAtOrganization: "engineering" });
    await addMembership(organization.id, withRole, 1);
    const key = await createApiKey(withRole);
    expect((await api("GET", "/api/users/@me", { key: key.value })).body.role_at_organization).toBe("engineering");
  });

  /** Their address proven, as signing up with an invite e-mail's own token proves it. */
  const proveAddress = (user: { id: number }) =>
    db.update(schema.users).set({ isEmailVerified: true }).where(eq(schema.users.id, user.id));

  it("lists the unexpired invites to the caller's e-mail from organizations they are not in", async () => {
    const { owner, key } = await setupOrganization();
    await proveAddress(owner);
    const inviting = await setupOrganization({ name: "Inviting" });
    const joined = await setupOrganization();
    await addMembership(joined.organization.id, owner, 1);
    const invitesOf = (id: string) => `/api/organizations/${id}/invites`;
    const invite = await api("POST", invitesOf(inviting.organization.id), {
      key: inviting.key,
      body: { target_email: owner.email.toUpperCase() },
    });
    await api("POST", invitesOf(joined.organization.id), { key: joined.key, body: { target_email: owner.email } });
    await api("POST", invitesOf(inviting.organization.id), {
      key: inviting.key,
      body: { target_email: "x@example.com" },
    });
    const response = await api("GET", "/api/users/@me", { key });
    expect(response.body.pending_invites).toEqual([
      {
        id: invite.body.id,
        target_email: owner.email,
        organization_id: inviting.organization.id,
        organization_name: "Inviting",
        created_at: invite.body.created_at,
      },
    ]);
    const fourDaysAgo = new Date(Date.now() - 4 * 24 * 3600 * 1000).toISOString();
    await db.update(schema.invites).set({ createdAt: fourDaysAgo }).where(eq(schema.invites.id, invite.body.id));
    const later = await api("GET", "/api/users/@me", { key });
    expect(later.body.pending_invites).toEqual([]);
    // Read in the same round trip as the rest, once the key is cached.
    expect(later.cost.queries).toBe(1);
  });

  it("lists the newest 100 invites, oldest first: strangers cannot grow the answer without bound", async () => {
    const { owner, key } = await setupOrganization();
    await proveAddress(owner);
    const stranger = await createUser();
    // What a stranger makes with POST /api/organizations and one invite each, arranged in SQL:
    // organization i's invite is i seconds old, so the first made is the oldest.
    const prefix = crypto.randomUUID().slice(0, 8);
    const now = new Date().toISOString();
    await env.DB.batch([
      env.DB.prepare(
        `with recursive n(i) as (select 1 union all select i + 1 from n where i < 101)
           insert into organizations (id, name, slug, created_at, updated_at)
           select printf('%s-0000-7000-8000-%012d', ?1, i), 'Stranger ' || i, ?1 || '-' || i, ?2, ?2 from n`,
      ).bind(prefix, now),
      // Joined before inviting: an invite older than its inviter's membership opens nothing.
      env.DB.prepare(
        `insert into organization_memberships (id, organization_id, user_id, level, joined_at, updated_at)
           select 'm' || id, id, ?2, 15, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 hour'), ?3
           from organizations where id like ?1 || '-%'`,
      ).bind(prefix, stranger.id, now),
      env.DB.prepare(
        `insert into invites (id, organization_id, target_email, level, send_email, combine_pending_invites,
             created_by_id, token_hash, created_at, updated_at)
           select ?1 || '-1111-7000-8000-' || substr(id, -12), id, ?2, 1, 0, 0, ?3, 'h' || id,
             strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || (102 - substr(id, -12)) || ' seconds'), ?4
           from organizations where id like ?1 || '-%'`,
      ).bind(prefix, owner.email, stranger.id, now),
    ]);
    const organizationIds = Array.from(
      { length: 101 },
      (_, index) => `${prefix}-0000-7000-8000-${String(index + 1).padStart(12, "0")}`,
    );
    const listed = (await api("GET", "/api/users/@me", { key })).body.pending_invites;
    expect(listed.map((invite: { organization_id: string }) => invite.organization_id)).toEqual(
      organizationIds.slice(1),
    );
  });

  it("lists no invite that would not open: its inviter gone, or its organization being deleted", async () => {
    const { owner, key } = await setupOrganization();
    await proveAddress(owner);
    const invitesOf = (id: string) => `/api/organizations/${id}/invites`;
    const inviterLeft = await setupOrganization({ name: "Inviter left" });
    const inviter = await addMember(inviterLeft.organization.id, MembershipLevel.admin);
    const sent = await api("POST", invitesOf(inviterLeft.organization.id), {
      key: inviter.key,
      body: { target_email: owner.email },
    });
    expect(sent.status).toBe(201);
    const memberPath = `/api/organizations/${inviterLeft.organization.id}/members/${inviter.user.uuid}`;
    expect((await api("DELETE", memberPath, { key: inviterLeft.key })).status).toBe(204);
    const deleted = await setupOrganization({ name: "Being deleted" });
    await api("POST", invitesOf(deleted.organization.id), { key: deleted.key, body: { target_email: owner.email } });
    expect((await api("DELETE", `/api/organizations/${deleted.organization.id}`, { key: deleted.key })).status).toBe(
      204,
    );
    expect((await api("GET", "/api/users/@me", { key })).body.pending_invites).toEqual([]);
  });

  it("lists to a key scoped to some organizations, or to projects, no invite from another", async () => {
    const { organization, owner, key, project } = await setupOrganization();
    await proveAddress(owner);
    const inviting = await setupOrganization({ name: "Inviting" });
    const sent = await api("POST", `/api/organizations/${inviting.organization.id}/invites`, {
      key: inviting.key,
      body: { target_email: owner.email },
    });
    expect(sent.status).toBe(201);
    expect((await api("GET", "/api/users/@me", { key })).body.pending_invites).toHaveLength(1);
    const scoped = await createApiKey(owner, { scopedOrganizations: [organization.id] });
    expect((await api("GET", "/api/users/@me", { key: scoped.value })).body.pending_invites).toEqual([]);
    // A key scoped to a project, narrower still, learns of none either.
    const projectKey = await createApiKey(owner, { scopedTeams: [project.id] });
    const asProjectKey = await api("GET", "/api/users/@me", { key: projectKey.value });
    expect(asProjectKey.status).toBe(200);
    expect(asProjectKey.body.pending_invites).toEqual([]);
  });

  it("stays within a scoped key's organizations: the current ones fall back to the first in scope", async () => {
    const { second, user } = await userWithTwoOrganizations();
    const scoped = await createApiKey(user, { scopedOrganizations: [second.organization.id] });
    const response = await api("GET", "/api/users/@me", { key: scoped.value });
    expect(response.body.organizations).toEqual([organizationBasic(second.organization, 1)]);
    expect(response.body.organization.id).toBe(second.organization.id);
    expect(response.body.team).toEqual(teamBasic(second.project));
  });

  it("stays within a project-scoped key's organizations, though the user's current one is elsewhere", async () => {
    const { first, second, user } = await userWithTwoOrganizations();
    const chosen = await api("PATCH", "/api/users/@me", {
      key: first.key,
      body: { set_current_team: second.project.id },
    });
    expect(chosen.status).toBe(200);
    const scoped = await createApiKey(user, { scopedTeams: [first.project.id] });

    const response = await api("GET", "/api/users/@me", { key: scoped.value });

    expect(response.body.organizations).toEqual([organizationBasic(first.organization, 15)]);
    expect(response.body.organization).toEqual(
      expectedOrganization(first.organization, { level: 15, projects: [first.project] }),
    );
    expect(response.body.team).toEqual(teamBasic(first.project));
    expect(response.text).not.toContain(second.organization.name);
  });

  it("answers team and organization null to a user without any", async () => {
    const loner = await createUser();
    const key = await createApiKey(loner);
    const response = await api("GET", "/api/users/@me", { key: key.value });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(expectedUser(loner, { team: null, organization: null, organizations: [] }));
  });

  it("needs user:read and a key", async () => {
    const { key } = await setupOrganization({ scopes: ["organization:read"] });
    expectError(await api("GET", "/api/users/@me", { key }), 403, missingScope("user:read"));
    expectError(await api("GET", "/api/users/@me"), 401, NOT_AUTHENTICATED);
    expectError(await api("GET", "/api/users/@me", { key: `phx_${"x".repeat(44)}` }), 401, AUTHENTICATION_FAILED);
  });
});

describe("PATCH /api/users/@me", () => {
  it("changes names, role, theme and merges notification settings", async () => {
    const first = await setupOrganization();
    const { owner: user, key } = first;
    await api("PATCH", "/api/users/@me", {
      key,
      body: { notification_settings: { plugin_disabled: true, digest: { weekly: true } } },
    });
    const response = await api("PATCH", "/api/users/@me", {
      key,
      body: {
        first_name: "  Ada ",
        last_name: "Lovelace",
        role_at_organization: "founder",
        theme_mode: "dark",
        notification_settings: { plugin_disabled: false, error_tracking_issue_assigned: true },
      },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      expectedUser(
        { ...user, firstName: "Ada", lastName: "Lovelace" },
        {
          role_at_organization: "founder",
          theme_mode: "dark",
          notification_settings: {
            plugin_disabled: false,
            digest: { weekly: true },
            error_tracking_issue_assigned: true,
          },
          team: teamBasic(first.project),
          organization: expectedOrganization(first.organization, { level: 15, projects: [first.project] }),
          organizations: [organizationBasic(first.organization, 15)],
        },
      ),
    );
    expect((await api("GET", "/api/users/@me", { key })).body).toEqual(response.body);
  });

  it("merges more notification settings than a statement binds parameters (100), of every JSON type", async () => {
    const { key } = await setupOrganization();
    const settings = Object.fromEntries(Array.from({ length: 120 }, (_, index) => [`setting_${index}`, index]));
    const kinds = { a_string: "x", a_null: null, an_object: { weekly: true }, a_list: [1, "two"], a_flag: false };
    const response = await api("PATCH", "/api/users/@me", {
      key,
      body: { notification_settings: { ...settings, ...kinds } },
    });
    expect(response.status).toBe(200);
    expect(response.body.notification_settings).toEqual({ ...settings, ...kinds });
  });

  it("keeps merged notification settings within 64 KiB: a PATCH past it is 400 and changes nothing", async () => {
    const { key } = await setupOrganization();
    const answers = [];
    for (const name of ["first", "second", "third"]) {
      const body = { first_name: name, notification_settings: { [name]: "x".repeat(30_000) } };
      answers.push(await api("PATCH", "/api/users/@me", { key, body }));
    }

    expect(answers.slice(0, 2).map((answer) => answer.status)).toEqual([200, 200]);
    expectError(
      answers[2]!,
      400,
      maxLength("Ensure this field has no more than 65536 bytes when serialized.", "notification_settings"),
    );
    const me = (await api("GET", "/api/users/@me", { key })).body;
    expect(me.first_name).toBe("second");
    expect(Object.keys(me.notification_settings)).toEqual(["first", "second"]);
  });

  it("clears the role and theme with null or blank", async () => {
    const { key } = await setupOrganization();
    const student = await api("PATCH", "/api/users/@me", { key, body: { role_at_organization: "student" } });
    expect(student.body.role_at_organization).toBe("student");
    await api("PATCH", "/api/users/@me", { key, body: { role_at_organization: "data", theme_mode: "light" } });
    const response = await api("PATCH", "/api/users/@me", {
      key,
      body: { role_at_organization: "", theme_mode: null },
    });
    expect(response.body.role_at_organization).toBeNull();
    expect(response.body.theme_mode).toBeNull();
  });

  it("stores the preferences PostHog's clients send, merging them key by key, and returns them", async () => {
    const { key } = await setupOrganization();
    const preferences = {
      hide_mcp_hints: true,
      allow_sidebar_suggestions: true,
      passkeys_enabled_for_2fa: false,
      allow_impersonation: false,
      shortcut_position: "below",
      anonymize_data: true,
      toolbar_mode: "disabled",
      events_column_config: { active: ["event", "person"] },
      has_seen_product_intro_for: { feature_flags: true },
      ui_configuration: { hidden_sidebar_items: ["notebooks"] },
      hedgehog_config: { enabled: true, color: "blue" },
    };
    const response = await api("PATCH", "/api/users/@me", { key, body: preferences });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject(preferences);
    const again = await api("PATCH", "/api/users/@me", {
      key,
      body: { shortcut_position: null, hide_mcp_hints: false },
    });
    const after = { ...preferences, shortcut_position: null, hide_mcp_hints: false };
    expect(again.body).toMatchObject(after);
    expect((await api("GET", "/api/users/@me", { key })).body).toMatchObject(after);
  });

  it("refuses each invalid preference with 400 naming it, and changes nothing", async () => {
    const { key } = await setupOrganization();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ hide_mcp_hints: null }, "hide_mcp_hints", "null"],
      [{ hide_mcp_hints: "yes" }, "hide_mcp_hints", "invalid_input"],
      [{ allow_sidebar_suggestions: 1 }, "allow_sidebar_suggestions", "invalid_input"],
      [{ passkeys_enabled_for_2fa: "false" }, "passkeys_enabled_for_2fa", "invalid_input"],
      [{ allow_impersonation: [] }, "allow_impersonation", "invalid_input"],
      [{ shortcut_position: "left" }, "shortcut_position", "invalid_choice"],
      [{ toolbar_mode: "overlay" }, "toolbar_mode", "invalid_choice"],
      [{ events_column_config: "DEFAULT" }, "events_column_config", "invalid_input"],
      [{ hedgehog_config: [] }, "hedgehog_config", "invalid_input"],
      // Carried in every entry and event that names the user: 4 KiB at most.
      [{ hedgehog_config: { accessories: "x".repeat(4096) } }, "hedgehog_config", "max_length"],
    ];
    for (const [body, attr, code] of cases) {
      const response = await api("PATCH", "/api/users/@me", { key, body: { first_name: "Changed", ...body } });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body, JSON.stringify(body)).toMatchObject({ type: "validation_error", code, attr });
    }
    expect((await api("GET", "/api/users/@me", { key })).body).toMatchObject({
      hide_mcp_hints: false,
      shortcut_position: null,
      hedgehog_config: null,
    });
  });

  it("set_current_organization moves @current everywhere to that organization and its first project", async () => {
    const { second, key } = await userWithTwoOrganizations();
    const response = await api("PATCH", "/api/users/@me", {
      key,
      body: { set_current_organization: second.organization.id },
    });
    expect(response.status).toBe(200);
    expect(response.body.organization).toEqual(
      expectedOrganization(second.organization, { level: 1, projects: [second.project], memberCount: 2 }),
    );
    expect(response.body.team).toEqual(teamBasic(second.project));
    expect((await api("GET", "/api/organizations/@current", { key })).body.id).toBe(second.organization.id);
    expect((await api("GET", "/api/projects/@current", { key })).body.id).toBe(second.project.id);
    expect((await api("GET", "/api/organizations/@current/projects/@current", { key })).body.id).toBe(
      second.project.id,
    );
    expect((await api("GET", "/api/environments/@current/dashboards", { key })).status).toBe(200);
  });

  it("set_current_team moves @current to that project and its organization", async () => {
    const { first, second, key } = await userWithTwoOrganizations();
    const later = await createProject(second.organization.id, { name: "Later" });
    const response = await api("PATCH", "/api/users/@me", { key, body: { set_current_team: later.id } });
    expect(response.status).toBe(200);
    expect(response.body.team).toEqual(teamBasic(later));
    expect(response.body.organization.id).toBe(second.organization.id);
    expect((await api("GET", "/api/projects/@current", { key })).body.id).toBe(later.id);
    expect((await api("GET", "/api/organizations/@current", { key })).body.id).toBe(second.organization.id);

    const back = await api("PATCH", "/api/users/@me", { key, body: { set_current_team: String(first.project.id) } });
    expect(back.body.team).toEqual(teamBasic(first.project));
    expect(back.body.organization.id).toBe(first.organization.id);
  });

  it("falls back to the first organization a scoped key allows when the choice is outside its scope", async () => {
    const { first, second, user, key } = await userWithTwoOrganizations();
    await api("PATCH", "/api/users/@me", { key, body: { set_current_organization: second.organization.id } });
    const scoped = await createApiKey(user, { scopedOrganizations: [first.organization.id] });
    expect((await api("GET", "/api/organizations/@current", { key: scoped.value })).body.id).toBe(
      first.organization.id,
    );
    expect((await api("GET", "/api/projects/@current", { key: scoped.value })).body.id).toBe(first.project.id);
    const teamScoped = await createApiKey(user, { scopedTeams: [first.project.id] });
    expect((await api("GET", "/api/projects/@current", { key: teamScoped.value })).body.id).toBe(first.project.id);
  });

  it("refuses a choice outside the key's scope with 403", async () => {
    const { first, second, user } = await userWithTwoOrganizations();
    const scoped = await createApiKey(user, { scopedOrganizations: [first.organization.id] });
    const outsideScope = errorBody(
      "authentication_error",
      "permission_denied",
      "API key does not have access to the requested organization",
    );
    const choices = [{ set_current_organization: second.organization.id }, { set_current_team: second.project.id }];
    for (const body of choices) {
      expectError(await api("PATCH", "/api/users/@me", { key: scoped.value, body }), 403, outsideScope);
    }
    expect((await api("GET", "/api/users/@me", { key: scoped.value })).body.team.id).toBe(first.project.id);
    // A key scoped to projects may read `@me`, not change the account.
    const teamScoped = await createApiKey(user, { scopedTeams: [first.project.id] });
    expectError(
      await api("PATCH", "/api/users/@me", { key: teamScoped.value, body: { set_current_team: first.project.id } }),
      403,
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key with scoped projects are only supported on project-based views.",
      ),
    );
  });

  it("refuses to a key scoped to organizations every project it cannot find alike (403)", async () => {
    const { first, second, user } = await userWithTwoOrganizations();
    const stranger = await setupOrganization();
    const hidden = await createProject(first.organization.id, { name: "Hidden", access_control: true });
    const member = await createUser();
    await addMembership(first.organization.id, member, 1);
    const scoped = await createApiKey(user, { scopedOrganizations: [first.organization.id] });
    const memberScoped = await createApiKey(member, { scopedOrganizations: [first.organization.id] });
    const outsideScope = errorBody(
      "authentication_error",
      "permission_denied",
      "API key does not have access to the requested organization",
    );
    const choices: [string, number][] = [
      [scoped.value, second.project.id],
      [scoped.value, stranger.project.id],
      [scoped.value, 987_654_321],
      [memberScoped.value, hidden.id],
    ];
    for (const [caller, project] of choices) {
      const body = { set_current_team: project, first_name: "Changed" };
      expectError(await api("PATCH", "/api/users/@me", { key: caller, body }), 403, outsideScope);
    }
    expect((await api("GET", "/api/users/@me", { key: scoped.value })).body.first_name).toBe(user.firstName);
  });

  it("refuses organizations the caller is not in and projects they cannot see with 400, changing nothing", async () => {
    const { key, organization } = await setupOrganization();
    const other = await setupOrganization();
    const member = await createUser();
    await addMembership(organization.id, member, 1);
    const memberKey = (await createApiKey(member)).value;
    const secret = await createProject(organization.id, { name: "Secret", access_control: true });
    const unknown = "0190a0a0-0000-7000-8000-000000000000";

    const cases: [string, Record<string, unknown>, unknown][] = [
      [
        key,
        { set_current_organization: other.organization.id, first_name: "Changed" },
        doesNotExist(other.organization.id, "set_current_organization"),
      ],
      [key, { set_current_organization: unknown }, doesNotExist(unknown, "set_current_organization")],
      [key, { set_current_team: other.project.id }, doesNotExist(other.project.id, "set_current_team")],
      [memberKey, { set_current_team: secret.id, first_name: "Changed" }, doesNotExist(secret.id, "set_current_team")],
    ];
    for (const [caller, body, error] of cases)
      expectError(await api("PATCH", "/api/users/@me", { key: caller, body }), 400, error);
    expect((await api("GET", "/api/users/@me", { key: memberKey })).body.first_name).toBe(member.firstName);
  });

  it("refuses each invalid field with 400 naming it", async () => {
    const { key, owner } = await setupOrganization();
    const cases: [Record<string, unknown>, string, string, string][] = [
      [
        { first_name: "x".repeat(151) },
        "first_name",
        "max_length",
        "Ensure this field has no more than 150 characters.",
      ],
      [{ last_name: 7 }, "last_name", "invalid_input", "Expected string, received number."],
      [
        { role_at_organization: "astronaut" },
        "role_at_organization",
        "invalid_choice",
        '"astronaut" is not a valid choice.',
      ],
      [{ theme_mode: "sepia" }, "theme_mode", "invalid_choice", '"sepia" is not a valid choice.'],
      [{ notification_settings: [] }, "notification_settings", "invalid_input", "Expected record, received list."],
      [
        { notification_settings: { digest: "x".repeat(70_000) } },
        "notification_settings",
        "max_length",
        "Ensure this field has no more than 65536 bytes when serialized.",
      ],
      [
        { set_current_organization: 12 },
        "set_current_organization",
        "invalid_input",
        "Expected string, received number.",
      ],
      [{ set_current_team: "abc" }, "set_current_team", "invalid_choice", '"abc" is not a valid choice.'],
    ];
    for (const [body, attr, code, detail] of cases) {
      expectError(
        await api("PATCH", "/api/users/@me", { key, body: { first_name: "Changed", ...body } }),
        400,
        errorBody("validation_error", code, detail, attr),
      );
    }
    expect((await api("GET", "/api/users/@me", { key })).body.first_name).toBe(owner.firstName);
  });

  it("needs user:write and a key", async () => {
    const { key } = await setupOrganization({ scopes: ["user:read"] });
    expectError(
      await api("PATCH", "/api/users/@me", { key, body: { first_name: "x" } }),
      403,
      missingScope("user:write"),
    );
    expectError(await api("PATCH", "/api/users/@me", { body: {} }), 401, NOT_AUTHENTICATED);
  });
});

describe("a user's names", () => {
  it("refuse line breaks and other invisible characters (400 naming the field), and keep emoji", async () => {
    const { owner, key } = await setupOrganization();
    for (const [field, value] of [
      ["first_name", "Eve\r\nBcc: victims@attacker.example"],
      ["last_name", "Doe\u202e"],
    ] as const) {
      const refused = await api("PATCH", "/api/users/@me", { key, body: { [field]: value } });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ type: "validation_error", attr: field });
    }
    const [unchanged] = await db.select().from(schema.users).where(eq(schema.users.id, owner.id));
    expect([unchanged!.firstName, unchanged!.lastName]).toEqual([owner.firstName, owner.lastName]);
    const emoji = await api("PATCH", "/api/users/@me", { key, body: { first_name: "Ada \u{1f469}\u200d\u{1f4bb}" } });
    expect(emoji.body.first_name).toBe("Ada \u{1f469}\u200d\u{1f4bb}");
  });
});

describe("/api/users/:uuid, the caller's own uuid", () => {
  it("reads and changes the caller as @me does, as the MCP server asks; another user's uuid is 404", async () => {
    const { owner, key } = await setupOrganization();
    const other = await setupOrganization();
    const me = await api("GET", "/api/users/@me", { key });
    const read = await api("GET", `/api/users/${owner.uuid}/`, { key });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(me.body);
    const updated = await api("PATCH", `/api/users/${owner.uuid}/`, { key, body: { first_name: "Renamed" } });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ ...me.body, first_name: "Renamed" });
    for (const [method, body] of [
      ["GET", undefined],
      ["PATCH", { first_name: "Taken" }],
    ] as const) {
      expectError(await api(method, `/api/users/${other.owner.uuid}`, { key, body }), 404, NOT_FOUND);
      expectError(await api(method, "/api/users/not-a-uuid", { key, body }), 404, NOT_FOUND);
    }
    const [unchanged] = await db.select().from(schema.users).where(eq(schema.users.id, other.owner.id));
    expect(unchanged!.firstName).toBe(other.owner.firstName);
    // Validated as @me is: a bad field is 400 naming it.
    const bad = await api("PATCH", `/api/users/${owner.uuid}`, { key, body: { first_name: "x".repeat(151) } });
    expect(bad.status).toBe(400);
    expect(bad.body.attr).toBe("first_name");
  });
});

describe("@current reads", () => {
  /** The name of the one dashboard of the caller's current environment, and what reading it cost. */
  async function currentDashboard(key: string) {
    const response = await api("GET", "/api/environments/@current/dashboards", { key });
    expect(response.status).toBe(200);
    return {
      name: response.body.results.map((dashboard: { name: string }) => dashboard.name),
      queries: response.cost.queries,
    };
  }

  it("take one round trip once the choice is known; follow a new one, and find none once it is private", async () => {
    const { first, second, key } = await userWithTwoOrganizations();
    for (const [project, name] of [
      [first.project, "In first"],
      [second.project, "In second"],
    ] as const) {
      expect((await api("POST", `/api/environments/${project.id}/dashboards`, { key, body: { name } })).status).toBe(
        201,
      );
    }
    expect(await currentDashboard(key)).toEqual({ name: ["In first"], queries: 2 });
    expect(await currentDashboard(key)).toEqual({ name: ["In first"], queries: 1 });

    expect((await api("PATCH", "/api/users/@me", { key, body: { set_current_team: second.project.id } })).status).toBe(
      200,
    );
    expect(await currentDashboard(key)).toEqual({ name: ["In second"], queries: 2 });
    expect(await currentDashboard(key)).toEqual({ name: ["In second"], queries: 1 });

    // The caller is a plain member of the second organization: a private project is hidden from them.
    const hidden = await api("PATCH", `/api/projects/${second.project.id}`, {
      key: second.key,
      body: { access_control: true },
    });
    expect(hidden.status).toBe(200);
    // No project of the current organization is left to them, and none of another stands in for it.
    expectError(await api("GET", "/api/environments/@current/dashboards", { key }), 404, NOT_FOUND);
    expect((await api("GET", "/api/users/@me", { key })).body).toMatchObject({
      team: null,
      organization: { id: second.organization.id, teams: [], projects: [] },
    });
    await api("PATCH", "/api/users/@me", { key, body: { set_current_organization: first.organization.id } });
    expect(await currentDashboard(key)).toEqual({ name: ["In first"], queries: 2 });
  });

  it("keeps @current's project in the current organization: a choice moved out of it is not current", async () => {
    const { first, second, key } = await userWithTwoOrganizations();
    const later = await createProject(first.organization.id, { name: "Later" });
    await api("PATCH", "/api/users/@me", { key, body: { set_current_team: later.id } });
    // Another admin of both organizations moves it (a mover's own current organization follows it).
    const mover = await addMember(first.organization.id, MembershipLevel.admin);
    await addMembership(second.organization.id, mover.user, MembershipLevel.admin);
    const moved = await api("POST", `/api/projects/${later.id}/change_organization/`, {
      key: mover.key,
      body: { organization_id: second.organization.id },
    });
    expect(moved.status).toBe(200);
    const me = await api("GET", "/api/users/@me", { key });
    expect(me.body.organization.id).toBe(first.organization.id);
    expect(me.body.team).toEqual(teamBasic(first.project));
    expect((await api("GET", "/api/projects/@current", { key })).body.id).toBe(first.project.id);
  });
});

describe("@me and the current organization's projects", () => {
  afterEach(() => vi.restoreAllMocks());

  /** Opaque JSON settings an admin may set on a project, each within its 64 KiB: about 600 KB together. */
  const bigSettings = () =>
    Object.fromEntries(
      [
        "session_recording_masking_config",
        "session_recording_trigger_groups",
        "conversations_settings",
        "logs_settings",
        "onboarding_tasks",
        "revenue_analytics_config",
        "marketing_analytics_config",
        "customer_analytics_config",
        "workflows_config",
        "feature_flag_policy_config",
      ].map((field) => [field, { filler: "a".repeat(60_000) }]),
    );

  it("answers when the current project's settings, within 1 MiB, are mostly quotes (escaped in JSON)", async () => {
    const { project, key } = await setupOrganization();
    // 32,700 quote characters serialize to 65,402 bytes (`\"` each): within each field's 64 KiB.
    const quotes = '"'.repeat(32_700);
    const fields = OPAQUE_SETTINGS.slice(0, 15);
    // Two PATCHes, each body within 1 MiB; together the stored settings stay within their 1 MiB.
    for (const part of [fields.slice(0, 8), fields.slice(8)]) {
      const body = Object.fromEntries(part.map((field) => [field, quotes]));
      expect((await api("PATCH", `/api/projects/${project.id}`, { key, body })).status).toBe(200);
    }
    const last = { feature_flag_confirmation_message: '"'.repeat(30_000) };
    const patched = await api("PATCH", `/api/projects/${project.id}`, { key, body: last });
    expect(patched.status).toBe(200);
    // About 1.02 MB stored (under 1 MiB), so every write was accepted; as one JSON string in @me's
    // `team` (jsonRow(projects)) each `\` and `"` is escaped again: about 2.04 MB.
    emulateD1ValueCap();
    const me = await api("GET", "/api/users/@me", { key });
    expect(me.status).toBe(200);
    expect(me.body.team?.id).toBe(project.id);
  });

  it("answers a user of 64 organizations each with a ceiling of 1,000 scopes (an id list's limit)", async () => {
    const { owner, organization, key } = await setupOrganization();
    const organizationIds = [organization.id];
    const now = nowIso();
    for (let index = 0; index < 63; index += 1) {
      const id = uuid7();
      await db
        .insert(schema.organizations)
        .values({ id, name: `Org ${id}`, slug: `org-${id}`, createdAt: now, updatedAt: now });
      await addMembership(id, owner, MembershipLevel.owner);
      organizationIds.push(id);
    }
    // Repeats are kept as sent: 1,000 entries of 27 characters, about 32 KB per organization in @me's list.
    const ceiling = Array.from({ length: 1_000 }, () => "sharing_configuration:write");
    for (const id of organizationIds) {
      const patched = await api("PATCH", `/api/organizations/${id}`, {
        key,
        body: { personal_api_key_max_scopes: ceiling },
      });
      expect(patched.status).toBe(200);
    }
    emulateD1ValueCap();
    const me = await api("GET", "/api/users/@me", { key });
    expect(me.status).toBe(200);
    expect(me.body.organizations).toHaveLength(64);
  });

  it("answers whatever the projects hold: no value of its read grows past D1's 2 MB with them", async () => {
    const { organization, project, key: ownerKey } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const projects = [project, ...(await Promise.all([1, 2, 3].map(() => createProject(organization.id))))];
    for (const { id } of projects) {
      expect((await api("PATCH", `/api/projects/${id}`, { key: ownerKey, body: bigSettings() })).status).toBe(200);
    }
    emulateD1ValueCap();
    const me = await api("GET", "/api/users/@me", { key: member.key });
    expect(me.status).toBe(200);
    expect(me.body.organization.projects.map((listed: { id: number }) => listed.id)).toEqual(
      projects.map(({ id }) => id),
    );
    const patched = await api("PATCH", "/api/users/@me", { key: member.key, body: { theme_mode: "dark" } });
    expect([patched.status, patched.body.organization]).toEqual([200, me.body.organization]);
  });
});
