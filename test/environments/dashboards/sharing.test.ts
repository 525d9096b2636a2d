import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../../src/db/schema";
import { MembershipLevel } from "../../../src/platform/levels";
import { addMember, api, createApiKey, db, errorBody, ISO_TIMESTAMP, setupOrganization } from "../../support/harness";
import { createDashboard, dashboardsPath } from "../dashboard-fixtures";
import { beforeWrites } from "../../support/races";
import { changedMeanwhile, expectError } from "../../support/error-bodies";
import { restoreTestDoubles, useEmailTransport } from "../../support/people";

const sharingPath = (projectId: number | string, dashboardId: number, tree = "environments") =>
  `${dashboardsPath(projectId, tree)}/${dashboardId}/sharing`;
const TOKEN = /^[A-Za-z0-9_-]{30}$/;
const PASSWORD_PROTECTION_OFF = errorBody(
  "validation_error",
  "invalid_input",
  "Password protection must be enabled before creating passwords",
  "password_required",
);
const NOT_FOUND = errorBody("invalid_request", "not_found", "Not found.");
const NO_EDIT_RIGHT = errorBody(
  "authentication_error",
  "permission_denied",
  "You don't have edit permissions for this dashboard.",
);

async function setupSharedDashboard() {
  const team = await setupOrganization();
  const dashboard = await createDashboard(team.key, team.project.id, { name: "Shared" });
  return { ...team, dashboard, path: sharingPath(team.project.id, dashboard.id) };
}

const configuration = (fields: Record<string, unknown> = {}) => ({
  created_at: expect.stringMatching(ISO_TIMESTAMP),
  enabled: false,
  access_token: expect.stringMatching(TOKEN),
  settings: {},
  expires_at: null,
  password_required: false,
  share_passwords: [],
  view_count: 0,
  last_viewed_at: null,
  allowed_emails: null,
  verified_viewers: [],
  user_access_level: "manager",
  ...fields,
});

describe("dashboard sharing configuration", () => {
  it("is created disabled on first read, with a token that stays the same", async () => {
    const { key, project, dashboard, path } = await setupSharedDashboard();
    const first = await api("GET", path, { key });
    expect(first.status).toBe(200);
    expect(first.body).toEqual(configuration());
    const again = await api("GET", sharingPath(project.id, dashboard.id, "projects"), { key });
    expect(again.body).toEqual(first.body);
  });

  it("reads in one D1 round trip with the key warm, once created", async () => {
    const { key, path } = await setupSharedDashboard();
    await api("GET", path, { key });
    expect((await api("GET", path, { key })).cost.queries).toBe(1);
  });

  it("enables and disables with PATCH, keeping the token, and is_shared follows", async () => {
    const { key, project, dashboard, path } = await setupSharedDashboard();
    const { access_token: token } = (await api("GET", path, { key })).body;
    const enabled = await api("PATCH", path, { key, body: { enabled: true } });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toEqual(configuration({ enabled: true, access_token: token }));
    // The project with the dashboard and its configuration, then the upsert.
    expect(enabled.cost.queries).toBe(2);
    const dashboardPath = `${dashboardsPath(project.id)}/${dashboard.id}`;
    // The list reads it from the dashboard, which the configuration's write updates in its batch.
    const listed = async () =>
      (await api("GET", dashboardsPath(project.id), { key })).body.results.map(
        (row: { is_shared: boolean }) => row.is_shared,
      );
    expect((await api("GET", dashboardPath, { key })).body.is_shared).toBe(true);
    expect(await listed()).toEqual([true]);
    expect((await api("PATCH", path, { key, body: { enabled: false } })).body.enabled).toBe(false);
    expect((await api("GET", dashboardPath, { key })).body.is_shared).toBe(false);
    expect(await listed()).toEqual([false]);
  });

  it("keeps only PostHog's settings keys, refuses settings not an object of booleans, and clears on null", async () => {
    const { key, path } = await setupSharedDashboard();
    const response = await api("PATCH", path, {
      key,
      body: { settings: { whitelabel: true, noHeader: false, legend: true, theme: "dark", detailed: true } },
    });
    expect(response.status).toBe(200);
    expect(response.body.settings).toEqual({ whitelabel: true, noHeader: false, legend: true, detailed: true });
    for (const settings of ["dark", [], { legend: "yes" }]) {
      const refused = await api("PATCH", path, { key, body: { settings, enabled: true } });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual(
        errorBody("validation_error", "invalid_input", "Invalid settings format", "settings"),
      );
    }
    const unchanged = (await api("GET", path, { key })).body;
    expect(unchanged).toMatchObject({
      enabled: false,
      settings: { whitelabel: true, noHeader: false, legend: true, detailed: true },
    });
    const badEnabled = await api("PATCH", path, { key, body: { enabled: "yes" } });
    expect(badEnabled.status).toBe(400);
    expect(badEnabled.body.attr).toBe("enabled");
    // Null clears them, as PostHog takes it.
    const cleared = await api("PATCH", path, { key, body: { settings: null } });
    expect({ status: cleared.status, settings: cleared.body.settings }).toEqual({ status: 200, settings: {} });
  });

  it("issues a new token on refresh", async () => {
    const { key, path } = await setupSharedDashboard();
    const before = (await api("PATCH", path, { key, body: { enabled: true } })).body;
    const refreshed = await api("POST", `${path}/refresh`, { key });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toEqual(configuration({ enabled: true, created_at: before.created_at }));
    expect(refreshed.body.access_token).not.toBe(before.access_token);
    expect(refreshed.cost.queries).toBe(2);
    expect((await api("GET", path, { key })).body.access_token).toBe(refreshed.body.access_token);
  });

  it("needs edit rights to change (403), and lets any member who sees the dashboard read", async () => {
    const { key, organization, project } = await setupSharedDashboard();
    const restricted = await createDashboard(key, project.id, { restriction_level: 37 });
    const path = sharingPath(project.id, restricted.id);
    const member = await addMember(organization.id, MembershipLevel.member);
    expect((await api("GET", path, { key: member.key })).status).toBe(200);
    for (const [method, target] of [
      ["PATCH", path],
      ["POST", `${path}/refresh`],
    ] as const) {
      const refused = await api(method, target, { key: member.key, body: { enabled: true } });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual(NO_EDIT_RIGHT);
    }
    expect((await api("GET", path, { key })).body.enabled).toBe(false);
  });

  it("refuses to enable when the organization disallows public sharing, but still disables", async () => {
    const { key, organization, path } = await setupSharedDashboard();
    await api("PATCH", path, { key, body: { enabled: true } });
    await db
      .update(schema.organizations)
      .set({ allowPubliclySharedResources: false })
      .where(eq(schema.organizations.id, organization.id));
    const refused = await api("PATCH", path, { key, body: { enabled: true } });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(
      errorBody("authentication_error", "permission_denied", "Public sharing is disabled for this organization."),
    );
    expect((await api("PATCH", path, { key, body: { enabled: false } })).body.enabled).toBe(false);
  });

  it("needs sharing_configuration:read and :write; 404 for unknown, foreign and deleted dashboards", async () => {
    const { key, owner, project, dashboard, path } = await setupSharedDashboard();
    const reader = await createApiKey(owner, { scopes: ["sharing_configuration:read"] });
    expect((await api("GET", path, { key: reader.value })).status).toBe(200);
    const write = await api("PATCH", path, { key: reader.value, body: { enabled: true } });
    expect(write.body).toEqual(
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key missing required scope 'sharing_configuration:write'",
      ),
    );
    const dashboardOnly = await createApiKey(owner, { scopes: ["dashboard:read"] });
    expect((await api("GET", path, { key: dashboardOnly.value })).status).toBe(403);

    const other = await setupSharedDashboard();
    await api("PATCH", `${dashboardsPath(project.id)}/${dashboard.id}`, { key, body: { deleted: true } });
    for (const target of [
      sharingPath(project.id, 999999),
      sharingPath(project.id, other.dashboard.id),
      other.path,
      path,
    ]) {
      const response = await api("GET", target, { key });
      expect(response.status).toBe(404);
      expect(response.body).toEqual(NOT_FOUND);
      expect((await api("PATCH", target, { key, body: { enabled: true } })).status).toBe(404);
      expect((await api("POST", `${target}/refresh`, { key })).status).toBe(404);
    }
  });
});

describe("answers that carry a secret", () => {
  it("are sent with Cache-Control no-store: the configuration, a new password, a refresh and an unlock", async () => {
    const team = await setupOrganization();
    const dashboard = await createDashboard(team.key, team.project.id, { name: "Board" });
    const sharingPath = `${dashboardsPath(team.project.id)}/${dashboard.id}/sharing`;
    const read = await api("GET", sharingPath, { key: team.key });
    const enabled = await api("PATCH", sharingPath, {
      key: team.key,
      body: { enabled: true, password_required: true },
    });
    const password = await api("POST", `${sharingPath}/passwords`, { key: team.key, body: {} });
    const refreshed = await api("POST", `${sharingPath}/refresh`, { key: team.key });
    const unlocked = await api("POST", `/shared/${refreshed.body.access_token}.json`, {
      body: { password: password.body.password },
    });

    const answers = [read, enabled, password, refreshed, unlocked];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 201, 200, 200]);
    expect(typeof unlocked.body.shareToken).toBe("string");
    expect(answers.map((answer) => answer.headers.get("Cache-Control"))).toEqual(Array(5).fill("no-store"));
  });
});

describe("a sharing write, judged on the dashboard it read", () => {
  afterEach(() => vi.restoreAllMocks());

  /** Each write of a link: its PATCH, a refresh, a password made and one deleted. */
  const sharingWrites = (path: string, passwordId: string): [string, string, unknown][] => [
    ["PATCH", path, { enabled: true }],
    ["POST", `${path}/refresh`, undefined],
    ["POST", `${path}/passwords`, { raw_password: "another-password-2" }],
    ["DELETE", `${path}/passwords/${passwordId}`, undefined],
  ];

  /** An owner's dashboard, its link password-protected with one password, and a plain member, its editor. */
  async function sharedWithEditor() {
    const team = await setupSharedDashboard();
    const editor = await addMember(team.organization.id, MembershipLevel.member);
    await api("PATCH", team.path, { key: team.key, body: { password_required: true } });
    const password = await api("POST", `${team.path}/passwords`, {
      key: team.key,
      body: { raw_password: "kept-password-1" },
    });
    expect(password.status).toBe(201);
    const dashboardPath = `${dashboardsPath(team.project.id)}/${team.dashboard.id}`;
    const lockMeanwhile = () =>
      beforeWrites([
        [
          /^(insert into "sharing_configurations"|insert into "share_passwords"|delete from "share_passwords")/,
          async () => (await api("PATCH", dashboardPath, { key: team.key, body: { restriction_level: 37 } })).status,
        ],
      ]);
    return { ...team, editor, passwordId: password.body.id as string, lockMeanwhile };
  }

  it("lands only while the caller may still edit: after a lock meanwhile each write is 403", async () => {
    const { key, path, editor, passwordId, lockMeanwhile } = await sharedWithEditor();
    const before = (await api("GET", path, { key })).body;
    const writes = sharingWrites(path, passwordId);
    for (const [method, writePath, body] of writes) {
      const ran = lockMeanwhile();
      const written = await api(method, writePath, { key: editor.key, body });
      vi.restoreAllMocks();
      expect(ran, `${method} ${writePath}`).toEqual([200]);
      expect([written.status, written.body], `${method} ${writePath}`).toEqual([403, NO_EDIT_RIGHT]);
      // Unlocked again for the next write.
      await api("PATCH", path.replace(/\/sharing$/, ""), { key, body: { restriction_level: 21 } });
    }
    expect((await api("GET", path, { key })).body).toEqual(before);
  });

  it("lands only while the dashboard is not deleted: deleted meanwhile, each write is 404", async () => {
    const { key, path, passwordId, project, dashboard } = await sharedWithEditor();
    const dashboardPath = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const before = (await api("GET", path, { key })).body;
    const writes = sharingWrites(path, passwordId);
    for (const [method, writePath, body] of writes) {
      const ran = beforeWrites([
        [
          /^(insert into "sharing_configurations"|insert into "share_passwords"|delete from "share_passwords")/,
          async () => (await api("PATCH", dashboardPath, { key, body: { deleted: true } })).status,
        ],
      ]);
      const written = await api(method, writePath, { key, body });
      vi.restoreAllMocks();
      expect(ran, `${method} ${writePath}`).toEqual([200]);
      expect([written.status, written.body], `${method} ${writePath}`).toEqual([404, NOT_FOUND]);
      // Restored, as it was deleted: its link as it was.
      expect((await api("PATCH", dashboardPath, { key, body: { deleted: false } })).status).toBe(200);
    }
    expect((await api("GET", path, { key })).body).toEqual(before);
    expect((await api("GET", `/shared/${before.access_token}.json`)).status).toBe(404);
  });

  it("makes a link on a first read only while the reader still sees the dashboard: else 404, no token", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const dashboardPath = (id: number) => `${dashboardsPath(project.id)}/${id}`;
    const meanwhile: [string, (id: number) => ReturnType<typeof api>][] = [
      // Deleted first: the removal ends the member's reads.
      ["deleted", (id) => api("PATCH", dashboardPath(id), { key, body: { deleted: true } })],
      ["removed", () => api("DELETE", `/api/organizations/${organization.id}/members/${member.user.uuid}`, { key })],
    ];
    for (const [what, change] of meanwhile) {
      const dashboard = await createDashboard(key, project.id, { name: `Confidential, ${what}` });
      const path = `${dashboardPath(dashboard.id)}/sharing`;
      // A first read makes the link; someone turns it on meanwhile, after the change.
      const ran = beforeWrites([
        [
          /^insert into "sharing_configurations"/,
          async () => [
            (await change(dashboard.id)).status,
            (await api("PATCH", path, { key, body: { enabled: true } })).status,
          ],
        ],
      ]);
      const read = await api("GET", path, { key: member.key });
      vi.restoreAllMocks();
      expect(ran, what).toEqual([[what === "removed" ? 204 : 200, what === "removed" ? 200 : 404]]);
      expect([read.status, read.body], what).toEqual([404, NOT_FOUND]);
    }
  });

  it("makes a password only while the link still requires one: turned off meanwhile, 400", async () => {
    const { key, path } = await sharedWithEditor();
    const ran = beforeWrites([
      [
        /^insert into "share_passwords"/,
        async () => (await api("PATCH", path, { key, body: { password_required: false } })).status,
      ],
    ]);
    const created = await api("POST", `${path}/passwords`, { key, body: { raw_password: "correct horse" } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(created, 400, PASSWORD_PROTECTION_OFF);
    const after = (await api("GET", path, { key })).body;
    expect([after.password_required, after.share_passwords.length]).toEqual([false, 1]);
  });

  it("turns the link on only while the organization allows public links: off meanwhile, 403", async () => {
    const { key, organization, path, dashboard, project } = await setupSharedDashboard();
    const ran = beforeWrites([
      [
        /^insert into "sharing_configurations"/,
        async () =>
          (
            await api("PATCH", `/api/organizations/${organization.id}`, {
              key,
              body: { allow_publicly_shared_resources: false },
            })
          ).status,
      ],
    ]);
    const enabled = await api("PATCH", path, { key, body: { enabled: true } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expect(enabled.status).toBe(403);
    expect(enabled.body).toEqual(
      errorBody("authentication_error", "permission_denied", "Public sharing is disabled for this organization."),
    );
    expect((await api("GET", path, { key })).body.enabled).toBe(false);
    const listed = await api("GET", `${dashboardsPath(project.id)}/${dashboard.id}`, { key });
    expect(listed.body.is_shared).toBe(false);
  });
});

describe("a sharing PATCH judged on the configuration as read", () => {
  afterEach(restoreTestDoubles);

  it("a link enabled as an admin sets a share link lifetime limit is refused (409), not left beyond it", async () => {
    const { key, organization, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Shared" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}/sharing`;
    const ran = beforeWrites([
      [
        /^insert into "sharing_configurations"/,
        async () =>
          (
            await api("PATCH", `/api/organizations/${organization.id}`, {
              key,
              body: { share_link_max_lifetime_days: 7 },
            })
          ).status,
      ],
    ]);
    const enabled = await api("PATCH", path, { key, body: { enabled: true } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(enabled, 409, changedMeanwhile("organization's share link lifetime limit"));
    expect((await api("GET", path, { key })).body).toMatchObject({ enabled: false, expires_at: null });
    // Sent again, the link expires within the limit.
    const again = await api("PATCH", path, { key, body: { enabled: true } });
    expect(again.body.enabled).toBe(true);
    expect(Date.parse(again.body.expires_at)).toBeLessThanOrEqual(Date.now() + 7 * 86_400_000);
  });

  it("an allow-list set while passwords were turned on meanwhile leaves the link with both", async () => {
    useEmailTransport();
    const { key, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Shared" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}/sharing`;
    expect((await api("PATCH", path, { key, body: { enabled: true } })).status).toBe(200);
    const ran = beforeWrites([
      [
        /^insert into "sharing_configurations"/,
        async () => (await api("PATCH", path, { key, body: { password_required: true } })).status,
      ],
    ]);
    const listed = await api("PATCH", path, { key, body: { allowed_emails: ["ada@example.com"] } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    const after = await api("GET", path, { key });
    // "A link is protected by passwords or by an e-mail allow-list, not both": a moment later 400.
    expectError(
      listed,
      400,
      errorBody(
        "validation_error",
        "invalid_input",
        "A link is protected by passwords or by an e-mail allow-list, not both.",
        "allowed_emails",
      ),
    );
    expect({ passwordRequired: after.body.password_required, allowedEmails: after.body.allowed_emails }).toEqual({
      passwordRequired: true,
      allowedEmails: null,
    });
  });
});
