import { describe, expect, it } from "vitest";
import { api, errorBody, setupOrganization } from "../../support/harness";
import { createDashboard, dashboardsPath } from "../dashboard-fixtures";

type Tile = { id: number; layouts: Record<string, unknown>; text: { body: string } | null };

/** An organization with a dashboard of `count` text tiles, and the dashboard's path. */
async function dashboardWithNotes(count: number) {
  const team = await setupOrganization();
  const created = await createDashboard(team.key, team.project.id, { name: "Notes" });
  const path = `${dashboardsPath(team.project.id)}/${created.id}`;
  const tiles = Array.from({ length: count }, (_, index) => ({ text: { body: `note ${index}` } }));
  const patched = await api("PATCH", path, { key: team.key, body: { tiles } });
  expect(patched.status).toBe(200);
  return { ...team, id: created.id, path, tiles: patched.body.tiles as Tile[] };
}

describe("a dashboard's content at its edges", () => {
  it("answers 400 on use_dashboard, not 500, for a copy whose first version would pass the size limit", async () => {
    const { key, project } = await setupOrganization();
    const source = await createDashboard(key, project.id, { name: "Big" });
    // 14 tiles whose layouts hold near 64 KiB each: about 900 KB of snapshot, within the 1 MiB.
    const padding = "x".repeat(64_000);
    const tiles = Array.from({ length: 14 }, (_, index) => ({
      text: { body: `note ${index}` },
      layouts: { sm: { x: 0, y: index * 5, w: 6, h: 5 }, pad: padding },
    }));
    expect((await api("PATCH", `${dashboardsPath(project.id)}/${source.id}`, { key, body: { tiles } })).status).toBe(
      200,
    );
    // A description within its limit that the snapshot writes as 6 bytes a character.
    const copied = await api("POST", dashboardsPath(project.id), {
      key,
      body: { name: "Copy", use_dashboard: source.id, description: "\u0001".repeat(65_536) },
    });
    expect(copied.status).toBe(400);
    expect(copied.body).toEqual(
      errorBody(
        "validation_error",
        "max_length",
        "A dashboard holds at most 1048576 bytes of fields and tiles, serialized.",
        "use_dashboard",
      ),
    );
    const listed = await api("GET", dashboardsPath(project.id), { key });
    expect(listed.body.results.map((dashboard: { name: string }) => dashboard.name)).toEqual(["Big"]);
  });

  it("logs a reorder as the dashboard's update, with the order: its webhook fires", async () => {
    const { key, organization, id, path, tiles } = await dashboardWithNotes(2);
    const order = [tiles[1]!.id, tiles[0]!.id];
    expect((await api("POST", `${path}/reorder_tiles`, { key, body: { tile_order: order } })).status).toBe(200);
    const log = await api("GET", `/api/organizations/${organization.id}/activity_log?scope=Dashboard&limit=1`, { key });
    expect(log.body.results[0]).toMatchObject({
      activity: "updated",
      item_id: String(id),
      detail: { name: "Notes", context: { tile_order: order } },
    });
  });

  it("refuses a PATCH naming one tile twice (400 on tiles), and changes nothing", async () => {
    const { key, path, tiles } = await dashboardWithNotes(1);
    const tileId = tiles[0]!.id;
    const refused = await api("PATCH", path, {
      key,
      body: {
        tiles: [
          { id: tileId, deleted: true },
          { id: tileId, deleted: true },
        ],
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(
      errorBody("validation_error", "invalid_input", "tiles must name each tile ID once", "tiles"),
    );
    expect((await api("GET", path, { key })).body.tiles.map((tile: Tile) => tile.id)).toEqual([tileId]);
  });

  it("places a tile added without layouts on the grid, whatever numbers the others' layouts hold", async () => {
    const { key, project } = await setupOrganization();
    const board = await createDashboard(key, project.id, { name: "Tall" });
    const patched = await api("PATCH", `${dashboardsPath(project.id)}/${board.id}`, {
      key,
      body: {
        tiles: [
          { text: { body: "tall" }, layouts: { sm: { x: 0, y: 1e308, w: 6, h: 1e308 } } },
          { text: { body: "placed by the API" } },
        ],
      },
    });
    expect(patched.status).toBe(200);
    const placed = (patched.body.tiles as Tile[]).find((tile) => tile.text?.body === "placed by the API")!;
    for (const size of ["sm", "xs"]) {
      const box = placed.layouts[size] as Record<string, unknown>;
      for (const value of [box.x, box.y, box.w, box.h]) expect(Number.isFinite(value)).toBe(true);
    }
  });
});
