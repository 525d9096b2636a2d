import { readdirSync, readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";

/*
 * The migration that numbers the lists (list_positions) runs on the rows a deployed database
 * already holds: each row gets its position in the order its list had, each parent the count of
 * positions issued, and each list's Fenwick tree the gaps of its soft-deleted rows. The test
 * pool applies every migration to an empty database, so this applies the ones before it to
 * SQLite, writes rows of every kind, applies it, and checks every tree node against the gaps the
 * rows leave; then again after writes through the new triggers.
 */

const MIGRATIONS = new URL("../../migrations/", import.meta.url);
const POSITIONS_MIGRATION = "0014_list_positions.sql";

/** Each list: its rows' position column and owner, the parent's count of positions, whether a row is live. */
const LISTS = [
  { list: "members", table: "organization_memberships", position: "position", owner: "organization_id", parent: "organizations", issued: "member_positions", order: "joined_at, id", live: "1" },
  { list: "invites", table: "invites", position: "position", owner: "organization_id", parent: "organizations", issued: "invite_positions", order: "created_at, id", live: "1" },
  { list: "projects", table: "projects", position: "position", owner: "organization_id", parent: "organizations", issued: "project_positions", order: "created_at, id", live: "1" },
  { list: "organization_batch_exports", table: "batch_exports", position: "organization_position", owner: "organization_id", parent: "organizations", issued: "batch_export_positions", order: "created_at, id", live: "deleted = 0" },
  { list: "environment_batch_exports", table: "batch_exports", position: "environment_position", owner: "environment_id", parent: "environments", issued: "batch_export_positions", order: "created_at, id", live: "deleted = 0" },
  { list: "personal_api_keys", table: "personal_api_keys", position: "position", owner: "user_id", parent: "users", issued: "personal_api_key_positions", order: "created_at, id", live: "1" },
  { list: "webhooks", table: "webhooks", position: "position", owner: "organization_id", parent: "organizations", issued: "webhook_positions", order: "created_at, id", live: "1" },
  { list: "webhook_deliveries", table: "webhook_deliveries", position: "position", owner: "webhook_id", parent: "webhooks", issued: "delivery_positions", order: "created_at, id", live: "1" },
] as const;

function migrate(db: DatabaseSync, files: string[]) {
  for (const file of files) db.exec(readFileSync(new URL(file, MIGRATIONS), "utf8"));
}

const lowbit = (node: number) => node & -node;

/** Each list's disagreements: positions not numbered 1..n per owner, and tree nodes that differ from the gaps. */
function listsThatDisagree(db: DatabaseSync) {
  const problems: string[] = [];
  for (const spec of LISTS) {
    const parents = db.prepare(`select id, ${spec.issued} as issued from ${spec.parent}`).all() as { id: string | number; issued: number }[];
    for (const parent of parents) {
      const rows = db
        .prepare(`select ${spec.position} as position, (${spec.live}) as live from ${spec.table} where ${spec.owner} = ? order by ${spec.position}`)
        .all(parent.id) as { position: number; live: number }[];
      const positions = rows.map((row) => row.position);
      if (new Set(positions).size !== positions.length || positions.some((position) => position < 1 || position > parent.issued)) {
        problems.push(`${spec.list} of ${parent.id}: positions ${positions.join(",")} of ${parent.issued}`);
      }
      const live = new Set(rows.filter((row) => row.live).map((row) => row.position));
      const stored = new Map(
        (db.prepare("select node, gaps from list_position_gaps where list = ? and owner = ?").all(spec.list, String(parent.id)) as { node: number; gaps: number }[]).map(
          (row) => [row.node, row.gaps],
        ),
      );
      // Every node below twice the positions issued holds the gaps of its range (absent: none).
      for (let node = 1; node < 2 * parent.issued; node += 1) {
        let gaps = 0;
        for (let position = node - lowbit(node) + 1; position <= node; position += 1) if (position <= parent.issued && !live.has(position)) gaps += 1;
        if ((stored.get(node) ?? 0) !== gaps) problems.push(`${spec.list} of ${parent.id}: node ${node} holds ${stored.get(node) ?? 0}, not ${gaps}`);
      }
    }
  }
  return problems;
}

/** Rows of every list in two organizations, written in an order their lists do not have. */
function writeRows(db: DatabaseSync) {
  const at = (minute: number) => `2026-01-01T00:${String(minute).padStart(2, "0")}:00.000Z`;
  db.exec(`insert into organizations (id, name, slug, created_at, updated_at) values ('org-a', 'A', 'a', '${at(0)}', '${at(0)}'), ('org-b', 'B', 'b', '${at(0)}', '${at(0)}')`);
  const user = db.prepare("insert into users (id, uuid, distinct_id, email, created_at) values (?, ?, ?, ?, ?)");
  for (const id of [1, 2, 3, 4]) user.run(id, `user-${id}`, `user-${id}`, `user-${id}@example.com`, at(0));
  const membership = db.prepare("insert into organization_memberships (id, organization_id, user_id, level, joined_at, updated_at) values (?, ?, ?, 1, ?, ?)");
  [["m-3", "org-a", 3, 9], ["m-1", "org-a", 1, 1], ["m-2", "org-a", 2, 5], ["m-4", "org-b", 4, 2]].forEach(([id, organization, userId, minute]) =>
    membership.run(id as string, organization as string, userId as number, at(minute as number), at(minute as number)),
  );
  const invite = db.prepare("insert into invites (id, organization_id, target_email, level, send_email, combine_pending_invites, created_at, updated_at) values (?, ?, ?, 1, 0, 0, ?, ?)");
  [["i-5", "org-a", 30], ["i-1", "org-a", 10], ["i-3", "org-a", 10], ["i-2", "org-a", 20], ["i-9", "org-b", 5]].forEach(([id, organization, minute]) =>
    invite.run(id as string, organization as string, `${id}@example.com`, at(minute as number), at(minute as number)),
  );
  const project = db.prepare(
    "insert into projects (id, uuid, organization_id, name, name_key, api_token, live_events_token, settings, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, '{}', ?, ?)",
  );
  const environment = db.prepare("insert into environments (id, project_id, organization_id, name, created_at) values (?, ?, ?, 'Default', ?)");
  [[2, "org-a", 7], [1, "org-a", 3], [3, "org-b", 1]].forEach(([id, organization, minute]) => {
    project.run(id as number, `p-${id}`, organization as string, `P${id}`, `p${id}`, `token-${id}`, `live-${id}`, at(minute as number), at(minute as number));
    environment.run(id as number, id as number, organization as string, at(minute as number));
  });
  const batchExport = db.prepare(
    "insert into batch_exports (id, environment_id, organization_id, name, destination_type, destination_config, interval, deleted, created_at, last_updated_at) values (?, ?, ?, ?, 'S3', '{}', 'hour', ?, ?, ?)",
  );
  [["b-1", 1, "org-a", 0, 1], ["b-2", 2, "org-a", 1, 2], ["b-3", 1, "org-a", 1, 3], ["b-4", 2, "org-a", 0, 4], ["b-5", 1, "org-a", 0, 5], ["b-6", 3, "org-b", 1, 6]].forEach(
    ([id, environmentId, organization, deleted, minute]) =>
      batchExport.run(id as string, environmentId as number, organization as string, id as string, deleted as number, at(minute as number), at(minute as number)),
  );
  const key = db.prepare(
    "insert into personal_api_keys (id, user_id, label, secure_value, mask_value, scopes, scoped_organizations, scoped_teams, created_at) values (?, ?, ?, ?, 'phx_...', '[\"*\"]', '[]', '[]', ?)",
  );
  [["k-2", 1, 8], ["k-1", 1, 4], ["k-3", 2, 1]].forEach(([id, userId, minute]) => key.run(id as string, userId as number, id as string, `hash-${id}`, at(minute as number)));
  const webhook = db.prepare(
    "insert into webhooks (id, organization_id, url, events, enabled, description, sealed_secret, last_enqueued_seq, created_at, updated_at) values (?, ?, 'https://example.com/', '[\"*\"]', 0, '', 'sealed', 0, ?, ?)",
  );
  [["w-2", "org-a", 9], ["w-1", "org-a", 2]].forEach(([id, organization, minute]) => webhook.run(id as string, organization as string, at(minute as number), at(minute as number)));
  const delivery = db.prepare(
    "insert into webhook_deliveries (id, webhook_id, entry_id, event, status, retry_until, created_at, updated_at) values (?, 'w-1', ?, 'Organization.updated', 'delivered', ?, ?, ?)",
  );
  [["d-3", 3], ["d-1", 1], ["d-2", 2]].forEach(([id, minute]) => delivery.run(id as string, id as string, at(minute as number), at(minute as number), at(minute as number)));
}

describe("the list_positions migration", () => {
  it("numbers the rows a database holds in their lists' order, and its triggers keep the trees after", () => {
    const db = new DatabaseSync(":memory:");
    db.exec("PRAGMA foreign_keys = ON");
    const files = readdirSync(MIGRATIONS).filter((file) => file.endsWith(".sql")).sort();
    const before = files.slice(0, files.indexOf(POSITIONS_MIGRATION));
    migrate(db, before);
    writeRows(db);
    migrate(db, [POSITIONS_MIGRATION]);

    expect(listsThatDisagree(db)).toEqual([]);
    const positions = (table: string, column: string, owner: string, value: string | number) =>
      (db.prepare(`select id from ${table} where ${owner} = ? order by ${column}`).all(value) as { id: string }[]).map((row) => row.id);
    // Oldest first, ties by id: each list's order before the migration.
    expect(positions("invites", "position", "organization_id", "org-a")).toEqual(["i-1", "i-3", "i-2", "i-5"]);
    expect(positions("organization_memberships", "position", "organization_id", "org-a")).toEqual(["m-1", "m-2", "m-3"]);
    expect(positions("batch_exports", "organization_position", "organization_id", "org-a")).toEqual(["b-1", "b-2", "b-3", "b-4", "b-5"]);
    expect(positions("batch_exports", "environment_position", "environment_id", 1)).toEqual(["b-1", "b-3", "b-5"]);
    expect(positions("webhook_deliveries", "position", "webhook_id", "w-1")).toEqual(["d-1", "d-2", "d-3"]);
    const trees = db.prepare("select count(*) as nodes from list_position_gaps").get() as { nodes: number };
    expect(trees.nodes).toBeGreaterThan(0);

    // Writes after the migration: inserts past a power of two, deletions, a soft delete undone, a cascade.
    // A gap before the invites pass 4 positions: the new top node starts from it.
    db.exec(`
      delete from invites where id = 'i-3';
      insert into invites (id, organization_id, target_email, level, send_email, combine_pending_invites, created_at, updated_at)
        values ('i-6', 'org-a', 'i-6@example.com', 1, 0, 0, '2026-02-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z');
      delete from invites where id = 'i-6';
      update batch_exports set deleted = 1 where id = 'b-1';
      update batch_exports set deleted = 0 where id = 'b-2';
      delete from batch_exports where id = 'b-3';
      delete from personal_api_keys where id = 'k-1';
      delete from organizations where id = 'org-b';
    `);
    expect(listsThatDisagree(db)).toEqual([]);
    expect(db.prepare("select count(*) as nodes from list_position_gaps where owner in ('org-b', '3', '4')").get()).toEqual({ nodes: 0 });
  });
});
