import { and, eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../../src/db/schema";
import { addMember, addMembership, api, db, setupOrganization } from "../../support/harness";
import { MembershipLevel } from "../../../src/platform/levels";
import { beforeWrites } from "../../support/races";
import { changedMeanwhile, expectError, NOT_FOUND } from "../../support/error-bodies";
import { createDashboard, dashboardsPath } from "../dashboard-fixtures";

const memberPath = (organizationId: string, uuid: string) => `/api/organizations/${organizationId}/members/${uuid}`;

afterEach(() => vi.restoreAllMocks());

type Tile = { id: number; text: { body: string } | null };

/** A dashboard with one text tile, and a second, empty one: what a tile move needs. */
async function twoDashboards() {
  const team = await setupOrganization();
  const source = await createDashboard(team.key, team.project.id, { name: "Source" });
  const destination = await createDashboard(team.key, team.project.id, { name: "Destination" });
  const sourcePath = `${dashboardsPath(team.project.id)}/${source.id}`;
  const destinationPath = `${dashboardsPath(team.project.id)}/${destination.id}`;
  const added = await api("PATCH", sourcePath, { key: team.key, body: { tiles: [{ text: { body: "note" } }] } });
  expect(added.status).toBe(200);
  const [tile] = added.body.tiles as Tile[];
  return { ...team, source, destination, sourcePath, destinationPath, tile: tile! };
}

const logOf = async (key: string, projectId: number, scope: string) =>
  (await api("GET", `/api/environments/${projectId}/activity_log?scope=${scope}`, { key })).body.results as {
    activity: string;
    item_id: string;
  }[];

describe("dashboard writes racing the dashboard's soft delete", () => {
  it("a tile move whose source is deleted meanwhile answers 404 and moves nothing", async () => {
    const { key, project, sourcePath, destinationPath, destination, tile } = await twoDashboards();
    const ran = beforeWrites([
      [
        /^update "dashboard_tiles"/,
        async () => (await api("PATCH", sourcePath, { key, body: { deleted: true } })).status,
      ],
    ]);
    const moved = await api("PATCH", `${sourcePath}/move_tile`, {
      key,
      body: { tile: { id: tile.id }, toDashboard: destination.id },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expect(moved.status).toBe(404);
    // Refused: the tile is not on the destination, and no "moved" entry was recorded.
    const onDestination = (await api("GET", destinationPath, { key })).body.tiles as Tile[];
    expect(onDestination.map((shown) => shown.id)).toEqual([]);
    const moves = (await logOf(key, project.id, "DashboardTile")).filter((entry) => entry.activity === "moved");
    expect(moves).toEqual([]);
  });

  it("a tile move whose destination is deleted meanwhile does not put the tile on a deleted dashboard", async () => {
    const { key, sourcePath, destinationPath, destination, tile } = await twoDashboards();
    const ran = beforeWrites([
      [
        /^update "dashboard_tiles"/,
        async () => (await api("PATCH", destinationPath, { key, body: { deleted: true } })).status,
      ],
    ]);
    const moved = await api("PATCH", `${sourcePath}/move_tile`, {
      key,
      body: { tile: { id: tile.id }, toDashboard: destination.id },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    // The source no longer shows the tile, and the only dashboard holding it is in the trash.
    const onSource = (await api("GET", sourcePath, { key })).body.tiles as Tile[];
    expect({ status: moved.status, onSource: onSource.map((shown) => shown.id) }).toEqual({
      status: 404,
      onSource: [tile.id],
    });
  });

  it("a version restore on a dashboard deleted meanwhile answers 404 and restores nothing", async () => {
    const { key, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Original" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    expect((await api("PATCH", path, { key, body: { name: "Renamed" } })).status).toBe(200);
    const ran = beforeWrites([
      [
        /^insert into "dashboard_versions"/,
        async () => (await api("PATCH", path, { key, body: { deleted: true } })).status,
      ],
    ]);
    const restored = await api("POST", `${path}/versions/1/restore`, { key });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expect(restored.status).toBe(404);
    // Brought back from the trash, it must show what it had when it was deleted.
    const back = await api("PATCH", path, { key, body: { deleted: false } });
    expect(back.status).toBe(200);
    expect(back.body.name).toBe("Renamed");
  });

  it("a reorder of a dashboard deleted meanwhile answers 404 and reorders nothing", async () => {
    const { key, sourcePath } = await twoDashboards();
    const added = await api("PATCH", sourcePath, { key, body: { tiles: [{ text: { body: "second" } }] } });
    const layoutsOf = (tiles: { id: number; layouts: unknown }[]) => tiles.map(({ id, layouts }) => ({ id, layouts }));
    const before = layoutsOf(added.body.tiles);
    const ran = beforeWrites([
      [/^update "dashboards"/, async () => (await api("PATCH", sourcePath, { key, body: { deleted: true } })).status],
    ]);
    const reversed = before.map(({ id }) => id).reverse();
    const reordered = await api("POST", `${sourcePath}/reorder_tiles`, { key, body: { tile_order: reversed } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expect(reordered.status).toBe(404);
    const back = await api("PATCH", sourcePath, { key, body: { deleted: false } });
    expect(layoutsOf(back.body.tiles)).toEqual(before);
  });
});

describe("a dashboard PATCH sending back the value it read", () => {
  it("does not undo, under the same version, a change made meanwhile to what it sends back as read", async () => {
    const { key, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "X" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    let renamedEtag: string | null = null;
    const ran = beforeWrites([
      [
        /^update "dashboards"/,
        async () => {
          const renamed = await api("PATCH", path, { key, body: { name: "Y" } });
          renamedEtag = renamed.headers.get("ETag");
          return renamed.status;
        },
      ],
    ]);
    // Read as "X": the request changes nothing as read, and writes the name back to "X".
    const written = await api("PATCH", path, { key, body: { name: "X" } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    // It changed nothing as read, so it comes before the rename: "Y" stays, under the ETag that
    // names it, and a client holding that ETag is right to be told its copy is current.
    expect(written.status).toBe(200);
    expect(written.body.name).toBe("Y");
    expect(written.headers.get("ETag")).toBe(renamedEtag);
    const cached = await api("GET", path, { key, headers: { "If-None-Match": renamedEtag! } });
    expect(cached.status).toBe(304);
  });
});

describe("a dashboard's creation, judged on the caller as read", () => {
  it("a member removed from the organization meanwhile creates no dashboard in it", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const ran = beforeWrites([
      [
        /^insert into "dashboards"/,
        async () =>
          (await api("DELETE", `/api/organizations/${organization.id}/members/${member.user.uuid}`, { key })).status,
      ],
    ]);
    const created = await api("POST", dashboardsPath(project.id), { key: member.key, body: { name: "Left behind" } });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    const listed = await api("GET", dashboardsPath(project.id), { key });
    const names = (listed.body.results as { name: string }[]).map((dashboard) => dashboard.name);
    expect({ status: created.status, names }).toEqual({ status: 404, names: [] });
  });
});

describe("a dashboard's soft delete, twice at once", () => {
  it("records one deletion in the activity log, not two", async () => {
    const { project, key } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Twice" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const ran = beforeWrites([
      [/^update "dashboards"/, async () => (await api("PATCH", path, { key, body: { deleted: true } })).status],
    ]);
    const second = await api("PATCH", path, { key, body: { deleted: true } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expect(second.status).toBe(200);
    expect(second.body.deleted).toBe(true);
    const deletions = (await logOf(key, project.id, "Dashboard")).filter((entry) => entry.activity === "deleted");
    expect(deletions).toHaveLength(1);
  });
});

describe("a version restore's entries, each gated on its own write", () => {
  it("logs no removal of a tile that was moved to another dashboard meanwhile", async () => {
    const { key, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Board" });
    const other = await createDashboard(key, project.id, { name: "Other" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    // Version 1 has no tiles; both tiles come after it, so restoring it removes them.
    const added = await api("PATCH", path, {
      key,
      body: { tiles: [{ text: { body: "first" } }, { text: { body: "second" } }] },
    });
    const [first, second] = added.body.tiles as Tile[];
    const ran = beforeWrites([
      [
        /^insert into "dashboard_versions"/,
        async () =>
          (
            await api("PATCH", `${path}/move_tile`, {
              key,
              body: { tile: { id: first!.id }, toDashboard: other.id },
            })
          ).status,
      ],
    ]);
    const restored = await api("POST", `${path}/versions/1/restore`, { key });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expect(restored.status).toBe(200);
    // The moved tile lives on, on the other dashboard: only the second tile was removed.
    const onOther = (await api("GET", `${dashboardsPath(project.id)}/${other.id}`, { key })).body.tiles as Tile[];
    expect(onOther.map((tile) => tile.id)).toEqual([first!.id]);
    const removals = (await logOf(key, project.id, "DashboardTile"))
      .filter((entry) => entry.activity === "deleted")
      .map((entry) => entry.item_id);
    expect(removals).toEqual([String(second!.id)]);
  });
});

type Sent = { method: string; path: string; key: string; body?: unknown; headers?: Record<string, string> };
const send = (request: Sent) =>
  api(request.method, request.path, { key: request.key, body: request.body, headers: request.headers });

/**
 * The same request twice, the second run to its end between the first one's reads and its write
 * (the first batch matching `write`): as a client's retry racing its first attempt.
 */
async function twiceAtOnce(request: Sent, write: RegExp) {
  const meanwhile = beforeWrites([[write, () => send(request)]]);
  const first = await send(request);
  vi.restoreAllMocks();
  expect(meanwhile).toHaveLength(1);
  const second = meanwhile[0] as Awaited<ReturnType<typeof send>>;
  return { first, second };
}

const activityOf = (organizationId: string, activity: string) =>
  db
    .select({ id: schema.activityLog.id })
    .from(schema.activityLog)
    .where(and(eq(schema.activityLog.organizationId, organizationId), eq(schema.activityLog.activity, activity)));

describe("a dashboard write sent twice at once, as a retry racing its first attempt", () => {
  it("move_tile sent twice at once moves the tile once: the second answers 404 and makes no version", async () => {
    const team = await setupOrganization();
    const source = await createDashboard(team.key, team.project.id, { name: "Source", use_template: "DEFAULT_APP" });
    const destination = await createDashboard(team.key, team.project.id, { name: "Destination" });
    const versionsOf = async (id: number) =>
      (await api("GET", `${dashboardsPath(team.project.id)}/${id}/versions`, { key: team.key })).body.count;
    const before = [await versionsOf(source.id), await versionsOf(destination.id)];
    const tile = source.tiles[0]!.id;

    const { first, second } = await twiceAtOnce(
      {
        method: "PATCH",
        path: `${dashboardsPath(team.project.id)}/${source.id}/move_tile`,
        key: team.key,
        body: { tile: { id: tile }, toDashboard: destination.id },
      },
      /^update "dashboards"/,
    );

    // Sent a moment later the second is 404 ("tile not a live tile of the source") and writes
    // nothing; at once it must be the same: one move, one version on each dashboard, one entry.
    expect({
      statuses: [first.status, second.status].sort(),
      versions: [await versionsOf(source.id), await versionsOf(destination.id)],
      moved: (await activityOf(team.organization.id, "moved")).length,
    }).toEqual({ statuses: [200, 404], versions: [before[0]! + 1, before[1]! + 1], moved: 1 });
  });

  it("copy_tile of one insight sent twice at once copies it once: the second is 400, with no version", async () => {
    const team = await setupOrganization();
    const source = await createDashboard(team.key, team.project.id, { name: "Source", use_template: "DEFAULT_APP" });
    const destination = await createDashboard(team.key, team.project.id, { name: "Destination" });
    const destinationPath = `${dashboardsPath(team.project.id)}/${destination.id}`;
    const tile = source.tiles.find((shown) => shown.insight !== null)!;

    const { first, second } = await twiceAtOnce(
      {
        method: "POST",
        path: `${destinationPath}/copy_tile`,
        key: team.key,
        body: { fromDashboardId: source.id, tileId: tile.id },
      },
      /^update "dashboards"/,
    );

    const read = await api("GET", destinationPath, { key: team.key });
    expect({
      statuses: [first.status, second.status].sort(),
      refused: first.body.detail,
      tiles: read.body.tiles.length,
      versions: (await api("GET", `${destinationPath}/versions`, { key: team.key })).body.count,
      copies: (
        await db
          .select({ id: schema.activityLog.id })
          .from(schema.activityLog)
          .where(
            and(
              eq(schema.activityLog.organizationId, team.organization.id),
              eq(schema.activityLog.scope, "DashboardTile"),
              eq(schema.activityLog.activity, "created"),
            ),
          )
      ).length,
    }).toEqual({
      statuses: [200, 400],
      refused: "This insight is already on the destination dashboard.",
      tiles: 1,
      versions: 2,
      copies: 1,
    });
  });

  it("a share password deleted twice at once answers 204 then 404, with one entry", async () => {
    const team = await setupOrganization();
    const dashboard = await createDashboard(team.key, team.project.id, { name: "Shared" });
    const path = `${dashboardsPath(team.project.id)}/${dashboard.id}/sharing`;
    expect((await api("PATCH", path, { key: team.key, body: { password_required: true } })).status).toBe(200);
    const created = await api("POST", `${path}/passwords`, { key: team.key, body: { raw_password: "hunter22hunter" } });
    expect(created.status).toBe(201);

    const { first, second } = await twiceAtOnce(
      { method: "DELETE", path: `${path}/passwords/${created.body.id}`, key: team.key },
      /^delete from "share_passwords"/,
    );

    expect([second.status, first.status].sort()).toEqual([204, 404]);
    expect(await activityOf(team.organization.id, "password_deleted")).toHaveLength(1);
  });
});

describe("dashboard writes by a caller who lost the project between read and write (404, nothing written)", () => {
  it("a member removed from the organization meanwhile changes no dashboard (level 21): 404, unchanged", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await createDashboard(key, project.id, { name: "Board" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const ran = beforeWrites([
      [
        /^update "dashboards"/,
        async () => (await api("DELETE", memberPath(organization.id, member.user.uuid), { key })).status,
      ],
    ]);
    const patched = await api("PATCH", path, { key: member.key, body: { name: "Written after removal" } });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    const after = await api("GET", path, { key });
    // A moment later the removed member gets 404 and the dashboard keeps its name: so must it now.
    expect({ status: patched.status, name: after.body.name }).toEqual({ status: 404, name: "Board" });
  });

  it("a collaborator hidden from the project meanwhile (project rule none) changes no locked dashboard", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await createDashboard(key, project.id, { name: "Locked", restriction_level: 37 });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const added = await api("POST", `${path}/collaborators`, {
      key,
      body: { user_uuid: member.user.uuid, level: 37 },
    });
    expect(added.status).toBe(201);
    const ran = beforeWrites([
      [
        /^update "dashboards"/,
        async () =>
          (
            await api("PUT", `/api/projects/${project.id}/access_controls`, {
              key,
              body: { organization_member: member.membership.id, access_level: "none" },
            })
          ).status,
      ],
    ]);
    const patched = await api("PATCH", path, { key: member.key, body: { name: "Written while hidden" } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    // The member no longer sees the project at all (404 on it a moment later).
    expect((await api("GET", path, { key: member.key })).status).toBe(404);
    const after = await api("GET", path, { key });
    expect({ status: patched.status, name: after.body.name }).toEqual({ status: 404, name: "Locked" });
  });

  it("a member removed meanwhile turns on no public link, and is handed no live token", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await createDashboard(key, project.id, { name: "Internal" });
    const sharingPath = `${dashboardsPath(project.id)}/${dashboard.id}/sharing`;
    const ran = beforeWrites([
      [
        /^insert into "sharing_configurations"/,
        async () => (await api("DELETE", memberPath(organization.id, member.user.uuid), { key })).status,
      ],
    ]);
    const enabled = await api("PATCH", sharingPath, { key: member.key, body: { enabled: true } });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    // What the landed write gives the removed member: the organization's dashboard, publicly, for good.
    const opened =
      typeof enabled.body?.access_token === "string"
        ? (await api("GET", `/shared/${enabled.body.access_token}.json`)).status
        : null;
    const sharing = await api("GET", sharingPath, { key });
    expect({ status: enabled.status, opened, enabledNow: sharing.body.enabled }).toEqual({
      status: 404,
      opened: null,
      enabledNow: false,
    });
  });

  it("a dashboard's creator removed from the organization meanwhile adds no collaborator to it", async () => {
    const { organization, project, key } = await setupOrganization();
    const creator = await addMember(organization.id, MembershipLevel.member);
    const friend = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await createDashboard(creator.key, project.id, { name: "Mine", restriction_level: 37 });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const ran = beforeWrites([
      [
        /^insert into "dashboard_collaborators"/,
        async () => (await api("DELETE", memberPath(organization.id, creator.user.uuid), { key })).status,
      ],
    ]);
    const added = await api("POST", `${path}/collaborators`, {
      key: creator.key,
      body: { user_uuid: friend.user.uuid, level: 37 },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    const listed = await api("GET", `${path}/collaborators`, { key });
    expect({ status: added.status, collaborators: listed.body }).toEqual({ status: 404, collaborators: [] });
  });
});

type TextTile = { id: number; text: { id: number; body: string } | null };

describe("a dashboard copy judged on its source as read", () => {
  it("a caller removed from the source's organization meanwhile copies nothing of it elsewhere", async () => {
    const home = await setupOrganization();
    const away = await setupOrganization();
    // away's owner is an admin of home too: may copy home's dashboards into away.
    await addMembership(home.organization.id, away.owner, MembershipLevel.admin);
    const source = await createDashboard(home.key, home.project.id, { name: "Home secrets" });
    const sourcePath = `${dashboardsPath(home.project.id)}/${source.id}`;
    expect(
      (await api("PATCH", sourcePath, { key: home.key, body: { tiles: [{ text: { body: "Q3 numbers" } }] } })).status,
    ).toBe(200);

    const ran = beforeWrites([
      [
        /^insert into "dashboards"/,
        async () => (await api("DELETE", memberPath(home.organization.id, away.owner.uuid), { key: home.key })).status,
      ],
    ]);
    const copied = await api("POST", dashboardsPath(away.project.id), {
      key: away.key,
      body: { name: "Copy", use_dashboard: source.id },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    // A moment later the removed admin no longer sees the source: 400, nothing created.
    const listed = await api("GET", dashboardsPath(away.project.id), { key: away.key });
    const names = (listed.body.results as { name: string }[]).map((dashboard) => dashboard.name);
    expect({ status: copied.status, names }).toEqual({ status: 400, names: [] });
  });

  it("a source hidden from the caller by a none rule meanwhile is not copied", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const source = await createDashboard(key, project.id, { name: "Board" });
    const sourcePath = `${dashboardsPath(project.id)}/${source.id}`;
    expect((await api("PATCH", sourcePath, { key, body: { tiles: [{ text: { body: "hidden" } }] } })).status).toBe(200);
    const ran = beforeWrites([
      [
        /^insert into "dashboards"/,
        async () =>
          (
            await api("PUT", `${sourcePath}/access_controls`, {
              key,
              body: { organization_member: member.membership.id, access_level: "none" },
            })
          ).status,
      ],
    ]);
    const copied = await api("POST", dashboardsPath(project.id), {
      key: member.key,
      body: { name: "Copy", use_dashboard: source.id },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    const listed = await api("GET", dashboardsPath(project.id), { key });
    const names = (listed.body.results as { name: string }[]).map((dashboard) => dashboard.name).sort();
    expect({ status: copied.status, names }).toEqual({ status: 400, names: ["Board"] });
  });
});

describe("a tile copy judged on its source as read", () => {
  it("a none rule on the source given meanwhile refuses the copy (404), as a moment later", async () => {
    const { organization, project, key } = await setupOrganization();
    const source = await createDashboard(key, project.id, { name: "Source" });
    const sourcePath = `${dashboardsPath(project.id)}/${source.id}`;
    const noted = await api("PATCH", sourcePath, { key, body: { tiles: [{ text: { body: "for admins only" } }] } });
    expect(noted.status).toBe(200);
    const destination = await createDashboard(key, project.id, { name: "Destination" });
    const copyPath = `${dashboardsPath(project.id)}/${destination.id}/copy_tile`;
    // A plain member, an editor of both dashboards by default, until the owner hides the source.
    const member = await addMember(organization.id, MembershipLevel.member);
    const body = { fromDashboardId: noted.body.id, tileId: noted.body.tiles[0].id };
    const ran = beforeWrites([
      [
        /^update "dashboards"/,
        async () =>
          (
            await api("PUT", `${sourcePath}/access_controls`, {
              key,
              body: { organization_member: member.membership.id, access_level: "none" },
            })
          ).status,
      ],
    ]);
    const copied = await api("POST", copyPath, { key: member.key, body });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expect([copied.status, copied.body]).toEqual([404, NOT_FOUND]);
    expect((await api("GET", `${dashboardsPath(project.id)}/${destination.id}`, { key })).body.tiles).toEqual([]);
  });

  it("a tile removed from the source meanwhile is not copied (404)", async () => {
    const { project, key } = await setupOrganization();
    const source = await createDashboard(key, project.id, { name: "Source" });
    const sourcePath = `${dashboardsPath(project.id)}/${source.id}`;
    const noted = await api("PATCH", sourcePath, { key, body: { tiles: [{ text: { body: "soon gone" } }] } });
    const tileId = noted.body.tiles[0].id;
    const destination = await createDashboard(key, project.id, { name: "Destination" });
    const ran = beforeWrites([
      [
        /^update "dashboards"/,
        async () => (await api("PATCH", `${sourcePath}/tiles/${tileId}`, { key, body: { deleted: true } })).status,
      ],
    ]);
    const copied = await api("POST", `${dashboardsPath(project.id)}/${destination.id}/copy_tile`, {
      key,
      body: { fromDashboardId: noted.body.id, tileId },
    });
    vi.restoreAllMocks();
    expect([ran, copied.status, copied.body]).toEqual([[200], 404, NOT_FOUND]);
    expect((await api("GET", `${dashboardsPath(project.id)}/${destination.id}`, { key })).body.tiles).toEqual([]);
  });
});

describe("a dashboard PATCH whose tiles change nothing as read", () => {
  it("does not undo a text edit made meanwhile (the dashboard's version and history name the new text)", async () => {
    const { key, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Board" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const added = await api("PATCH", path, { key, body: { tiles: [{ text: { body: "A" } }] } });
    const [tile] = added.body.tiles as TextTile[];
    let editedEtag: string | null = null;
    const ran = beforeWrites([
      [
        /^update "dashboards"/,
        async () => {
          const edited = await api("PATCH", path, { key, body: { tiles: [{ id: tile!.id, text: { body: "B" } }] } });
          editedEtag = edited.headers.get("ETag");
          return edited.status;
        },
      ],
    ]);
    // Sends back the body it read: changes nothing as read, so it comes before the edit.
    const resent = await api("PATCH", path, { key, body: { tiles: [{ id: tile!.id, text: { body: "A" } }] } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expect(resent.status).toBe(200);
    const after = await api("GET", path, { key });
    expect({
      text: (after.body.tiles as TextTile[])[0]!.text!.body,
      etag: after.headers.get("ETag"),
    }).toEqual({ text: "B", etag: editedEtag });
  });

  it("a member removed meanwhile (with an edit meanwhile) lands no tile write", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await createDashboard(key, project.id, { name: "Board" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const added = await api("PATCH", path, { key, body: { tiles: [{ text: { body: "A" } }] } });
    const [tile] = added.body.tiles as TextTile[];
    const ran = beforeWrites([
      [
        /^update "dashboards"/,
        async () => [
          (await api("PATCH", path, { key, body: { tiles: [{ id: tile!.id, text: { body: "B" } }] } })).status,
          (await api("DELETE", memberPath(organization.id, member.user.uuid), { key })).status,
        ],
      ],
    ]);
    const resent = await api("PATCH", path, {
      key: member.key,
      body: { tiles: [{ id: tile!.id, text: { body: "A" } }] },
    });
    vi.restoreAllMocks();
    expect(ran).toEqual([[200, 204]]);
    const after = await api("GET", path, { key });
    // A moment later the removed member gets 404 and the text stays "B".
    expect({ status: resent.status, text: (after.body.tiles as TextTile[])[0]!.text!.body }).toEqual({
      status: 404,
      text: "B",
    });
  });
});

const CHANGED_MEANWHILE = {
  type: "conflict",
  code: "conflict",
  detail: "The dashboard was changed by another request meanwhile. Try again.",
  attr: null,
};

/** A dashboard with two text tiles, and a dashboard only its owner edits (restriction 37). */
async function notesAndLocked() {
  const team = await setupOrganization();
  const notes = await createDashboard(team.key, team.project.id, { name: "Notes" });
  const path = `${dashboardsPath(team.project.id)}/${notes.id}`;
  const added = await api("PATCH", path, {
    key: team.key,
    body: { tiles: [{ text: { body: "first" } }, { text: { body: "second" } }] },
  });
  expect(added.status).toBe(200);
  const locked = await createDashboard(team.key, team.project.id, { name: "Locked", restriction_level: 37 });
  const member = await addMember(team.organization.id, MembershipLevel.member);
  return {
    ...team,
    member,
    path,
    locked,
    lockedPath: `${dashboardsPath(team.project.id)}/${locked.id}`,
    tiles: added.body.tiles as Tile[],
  };
}

const summariesOf = async (key: string, path: string) =>
  ((await api("GET", `${path}/versions?limit=10`, { key })).body.results as { summary: string }[]).map(
    (version) => version.summary,
  );

describe("a dashboard PATCH naming a tile that leaves the dashboard meanwhile (409, nothing written)", () => {
  it("a text edit racing the tile's move to a dashboard the caller may not edit edits nothing there", async () => {
    const { key, project, member, path, locked, lockedPath, tiles } = await notesAndLocked();
    const tile = tiles[0]!;
    expect((await api("PATCH", lockedPath, { key: member.key, body: { name: "x" } })).status).toBe(403);
    const move = { tile: { id: tile.id }, to_dashboard: locked.id };
    const ran = beforeWrites([
      [/^update "texts"/, async () => (await api("PATCH", `${path}/move_tile`, { key, body: move })).status],
    ]);
    const edited = await api("PATCH", path, {
      key: member.key,
      body: { tiles: [{ id: tile.id, text: { body: "by the member" } }] },
    });
    vi.restoreAllMocks();
    expect([ran, edited.status, edited.body]).toEqual([[200], 409, CHANGED_MEANWHILE]);
    const onLocked = (await api("GET", lockedPath, { key })).body.tiles as Tile[];
    expect(onLocked.map((each) => [each.id, each.text?.body])).toEqual([[tile.id, "first"]]);
    expect((await logOf(key, project.id, "DashboardTile")).map((entry) => entry.activity)).not.toContain("updated");
    // No version of the source says a text was edited.
    expect(await summariesOf(key, path)).toEqual([
      `Moved tile ${tile.id} to dashboard ${locked.id}`,
      "Added 2 tiles",
      "Created",
    ]);
  });

  it("a text edit racing the tile's removal edits nothing and logs nothing after the removal", async () => {
    const { key, project, path, tiles } = await notesAndLocked();
    const tile = tiles[0]!;
    const ran = beforeWrites([
      [
        /^update "texts"/,
        async () => (await api("PATCH", `${path}/tiles/${tile.id}`, { key, body: { deleted: true } })).status,
      ],
    ]);
    const edited = await api("PATCH", path, {
      key,
      body: { tiles: [{ id: tile.id, text: { body: "after removal" } }] },
    });
    vi.restoreAllMocks();
    expect([ran, edited.status]).toEqual([[200], 409]);
    const entries = (await logOf(key, project.id, "DashboardTile")).filter(
      (entry) => entry.item_id === String(tile.id),
    );
    expect(entries.map((entry) => entry.activity)).toEqual(["deleted", "created"]);
  });

  it("duplicate_tiles racing the tile's removal or its move copies nothing", async () => {
    const { key, member, path, locked, tiles } = await notesAndLocked();
    const [first, second] = tiles;
    const remove = () => api("PATCH", `${path}/tiles/${first!.id}`, { key, body: { deleted: true } });
    const removed = beforeWrites([[/^update "dashboards"/, async () => (await remove()).status]]);
    const copied = await api("PATCH", path, { key, body: { duplicate_tiles: [{ id: first!.id }] } });
    vi.restoreAllMocks();
    expect([removed, copied.status]).toEqual([[200], 409]);
    const move = { tile: { id: second!.id }, to_dashboard: locked.id };
    const moved = beforeWrites([
      [/^update "dashboards"/, async () => (await api("PATCH", `${path}/move_tile`, { key, body: move })).status],
    ]);
    const copiedByMember = await api("PATCH", path, {
      key: member.key,
      body: { duplicate_tiles: [{ id: second!.id }] },
    });
    vi.restoreAllMocks();
    expect([moved, copiedByMember.status]).toEqual([[200], 409]);
    expect((await api("GET", path, { key })).body.tiles).toEqual([]);
  });

  it("duplicate_tiles (or a new tile) racing the dashboard's soft delete answers 404, adds nothing", async () => {
    const { key, project, path, tiles } = await notesAndLocked();
    const ran = beforeWrites([
      [/^update "dashboards"/, async () => (await api("PATCH", path, { key, body: { deleted: true } })).status],
    ]);
    const copied = await api("PATCH", path, { key, body: { duplicate_tiles: [{ id: tiles[0]!.id }] } });
    vi.restoreAllMocks();
    expect([ran, copied.status]).toEqual([[200], 404]);
    expect((await api("PATCH", path, { key, body: { deleted: false } })).status).toBe(200);
    const raced = beforeWrites([
      [/^update "dashboards"/, async () => (await api("PATCH", path, { key, body: { deleted: true } })).status],
    ]);
    const added = await api("PATCH", path, { key, body: { tiles: [{ text: { body: "new" } }] } });
    vi.restoreAllMocks();
    expect([raced, added.status]).toEqual([[200], 404]);
    const restored = await api("PATCH", path, { key, body: { deleted: false } });
    expect((restored.body.tiles as Tile[]).map((tile) => tile.text?.body)).toEqual(["first", "second"]);
    const created = (await logOf(key, project.id, "DashboardTile")).filter((entry) => entry.activity === "created");
    expect(created).toHaveLength(2);
  });
});

describe("a dashboard PATCH sending the deleted state it read, racing a soft delete", () => {
  it("answers 404 and renames nothing: it does not edit a dashboard deleted meanwhile", async () => {
    const { key, project } = await setupOrganization();
    const board = await createDashboard(key, project.id, { name: "Board" });
    const path = `${dashboardsPath(project.id)}/${board.id}`;
    const ran = beforeWrites([
      [/^update "dashboards"/, async () => (await api("PATCH", path, { key, body: { deleted: true } })).status],
    ]);
    const renamed = await api("PATCH", path, { key, body: { deleted: false, name: "Renamed" } });
    vi.restoreAllMocks();
    expect([ran, renamed.status]).toEqual([[200], 404]);
    expect((await api("PATCH", path, { key, body: { deleted: false } })).body.name).toBe("Board");
    // Sending `deleted: true` again to a deleted dashboard is still a PATCH it answers (200).
    await api("PATCH", path, { key, body: { deleted: true } });
    const again = await api("PATCH", path, { key, body: { deleted: true } });
    expect([again.status, again.body.deleted]).toEqual([200, true]);
  });
});

describe("a tile landing twice on one dashboard through racing writes", () => {
  it("a move racing a copy of the same insight to the destination is 400: the insight lands once", async () => {
    const { key, project } = await setupOrganization();
    const source = await createDashboard(key, project.id, { name: "Source", use_template: "DEFAULT_APP" });
    const destination = await createDashboard(key, project.id, { name: "Destination" });
    const sourcePath = `${dashboardsPath(project.id)}/${source.id}`;
    const destinationPath = `${dashboardsPath(project.id)}/${destination.id}`;
    const tile = source.tiles.find((shown) => shown.insight !== null)!;
    const copy = { fromDashboardId: source.id, tileId: tile.id };
    const ran = beforeWrites([
      [
        /^update "dashboard_tiles"/,
        async () => (await api("POST", `${destinationPath}/copy_tile`, { key, body: copy })).status,
      ],
    ]);
    const moved = await api("PATCH", `${sourcePath}/move_tile`, {
      key,
      body: { tile: { id: tile.id }, to_dashboard: destination.id },
    });
    vi.restoreAllMocks();
    expect([ran, moved.status, moved.body.attr]).toEqual([[200], 400, "to_dashboard"]);
    const shown = (await api("GET", destinationPath, { key })).body.tiles as { insight: { id: number } | null }[];
    expect(shown.filter((each) => each.insight?.id === tile.insight!.id)).toHaveLength(1);
    expect((await api("GET", sourcePath, { key })).body.tiles.map((each: { id: number }) => each.id)).toContain(
      tile.id,
    );
  });

  it("a version restore racing a copy of an insight it brings back answers 409: the insight lands once", async () => {
    const { key, project } = await setupOrganization();
    const board = await createDashboard(key, project.id, { name: "Board", use_template: "DEFAULT_APP" });
    const other = await createDashboard(key, project.id, { name: "Other" });
    const boardPath = `${dashboardsPath(project.id)}/${board.id}`;
    const tile = board.tiles.find((shown) => shown.insight !== null)!;
    const copied = await api("POST", `${dashboardsPath(project.id)}/${other.id}/copy_tile`, {
      key,
      body: { fromDashboardId: board.id, tileId: tile.id },
    });
    const otherTile = (copied.body.tiles as { id: number }[])[0]!;
    expect((await api("PATCH", boardPath, { key, body: { tiles: [{ id: tile.id, deleted: true }] } })).status).toBe(
      200,
    );
    const back = { fromDashboardId: other.id, tileId: otherTile.id };
    const ran = beforeWrites([
      [
        /^insert into "dashboard_versions"/,
        async () => (await api("POST", `${boardPath}/copy_tile`, { key, body: back })).status,
      ],
    ]);
    const restored = await api("POST", `${boardPath}/versions/1/restore`, { key });
    vi.restoreAllMocks();
    expect([ran, restored.status, restored.body.code]).toEqual([[200], 409, "conflict"]);
    const shown = (await api("GET", boardPath, { key })).body.tiles as { insight: { id: number } | null }[];
    expect(shown.filter((each) => each.insight?.id === tile.insight!.id)).toHaveLength(1);
    // Sent again, it restores: the copy added since the version goes.
    expect((await api("POST", `${boardPath}/versions/1/restore`, { key })).status).toBe(200);
    const again = (await api("GET", boardPath, { key })).body.tiles as { id: number; insight: { id: number } | null }[];
    expect(again.filter((each) => each.insight?.id === tile.insight!.id).map((each) => each.id)).toEqual([tile.id]);
  });
});

type TeamEntry = { seq: number; scope: string; activity: string; request_id: string; detail: { changes: unknown } };
type Team = Awaited<ReturnType<typeof setupOrganization>>;

async function lastSeq(team: Team) {
  const log = await api("GET", `/api/organizations/${team.organization.id}/activity_log?limit=1`, { key: team.key });
  return (log.body.results[0]?.seq ?? 0) as number;
}

async function entriesAfter(team: Team, seq: number): Promise<TeamEntry[]> {
  const log = await api("GET", `/api/organizations/${team.organization.id}/activity_log?limit=1000`, {
    key: team.key,
  });
  expect(log.status).toBe(200);
  return (log.body.results as TeamEntry[]).filter((entry) => entry.seq > seq).reverse();
}

/** `first` is sent; `meanwhile` runs whole between its reads and its write (its entry's insert). */
async function raced(team: Team, first: () => ReturnType<typeof api>, meanwhile: () => ReturnType<typeof api>) {
  const before = await lastSeq(team);
  const ran = beforeWrites([[/insert into "activity_log"/, meanwhile]]);
  const response = await first();
  vi.restoreAllMocks();
  const [other] = ran as [Awaited<ReturnType<typeof api>>];
  return { response, other, entries: await entriesAfter(team, before) };
}

describe("a dashboard write landing between another's read and its write (no If-Match)", () => {
  it("of two identical PATCHes at once, records one change: judged again, the second changes nothing", async () => {
    const team = await setupOrganization();
    const created = await createDashboard(team.key, team.project.id, { name: "Weekly" });
    const path = `${dashboardsPath(team.project.id)}/${created.id}`;
    const patch = () => api("PATCH", path, { key: team.key, body: { description: "Checked" } });
    const { response, other, entries } = await raced(team, patch, patch);
    expect(other.status).toBe(200);
    expect(response.status).toBe(200);
    // Both land (last writer wins); the one whose read went stale is judged again on the
    // dashboard as the other left it, where it changes nothing: no entry, no version.
    expect(entries.map((entry) => `${entry.scope}.${entry.activity}`)).toEqual(["Dashboard.updated"]);
  });

  it("is applied over it, judged again: its entry records the `before` it replaced", async () => {
    const team = await setupOrganization();
    const created = await createDashboard(team.key, team.project.id, { name: "Weekly" });
    const path = `${dashboardsPath(team.project.id)}/${created.id}`;
    const { response, other, entries } = await raced(
      team,
      () => api("PATCH", path, { key: team.key, body: { name: "Monthly" } }),
      () => api("PATCH", path, { key: team.key, body: { name: "Daily" } }),
    );
    expect([other.status, response.status]).toEqual([200, 200]);
    expect((await api("GET", path, { key: team.key })).body.name).toBe("Monthly");
    const mine = entries.find((entry) => entry.request_id === response.headers.get("X-Request-Id"));
    // The name went Weekly -> Daily (the other request), then Daily -> Monthly (this one).
    expect(mine?.detail.changes).toEqual([
      { type: "Dashboard", action: "changed", field: "name", before: "Daily", after: "Monthly" },
    ]);
  });

  it("answers 409 and writes nothing when it loses three times in a row", async () => {
    const team = await setupOrganization();
    const created = await createDashboard(team.key, team.project.id, { name: "Weekly" });
    const path = `${dashboardsPath(team.project.id)}/${created.id}`;
    const setDescription = (text: string) => async () =>
      (await api("PATCH", path, { key: team.key, body: { description: text } })).status;
    // Each of its writes (its SQL sets the name; the others' do not) meets another change first.
    const renaming = /^update "dashboards" set "name"/;
    const ran = beforeWrites([
      [renaming, setDescription("one")],
      [renaming, setDescription("two")],
      [renaming, setDescription("three")],
    ]);

    const renamed = await api("PATCH", path, { key: team.key, body: { name: "Monthly" } });

    vi.restoreAllMocks();
    expect(ran).toEqual([200, 200, 200]);
    expectError(renamed, 409, changedMeanwhile("dashboard"));
    const stored = (await api("GET", path, { key: team.key })).body;
    expect([stored.name, stored.description]).toEqual(["Weekly", "three"]);
  });

  it("of two identical tile PATCHes at once, records the tile's change once", async () => {
    const team = await setupOrganization();
    const created = await createDashboard(team.key, team.project.id, { name: "Tiles" });
    const path = `${dashboardsPath(team.project.id)}/${created.id}`;
    await api("PATCH", path, { key: team.key, body: { tiles: [{ text: { body: "Note" } }] } });
    const tileId = (await api("GET", path, { key: team.key })).body.tiles[0].id;
    const patch = () => api("PATCH", `${path}/tiles/${tileId}`, { key: team.key, body: { color: "red" } });
    const { response, other, entries } = await raced(team, patch, patch);
    expect([other.status, response.status]).toEqual([200, 200]);
    expect(entries.map((entry) => `${entry.scope}.${entry.activity}`)).toEqual(["DashboardTile.updated"]);
  });

  it("of two sharing PATCHes turning a link on at once, records SharingConfiguration.enabled once", async () => {
    const team = await setupOrganization();
    const created = await createDashboard(team.key, team.project.id, { name: "Shared" });
    const path = `${dashboardsPath(team.project.id)}/${created.id}/sharing`;
    const enable = () => api("PATCH", path, { key: team.key, body: { enabled: true } });
    const { response, other, entries } = await raced(team, enable, enable);
    expect([other.status, response.status]).toEqual([200, 200]);
    // The link was turned on once: one entry, one event for webhooks.
    expect(entries.map((entry) => `${entry.scope}.${entry.activity}`)).toEqual(["SharingConfiguration.enabled"]);
  });
});

describe("parallel writes to one dashboard without If-Match", () => {
  it("all land, each tile's change recorded once, though each but the first is judged again", async () => {
    const team = await setupOrganization();
    const created = await createDashboard(team.key, team.project.id, { name: "Busy" });
    const path = `${dashboardsPath(team.project.id)}/${created.id}`;
    const notes = Array.from({ length: 8 }, (_, index) => ({ text: { body: `note ${index}` } }));
    const tiles = (await api("PATCH", path, { key: team.key, body: { tiles: notes } })).body.tiles as Tile[];
    const before = await lastSeq(team);

    const responses = await Promise.all(
      tiles.map((tile) => api("PATCH", `${path}/tiles/${tile.id}`, { key: team.key, body: { color: "red" } })),
    );

    expect(responses.map((response) => response.status)).toEqual(tiles.map(() => 200));
    const stored = (await api("GET", path, { key: team.key })).body.tiles as { color: string }[];
    expect(stored.map((tile) => tile.color)).toEqual(tiles.map(() => "red"));
    const entries = await entriesAfter(team, before);
    expect(entries.map((entry) => `${entry.scope}.${entry.activity}`)).toEqual(
      tiles.map(() => "DashboardTile.updated"),
    );
  });
});

describe("a write read again (no If-Match): what it sent as read undoes nothing", () => {
  it("a sharing PATCH read again applies what it meant to change: a link turned off meanwhile stays off", async () => {
    const { key, project } = await setupOrganization();
    const board = await createDashboard(key, project.id, { name: "Shared" });
    const path = `${dashboardsPath(project.id)}/${board.id}/sharing`;
    expect((await api("PATCH", path, { key, body: { enabled: true } })).status).toBe(200);
    // Between this PATCH's read (enabled, settings {}) and its write, another turns the link off.
    const ran = beforeWrites([
      [
        /^update "sharing_configurations" set "enabled"/,
        async () => (await api("PATCH", path, { key, body: { enabled: false } })).status,
      ],
    ]);
    // It sends the state it read (enabled) along with what it changes (the settings), as a client
    // sending its form whole does.
    const mine = await api("PATCH", path, { key, body: { enabled: true, settings: { whitelabel: true } } });
    vi.restoreAllMocks();
    expect([ran, mine.status]).toEqual([[200], 200]);
    const after = (await api("GET", path, { key })).body;
    // What it meant to change lands; `enabled: true`, sent as read, undoes nothing: the link stays off.
    expect({ enabled: after.enabled, settings: after.settings }).toEqual({
      enabled: false,
      settings: { whitelabel: true },
    });
  });

  it("a tile PATCH read again applies only what it meant to change: a move made meanwhile stays", async () => {
    const { key, project } = await setupOrganization();
    const board = await createDashboard(key, project.id, { name: "Tiles" });
    const path = `${dashboardsPath(project.id)}/${board.id}`;
    const added = await api("PATCH", path, { key, body: { tiles: [{ text: { body: "Note" } }] } });
    const tile = added.body.tiles[0] as { id: number; layouts: unknown };
    const tilePath = `${path}/tiles/${tile.id}`;
    const movedMeanwhile = { sm: { x: 6, y: 0, w: 6, h: 5 } };
    const ran = beforeWrites([
      [
        /^update "dashboard_tiles" set "layouts"/,
        async () => (await api("PATCH", tilePath, { key, body: { layouts: movedMeanwhile } })).status,
      ],
    ]);
    // It colours the tile, sending its layouts as read, as a client sending the tile whole does.
    const mine = await api("PATCH", tilePath, { key, body: { layouts: tile.layouts, color: "blue" } });
    vi.restoreAllMocks();
    expect([ran, mine.status]).toEqual([[200], 200]);
    const [stored] = (await api("GET", path, { key })).body.tiles as { color: string | null; layouts: unknown }[];
    // "A value sent as read (... a tile's layouts) is no change then either": the move stays.
    expect({ color: stored!.color, layouts: stored!.layouts }).toEqual({ color: "blue", layouts: movedMeanwhile });
  });

  it("two identical PATCHes of the dashboard itself (a field, deleted) at once make one version", async () => {
    const { key, project } = await setupOrganization();
    const board = await createDashboard(key, project.id, { name: "Doomed" });
    const path = `${dashboardsPath(project.id)}/${board.id}`;
    const summaries = async () =>
      ((await api("GET", `${path}/versions`, { key })).body.results as { summary: string }[]).map(
        (version) => version.summary,
      );
    // Two identical PATCHes of quick_filter_ids at once: the second, judged on the dashboard as the
    // first left it, changes nothing, so it should make no version.
    const filters = () => api("PATCH", path, { key, body: { quick_filter_ids: ["a"] } });
    const raced = beforeWrites([[/insert into "dashboard_versions"/, async () => (await filters()).status]]);
    const filtered = await filters();
    vi.restoreAllMocks();
    expect([raced, filtered.status]).toEqual([[200], 200]);
    expect(await summaries()).toEqual(["Changed quick_filter_ids", "Created"]);
    // Two soft deletes at once: one deletion, one version (the activity log already has one entry).
    const remove = () => api("PATCH", path, { key, body: { deleted: true } });
    const ran = beforeWrites([[/^update "dashboards" set "deleted"/, async () => (await remove()).status]]);
    const removed = await remove();
    vi.restoreAllMocks();
    expect([ran, removed.status]).toEqual([[200], 200]);
    // Restored (once, alone) so that its versions can be listed.
    expect((await api("PATCH", path, { key, body: { deleted: false } })).status).toBe(200);
    expect(await summaries()).toEqual([
      "Restored the dashboard",
      "Deleted the dashboard",
      "Changed quick_filter_ids",
      "Created",
    ]);
  });
});
