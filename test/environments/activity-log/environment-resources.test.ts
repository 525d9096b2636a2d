import { afterEach, describe, expect, it } from "vitest";
import { MembershipLevel } from "../../../src/platform/levels";
import { addMember, api, createProject, setupOrganization } from "../../support/harness";
import { activityEntry, keyIdOf, type ExpectedActivity } from "../../support/activity-log";
import { restoreTestDoubles, useEmailTransport } from "../../support/people";

/**
 * Every write to a project's resources appends one entry to its organization's activity log,
 * in the batch of the write: the entry is checked whole, and a write that fails appends nothing.
 */

type Organization = Awaited<ReturnType<typeof setupOrganization>>;
type Entry = Record<string, unknown> & { seq: number; detail: Record<string, unknown> };

const MASKED = "masked";

async function organizationLog(team: Organization): Promise<Entry[]> {
  const response = await api("GET", `/api/organizations/${team.organization.id}/activity_log`, { key: team.key });
  expect(response.status).toBe(200);
  return response.body.results;
}

async function projectLog(team: Organization, projectId = team.project.id): Promise<Entry[]> {
  const response = await api("GET", `/api/environments/${projectId}/activity_log`, { key: team.key });
  expect(response.status).toBe(200);
  return response.body.results;
}

/**
 * What an entry says about its item; the organization, user and key are the owner's, the project the team's unless
 * given.
 */
type Expected = Omit<ExpectedActivity, "organizationId" | "projectId" | "user" | "apiKeyId"> & {
  projectId?: number | null;
};

/** An entry as the log shows it, made with the owner's key by the request that answered `response`. */
async function expectedEntry(team: Organization, response: { headers: Headers }, expected: Expected) {
  return activityEntry(response, {
    ...expected,
    organizationId: team.organization.id,
    projectId: expected.projectId === undefined ? team.project.id : expected.projectId,
    user: team.owner,
    apiKeyId: await keyIdOf(team.owner),
  });
}

/** The entries `write` appended, oldest first. */
async function entriesAppendedBy<T>(
  team: Organization,
  write: () => Promise<T>,
): Promise<{ result: T; entries: Entry[] }> {
  const before = await organizationLog(team);
  const lastSeq = before[0]?.seq ?? 0;
  const result = await write();
  const after = await organizationLog(team);
  return { result, entries: after.filter((entry) => entry.seq > lastSeq).reverse() };
}

type Response = Awaited<ReturnType<typeof api>>;

/** `write` succeeds with `status` and appends exactly the entry, or the entries, `expected` describes. */
async function expectRecorded(
  team: Organization,
  write: () => Promise<Response>,
  status: number,
  expected: (response: Response) => Expected | Expected[],
) {
  const { result, entries } = await entriesAppendedBy(team, write);
  expect(result.status, result.text).toBe(status);
  const described = [expected(result)].flat();
  expect(entries).toEqual(await Promise.all(described.map((entry) => expectedEntry(team, result, entry))));
  return result;
}

/** `write` fails with `status` and appends nothing. */
async function expectNothingRecorded(team: Organization, write: () => Promise<Response>, status: number) {
  const { result, entries } = await entriesAppendedBy(team, write);
  expect(result.status, result.text).toBe(status);
  expect(entries).toEqual([]);
}

/** No secret anywhere in either log; and the chain, names read in the batch included, verifies. */
async function expectNoSecretIn(team: Organization, secrets: string[]) {
  const logs = JSON.stringify([await organizationLog(team), await projectLog(team)]);
  for (const secret of secrets) expect(logs).not.toContain(secret);
  const verdict = await api("GET", `/api/organizations/${team.organization.id}/activity_log/verify`, { key: team.key });
  expect(verdict.body).toMatchObject({ valid: true, first_invalid: null });
}

const exportsPath = (projectId: number) => `/api/environments/${projectId}/batch_exports`;
const S3_SECRETS = { aws_access_key_id: "AKIA-LOGGED-NEVER", aws_secret_access_key: "s3cr3t-logged-never" };
const S3_EXPORT = {
  name: "Events to S3",
  interval: "hour",
  destination: { type: "S3", config: { bucket_name: "bucket", region: "us-east-1", prefix: "", ...S3_SECRETS } },
};

describe("batch exports", () => {
  const exportEntry = (id: string, activity: string, name: string, changes?: unknown): Expected => ({
    scope: "BatchExport",
    activity,
    itemId: id,
    name,
    changes,
  });

  it("records creation, an update's changes (secrets masked), pause, unpause and deletion", async () => {
    const team = await setupOrganization();
    const created = await expectRecorded(
      team,
      () => api("POST", exportsPath(team.project.id), { key: team.key, body: S3_EXPORT }),
      201,
      (response) => exportEntry(response.body.id, "created", "Events to S3"),
    );
    const id: string = created.body.id;
    const path = `${exportsPath(team.project.id)}/${id}`;

    await expectRecorded(
      team,
      () =>
        api("PATCH", path, {
          key: team.key,
          body: {
            name: "Events to the bucket",
            interval: "day",
            destination: { config: { prefix: "p/", aws_secret_access_key: "rotated-logged-never" } },
          },
        }),
      200,
      () =>
        exportEntry(id, "updated", "Events to the bucket", [
          {
            type: "BatchExport",
            action: "changed",
            field: "name",
            before: "Events to S3",
            after: "Events to the bucket",
          },
          { type: "BatchExport", action: "changed", field: "interval", before: "hour", after: "day" },
          {
            type: "BatchExport",
            action: "changed",
            field: "destination",
            before: { type: "S3", config: { bucket_name: "bucket", region: "us-east-1", prefix: "" } },
            after: { type: "S3", config: { bucket_name: "bucket", region: "us-east-1", prefix: "p/" } },
          },
          {
            type: "BatchExport",
            action: "changed",
            field: "destination.config.aws_secret_access_key",
            before: MASKED,
            after: MASKED,
          },
        ]),
    );
    await expectRecorded(
      team,
      () => api("POST", `${path}/pause`, { key: team.key }),
      200,
      () => exportEntry(id, "paused", "Events to the bucket"),
    );
    // Pausing a paused export changes nothing, and records nothing.
    await expectNothingRecorded(team, () => api("POST", `${path}/pause`, { key: team.key }), 200);
    await expectRecorded(
      team,
      () => api("POST", `${path}/unpause`, { key: team.key }),
      200,
      () => exportEntry(id, "unpaused", "Events to the bucket"),
    );
    await expectNothingRecorded(team, () => api("POST", `${path}/unpause`, { key: team.key }), 200);
    // A PATCH that changes nothing tracked records nothing.
    await expectNothingRecorded(
      team,
      () => api("PATCH", path, { key: team.key, body: { name: "Events to the bucket" } }),
      200,
    );
    await expectRecorded(
      team,
      () => api("DELETE", path, { key: team.key }),
      204,
      () => exportEntry(id, "deleted", "Events to the bucket"),
    );

    const projectEntries = await projectLog(team);
    expect(projectEntries.map((entry) => `${entry.scope}.${entry.activity}`)).toEqual([
      "BatchExport.deleted",
      "BatchExport.unpaused",
      "BatchExport.paused",
      "BatchExport.updated",
      "BatchExport.created",
    ]);
    await expectNoSecretIn(team, [...Object.values(S3_SECRETS), "rotated-logged-never"]);
  });

  // Were a secret sent again compared with the stored one, a right guess would leave no entry and a
  // wrong one would: whoever may edit the export and read the log, without ever seeing it, could test guesses.
  it("records a destination secret sent as changed whether or not it matched the stored one", async () => {
    const team = await setupOrganization();
    const created = await api("POST", exportsPath(team.project.id), { key: team.key, body: S3_EXPORT });
    const path = `${exportsPath(team.project.id)}/${created.body.id}`;
    const masked = {
      type: "BatchExport",
      action: "changed",
      field: "destination.config.aws_secret_access_key",
      before: MASKED,
      after: MASKED,
    };
    // The stored value (a right guess), then another: the same entry each time.
    for (const guess of [S3_SECRETS.aws_secret_access_key, "a-wrong-guess"]) {
      await expectRecorded(
        team,
        () =>
          api("PATCH", path, { key: team.key, body: { destination: { config: { aws_secret_access_key: guess } } } }),
        200,
        () => exportEntry(created.body.id, "updated", "Events to S3", [masked]),
      );
    }
  });

  it("records pausing and unpausing from the organization, with the export's project", async () => {
    const team = await setupOrganization();
    const other = await createProject(team.organization.id);
    const created = await api("POST", exportsPath(other.id), { key: team.key, body: S3_EXPORT });
    const path = `/api/organizations/${team.organization.id}/batch_exports/${created.body.id}`;
    const inOtherProject = (activity: string): Expected => ({
      ...exportEntry(created.body.id, activity, "Events to S3"),
      projectId: other.id,
    });
    await expectRecorded(
      team,
      () => api("POST", `${path}/pause`, { key: team.key }),
      200,
      () => inOtherProject("paused"),
    );
    await expectNothingRecorded(team, () => api("POST", `${path}/pause`, { key: team.key }), 200);
    await expectRecorded(
      team,
      () => api("POST", `${path}/unpause`, { key: team.key }),
      200,
      () => inOtherProject("unpaused"),
    );
    expect((await projectLog(team, other.id)).map((entry) => entry.activity)).toEqual([
      "unpaused",
      "paused",
      "created",
    ]);
    expect(await projectLog(team)).toEqual([]);
  });

  it("records nothing for a write that fails", async () => {
    const team = await setupOrganization();
    const created = await api("POST", exportsPath(team.project.id), { key: team.key, body: S3_EXPORT });
    const path = `${exportsPath(team.project.id)}/${created.body.id}`;
    const unknown = `${exportsPath(team.project.id)}/0190b9a4-0000-7000-8000-000000000000`;
    await expectNothingRecorded(
      team,
      () => api("POST", exportsPath(team.project.id), { key: team.key, body: { ...S3_EXPORT, interval: "never" } }),
      400,
    );
    await expectNothingRecorded(team, () => api("PATCH", path, { key: team.key, body: { interval: "never" } }), 400);
    await expectNothingRecorded(team, () => api("PATCH", unknown, { key: team.key, body: { name: "x" } }), 404);
    await expectNothingRecorded(team, () => api("POST", `${unknown}/pause`, { key: team.key }), 404);
    await expectNothingRecorded(team, () => api("DELETE", unknown, { key: team.key }), 404);
    await expectNothingRecorded(
      team,
      () =>
        api(
          "POST",
          `/api/organizations/${team.organization.id}/batch_exports/0190b9a4-0000-7000-8000-000000000000/pause`,
          { key: team.key },
        ),
      404,
    );
    await api("DELETE", path, { key: team.key });
    await expectNothingRecorded(team, () => api("DELETE", path, { key: team.key }), 404);
  });
});

const dashboardsPath = (projectId: number) => `/api/environments/${projectId}/dashboards`;
const change = (type: string, field: string, before: unknown, after: unknown) => ({
  type,
  action: "changed",
  field,
  before,
  after,
});

describe("dashboards", () => {
  const dashboardEntry = (id: number, activity: string, name: string, changes?: unknown): Expected => ({
    scope: "Dashboard",
    activity,
    itemId: String(id),
    dashboardId: id,
    name,
    changes,
  });

  it("records creation (one entry for a template's tiles), updates, deletion and restoration", async () => {
    const team = await setupOrganization();
    const fromTemplate = await expectRecorded(
      team,
      () => api("POST", dashboardsPath(team.project.id), { key: team.key, body: { use_template: "DEFAULT_APP" } }),
      201,
      (response) => dashboardEntry(response.body.id, "created", "My App Dashboard"),
    );
    expect(fromTemplate.body.tiles.length).toBeGreaterThan(0);
    const created = await expectRecorded(
      team,
      () => api("POST", dashboardsPath(team.project.id), { key: team.key, body: { name: "Revenue" } }),
      201,
      (response) => dashboardEntry(response.body.id, "created", "Revenue"),
    );
    const path = `${dashboardsPath(team.project.id)}/${created.body.id}`;
    await expectRecorded(
      team,
      () =>
        api("PATCH", path, {
          key: team.key,
          body: { name: "Revenue 2026", pinned: true, tags: ["finance"], restriction_level: 37 },
        }),
      200,
      () =>
        dashboardEntry(created.body.id, "updated", "Revenue 2026", [
          change("Dashboard", "name", "Revenue", "Revenue 2026"),
          change("Dashboard", "pinned", false, true),
          change("Dashboard", "tags", [], ["finance"]),
          change("Dashboard", "restriction_level", 21, 37),
        ]),
    );
    await expectNothingRecorded(team, () => api("PATCH", path, { key: team.key, body: { name: "Revenue 2026" } }), 200);
    await expectRecorded(
      team,
      () => api("PATCH", path, { key: team.key, body: { deleted: true } }),
      200,
      () => dashboardEntry(created.body.id, "deleted", "Revenue 2026"),
    );
    await expectRecorded(
      team,
      () => api("PATCH", path, { key: team.key, body: { deleted: false } }),
      200,
      () => dashboardEntry(created.body.id, "restored", "Revenue 2026"),
    );
    expect((await projectLog(team)).map((entry) => `${entry.scope}.${entry.activity}`)).toEqual([
      "Dashboard.restored",
      "Dashboard.deleted",
      "Dashboard.updated",
      "Dashboard.created",
      "Dashboard.created",
    ]);
  });

  it("records tiles added, edited, removed and moved", async () => {
    const team = await setupOrganization();
    const source = await api("POST", dashboardsPath(team.project.id), { key: team.key, body: { name: "Source" } });
    const destination = await api("POST", dashboardsPath(team.project.id), {
      key: team.key,
      body: { name: "Destination" },
    });
    const path = `${dashboardsPath(team.project.id)}/${source.body.id}`;
    const onSource = { dashboard_id: source.body.id };
    const tileEntry = (id: number, activity: string, name: string, extra: Partial<Expected> = {}): Expected => ({
      scope: "DashboardTile",
      activity,
      itemId: String(id),
      dashboardId: source.body.id,
      name,
      context: onSource,
      ...extra,
    });

    const added = await expectRecorded(
      team,
      () => api("PATCH", path, { key: team.key, body: { tiles: [{ text: { body: "Hello" } }] } }),
      200,
      (response) => tileEntry(response.body.tiles[0].id, "created", "Hello"),
    );
    const tileId: number = added.body.tiles[0].id;
    await expectRecorded(
      team,
      () =>
        api("PATCH", path, {
          key: team.key,
          body: { tiles: [{ id: tileId, color: "blue", text: { body: "Hello there" } }] },
        }),
      200,
      () =>
        tileEntry(tileId, "updated", "Hello there", {
          changes: [
            change("DashboardTile", "color", null, "blue"),
            change("DashboardTile", "text", "Hello", "Hello there"),
          ],
        }),
    );
    // Display settings alone are a change too.
    const display = { show_description: true, transparent_background: true, filters_overrides: { date_from: "-7d" } };
    await expectRecorded(
      team,
      () => api("PATCH", path, { key: team.key, body: { tiles: [{ id: tileId, ...display }] } }),
      200,
      () =>
        tileEntry(tileId, "updated", "Hello there", {
          changes: [
            change("DashboardTile", "show_description", null, true),
            change("DashboardTile", "transparent_background", null, true),
            change("DashboardTile", "filters_overrides", null, { date_from: "-7d" }),
          ],
        }),
    );
    await expectRecorded(
      team,
      () =>
        api("PATCH", `${path}/move_tile`, {
          key: team.key,
          body: { tile: { id: tileId }, toDashboard: destination.body.id },
        }),
      200,
      () =>
        tileEntry(tileId, "moved", "Hello there", {
          context: { from_dashboard_id: source.body.id, to_dashboard_id: destination.body.id },
        }),
    );
    const destinationPath = `${dashboardsPath(team.project.id)}/${destination.body.id}`;
    await expectRecorded(
      team,
      () => api("PATCH", destinationPath, { key: team.key, body: { tiles: [{ id: tileId, deleted: true }] } }),
      200,
      () =>
        tileEntry(tileId, "deleted", "Hello there", {
          dashboardId: destination.body.id,
          context: { dashboard_id: destination.body.id },
        }),
    );
  });

  it("records nothing for a write that fails", async () => {
    const team = await setupOrganization();
    const created = await api("POST", dashboardsPath(team.project.id), { key: team.key, body: { name: "Revenue" } });
    const path = `${dashboardsPath(team.project.id)}/${created.body.id}`;
    await expectNothingRecorded(
      team,
      () => api("POST", dashboardsPath(team.project.id), { key: team.key, body: { use_template: "NOPE" } }),
      400,
    );
    await expectNothingRecorded(team, () => api("PATCH", path, { key: team.key, body: { pinned: "yes" } }), 400);
    await expectNothingRecorded(
      team,
      () => api("PATCH", path, { key: team.key, body: { name: "x", tiles: [{ id: 999999999 }] } }),
      400,
    );
    await expectNothingRecorded(
      team,
      () => api("PATCH", `${dashboardsPath(team.project.id)}/999999999`, { key: team.key, body: { name: "x" } }),
      404,
    );
    await expectNothingRecorded(
      team,
      () =>
        api("PATCH", `${path}/move_tile`, {
          key: team.key,
          body: { tile: { id: 999999999 }, toDashboard: created.body.id },
        }),
      404,
    );
    const member = await addMember(team.organization.id, MembershipLevel.member);
    await api("PATCH", path, { key: team.key, body: { restriction_level: 37 } });
    await expectNothingRecorded(team, () => api("PATCH", path, { key: member.key, body: { name: "Mine" } }), 403);
    await expectNothingRecorded(
      team,
      () => api("PUT", `${path}/access_controls`, { key: member.key, body: { access_level: "viewer" } }),
      403,
    );
  });
});

describe("dashboard collaborators", () => {
  it("records adding and removing a collaborator, named by e-mail", async () => {
    const team = await setupOrganization();
    const member = await addMember(team.organization.id, MembershipLevel.member);
    const dashboard = await api("POST", dashboardsPath(team.project.id), {
      key: team.key,
      body: { name: "Board", restriction_level: 37 },
    });
    const path = `${dashboardsPath(team.project.id)}/${dashboard.body.id}/collaborators`;
    const collaboratorEntry = (id: string, activity: string): Expected => ({
      scope: "DashboardCollaborator",
      activity,
      itemId: id,
      dashboardId: dashboard.body.id,
      name: member.user.email,
      context: { dashboard_id: dashboard.body.id, user_uuid: member.user.uuid, level: 37 },
    });
    const added = await expectRecorded(
      team,
      () => api("POST", path, { key: team.key, body: { user_uuid: member.user.uuid, level: 37 } }),
      201,
      (response) => collaboratorEntry(response.body.id, "created"),
    );
    await expectNothingRecorded(
      team,
      () => api("POST", path, { key: team.key, body: { user_uuid: member.user.uuid, level: 37 } }),
      400,
    );
    await expectNothingRecorded(
      team,
      () => api("POST", path, { key: team.key, body: { user_uuid: member.user.uuid, level: 21 } }),
      400,
    );
    await expectRecorded(
      team,
      () => api("DELETE", `${path}/${member.user.uuid}`, { key: team.key }),
      204,
      () => collaboratorEntry(added.body.id, "deleted"),
    );
    await expectNothingRecorded(team, () => api("DELETE", `${path}/${member.user.uuid}`, { key: team.key }), 404);
    expect((await projectLog(team)).map((entry) => `${entry.scope}.${entry.activity}`).slice(0, 2)).toEqual([
      "DashboardCollaborator.deleted",
      "DashboardCollaborator.created",
    ]);
  });
});

describe("dashboard sharing", () => {
  afterEach(restoreTestDoubles);

  it("records enabling, settings, token refreshes and disabling, never the token", async () => {
    const team = await setupOrganization();
    const dashboard = await api("POST", dashboardsPath(team.project.id), {
      key: team.key,
      body: { name: "Shared board" },
    });
    const path = `${dashboardsPath(team.project.id)}/${dashboard.body.id}/sharing`;
    const sharingEntry = (activity: string, changes?: unknown): Expected => ({
      scope: "SharingConfiguration",
      activity,
      itemId: String(dashboard.body.id),
      dashboardId: dashboard.body.id,
      name: "Shared board",
      changes,
      context: { dashboard_id: dashboard.body.id },
    });
    const enabled = await expectRecorded(
      team,
      () => api("PATCH", path, { key: team.key, body: { enabled: true } }),
      200,
      () => sharingEntry("enabled"),
    );
    await expectNothingRecorded(team, () => api("PATCH", path, { key: team.key, body: { enabled: true } }), 200);
    await expectRecorded(
      team,
      () => api("PATCH", path, { key: team.key, body: { settings: { whitelabel: true } } }),
      200,
      () => sharingEntry("updated", [change("SharingConfiguration", "settings", {}, { whitelabel: true })]),
    );
    useEmailTransport();
    await expectRecorded(
      team,
      () => api("PATCH", path, { key: team.key, body: { allowed_emails: ["Ada@Example.com"] } }),
      200,
      () => sharingEntry("updated", [change("SharingConfiguration", "allowed_emails", null, ["ada@example.com"])]),
    );
    await expectNothingRecorded(
      team,
      () => api("PATCH", path, { key: team.key, body: { allowed_emails: ["not an address"] } }),
      400,
    );
    await expectRecorded(
      team,
      () => api("PATCH", path, { key: team.key, body: { allowed_emails: [] } }),
      200,
      () => sharingEntry("updated", [change("SharingConfiguration", "allowed_emails", ["ada@example.com"], null)]),
    );
    const refreshed = await expectRecorded(
      team,
      () => api("POST", `${path}/refresh`, { key: team.key }),
      200,
      () => sharingEntry("access_token_refreshed"),
    );
    await expectNothingRecorded(team, () => api("PATCH", path, { key: team.key, body: { settings: "none" } }), 400);
    await expectNothingRecorded(
      team,
      () => api("POST", `${dashboardsPath(team.project.id)}/999999999/sharing/refresh`, { key: team.key }),
      404,
    );
    await expectRecorded(
      team,
      () => api("PATCH", path, { key: team.key, body: { enabled: false } }),
      200,
      () => sharingEntry("disabled"),
    );
    await expectNoSecretIn(team, [enabled.body.access_token, refreshed.body.access_token]);
  });
});

describe("access controls", () => {
  it("records a member's rule on a dashboard created, changed, removed, and the project's default rule", async () => {
    const team = await setupOrganization();
    const member = await addMember(team.organization.id, MembershipLevel.member);
    const dashboard = await api("POST", dashboardsPath(team.project.id), { key: team.key, body: { name: "Board" } });
    const rulesPath = `${dashboardsPath(team.project.id)}/${dashboard.body.id}/access_controls`;
    const ruleEntry = (id: string, activity: string, accessLevel: string, changes?: unknown): Expected => ({
      scope: "AccessControl",
      activity,
      itemId: id,
      dashboardId: dashboard.body.id,
      name: member.user.email,
      changes,
      context: {
        resource: "dashboard",
        resource_id: String(dashboard.body.id),
        organization_member: member.membership.id,
        role: null,
        access_level: accessLevel,
      },
    });
    const created = await expectRecorded(
      team,
      () =>
        api("PUT", rulesPath, {
          key: team.key,
          body: { organization_member: member.membership.id, access_level: "viewer" },
        }),
      200,
      (response) => ruleEntry(response.body.id, "created", "viewer"),
    );
    await expectNothingRecorded(
      team,
      () =>
        api("PUT", rulesPath, {
          key: team.key,
          body: { organization_member: member.membership.id, access_level: "viewer" },
        }),
      200,
    );
    await expectRecorded(
      team,
      () =>
        api("PUT", rulesPath, {
          key: team.key,
          body: { organization_member: member.membership.id, access_level: "editor" },
        }),
      200,
      () =>
        ruleEntry(created.body.id, "updated", "editor", [change("AccessControl", "access_level", "viewer", "editor")]),
    );
    await expectNothingRecorded(
      team,
      () =>
        api("PUT", rulesPath, {
          key: team.key,
          body: { organization_member: member.membership.id, access_level: "owner" },
        }),
      400,
    );
    await expectNothingRecorded(
      team,
      () =>
        api("PUT", rulesPath, { key: team.key, body: { organization_member: "not-a-member", access_level: "viewer" } }),
      400,
    );
    await expectRecorded(
      team,
      () =>
        api("PUT", rulesPath, {
          key: team.key,
          body: { organization_member: member.membership.id, access_level: null },
        }),
      204,
      () => ruleEntry(created.body.id, "deleted", "editor"),
    );
    // Removing a rule that does not exist changes nothing.
    await expectNothingRecorded(
      team,
      () =>
        api("PUT", rulesPath, {
          key: team.key,
          body: { organization_member: member.membership.id, access_level: null },
        }),
      204,
    );

    const projectRules = `/api/environments/${team.project.id}/access_controls`;
    // The project's privacy follows its default rule, logged as a PATCH of `access_control` logs it.
    const privacy = (before: boolean, after: boolean): Expected => ({
      scope: "Project",
      activity: "updated",
      itemId: String(team.project.id),
      name: team.project.name,
      changes: [change("Project", "access_control", before, after)],
    });
    // A public project has no default rule: making it private creates one.
    const defaultRule = await expectRecorded(
      team,
      () => api("PUT", projectRules, { key: team.key, body: { access_level: "none" } }),
      200,
      (response) => [
        {
          scope: "AccessControl",
          activity: "created",
          itemId: response.body.id,
          name: null,
          context: {
            resource: "project",
            resource_id: String(team.project.id),
            organization_member: null,
            role: null,
            access_level: "none",
          },
        },
        privacy(false, true),
      ],
    );
    await expectRecorded(
      team,
      () => api("PUT", projectRules, { key: team.key, body: { access_level: "member" } }),
      200,
      () => [
        {
          scope: "AccessControl",
          activity: "updated",
          itemId: defaultRule.body.id,
          name: null,
          changes: [change("AccessControl", "access_level", "none", "member")],
          context: {
            resource: "project",
            resource_id: String(team.project.id),
            organization_member: null,
            role: null,
            access_level: "member",
          },
        },
        privacy(true, false),
      ],
    );
    expect((await projectLog(team)).filter((entry) => entry.scope === "AccessControl")).toHaveLength(5);
  });
});
