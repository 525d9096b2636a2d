import { readdirSync, readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { nameKey } from "../../src/platform/names";

/*
 * The migration that makes project name keys `nameKey(name)` runs on the projects a deployed
 * database already holds, whose keys SQLite's ASCII-only lower() computed. SQL cannot compute the
 * new key, so it marks which rows keep theirs: this applies the migrations before it to SQLite,
 * writes projects as they were written before, applies it, and checks that every row marked
 * current already has its new key, and that the rows left for the scheduled pass are found
 * through the partial index.
 */

const MIGRATIONS = new URL("../../migrations/", import.meta.url);
const NAME_KEYS_MIGRATION = "0017_project_name_keys.sql";
const AT = "2026-01-01T00:00:00.000Z";
/** Printable ASCII, control characters, accents composed and not, full-width, emoji, invisible characters. */
const NAMES = ["Web app", "DEFAULT project 2", "a~b !@#$%^&*()", "CAFÉ", "Cafe\u0301", "tab\there", "del\u007f", "Ｐｌａｎ", "\u{1F680}", "x\u200by", "Straße"];

describe("the project_name_keys migration", () => {
  it("marks current exactly the rows whose key is already nameKey(name), and indexes the others", () => {
    const db = new DatabaseSync(":memory:");
    const files = readdirSync(MIGRATIONS).filter((file) => file.endsWith(".sql")).sort();
    for (const file of files.slice(0, files.indexOf(NAME_KEYS_MIGRATION))) db.exec(readFileSync(new URL(file, MIGRATIONS), "utf8"));
    db.exec(`insert into organizations (id, name, slug, created_at, updated_at) values ('org', 'Org', 'org', '${AT}', '${AT}')`);
    const insert = db.prepare(
      `insert into projects (id, uuid, organization_id, name, name_key, api_token, live_events_token, settings, created_at, updated_at)
       values (?, ?, 'org', ?, lower(?), ?, ?, '{}', ?, ?)`,
    );
    NAMES.forEach((name, index) => insert.run(index + 1, `uuid-${index}`, name, name, `token-${index}`, `live-${index}`, AT, AT));

    db.exec(readFileSync(new URL(NAME_KEYS_MIGRATION, MIGRATIONS), "utf8"));

    const rows = db.prepare("select name, name_key as key, name_key_version as version from projects order by id").all() as { name: string; key: string; version: number }[];
    expect(rows.filter((row) => row.version === 1).map((row) => row.name)).toEqual(["Web app", "DEFAULT project 2", "a~b !@#$%^&*()"]);
    for (const row of rows.filter((row) => row.version === 1)) expect(row.key).toBe(nameKey(row.name));
    const plan = db.prepare("explain query plan select id from projects where name_key_version < 1 limit 100").all() as { detail: string }[];
    expect(plan.map((step) => step.detail)).toEqual(["SCAN projects USING INDEX projects_stale_name_key"]);
  });
});
