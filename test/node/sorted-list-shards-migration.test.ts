import { readdirSync, readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { idsByOwner, shardsThatDisagree, type ShardSizes, type SortedListShard } from "../support/sorted-list-shards";

/*
 * The migration that keeps the lists sorted by a column in shards (sorted_list_shards) runs on the
 * rows a deployed database already holds: it fills every list's shards from them. The test pool
 * applies every migration to an empty database, so this applies the ones before it to SQLite,
 * writes rows, applies it and compares the shards with the lists in order. Then its triggers, with
 * their shard sizes scaled down so that a few hundred writes split and merge shards many times.
 */

const MIGRATIONS = new URL("../../migrations/", import.meta.url);
const SHARDS_MIGRATION = "0016_sorted_list_shards.sql";
const AT = "2026-01-01T00:00:00.000Z";
const DASHBOARDS_ORDER = "select cast(environment_id as text) as owner, id from dashboards where deleted = 0 order by environment_id, pinned desc, name, id";
const DOMAINS_ORDER = "select organization_id as owner, id from domains order by organization_id, domain, id";

/** A seeded generator, so that a failure replays. */
function generator(seed: number) {
  let state = seed;
  return (below: number) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return Math.floor((state / 2147483648) * below);
  };
}

/** Names that share prefixes, differ in case, end in a space, hold a control character or non-ASCII. */
const NAMES = ["", "a", "a ", "ab", "B", "b", "é", "a\u0001", "Dashboard", "Dashboard 2", "zz", "\u{1F600}"];

function database(files: string[], sizes?: ShardSizes) {
  const db = new DatabaseSync(":memory:");
  db.exec("PRAGMA foreign_keys = ON");
  const migrate = (text: string) => db.exec(sizes ? scaled(text, sizes) : text);
  const before = files.slice(0, files.indexOf(SHARDS_MIGRATION));
  for (const file of before) migrate(readFileSync(new URL(file, MIGRATIONS), "utf8"));
  db.exec(`insert into organizations (id, name, slug, created_at, updated_at) values ('org-a', 'A', 'a', '${AT}', '${AT}'), ('org-b', 'B', 'b', '${AT}', '${AT}')`);
  for (const [id, organization] of [[1, "org-a"], [2, "org-a"], [3, "org-b"]] as const) {
    db.prepare(
      `insert into projects (id, uuid, organization_id, name, name_key, api_token, live_events_token, settings, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, '{}', ?, ?)`,
    ).run(id, `uuid-${id}`, organization, `P${id}`, `p${id}`, `token-${id}`, `live-${id}`, AT, AT);
    db.prepare("insert into environments (id, project_id, organization_id, name, created_at) values (?, ?, ?, 'Default', ?)").run(id, id, organization, AT);
  }
  return { db, applyShards: () => migrate(readFileSync(new URL(SHARDS_MIGRATION, MIGRATIONS), "utf8")) };
}

/** The migration with its shard sizes (4,096 / 2,048 / 1,024) scaled down. */
function scaled(text: string, sizes: ShardSizes) {
  return text.replaceAll("4096", String(sizes.split)).replaceAll("2048", String(sizes.split / 2)).replaceAll("1024", String(sizes.merge));
}

function disagreements(db: DatabaseSync, sizes?: ShardSizes) {
  const shards = (list: string) => db.prepare("select owner, first_key, size, ids from sorted_list_shards where list = ?").all(list) as SortedListShard[];
  const rows = (query: string) => db.prepare(query).all() as { owner: string; id: string | number }[];
  return [
    ...shardsThatDisagree(idsByOwner(rows(DASHBOARDS_ORDER)), shards("dashboards"), 13, sizes).map((problem) => `dashboards ${problem}`),
    ...shardsThatDisagree(idsByOwner(rows(DOMAINS_ORDER)), shards("domains"), 39, sizes).map((problem) => `domains ${problem}`),
  ];
}

function writer(db: DatabaseSync, random: (below: number) => number) {
  let domains = 0;
  const name = () => `${NAMES[random(NAMES.length)]}${random(3) ? random(40) : ""}`;
  const anyDashboard = "(select id from dashboards order by random() limit 1)";
  return {
    insertDashboard: () =>
      db
        .prepare("insert into dashboards (environment_id, name, pinned, deleted, created_at, last_modified_at) values (?, ?, ?, ?, ?, ?)")
        .run(1 + random(3), name(), random(4) === 0 ? 1 : 0, random(10) === 0 ? 1 : 0, AT, AT),
    renameDashboard: () => db.prepare(`update dashboards set name = ? where id = ${anyDashboard}`).run(name()),
    pinDashboard: () => db.exec(`update dashboards set pinned = 1 - pinned where id = ${anyDashboard}`),
    softDeleteOrRestore: () => db.exec(`update dashboards set deleted = 1 - deleted where id = ${anyDashboard}`),
    deleteDashboard: () => db.exec(`delete from dashboards where id = ${anyDashboard}`),
    otherColumn: () => db.exec(`update dashboards set description = 'changed' where id = ${anyDashboard}`),
    insertDomain: () => {
      domains += 1;
      db.prepare("insert or ignore into domains (id, organization_id, domain, verification_challenge, created_at) values (?, ?, ?, 'challenge', ?)").run(
        `00000000-0000-7000-8000-${String(domains).padStart(12, "0")}`,
        random(2) ? "org-a" : "org-b",
        `${name()}${random(10_000)}.example.com`,
        AT,
      );
    },
    deleteDomain: () => db.exec("delete from domains where id = (select id from domains order by random() limit 1)"),
  };
}

describe("the sorted_list_shards migration", () => {
  const files = readdirSync(MIGRATIONS).filter((file) => file.endsWith(".sql")).sort();

  it("fills every list's shards from the rows a database holds, in list order", () => {
    const { db, applyShards } = database(files);
    const write = writer(db, generator(7));
    for (let index = 0; index < 5_000; index += 1) write.insertDashboard();
    for (let index = 0; index < 2_100; index += 1) write.insertDomain();
    applyShards();

    expect(disagreements(db)).toEqual([]);
    // 2,100 domains: the 52 past the first 2,048 join it; an environment's dashboards in shards of 2,048, the rest in the last.
    const sizes = db.prepare("select list, owner, size from sorted_list_shards order by list, owner, first_key").all() as { list: string; owner: string; size: number }[];
    const largest = sizes.filter(({ list, owner }) => list === "dashboards" && owner === "1").map(({ size }) => size);
    expect(largest.slice(0, -1).every((size) => size === 2048)).toBe(true);
    expect(largest.length).toBeGreaterThan(0);
    expect(sizes.filter(({ list }) => list === "domains").every(({ size }) => size < 2048 + 1024)).toBe(true);
  });

  it("keeps every list's shards in order through inserts, renames, pins, soft deletions, restores and deletions", () => {
    const sizes = { split: 8, merge: 2 };
    const { db, applyShards } = database(files, sizes);
    const random = generator(11);
    const write = writer(db, random);
    for (let index = 0; index < 60; index += 1) write.insertDashboard();
    applyShards();
    expect(disagreements(db, sizes)).toEqual([]);

    const kinds = Object.keys(write) as (keyof typeof write)[];
    const weights: Record<keyof typeof write, number> = {
      insertDashboard: 8, renameDashboard: 3, pinDashboard: 2, softDeleteOrRestore: 2, deleteDashboard: 3, otherColumn: 1, insertDomain: 5, deleteDomain: 3,
    };
    const pool = kinds.flatMap((kind) => Array.from({ length: weights[kind] }, () => kind));
    for (let step = 0; step < 1_500; step += 1) {
      const kind = pool[random(pool.length)]!;
      write[kind]();
      const problems = disagreements(db, sizes);
      if (problems.length > 0) expect({ step, kind, problems }).toEqual({ step, kind, problems: [] });
    }
    const shards = db.prepare("select count(*) as shards from sorted_list_shards").get() as { shards: number };
    expect(shards.shards).toBeGreaterThan(10);

    // An environment's and an organization's deletion takes their shards along.
    db.exec("delete from environments where id = 1");
    db.exec("delete from organizations where id = 'org-b'");
    expect(disagreements(db, sizes)).toEqual([]);
    const owners = db.prepare("select distinct list, owner from sorted_list_shards order by list, owner").all();
    expect(owners.map((row) => `${String(row.list)}:${String(row.owner)}`)).not.toContain("dashboards:1");
    expect(owners.map((row) => `${String(row.list)}:${String(row.owner)}`)).not.toContain("domains:org-b");
  });
});
