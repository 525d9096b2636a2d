import { and, eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import * as schema from "../../../src/db/schema";
import { DASHBOARD_VERSIONS_KEPT } from "../../../src/environments/dashboards/dashboard-versions.queries";
import { nowIso, uuid7 } from "../../../src/platform/ids";
import { MembershipLevel } from "../../../src/platform/levels";
import { expectError, maxLength, NO_EDIT_RIGHT } from "../../support/error-bodies";
import { addMember, api, db, errorBody, ISO_TIMESTAMP, setupOrganization, userBasic } from "../../support/harness";
import { createDashboard, dashboardsPath, FIRST_ROW_LAYOUTS, unchangedSince } from "../dashboard-fixtures";
import { beforeWrites } from "../../support/races";
import { countBytesRead, emulateD1TooBig } from "../../support/d1-limits";

const NOT_FOUND = errorBody("invalid_request", "not_found", "Not found.");
const PRECONDITION_FAILED = errorBody(
  "invalid_request",
  "precondition_failed",
  "The resource has changed since the version If-Match names.",
);

type Tile = { id: number; layouts: Record<string, unknown>; text: { body: string } | null };

/** An organization with a dashboard of two text tiles, and the dashboard's path. */
async function dashboardWithTwoNotes() {
  const team = await setupOrganization();
  const created = await createDashboard(team.key, team.project.id, { name: "Notes" });
  const path = `${dashboardsPath(team.project.id)}/${created.id}`;
  const patched = await api("PATCH", path, {
    key: team.key,
    body: { tiles: [{ text: { body: "first" } }, { text: { body: "second" } }] },
  });
  expect(patched.status).toBe(200);
  return { ...team, id: created.id, path, tiles: patched.body.tiles as Tile[] };
}

describe("dashboard versions", () => {
  it("records every change as a version, listed newest first with who made it and a summary", async () => {
    const { key, owner, path, tiles } = await dashboardWithTwoNotes();
    await api("PATCH", path, { key, body: { name: "Renamed", tags: ["kpi"] } });
    await api("PATCH", path, {
      key,
      body: { tiles: [{ id: tiles[0]!.id, layouts: { sm: { x: 6, y: 0, w: 6, h: 5 } } }] },
    });
    await api("PATCH", path, { key, body: { tiles: [{ id: tiles[1]!.id, deleted: true }] } });
    // A PATCH that changes nothing makes no version.
    await api("PATCH", path, { key, body: { name: "Renamed" } });

    const listed = await api("GET", `${path}/versions`, { key });
    expect(listed.status).toBe(200);
    const author = { created_at: expect.stringMatching(ISO_TIMESTAMP), created_by: userBasic(owner) };
    expect(listed.body).toEqual({
      count: 5,
      next: null,
      previous: null,
      results: [
        { version: 5, summary: "Removed 1 tile", api_key_id: expect.any(String), ...author },
        { version: 4, summary: "Moved or resized 1 tile", api_key_id: expect.any(String), ...author },
        { version: 3, summary: "Changed name, changed tags", api_key_id: expect.any(String), ...author },
        { version: 2, summary: "Added 2 tiles", api_key_id: expect.any(String), ...author },
        { version: 1, summary: "Created", api_key_id: expect.any(String), ...author },
      ],
    });
    const page = await api("GET", `${path}/versions?limit=2`, { key });
    expect(page.body.results.map((item: { version: number }) => item.version)).toEqual([5, 4]);
    const next = await api("GET", page.body.next.replace("http://localhost", ""), { key });
    expect(next.body.results.map((item: { version: number }) => item.version)).toEqual([3, 2]);
  });

  it("retrieves the dashboard as a version left it, tiles included; 404 for an unknown version", async () => {
    const { key, id, path, tiles } = await dashboardWithTwoNotes();
    await api("PATCH", path, { key, body: { name: "Later", tiles: [{ id: tiles[0]!.id, text: { body: "edited" } }] } });

    const second = await api("GET", `${path}/versions/2`, { key });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      version: 2,
      summary: "Added 2 tiles",
      dashboard: { id, name: "Notes", pinned: false, tags: [], restriction_level: 21 },
    });
    expect(second.body.dashboard.tiles).toEqual([
      expect.objectContaining({ id: tiles[0]!.id, text: "first", layouts: FIRST_ROW_LAYOUTS, show_description: null }),
      expect.objectContaining({ id: tiles[1]!.id, text: "second" }),
    ]);
    const third = await api("GET", `${path}/versions/3`, { key });
    expect(third.body.dashboard).toMatchObject({ name: "Later" });
    expect(third.body.dashboard.tiles[0]).toMatchObject({ text: "edited" });
    expect((await api("GET", `${path}/versions/9`, { key })).body).toEqual(NOT_FOUND);
    expect((await api("GET", `${path}/versions/x`, { key })).status).toBe(404);
  });

  it("restores a version as a new one: a moved tile's layout, a removed tile and a text come back", async () => {
    const { key, id, path, tiles } = await dashboardWithTwoNotes();
    const [first, second] = tiles;
    await api("PATCH", path, {
      key,
      body: {
        name: "Changed",
        tiles: [
          { id: first!.id, layouts: { sm: { x: 6, y: 20, w: 3, h: 3 } }, text: { body: "rewritten" } },
          { id: second!.id, deleted: true },
          { text: { body: "added later" } },
        ],
      },
    });
    const restored = await api("POST", `${path}/versions/2/restore`, { key });
    expect(restored.status).toBe(200);
    expect(restored.headers.get("ETag")).toBe(`W/"${id}.4"`);
    expect(restored.body.name).toBe("Notes");
    expect(restored.body.tiles.map((tile: Tile) => [tile.id, tile.text?.body, tile.layouts])).toEqual([
      [first!.id, "first", first!.layouts],
      [second!.id, "second", second!.layouts],
    ]);
    const listed = await api("GET", `${path}/versions`, { key });
    expect(listed.body.results.map((item: { version: number; summary: string }) => item.summary)).toEqual([
      "Restored version 2",
      "Changed name, added 1 tile, removed 1 tile, moved or resized 1 tile, edited 1 text",
      "Added 2 tiles",
      "Created",
    ]);
    expect((await api("GET", `${path}/versions/4`, { key })).body.dashboard).toEqual(
      (await api("GET", `${path}/versions/2`, { key })).body.dashboard,
    );
    expect((await api("POST", `${path}/versions/7/restore`, { key })).body).toEqual(NOT_FOUND);
  });

  it("restores only what is still on the dashboard: a text tile moved to another one is left as it is", async () => {
    const { key, organization, project, path, tiles } = await dashboardWithTwoNotes();
    const member = await addMember(organization.id, MembershipLevel.member);
    const hidden = await createDashboard(key, project.id, { name: "Private" });
    const hiddenPath = `${dashboardsPath(project.id)}/${hidden.id}`;
    const moved = await api("PATCH", `${path}/move_tile`, {
      key,
      body: { tile: { id: tiles[0]!.id }, toDashboard: hidden.id },
    });
    expect(moved.status).toBe(200);
    expect((await api("PUT", `${hiddenPath}/access_controls`, { key, body: { access_level: "none" } })).status).toBe(
      200,
    );
    const written = await api("PATCH", hiddenPath, {
      key,
      body: { tiles: [{ id: tiles[0]!.id, text: { body: "the owner's notes" } }] },
    });
    expect(written.status).toBe(200);
    expect((await api("GET", hiddenPath, { key: member.key })).status).toBe(404);

    // The member, an editor of the first dashboard, restores the version that held the moved tile.
    const restored = await api("POST", `${path}/versions/2/restore`, { key: member.key });
    expect(restored.status).toBe(200);
    expect(restored.body.tiles.map((tile: Tile) => tile.text?.body)).toEqual(["second"]);
    const privateNow = await api("GET", hiddenPath, { key });
    expect(privateNow.body.tiles.map((tile: Tile) => [tile.id, tile.text?.body])).toEqual([
      [tiles[0]!.id, "the owner's notes"],
    ]);
  });

  it("hides the versions of a dashboard a member cannot see (404); a restore needs edit rights (403)", async () => {
    const { key, organization, project, id, path } = await dashboardWithTwoNotes();
    const hidden = await addMember(organization.id, MembershipLevel.member);
    const viewer = await addMember(organization.id, MembershipLevel.member);
    for (const [member, accessLevel] of [
      [hidden, "none"],
      [viewer, "viewer"],
    ] as const) {
      await db.insert(schema.accessControls).values({
        id: uuid7(),
        environmentId: project.id,
        resource: "dashboard",
        resourceId: String(id),
        organizationMembershipId: member.membership.id,
        accessLevel,
        createdAt: nowIso(),
        updatedAt: nowIso(),
      });
    }
    for (const route of ["versions", "versions/1"]) {
      expect((await api("GET", `${path}/${route}`, { key: hidden.key })).body).toEqual(NOT_FOUND);
      expect((await api("GET", `${path}/${route}`, { key: viewer.key })).status).toBe(200);
    }
    expect((await api("POST", `${path}/versions/1/restore`, { key: hidden.key })).body).toEqual(NOT_FOUND);
    const refused = await api("POST", `${path}/versions/1/restore`, { key: viewer.key });
    expect(refused.status).toBe(403);
    expect((await api("GET", `${path}/versions`, { key })).body.count).toBe(2);
    const other = await setupOrganization();
    expect((await api("GET", `${path}/versions`, { key: other.key })).status).toBe(404);
  });

  it(`keeps a dashboard's newest ${DASHBOARD_VERSIONS_KEPT} versions, deleting the oldest as it writes`, async () => {
    const { key, id, path } = await dashboardWithTwoNotes();
    // A long history, as a hundred and fifty writes would have left it.
    const snapshot = JSON.stringify((await api("GET", `${path}/versions/2`, { key })).body.dashboard);
    await db.delete(schema.dashboardVersions).where(eq(schema.dashboardVersions.dashboardId, id));
    const rows = Array.from({ length: DASHBOARD_VERSIONS_KEPT }, (_, index) => ({
      dashboardId: id,
      version: 51 + index,
      createdAt: nowIso(),
      summary: "Seeded",
      snapshot,
    }));
    for (let start = 0; start < rows.length; start += 10) {
      await db.insert(schema.dashboardVersions).values(rows.slice(start, start + 10));
    }
    await db.update(schema.dashboards).set({ version: 150 }).where(eq(schema.dashboards.id, id));

    const written = await api("PATCH", path, { key, body: { name: "Once more" } });
    expect(written.headers.get("ETag")).toBe(`W/"${id}.151"`);
    const kept = await db
      .select({ version: schema.dashboardVersions.version })
      .from(schema.dashboardVersions)
      .where(eq(schema.dashboardVersions.dashboardId, id));
    expect(kept.map((row) => row.version).sort((a, b) => a - b)).toEqual(
      Array.from({ length: DASHBOARD_VERSIONS_KEPT }, (_, index) => 52 + index),
    );
    expect((await api("GET", `${path}/versions/51`, { key })).status).toBe(404);
    const [newest] = await db
      .select()
      .from(schema.dashboardVersions)
      .where(and(eq(schema.dashboardVersions.dashboardId, id), eq(schema.dashboardVersions.version, 151)));
    expect(newest?.summary).toBe("Changed name");
  });
});

/** A tile of about 130 KB, each field within its own 64 KiB: seven make a dashboard of about 0.9 MB. */
const heavyTile = () => ({
  text: { body: "note" },
  layouts: { sm: "x".repeat(65_000) },
  filters_overrides: { note: "x".repeat(65_000) },
});

describe("a PATCH sending JSON values with their keys in another order", () => {
  it("changes nothing: no version, no new ETag, no entry (an object's members are unordered)", async () => {
    const { key, organization, project } = await setupOrganization();
    const created = await createDashboard(key, project.id, { name: "Board", breakdown_colors: { a: 1, b: 2 } });
    const path = `${dashboardsPath(project.id)}/${created.id}`;
    const layouts = { sm: { x: 0, y: 0, w: 6, h: 5 } };
    const added = await api("PATCH", path, { key, body: { tiles: [{ text: { body: "note" }, layouts }] } });
    const tile = added.body.tiles[0] as { id: number };
    const log = async () =>
      (await api("GET", `/api/organizations/${organization.id}/activity_log`, { key })).body.results.length;
    const entries = await log();
    const colours = await api("PATCH", path, { key, body: { breakdown_colors: { b: 2, a: 1 } } });
    const reordered = { sm: { h: 5, w: 6, y: 0, x: 0 } };
    const laidOut = await api("PATCH", path, { key, body: { tiles: [{ id: tile.id, layouts: reordered }] } });
    expect([colours.status, laidOut.status, laidOut.headers.get("ETag")]).toEqual([
      200,
      200,
      added.headers.get("ETag"),
    ]);
    const versions = await api("GET", `${path}/versions`, { key });
    expect(versions.body.results.map((version: { summary: string }) => version.summary)).toEqual([
      "Added 1 tile",
      "Created",
    ]);
    expect(await log()).toBe(entries);
  });
});

describe("a dashboard's size", () => {
  it("keeps to 1 MiB of fields and tiles, as its snapshot stores them: a PATCH past it is 400", async () => {
    const { key, project } = await setupOrganization();
    const created = await createDashboard(key, project.id, { name: "Heavy" });
    const path = `${dashboardsPath(project.id)}/${created.id}`;
    // Each field within its own 64 KiB, each body within 1 MiB: seven tiles of about 130 KB.
    const patch = () => api("PATCH", path, { key, body: { tiles: Array.from({ length: 7 }, heavyTile) } });

    expect((await patch()).status).toBe(200);
    expectError(
      await patch(),
      400,
      maxLength("A dashboard holds at most 1048576 bytes of fields and tiles, serialized.", "tiles"),
    );

    const dashboard = await api("GET", path, { key });
    expect(dashboard.body.tiles).toHaveLength(7);
    expect(new TextEncoder().encode(dashboard.text).byteLength).toBeLessThan(1024 * 1024);
    const versions = await api("GET", `${path}/versions`, { key });
    expect(versions.body.count).toBe(2);
  }, 30_000);

  it("answers 400, not 500, to tiles whose snapshot D1 would refuse (past 2 MB), and writes nothing", async () => {
    const { key, project } = await setupOrganization();
    const created = await createDashboard(key, project.id, { name: "Grown" });
    const path = `${dashboardsPath(project.id)}/${created.id}`;
    // Each tile's overrides within 64 KiB once written back (`1e20` is 21 digits): 580 KB sent,
    // a snapshot of about 2.6 MB, which D1 refuses to build.
    const overrides = `{"v": [${Array.from({ length: 2_900 }, () => "1e20").join(",")}]}`;
    const tile = `{"text": {"body": "note"}, "filters_overrides": ${overrides}}`;
    const body = `{"tiles": [${Array.from({ length: 40 }, () => tile).join(",")}]}`;
    expect(new TextEncoder().encode(body).byteLength).toBeLessThan(1024 * 1024);
    emulateD1TooBig();
    const response = await api("PATCH", path, { key, body });
    vi.restoreAllMocks();
    expectError(
      response,
      400,
      maxLength("A dashboard holds at most 1048576 bytes of fields and tiles, serialized.", "tiles"),
    );
    expect((await api("GET", path, { key })).body.tiles).toEqual([]);
    expect((await api("GET", `${path}/versions`, { key })).body.count).toBe(1);
  });

  it("lists versions without reading their snapshots: ten versions of 0.9 MB read a few kilobytes", async () => {
    const { key, project } = await setupOrganization();
    const created = await createDashboard(key, project.id, { name: "Heavy" });
    const path = `${dashboardsPath(project.id)}/${created.id}`;
    expect((await api("PATCH", path, { key, body: { tiles: Array.from({ length: 7 }, heavyTile) } })).status).toBe(200);
    for (let index = 0; index < 9; index += 1) {
      expect((await api("PATCH", path, { key, body: { name: `Heavy ${index}` } })).status).toBe(200);
    }
    const read = countBytesRead();
    const listed = await api("GET", `${path}/versions?limit=100`, { key });
    vi.restoreAllMocks();
    expect(listed.status).toBe(200);
    expect(listed.body.results.map((version: { version: number }) => version.version)).toEqual(
      Array.from({ length: 11 }, (_, index) => 11 - index),
    );
    // At the hundred versions a dashboard keeps, whole snapshots would be 100 MiB for an isolate of 128 MB.
    expect(read.bytes).toBeLessThan(64 * 1024);
    // One version, read alone, still has its snapshot.
    const one = await api("GET", `${path}/versions/2`, { key });
    expect(one.body.dashboard.tiles).toHaveLength(7);
  }, 60_000);
});

describe("conditional dashboard requests", () => {
  it("tags each dashboard response with its version and answers If-None-Match with 304 while it holds", async () => {
    const { key, id, path } = await dashboardWithTwoNotes();
    const read = await api("GET", path, { key });
    expect(read.headers.get("ETag")).toBe(`W/"${id}.2"`);
    const fresh = await api("GET", path, { key, headers: { "If-None-Match": `W/"${id}.2"` } });
    expect([fresh.status, fresh.text, fresh.headers.get("ETag")]).toEqual([304, "", `W/"${id}.2"`]);
    expect((await api("GET", path, { key, headers: { "If-None-Match": `"${id}.1", W/"${id}.2"` } })).status).toBe(304);
    expect((await api("GET", path, { key, headers: { "If-None-Match": `W/"${id}.1"` } })).status).toBe(200);
    await api("PATCH", path, { key, body: { pinned: true } });
    const stale = await api("GET", path, { key, headers: { "If-None-Match": `W/"${id}.2"` } });
    expect([stale.status, stale.headers.get("ETag"), stale.body.pinned]).toEqual([200, `W/"${id}.3"`, true]);
  });

  it("lets one of two writers holding the same version win; the other gets 412 and changes nothing", async () => {
    const { key, id, path } = await dashboardWithTwoNotes();
    const before = (await api("GET", path, { key })).body;
    const first = await api("PATCH", path, { key, headers: { "If-Match": `W/"${id}.2"` }, body: { name: "First" } });
    const second = await api("PATCH", path, { key, headers: { "If-Match": `W/"${id}.2"` }, body: { name: "Second" } });
    expect([first.status, first.headers.get("ETag")]).toEqual([200, `W/"${id}.3"`]);
    expect([second.status, second.body]).toEqual([412, PRECONDITION_FAILED]);
    const after = await api("GET", path, { key });
    expect(after.body).toEqual(unchangedSince({ ...before, name: "First" }));
    expect((await api("GET", `${path}/versions`, { key })).body.count).toBe(3);
  });

  it("lets exactly one of two concurrent writers win: the version is checked by the write itself", async () => {
    const { key, id, path, tiles } = await dashboardWithTwoNotes();
    // Several rounds, so that some pairs both pass the check against what they read.
    for (const version of [2, 3, 4, 5]) {
      const responses = await Promise.all(
        [`One ${version}`, `Two ${version}`].map((body) =>
          api("PATCH", path, {
            key,
            headers: { "If-Match": `"${id}.${version}"` },
            body: { name: body, tiles: [{ id: tiles[0]!.id, text: { body } }, { text: { body: `${body} new` } }] },
          }),
        ),
      );
      expect(responses.map((response) => response.status).sort()).toEqual([200, 412]);
      const winner = responses.find((response) => response.status === 200)!;
      const after = await api("GET", path, { key });
      expect(after.body.name).toBe(winner.body.name);
      expect(after.body.tiles).toHaveLength(version + 1);
      expect(after.body.tiles.map((tile: Tile) => tile.text?.body)).toContain(winner.body.name);
    }
    expect((await api("GET", `${path}/versions`, { key })).body.count).toBe(6);
  });

  it("checks If-Match on move_tile, reorder_tiles and restore too, and accepts * as any version", async () => {
    const { key, id, project, path, tiles } = await dashboardWithTwoNotes();
    const other = await createDashboard(key, project.id, { name: "Other" });
    const stale = { "If-Match": `W/"${id}.1"` };
    const moved = await api("PATCH", `${path}/move_tile`, {
      key,
      headers: stale,
      body: { tile: { id: tiles[0]!.id }, toDashboard: other.id },
    });
    const reordered = await api("POST", `${path}/reorder_tiles`, {
      key,
      headers: stale,
      body: { tile_order: [tiles[1]!.id] },
    });
    const restored = await api("POST", `${path}/versions/1/restore`, { key, headers: stale });
    for (const response of [moved, reordered, restored]) expect(response.body).toEqual(PRECONDITION_FAILED);
    const any = await api("PATCH", path, { key, headers: { "If-Match": "*" }, body: { description: "Any" } });
    expect(any.status).toBe(200);
    expect((await api("GET", `${path}/versions`, { key })).body.count).toBe(3);
  });
});

/**
 * An owner's dashboard and a plain member who may edit it (everyone may at restriction level 21;
 * at 37, they are its collaborator); `meanwhile` makes the owner take that right away, between the
 * reads and the write of the editor's next write.
 */
async function dashboardWithEditor(restrictionLevel: 21 | 37) {
  const { organization, project, key } = await setupOrganization();
  const editor = await addMember(organization.id, MembershipLevel.member);
  const dashboard = await createDashboard(key, project.id, { name: "Board", restriction_level: restrictionLevel });
  const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
  if (restrictionLevel === 37) {
    const added = await api("POST", `${path}/collaborators`, { key, body: { user_uuid: editor.user.uuid, level: 37 } });
    expect(added.status).toBe(201);
  }
  const takeaways = {
    "a lock to collaborators": () => api("PATCH", path, { key, body: { restriction_level: 37 } }),
    "a viewer rule": () =>
      api("PUT", `${path}/access_controls`, {
        key,
        body: { organization_member: editor.membership.id, access_level: "viewer" },
      }),
    "the collaborator's removal": () => api("DELETE", `${path}/collaborators/${editor.user.uuid}`, { key }),
  };
  const meanwhile = (takeaway: keyof typeof takeaways) =>
    beforeWrites([[/^insert into "dashboard_versions"/, async () => (await takeaways[takeaway]()).status]]);
  return { key, editor, path, meanwhile };
}

describe("a restore in the activity log", () => {
  it("logs the restore's Dashboard `updated` entry even when a tile of the version was moved away since", async () => {
    const { project, key } = await setupOrganization();
    const source = await createDashboard(key, project.id, { name: "Old name" });
    const other = await createDashboard(key, project.id, { name: "Other" });
    const path = `${dashboardsPath(project.id)}/${source.id}`;
    const added = await api("PATCH", path, { key, body: { tiles: [{ text: { body: "note" } }] } });
    expect(added.status).toBe(200);
    const [tile] = added.body.tiles as { id: number }[];
    // Version 2 holds the name "Old name" and the tile; the tile then leaves for the other dashboard.
    const moved = await api("PATCH", `${path}/move_tile`, {
      key,
      body: { tile: { id: tile!.id }, toDashboard: other.id },
    });
    expect(moved.status).toBe(200);
    expect((await api("PATCH", path, { key, body: { name: "New name" } })).status).toBe(200);

    const restored = await api("POST", `${path}/versions/2/restore`, { key });
    expect(restored.status).toBe(200);
    expect(restored.body.name).toBe("Old name");

    // Recorded as the PATCH would be: `Dashboard` `updated` for the fields.
    const log = await api("GET", `/api/environments/${project.id}/activity_log?scope=Dashboard&limit=1`, { key });
    expect(log.status).toBe(200);
    const [latest] = log.body.results;
    expect({ activity: latest.activity, changes: latest.detail.changes }).toEqual({
      activity: "updated",
      changes: [expect.objectContaining({ field: "name", before: "New name", after: "Old name" })],
    });
  });
  it("logs each tile it changes or removes, as a PATCH of them would", async () => {
    const { project, key } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Notes" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const added = await api("PATCH", path, { key, body: { tiles: [{ text: { body: "original" } }] } });
    const [tile] = added.body.tiles as { id: number }[];
    await api("PATCH", path, { key, body: { tiles: [{ id: tile!.id, text: { body: "rewritten" } }] } });
    const later = await api("PATCH", path, { key, body: { tiles: [{ text: { body: "added later" } }] } });
    const addedLater = (later.body.tiles as { id: number }[]).find((shown) => shown.id !== tile!.id)!;

    const restored = await api("POST", `${path}/versions/2/restore`, { key });
    expect(restored.status).toBe(200);

    const log = await api("GET", `/api/environments/${project.id}/activity_log?scope=DashboardTile&limit=2`, { key });
    const [first, second] = log.body.results;
    expect({ activity: first.activity, item_id: first.item_id, changes: first.detail.changes }).toEqual({
      activity: "updated",
      item_id: String(tile!.id),
      changes: [expect.objectContaining({ field: "text", before: "rewritten", after: "original" })],
    });
    expect({ activity: second.activity, item_id: second.item_id }).toEqual({
      activity: "deleted",
      item_id: String(addedLater.id),
    });
  });
});

describe("a dashboard write, judged on the row it read", () => {
  it.each([
    ["a PATCH", "a lock to collaborators", 21, "PATCH", "", { name: "Taken over" }],
    ["a restore", "a lock to collaborators", 21, "POST", "/versions/1/restore", undefined],
    ["a PATCH", "a viewer rule", 21, "PATCH", "", { name: "Taken over" }],
    ["a restore", "a viewer rule", 21, "POST", "/versions/1/restore", undefined],
    ["a PATCH", "the collaborator's removal", 37, "PATCH", "", { name: "Taken over" }],
    ["a restore", "the collaborator's removal", 37, "POST", "/versions/1/restore", undefined],
  ] as const)("lands only while the caller may still edit: %s after %s meanwhile is 403", async (...test) => {
    const [, takeaway, restrictionLevel, method, sub, body] = test;
    const { key, editor, path, meanwhile } = await dashboardWithEditor(restrictionLevel);
    const ran = meanwhile(takeaway);
    const written = await api(method, `${path}${sub}`, { key: editor.key, body });
    vi.restoreAllMocks();
    expect(ran).toEqual([takeaway === "the collaborator's removal" ? 204 : 200]);
    expectError(written, 403, NO_EDIT_RIGHT);
    const after = await api("GET", path, { key });
    expect(after.body).toMatchObject({ name: "Board", effective_privilege_level: 37 });
    expect((await api("GET", `${path}/versions`, { key })).body.count).toBe(
      takeaway === "a lock to collaborators" ? 2 : 1,
    );
    expect((await api(method, `${path}${sub}`, { key: editor.key, body })).status).toBe(403);
  });
});

describe("POST /api/environments/:project_id/dashboards/:id/reorder_tiles", () => {
  it("lays the tiles out in the order given, two a row, as PostHog does, as a new version", async () => {
    const { key, path, tiles } = await dashboardWithTwoNotes();
    const third = await api("PATCH", path, { key, body: { tiles: [{ text: { body: "third" } }] } });
    const ids = (third.body.tiles as Tile[]).map((tile) => tile.id);
    expect(third.body.tiles[2].layouts).toEqual({
      sm: { x: 0, y: 10, w: 6, h: 5 },
      xs: { x: 0, y: 10, w: 6, h: 5 },
    });
    const response = await api("POST", `${path}/reorder_tiles`, {
      key,
      body: { tile_order: [ids[2], ids[0], ids[1]] },
    });
    expect(response.status).toBe(200);
    expect(response.body.tiles.map((tile: Tile) => [tile.text?.body, tile.layouts])).toEqual([
      ["third", { sm: { x: 0, y: 0, w: 6, h: 5 }, xs: { x: 0, y: 0, w: 6, h: 5 } }],
      ["first", { sm: { x: 6, y: 0, w: 6, h: 5 }, xs: { x: 0, y: 5, w: 6, h: 5 } }],
      ["second", { sm: { x: 0, y: 5, w: 6, h: 5 }, xs: { x: 0, y: 10, w: 6, h: 5 } }],
    ]);
    expect((await api("GET", `${path}/versions`, { key })).body.results[0].summary).toBe("Reordered 3 tiles");
    const restored = await api("POST", `${path}/versions/3/restore`, { key });
    expect(restored.body.tiles.map((tile: Tile) => tile.id)).toEqual([tiles[0]!.id, tiles[1]!.id, ids[2]]);
  });

  it("refuses duplicates (400), tiles not on the dashboard (404) and callers without edit rights (403)", async () => {
    const { key, organization, project, path, tiles } = await dashboardWithTwoNotes();
    const duplicate = await api("POST", `${path}/reorder_tiles`, {
      key,
      body: { tile_order: [tiles[0]!.id, tiles[0]!.id] },
    });
    expect(duplicate.body).toEqual(
      errorBody("validation_error", "invalid_input", "tile_order must contain unique tile IDs", "tile_order"),
    );
    const missing = await api("POST", `${path}/reorder_tiles`, { key, body: { tile_order: [tiles[0]!.id, 999999] } });
    expect(missing.body).toEqual(
      errorBody("invalid_request", "not_found", "Tile IDs not found on this dashboard: [999999]"),
    );
    expect((await api("POST", `${path}/reorder_tiles`, { key, body: { tile_order: [] } })).status).toBe(400);
    const member = await addMember(organization.id, MembershipLevel.member);
    const locked = await createDashboard(key, project.id, { name: "Locked", restriction_level: 37 });
    const refused = await api("POST", `${dashboardsPath(project.id)}/${locked.id}/reorder_tiles`, {
      key: member.key,
      body: { tile_order: [1] },
    });
    expect(refused.status).toBe(403);
    expect((await api("GET", `${path}/versions`, { key })).body.count).toBe(2);
  });
});

/**
 * A dashboard that was restricted to collaborators (37), then opened to everyone (21) by its
 * owner: its collaborator stays one, and edits it at either level. Version 2 is the open one.
 */
async function reopenedDashboardWithCollaborator() {
  const { organization, project, key } = await setupOrganization();
  const collaborator = await addMember(organization.id, MembershipLevel.member);
  const dashboard = await createDashboard(key, project.id, { name: "Board", restriction_level: 37 });
  const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
  const added = await api("POST", `${path}/collaborators`, {
    key,
    body: { user_uuid: collaborator.user.uuid, level: 37 },
  });
  expect(added.status).toBe(201);
  const opened = await api("PATCH", path, { key, body: { name: "Open board", restriction_level: 21 } });
  expect([opened.status, opened.headers.get("ETag")]).toEqual([200, `W/"${dashboard.id}.2"`]);
  const lock = () => api("PATCH", path, { key, body: { restriction_level: 37 } });
  return { key, path, collaborator, lock };
}

describe("a collaborator's write repeating the restriction level it read", () => {
  it.each([
    ["a restore of a version at level 21", "POST", "/versions/2/restore", undefined],
    ["a PATCH sending the level it read (21)", "PATCH", "", { name: "Renamed", restriction_level: 21 }],
  ] as const)("%s lands without undoing the owner's lock meanwhile", async (...test) => {
    const [, method, sub, body] = test;
    const { key, path, collaborator, lock } = await reopenedDashboardWithCollaborator();
    // Read at 21, the level the collaborator's write names is no change; the owner locks it before the write.
    const ran = beforeWrites([[/^insert into "dashboard_versions"/, async () => (await lock()).status]]);
    const written = await api(method, `${path}${sub}`, { key: collaborator.key, body });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    // A collaborator still edits at 37: the write lands, and only the owner's lock sets the level.
    expect(written.status).toBe(200);
    expect(written.body.restriction_level).toBe(37);
    expect((await api("GET", path, { key })).body.restriction_level).toBe(37);
  });
});

describe("a change of the restriction level, judged on the caller read", () => {
  it("lands only while the caller may still change it: an admin demoted meanwhile locks nothing (403)", async () => {
    const { organization, project, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const dashboard = await createDashboard(key, project.id, { name: "Board" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const memberPath = `/api/organizations/${organization.id}/members/${admin.user.uuid}`;
    const demote = async () =>
      (await api("PATCH", memberPath, { key, body: { level: MembershipLevel.member } })).status;
    const ran = beforeWrites([[/^insert into "dashboard_versions"/, demote]]);
    // As a plain member they still edit this level-21 dashboard, but may no longer lock it.
    const locked = await api("PATCH", path, { key: admin.key, body: { restriction_level: 37 } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(locked, 403, NO_EDIT_RIGHT);
    expect((await api("GET", path, { key })).body.restriction_level).toBe(21);
  });
});

describe("a restore of a version whose insight was deleted since", () => {
  it("brings the insight back with its tile: the dashboard shows what the version it writes lists", async () => {
    const { key, project } = await setupOrganization();
    const base = dashboardsPath(project.id);
    type Tile = { id: number; insight: { id: number } | null };
    const original = await api("POST", base, { key, body: { use_template: "DEFAULT_APP" } });
    // A copy in the same project shows the same insights.
    const copy = await api("POST", base, { key, body: { use_dashboard: original.body.id } });
    expect([original.status, copy.status]).toEqual([201, 201]);
    const tile = (original.body.tiles as Tile[]).find((shown) => shown.insight !== null)!;
    // Version 2 of the original: that tile removed. Then the copy goes, with the insights only it showed.
    const removed = await api("PATCH", `${base}/${original.body.id}`, {
      key,
      body: { tiles: [{ id: tile.id, deleted: true }] },
    });
    const gone = await api("PATCH", `${base}/${copy.body.id}`, { key, body: { deleted: true, delete_insights: true } });
    expect([removed.status, gone.status]).toEqual([200, 200]);

    const restored = await api("POST", `${base}/${original.body.id}/versions/1/restore`, { key });
    expect(restored.status).toBe(200);
    const shown = (restored.body.tiles as Tile[]).map((one) => one.id).sort();
    expect(shown).toContain(tile.id);
    const latest = (await api("GET", `${base}/${original.body.id}/versions?limit=1`, { key })).body.results[0];
    const written = await api("GET", `${base}/${original.body.id}/versions/${latest.version}`, { key });
    expect((written.body.dashboard.tiles as { id: number }[]).map((one) => one.id).sort()).toEqual(shown);
  });
});

describe("reorder_tiles with the order already in place", () => {
  it("changes nothing: no entry, no version, the same ETag", async () => {
    const team = await setupOrganization();
    const created = await createDashboard(team.key, team.project.id, { use_template: "DEFAULT_APP" });
    const path = `${dashboardsPath(team.project.id)}/${created.id}`;
    const order = ((await api("GET", path, { key: team.key })).body.tiles as Tile[]).map((tile) => tile.id).reverse();
    const first = await api("POST", `${path}/reorder_tiles`, { key: team.key, body: { tile_order: order } });
    expect(first.status).toBe(200);
    const logPath = `/api/environments/${team.project.id}/activity_log?scope=Dashboard`;
    const entriesBefore = (await api("GET", logPath, { key: team.key })).body.results;

    const again = await api("POST", `${path}/reorder_tiles`, { key: team.key, body: { tile_order: order } });

    expect(again.status).toBe(200);
    expect(again.body.tiles).toEqual(first.body.tiles);
    expect(again.headers.get("ETag")).toBe(first.headers.get("ETag"));
    expect((await api("GET", logPath, { key: team.key })).body.results).toEqual(entriesBefore);
    const versions = await api("GET", `${path}/versions`, { key: team.key });
    expect(versions.body.results[0].summary).toBe(`Reordered ${order.length} tiles`);
    expect(versions.body.results[0].version).toBe(Number(/\.(\d+)"$/.exec(first.headers.get("ETag")!)![1]));
  });
});
