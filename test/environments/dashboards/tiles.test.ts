import { eq } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import * as schema from "../../../src/db/schema";
import { chunkForInsert } from "../../../src/platform/db";
import { nowIso } from "../../../src/platform/ids";
import { MembershipLevel } from "../../../src/platform/levels";
import { activityEntry, keyIdOf } from "../../support/activity-log";
import {
  AUTHENTICATION_FAILED,
  expectError,
  missingScope,
  NO_EDIT_RIGHT,
  NOT_AUTHENTICATED,
  NOT_FOUND,
} from "../../support/error-bodies";
import {
  addMember,
  api,
  createApiKey,
  createProject,
  db,
  errorBody,
  ISO_TIMESTAMP,
  setupOrganization,
} from "../../support/harness";
import {
  createDashboard,
  dashboardBody,
  dashboardsPath,
  FIRST_ROW_LAYOUTS,
  textTileBody,
  unchangedSince,
} from "../dashboard-fixtures";

const PRECONDITION_FAILED = errorBody(
  "invalid_request",
  "precondition_failed",
  "The resource has changed since the version If-Match names.",
);
const invalid = (code: string, detail: string, attr: string) => errorBody("validation_error", code, detail, attr);

const SECOND_ROW = { sm: { x: 0, y: 5, w: 6, h: 5 }, xs: { x: 0, y: 5, w: 6, h: 5 } };
const WIDE = { sm: { x: 0, y: 0, w: 12, h: 3 }, xs: { x: 0, y: 0, w: 6, h: 3 } };

type Tile = { id: number; layouts: Record<string, unknown>; text: { id: number; body: string } | null };

/** A dashboard of two text tiles, version 2, and the paths of it and of its first tile. */
async function dashboardWithTwoNotes(tree = "environments") {
  const team = await setupOrganization();
  const created = await createDashboard(team.key, team.project.id, { name: "Notes" });
  const path = `${dashboardsPath(team.project.id, tree)}/${created.id}`;
  const patched = await api("PATCH", path, {
    key: team.key,
    body: { tiles: [{ text: { body: "first" } }, { text: { body: "second" } }] },
  });
  expect(patched.status).toBe(200);
  const tiles = patched.body.tiles as Tile[];
  return { ...team, id: created.id, path, tiles, tilePath: `${path}/tiles/${tiles[0]!.id}` };
}

/** A place on the grid: templates add their tiles' minimum sizes. */
const GRID_BOX = expect.objectContaining({
  x: expect.any(Number),
  y: expect.any(Number),
  w: expect.any(Number),
  h: expect.any(Number),
});

const storedLayouts = async (tileId: number) =>
  (await db.select().from(schema.dashboardTiles).where(eq(schema.dashboardTiles.id, tileId)))[0]!.layouts;

describe.each(["environments", "projects"])("PATCH /api/%s/:project_id/dashboards/:id/tiles/:tile_id", (tree) => {
  it("changes one tile's layouts as a new version, logged, and answers the whole dashboard", async () => {
    const { key, owner, organization, project, id, path, tiles, tilePath } = await dashboardWithTwoNotes(tree);
    const [first, second] = tiles;
    const moved = { sm: { x: 0, y: 10, w: 12, h: 4 }, xs: { x: 0, y: 10, w: 6, h: 4 } };
    const response = await api("PATCH", tilePath, { key, body: { layouts: moved } });
    expect([response.status, response.headers.get("ETag")]).toEqual([200, `W/"${id}.3"`]);
    expect(response.body).toEqual(
      dashboardBody(owner, {
        id,
        name: "Notes",
        team_id: project.id,
        tiles: [
          textTileBody(owner, "second", { id: second!.id, layouts: SECOND_ROW, order: 0 }),
          textTileBody(owner, "first", { id: first!.id, layouts: moved, order: 1 }),
        ],
      }),
    );
    expect(await storedLayouts(first!.id)).toEqual(moved);
    const versions = await api("GET", `${path}/versions`, { key });
    expect(versions.body.results[0]).toMatchObject({ version: 3, summary: "Moved or resized 1 tile" });

    const log = await api("GET", `/api/organizations/${organization.id}/activity_log?limit=1`, { key });
    expect(log.body.results).toEqual([
      activityEntry(response, {
        organizationId: organization.id,
        projectId: project.id,
        user: owner,
        apiKeyId: await keyIdOf(owner),
        dashboardId: id,
        scope: "DashboardTile",
        activity: "updated",
        itemId: String(first!.id),
        name: "first",
        changes: [
          { type: "DashboardTile", action: "changed", field: "layouts", before: FIRST_ROW_LAYOUTS, after: moved },
        ],
        context: { dashboard_id: id },
      }),
    ]);
  });

  it("changes its colour, display settings and text body; deleted: true removes it", async () => {
    const { key, id, path, tiles, tilePath } = await dashboardWithTwoNotes(tree);
    const styled = await api("PATCH", tilePath, {
      key,
      body: {
        color: "blue",
        show_description: true,
        transparent_background: false,
        filters_overrides: { date_from: "-7d" },
        text: { id: tiles[0]!.text!.id, body: "First, edited" },
      },
    });
    expect(styled.status).toBe(200);
    expect(styled.body.tiles[0]).toMatchObject({
      id: tiles[0]!.id,
      color: "blue",
      show_description: true,
      transparent_background: false,
      filters_overrides: { date_from: "-7d" },
      text: { body: "First, edited" },
    });
    const removed = await api("PATCH", tilePath, { key, body: { deleted: true } });
    expect([removed.status, removed.headers.get("ETag")]).toEqual([200, `W/"${id}.4"`]);
    expect(removed.body.tiles.map((tile: Tile) => tile.id)).toEqual([tiles[1]!.id]);
    const summaries = (await api("GET", `${path}/versions?limit=2`, { key })).body.results.map(
      (version: { summary: string }) => version.summary,
    );
    expect(summaries).toEqual(["Removed 1 tile", "Edited 1 text, restyled 1 tile"]);
    // Gone from the dashboard: its path is not found any more.
    expectError(await api("PATCH", tilePath, { key, body: { color: "red" } }), 404, NOT_FOUND);
  });

  it("places a tile sent layouts: {} on the grid's first free row, never storing {}", async () => {
    const { key, tiles, tilePath } = await dashboardWithTwoNotes(tree);
    const response = await api("PATCH", tilePath, { key, body: { layouts: {} } });
    expect(response.status).toBe(200);
    const below = { sm: { x: 0, y: 5, w: 6, h: 5 }, xs: { x: 0, y: 5, w: 6, h: 5 } };
    // The other tile is on the second row: the first free row is below it.
    const expected = { sm: { ...below.sm, y: 10 }, xs: { ...below.xs, y: 10 } };
    expect(await storedLayouts(tiles[0]!.id)).toEqual(expected);
    expect(response.body.tiles.map((tile: Tile) => [tile.id, tile.layouts])).toEqual([
      [tiles[1]!.id, SECOND_ROW],
      [tiles[0]!.id, expected],
    ]);
  });

  it("honours If-Match on the dashboard: a stale tag is 412 and changes nothing", async () => {
    const { key, id, path, tilePath } = await dashboardWithTwoNotes(tree);
    const before = await api("GET", path, { key });
    expectError(
      await api("PATCH", tilePath, { key, headers: { "If-Match": `W/"${id}.1"` }, body: { layouts: WIDE } }),
      412,
      PRECONDITION_FAILED,
    );
    const after = await api("GET", path, { key });
    expect([after.headers.get("ETag"), after.body.tiles]).toEqual([`W/"${id}.2"`, before.body.tiles]);
    const fresh = await api("PATCH", tilePath, {
      key,
      headers: { "If-Match": `W/"${id}.2"` },
      body: { layouts: WIDE },
    });
    expect([fresh.status, fresh.headers.get("ETag")]).toEqual([200, `W/"${id}.3"`]);
  });
});

describe("PATCH .../dashboards/:id/tiles/:tile_id refusals", () => {
  it("answers 400 naming the body's field for each invalid input, and changes nothing", async () => {
    const { key, project, path, tiles, tilePath } = await dashboardWithTwoNotes();
    const template = await createDashboard(key, project.id, { use_template: "DEFAULT_APP" });
    const insightTile = `${dashboardsPath(project.id)}/${template.id}/tiles/${template.tiles[0]!.id}`;
    const cases: [string, unknown, ReturnType<typeof invalid>][] = [
      [tilePath, { layouts: [] }, invalid("invalid_input", "Expected record, received list.", "layouts")],
      [tilePath, { color: 7 }, invalid("invalid_input", "Expected string, received number.", "color")],
      [
        tilePath,
        { show_description: "yes" },
        invalid("invalid_input", "Expected boolean, received string.", "show_description"),
      ],
      [
        tilePath,
        { text: { body: "x".repeat(4001) } },
        invalid("max_length", "Text body cannot exceed 4000 characters", "text.body"),
      ],
      // Characters, not UTF-16 units: 4,001 emoji are over the limit (2,500 would be 5,000 units).
      [
        tilePath,
        { text: { body: "😀".repeat(4001) } },
        invalid("max_length", "Text body cannot exceed 4000 characters", "text.body"),
      ],
      [
        tilePath,
        { text: { id: tiles[1]!.text!.id, body: "x" } },
        invalid("invalid_input", `Text ${tiles[1]!.text!.id} is not this tile's text.`, "text.id"),
      ],
      [insightTile, { text: { body: "no" } }, invalid("invalid_input", "Only a text tile has a text body.", "text")],
    ];
    const before = (await api("GET", path, { key })).body;
    for (const [target, body, error] of cases) {
      const response = await api("PATCH", target, { key, body });
      expect({ body, status: response.status, error: response.body }).toEqual({ body, status: 400, error });
    }
    expect((await api("GET", path, { key })).body.tiles).toEqual(before.tiles);
    expect((await api("GET", `${path}/versions`, { key })).body.count).toBe(2);
  });

  it("answers 401, 403 and 404 as every dashboard route does, never revealing another's tile", async () => {
    const { key, owner, organization, project, id, path, tiles, tilePath } = await dashboardWithTwoNotes();
    const body = { color: "red" };
    expectError(await api("PATCH", tilePath, { body }), 401, NOT_AUTHENTICATED);
    expectError(await api("PATCH", tilePath, { key: "phx_nope", body }), 401, AUTHENTICATION_FAILED);
    const reader = await createApiKey(owner, { scopes: ["dashboard:read"] });
    expectError(await api("PATCH", tilePath, { key: reader.value, body }), 403, missingScope("dashboard:write"));
    const other = await createProject(organization.id);
    const elsewhere = await createApiKey(owner, { scopedTeams: [other.id] });
    expect((await api("PATCH", tilePath, { key: elsewhere.value, body })).status).toBe(403);
    const member = await addMember(organization.id, MembershipLevel.member);
    await api("PATCH", path, { key, body: { restriction_level: 37 } });
    expectError(
      await api("PATCH", tilePath, { key: member.key, body }),
      403,
      errorBody("authentication_error", "permission_denied", "You don't have edit permissions for this dashboard."),
    );

    const sibling = await createDashboard(key, project.id, { use_template: "DEFAULT_APP" });
    const stranger = await setupOrganization();
    const notFound = [
      `${path}/tiles/999999`,
      `${path}/tiles/one`,
      `${path}/tiles/${sibling.tiles[0]!.id}`,
      `${dashboardsPath(project.id)}/${sibling.id}/tiles/${tiles[0]!.id}`,
      `${dashboardsPath(project.id)}/999999/tiles/${tiles[0]!.id}`,
    ];
    for (const target of notFound) expectError(await api("PATCH", target, { key, body }), 404, NOT_FOUND);
    expectError(await api("PATCH", tilePath, { key: stranger.key, body }), 404, NOT_FOUND);
    const foreignPath = `${dashboardsPath(stranger.project.id)}/${id}/tiles/${tiles[0]!.id}`;
    expectError(await api("PATCH", foreignPath, { key: stranger.key, body }), 404, NOT_FOUND);
    await api("PATCH", path, { key, body: { deleted: true } });
    expectError(await api("PATCH", tilePath, { key, body }), 404, NOT_FOUND);
    const [stored] = await db.select().from(schema.dashboardTiles).where(eq(schema.dashboardTiles.id, tiles[0]!.id));
    expect(stored!.color).toBeNull();
  });
});

describe("where tiles created through the API are placed", () => {
  it("stores every new tile's place: templates', added ones', and copies of tiles stored without one", async () => {
    const { key, project } = await setupOrganization();
    const template = await createDashboard(key, project.id, { use_template: "WEBSITE_TRAFFIC" });
    const stored = await db
      .select()
      .from(schema.dashboardTiles)
      .where(eq(schema.dashboardTiles.dashboardId, template.id));
    expect(stored.length).toBeGreaterThan(0);
    for (const tile of stored) expect(tile.layouts.sm).toEqual(GRID_BOX);

    const path = `${dashboardsPath(project.id)}/${template.id}`;
    const added = await api("PATCH", path, {
      key,
      body: { tiles: [{ text: { body: "no layouts" } }, { text: { body: "empty layouts" }, layouts: {} }] },
    });
    const bottom = Math.max(
      ...stored.map((tile) => (tile.layouts.sm as { y: number; h: number }).y + (tile.layouts.sm as { h: number }).h),
    );
    const newTiles = (added.body.tiles as Tile[]).filter((tile) => tile.text?.body.endsWith("layouts"));
    expect(newTiles.map((tile) => (tile.layouts.sm as { y: number }).y)).toEqual([bottom, bottom + 5]);

    // A tile stored without a place (written before placement existed) is placed when copied.
    await db.update(schema.dashboardTiles).set({ layouts: {} }).where(eq(schema.dashboardTiles.id, newTiles[1]!.id));
    const copy = await createDashboard(key, project.id, { use_dashboard: template.id });
    const copied = await db.select().from(schema.dashboardTiles).where(eq(schema.dashboardTiles.dashboardId, copy.id));
    expect(copied).toHaveLength(stored.length + 2);
    for (const tile of copied) expect(tile.layouts.sm).toEqual(GRID_BOX);
  });
});

/** Rows inserted straight into D1, in multi-row inserts within D1's bound-parameter limit. */
async function insertRows<T extends SQLiteTable>(table: T, rows: T["$inferInsert"][]) {
  const statements = chunkForInsert(table, rows).map((chunk) => db.insert(table).values(chunk as never));
  for (let start = 0; start < statements.length; start += 200) {
    await db.batch(statements.slice(start, start + 200) as unknown as [BatchItem<"sqlite">]);
  }
}

/** `count` texts of the environment, for tiles inserted directly; their ids. */
async function insertTexts(environmentId: number, count: number) {
  const now = nowIso();
  const ids: number[] = [];
  for (const chunk of chunkForInsert(
    schema.texts,
    Array.from({ length: count }, () => ({})),
  ))
    for (const row of await db
      .insert(schema.texts)
      .values(chunk.map(() => ({ environmentId, body: "Gone", lastModifiedAt: now })))
      .returning({ id: schema.texts.id }))
      ids.push(row.id);
  return ids;
}

describe("a dashboard's removed tiles, which it keeps", () => {
  /** A dashboard with one live text tile and `removed` tiles removed, as PATCH `{"id", "deleted": true}` leaves. */
  async function dashboardWithRemovedTiles(removed: number) {
    const team = await setupOrganization();
    const path = `/api/environments/${team.project.id}/dashboards`;
    const created = await api("POST", path, {
      key: team.key,
      body: { name: "Kept", tiles: [] },
    });
    expect(created.status).toBe(201);
    const dashboard = `${path}/${created.body.id}`;
    const added = await api("PATCH", dashboard, { key: team.key, body: { tiles: [{ text: { body: "Live" } }] } });
    expect(added.status).toBe(200);
    const now = nowIso();
    const textIds = await insertTexts(team.project.id, removed);
    await insertRows(
      schema.dashboardTiles,
      textIds.map((textId) => ({ dashboardId: created.body.id as number, textId, deleted: true, createdAt: now })),
    );
    return { team, dashboard, tileId: added.body.tiles[0].id as number };
  }

  it("reading a dashboard reads its live tiles, not every tile it ever had", async () => {
    const small = await dashboardWithRemovedTiles(10);
    const large = await dashboardWithRemovedTiles(1000);
    const fewer = await api("GET", small.dashboard, { key: small.team.key });
    const more = await api("GET", large.dashboard, { key: large.team.key });
    expect([fewer.status, more.status]).toEqual([200, 200]);
    expect(more.body.tiles).toHaveLength(1);
    // "at most 3 rows per row listed, and 50 more" (docs/contract.md, Cost): one tile listed.
    expect(more.cost.rowsRead, `10 removed: ${fewer.cost.rowsRead}, 1,000: ${more.cost.rowsRead}`).toBeLessThanOrEqual(
      3 + 50,
    );
  });

  it("an anonymous view of the public link reads the live tiles, not every tile the dashboard ever had", async () => {
    const costs: number[] = [];
    for (const removed of [10, 1000]) {
      const { team, dashboard } = await dashboardWithRemovedTiles(removed);
      const sharing = await api("PATCH", `${dashboard}/sharing`, { key: team.key, body: { enabled: true } });
      expect(sharing.status).toBe(200);
      const view = await api("GET", `/shared/${sharing.body.access_token}.json`);
      expect(view.status).toBe(200);
      costs.push(view.cost.rowsRead);
    }
    // Anyone holding the link, without a key or a rate limit per key, reads every removed tile each time.
    expect(costs[1], JSON.stringify(costs)).toBeLessThanOrEqual(costs[0]! + 50);
  });

  it("changing one tile or the name reads the live tiles, not every tile the dashboard ever had", async () => {
    const small = await dashboardWithRemovedTiles(10);
    const large = await dashboardWithRemovedTiles(1000);
    const costs: Record<string, number>[] = [];
    for (const { team, dashboard, tileId } of [small, large]) {
      const tile = await api("PATCH", `${dashboard}/tiles/${tileId}`, { key: team.key, body: { color: "blue" } });
      const renamed = await api("PATCH", dashboard, { key: team.key, body: { name: "Renamed" } });
      expect([tile.status, renamed.status]).toEqual([200, 200]);
      costs.push({ tile: tile.cost.rowsRead, renamed: renamed.cost.rowsRead });
    }
    expect(costs[1]!.tile, JSON.stringify(costs)).toBeLessThanOrEqual(costs[0]!.tile! + 50);
    expect(costs[1]!.renamed, JSON.stringify(costs)).toBeLessThanOrEqual(costs[0]!.renamed! + 50);
  });
});

describe.each(["environments", "projects"])("POST /api/%s/:project_id/dashboards/:id/copy_tile", (tree) => {
  /** A dashboard of two notes (a blue one first), an empty one to copy to, and the copy's path. */
  async function toCopy() {
    const notes = await dashboardWithTwoNotes(tree);
    const styled = { color: "blue", show_description: true, filters_overrides: { date_from: "-7d" } };
    expect((await api("PATCH", notes.tilePath, { key: notes.key, body: styled })).status).toBe(200);
    const destination = await createDashboard(notes.key, notes.project.id, { name: "Copies" });
    const destinationPath = `${dashboardsPath(notes.project.id, tree)}/${destination.id}`;
    return { ...notes, destination, destinationPath, copyPath: `${destinationPath}/copy_tile` };
  }

  it("copies a text tile: a new text, the tile's style, on the first free row; a version, an entry", async () => {
    const { key, owner, organization, project, id, path, tiles, destination, destinationPath, copyPath } =
      await toCopy();
    const source = (await api("GET", path, { key })).body;
    const response = await api("POST", copyPath, { key, body: { fromDashboardId: id, tileId: tiles[0]!.id } });
    expect([response.status, response.headers.get("ETag")]).toEqual([200, `W/"${destination.id}.2"`]);
    const copy = response.body.tiles[0];
    expect(response.body).toEqual(
      dashboardBody(owner, {
        id: destination.id,
        name: "Copies",
        team_id: project.id,
        tiles: [
          textTileBody(owner, "first", {
            color: "blue",
            show_description: true,
            filters_overrides: { date_from: "-7d" },
          }),
        ],
      }),
    );
    expect([copy.id, copy.text.id]).not.toContain(tiles[0]!.id);
    expect(copy.text.id).not.toBe(tiles[0]!.text!.id);
    // Its own text: editing the copy leaves the original as it was.
    const edited = await api("PATCH", `${destinationPath}/tiles/${copy.id}`, {
      key,
      body: { text: { id: copy.text.id, body: "copy, edited" } },
    });
    expect(edited.status).toBe(200);
    expect(unchangedSince((await api("GET", path, { key })).body)).toEqual(unchangedSince(source));
    const versions = await api("GET", `${destinationPath}/versions?limit=2`, { key });
    expect(versions.body.results.map((version: { summary: string }) => version.summary)).toEqual([
      "Edited 1 text",
      "Added 1 tile (a copy)",
    ]);
    const log = await api("GET", `/api/organizations/${organization.id}/activity_log?limit=2`, { key });
    expect(log.body.results[1]).toEqual(
      activityEntry(response, {
        organizationId: organization.id,
        projectId: project.id,
        user: owner,
        apiKeyId: await keyIdOf(owner),
        dashboardId: destination.id,
        scope: "DashboardTile",
        activity: "created",
        itemId: String(copy.id),
        name: "first",
        changes: null,
        context: { dashboard_id: destination.id },
      }),
    );
  });

  it("copies an insight tile as the same insight, once: a second copy of it is 400", async () => {
    const { key, project, destination, copyPath } = await toCopy();
    const templated = await createDashboard(key, project.id, { use_template: "DEFAULT_APP" });
    const insightTile = templated.tiles.find((tile) => tile.insight !== null)!;
    const body = { fromDashboardId: templated.id, tileId: insightTile.id };
    const first = await api("POST", copyPath, { key, body });
    expect(first.status).toBe(200);
    expect(first.body.tiles).toEqual([
      expect.objectContaining({ insight: expect.objectContaining({ id: insightTile.insight!.id }), text: null }),
    ]);
    expectError(
      await api("POST", copyPath, { key, body }),
      400,
      invalid("invalid_input", "This insight is already on the destination dashboard.", "tileId"),
    );
    const read = await api("GET", `${dashboardsPath(project.id, tree)}/${destination.id}`, { key });
    expect([read.body.tiles.length, read.headers.get("ETag")]).toEqual([1, `W/"${destination.id}.2"`]);
  });
});

describe("POST .../dashboards/:id/copy_tile refusals", () => {
  async function toCopy() {
    const notes = await dashboardWithTwoNotes();
    const destination = await createDashboard(notes.key, notes.project.id, { name: "Copies" });
    const destinationPath = `${dashboardsPath(notes.project.id)}/${destination.id}`;
    const body = { fromDashboardId: notes.id, tileId: notes.tiles[0]!.id };
    return { ...notes, destination, destinationPath, copyPath: `${destinationPath}/copy_tile`, body };
  }
  const tilesOf = async (key: string, path: string) => (await api("GET", path, { key })).body.tiles;

  it("answers 400 naming the field for each invalid input, and copies nothing", async () => {
    const { key, id, tiles, destination, destinationPath, copyPath } = await toCopy();
    for (const [body, error] of [
      [{ tileId: tiles[0]!.id }, invalid("required", "This field is required.", "fromDashboardId")],
      [{ fromDashboardId: id }, invalid("required", "This field is required.", "tileId")],
      [
        { fromDashboardId: String(id), tileId: tiles[0]!.id },
        invalid("invalid_input", "Expected number, received string.", "fromDashboardId"),
      ],
      [{ fromDashboardId: id, tileId: 1.5 }, invalid("invalid_input", "Expected int, received number.", "tileId")],
      [
        { fromDashboardId: destination.id, tileId: tiles[0]!.id },
        invalid("invalid_input", "Destination must be a different dashboard than the source.", "fromDashboardId"),
      ],
    ] as const) {
      const response = await api("POST", copyPath, { key, body });
      expect({ body, status: response.status, error: response.body }).toEqual({ body, status: 400, error });
    }
    expect(await tilesOf(key, destinationPath)).toEqual([]);
  });

  it("answers 404 for a source unknown, foreign, deleted or hidden, a tile off it, a destination deleted", async () => {
    const { key, organization, project, id, tiles, destination, destinationPath, copyPath, body } = await toCopy();
    const member = await addMember(organization.id, MembershipLevel.member);
    const otherProject = await createProject(organization.id);
    const foreign = await createDashboard(key, otherProject.id, { use_template: "DEFAULT_APP" });
    const sibling = await createDashboard(key, project.id, { use_template: "WEBSITE_TRAFFIC" });
    const gone = await createDashboard(key, project.id, { use_template: "DEFAULT_APP" });
    await api("PATCH", `${dashboardsPath(project.id)}/${gone.id}`, { key, body: { deleted: true } });
    for (const sent of [
      { fromDashboardId: 999999, tileId: tiles[0]!.id },
      { fromDashboardId: foreign.id, tileId: foreign.tiles[0]!.id },
      { fromDashboardId: gone.id, tileId: gone.tiles[0]!.id },
      { fromDashboardId: id, tileId: 999999 },
      { fromDashboardId: id, tileId: sibling.tiles[0]!.id },
    ]) {
      const response = await api("POST", copyPath, { key, body: sent });
      expect({ sent, status: response.status, error: response.body }).toEqual({ sent, status: 404, error: NOT_FOUND });
    }
    // A member held to `none` on the source learns no more than of an unknown one.
    const hidden = await api("PUT", `${dashboardsPath(project.id)}/${id}/access_controls`, {
      key,
      body: { organization_member: member.membership.id, access_level: "none" },
    });
    expect(hidden.status).toBe(200);
    expectError(await api("POST", copyPath, { key: member.key, body }), 404, NOT_FOUND);
    await api("PATCH", destinationPath, { key, body: { deleted: true } });
    expectError(await api("POST", copyPath, { key, body }), 404, NOT_FOUND);
    expectError(await api("POST", `${dashboardsPath(project.id)}/999999/copy_tile`, { key, body }), 404, NOT_FOUND);
    expect(await tilesOf(key, `${dashboardsPath(project.id)}/${destination.id}`)).toBeUndefined();
  });

  it("answers 403 without an edit right on the destination or dashboard:write; 401 without a key", async () => {
    const { key, organization, project, owner, copyPath, destinationPath, body } = await toCopy();
    const member = await addMember(organization.id, MembershipLevel.member);
    const locked = await createDashboard(key, project.id, { name: "Locked", restriction_level: 37 });
    expectError(
      await api("POST", `${dashboardsPath(project.id)}/${locked.id}/copy_tile`, { key: member.key, body }),
      403,
      NO_EDIT_RIGHT,
    );
    const reader = await createApiKey(owner, { scopes: ["dashboard:read"] });
    expectError(await api("POST", copyPath, { key: reader.value, body }), 403, missingScope("dashboard:write"));
    expectError(await api("POST", copyPath, { body }), 401, NOT_AUTHENTICATED);
    expectError(await api("POST", copyPath, { key: "phx_unknown", body }), 401, AUTHENTICATION_FAILED);
    expect(await tilesOf(key, destinationPath)).toEqual([]);
    expect(await tilesOf(key, `${dashboardsPath(project.id)}/${locked.id}`)).toEqual([]);
  });

  it("honours If-Match on the destination, and its 500 tiles: a stale tag is 412, a full dashboard 400", async () => {
    const { key, project, destination, destinationPath, copyPath, body } = await toCopy();
    expectError(
      await api("POST", copyPath, { key, headers: { "If-Match": `W/"${destination.id}.0"` }, body }),
      412,
      PRECONDITION_FAILED,
    );
    const now = nowIso();
    const textIds = await insertTexts(project.id, 500);
    await insertRows(
      schema.dashboardTiles,
      textIds.map((textId) => ({ dashboardId: destination.id, textId, createdAt: now })),
    );
    expectError(
      await api("POST", copyPath, { key, body }),
      400,
      invalid("max_length", "A dashboard holds at most 500 tiles.", "tileId"),
    );
    expect(await tilesOf(key, destinationPath)).toHaveLength(500);
  }, 30_000);
});

describe.each(["environments", "projects"])("PATCH /api/%s/:project_id/dashboards/:id with duplicate_tiles", (tree) => {
  const THIRD_ROW = { sm: { x: 0, y: 10, w: 6, h: 5 }, xs: { x: 0, y: 10, w: 6, h: 5 } };

  it("copies a text tile onto its dashboard: a new text, the tile's style, on the first free row", async () => {
    const { key, owner, organization, project, id, path, tiles, tilePath } = await dashboardWithTwoNotes(tree);
    const styled = { color: "blue", show_description: true, filters_overrides: { date_from: "-7d" } };
    expect((await api("PATCH", tilePath, { key, body: styled })).status).toBe(200);
    // PostHog's web app sends the tile whole, as it read it.
    const read = (await api("GET", path, { key })).body;
    const response = await api("PATCH", path, { key, body: { duplicate_tiles: [{ ...read.tiles[0], layouts: {} }] } });
    expect([response.status, response.headers.get("ETag")]).toEqual([200, `W/"${id}.4"`]);
    expect(response.body).toEqual(
      dashboardBody(owner, {
        id,
        name: "Notes",
        team_id: project.id,
        tiles: [
          textTileBody(owner, "first", { id: tiles[0]!.id, ...styled, order: 0 }),
          textTileBody(owner, "second", { id: tiles[1]!.id, layouts: SECOND_ROW, order: 1 }),
          textTileBody(owner, "first", { ...styled, layouts: THIRD_ROW, order: 2 }),
        ],
      }),
    );
    const copy = response.body.tiles[2];
    expect([copy.id, copy.text.id]).not.toContain(tiles[0]!.id);
    expect(copy.text.id).not.toBe(tiles[0]!.text!.id);
    const versions = await api("GET", `${path}/versions?limit=1`, { key });
    expect(versions.body.results[0]).toMatchObject({ version: 4, summary: "Duplicated 1 tile" });
    const log = await api("GET", `/api/organizations/${organization.id}/activity_log?limit=1`, { key });
    expect(log.body.results).toEqual([
      activityEntry(response, {
        organizationId: organization.id,
        projectId: project.id,
        user: owner,
        apiKeyId: await keyIdOf(owner),
        dashboardId: id,
        scope: "DashboardTile",
        activity: "created",
        itemId: String(copy.id),
        name: "first",
        changes: null,
        context: { dashboard_id: id },
      }),
    ]);
    // Its own text: editing the copy leaves the original as it was.
    const edited = await api("PATCH", `${path}/tiles/${copy.id}`, { key, body: { text: { body: "copy, edited" } } });
    expect(edited.body.tiles.map((tile: Tile) => tile.text!.body)).toEqual(["first", "second", "copy, edited"]);
  });

  it("copies an insight tile as a new insight named '<name> (Copy)', where the body places it", async () => {
    const { key, project } = await setupOrganization();
    const templated = await createDashboard(key, project.id, { use_template: "DEFAULT_APP" });
    const path = `${dashboardsPath(project.id, tree)}/${templated.id}`;
    const source = (await api("GET", path, { key })).body.tiles.find((tile: Tile) => tile.text === null);
    const placed = { sm: { x: 0, y: 40, w: 6, h: 5 } };
    const response = await api("PATCH", path, {
      key,
      body: { duplicate_tiles: [{ id: source.id, layouts: placed }, { id: source.id }] },
    });
    expect(response.status).toBe(200);
    const copies = response.body.tiles.filter((tile: { insight: { name: string } | null }) =>
      tile.insight?.name.endsWith("(Copy)"),
    );
    const copyOf = (layouts: unknown) => ({
      ...source,
      id: expect.any(Number),
      order: expect.any(Number),
      layouts,
      insight: {
        ...source.insight,
        id: expect.any(Number),
        short_id: expect.any(String),
        name: `${source.insight.name} (Copy)`,
        created_at: expect.stringMatching(ISO_TIMESTAMP),
        updated_at: expect.stringMatching(ISO_TIMESTAMP),
      },
    });
    expect(copies).toEqual([copyOf(placed), copyOf(expect.objectContaining({ sm: GRID_BOX }))]);
    // Two new insights, neither the source's.
    const ids = new Set([source.insight.id, ...copies.map((tile: { insight: { id: number } }) => tile.insight.id)]);
    expect(ids.size).toBe(3);
  });
});

describe("PATCH .../dashboards/:id with duplicate_tiles refusals", () => {
  it("answers 400 naming the field for a tile off the dashboard or an invalid entry; copies nothing", async () => {
    const { key, project, path, tiles } = await dashboardWithTwoNotes();
    const other = await createDashboard(key, project.id, { use_template: "DEFAULT_APP" });
    for (const [body, error] of [
      [
        { duplicate_tiles: [{ id: 999999 }] },
        invalid("invalid_input", "Tile 999999 is not on this dashboard.", "duplicate_tiles.0.id"),
      ],
      [
        { duplicate_tiles: [{ id: tiles[0]!.id }, { id: other.tiles[0]!.id }] },
        invalid("invalid_input", `Tile ${other.tiles[0]!.id} is not on this dashboard.`, "duplicate_tiles.1.id"),
      ],
      [
        { tiles: [{ id: tiles[0]!.id, deleted: true }], duplicate_tiles: [{ id: tiles[0]!.id }] },
        invalid("invalid_input", `Tile ${tiles[0]!.id} is not on this dashboard.`, "duplicate_tiles.0.id"),
      ],
      [{ duplicate_tiles: true }, invalid("invalid_input", "Expected array, received boolean.", "duplicate_tiles")],
      [{ duplicate_tiles: [{}] }, invalid("required", "This field is required.", "duplicate_tiles.0.id")],
      [
        { duplicate_tiles: [{ id: tiles[0]!.id, layouts: [] }] },
        invalid("invalid_input", "Expected record, received list.", "duplicate_tiles.0.layouts"),
      ],
    ] as const) {
      const response = await api("PATCH", path, { key, body });
      expect({ body, status: response.status, error: response.body }).toEqual({ body, status: 400, error });
    }
    const read = await api("GET", path, { key });
    expect([read.body.tiles.length, read.headers.get("ETag")]).toEqual([2, expect.stringMatching(/\.2"$/)]);
  });

  it("answers 403 without an edit right, 412 on a stale tag, 400 past 500 tiles, 404 once deleted", async () => {
    const { key, organization, project, id, path, tiles } = await dashboardWithTwoNotes();
    const member = await addMember(organization.id, MembershipLevel.member);
    const body = { duplicate_tiles: [{ id: tiles[0]!.id }] };
    await api("PATCH", path, { key, body: { restriction_level: 37 } });
    expectError(await api("PATCH", path, { key: member.key, body }), 403, NO_EDIT_RIGHT);
    expectError(
      await api("PATCH", path, { key, headers: { "If-Match": `W/"${id}.1"` }, body }),
      412,
      PRECONDITION_FAILED,
    );
    const now = nowIso();
    const textIds = await insertTexts(project.id, 498);
    await insertRows(
      schema.dashboardTiles,
      textIds.map((textId) => ({ dashboardId: id, textId, createdAt: now })),
    );
    expectError(
      await api("PATCH", path, { key, body }),
      400,
      invalid("max_length", "A dashboard holds at most 500 tiles.", "duplicate_tiles"),
    );
    expect((await api("GET", path, { key })).body.tiles).toHaveLength(500);
    await api("PATCH", path, { key, body: { deleted: true } });
    expectError(await api("PATCH", path, { key, body }), 404, NOT_FOUND);
  }, 30_000);
});

describe("PATCH .../dashboards/:id with tiles and duplicate_tiles together", () => {
  it("copies a tile the same PATCH changes as the change leaves it: duplicate_tiles come after tiles", async () => {
    const { key, owner, path, tiles } = await dashboardWithTwoNotes();
    const response = await api("PATCH", path, {
      key,
      body: {
        tiles: [{ id: tiles[0]!.id, color: "blue", text: { body: "first, edited" } }],
        duplicate_tiles: [{ id: tiles[0]!.id }],
      },
    });
    expect(response.status).toBe(200);
    expect(response.body.tiles).toEqual([
      textTileBody(owner, "first, edited", { id: tiles[0]!.id, color: "blue", order: 0 }),
      textTileBody(owner, "second", { id: tiles[1]!.id, layouts: SECOND_ROW, order: 1 }),
      textTileBody(owner, "first, edited", {
        color: "blue",
        layouts: { sm: { x: 0, y: 10, w: 6, h: 5 }, xs: { x: 0, y: 10, w: 6, h: 5 } },
        order: 2,
      }),
    ]);
  });
});
