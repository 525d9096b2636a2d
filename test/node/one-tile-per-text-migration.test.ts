import { readdirSync, readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";

/*
 * Dashboard copies once shared their source's text rows. The migration that gives each tile its
 * own text runs on the rows a deployed database holds; the test pool starts from an empty one, so
 * this applies the migrations before it to SQLite, writes shared texts, applies it, and checks.
 */
const MIGRATIONS = new URL("../../migrations/", import.meta.url);
const MIGRATION = readdirSync(MIGRATIONS).find((file) => file.endsWith("_one_tile_per_text.sql"))!;

function migrate(db: DatabaseSync, files: string[]) {
  for (const file of files) db.exec(readFileSync(new URL(file, MIGRATIONS), "utf8"));
}

/** A row with the values given, and a filler in every other required column without a default. */
function insertRow(db: DatabaseSync, table: string, values: Record<string, string | number>) {
  const required = db
    .prepare(`select name from pragma_table_info('${table}') where "notnull" = 1 and dflt_value is null`)
    .all() as { name: string }[];
  const columns = [...new Set([...Object.keys(values), ...required.map((column) => column.name)])];
  db.prepare(`insert into ${table} (${columns.join(", ")}) values (${columns.map(() => "?").join(", ")})`).run(
    ...columns.map((name) => values[name] ?? `${table}-${name}`),
  );
}

describe("the migration that gives each tile its own text", () => {
  it("copies a shared text for every tile but its first, keeps the rest, and refuses sharing from then on", () => {
    const db = new DatabaseSync(":memory:");
    const files = readdirSync(MIGRATIONS)
      .filter((file) => file.endsWith(".sql"))
      .sort();
    migrate(
      db,
      files.filter((file) => file < MIGRATION),
    );
    const now = "2026-01-01T00:00:00.000Z";
    db.exec(`
      insert into organizations (id, name, slug, created_at, updated_at)
        values ('org', 'Org', 'org', '${now}', '${now}');
      insert into users (id, uuid, distinct_id, first_name, last_name, email, created_at)
        values (1, 'u', 'd', 'A', 'B', 'a@example.com', '${now}');
    `);
    insertRow(db, "projects", {
      id: 1,
      uuid: "p",
      organization_id: "org",
      name: "P",
      name_key: "p",
      settings: "{}",
      created_at: now,
      updated_at: now,
    });
    insertRow(db, "environments", { id: 1, project_id: 1, organization_id: "org", name: "P", created_at: now });
    for (const [id, name] of [
      [1, "Source"],
      [2, "Copy"],
      [3, "Copy of copy"],
    ] as const) {
      insertRow(db, "dashboards", { id, environment_id: 1, name, created_at: now, last_modified_at: now });
    }
    db.exec(`
      insert into texts (id, environment_id, body, created_by_id, last_modified_by_id, last_modified_at)
        values (10, 1, 'Shared note', 1, 1, '${now}'), (11, 1, 'Own note', 1, 1, '${now}');
      insert into dashboard_tiles (id, dashboard_id, text_id, created_at)
        values (100, 1, 10, '${now}'), (101, 2, 10, '${now}'), (102, 3, 10, '${now}'), (103, 1, 11, '${now}');
    `);

    migrate(db, [MIGRATION]);

    const tiles = db
      .prepare(
        "select tile.id, tile.text_id, texts.body, texts.created_by_id " +
          "from dashboard_tiles tile join texts on texts.id = tile.text_id order by tile.id",
      )
      .all();
    expect(tiles.map((tile) => (tile as { id: number }).id)).toEqual([100, 101, 102, 103]);
    expect(tiles.map((tile) => (tile as { body: string }).body)).toEqual([
      "Shared note",
      "Shared note",
      "Shared note",
      "Own note",
    ]);
    const textIds = tiles.map((tile) => (tile as { text_id: number }).text_id);
    expect(textIds[0]).toBe(10);
    expect(textIds[3]).toBe(11);
    expect(new Set(textIds).size).toBe(4);
    expect(db.prepare("select name from pragma_table_info('texts') where name = 'copy_for_tile'").all()).toEqual([]);
    expect(() =>
      db.exec(`insert into dashboard_tiles (dashboard_id, text_id, created_at) values (2, 11, '${now}')`),
    ).toThrow(/UNIQUE/);
  });
});
