import { readdirSync, readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { summariesThatDisagree, type ProjectSummaryRow } from "../support/project-summaries";

/*
 * The migration that keeps the organization object's projects in summaries (project_summaries)
 * runs on the projects a deployed database already holds: it fills every organization's shards
 * from its projects and their default rules. The test pool applies every migration to an empty
 * database, so this applies the ones before it to SQLite, writes projects and rules, applies it
 * and compares the shards with the tables; then again after writes through its triggers.
 */

const MIGRATIONS = new URL("../../migrations/", import.meta.url);
const SUMMARIES_MIGRATION = "0015_project_summaries.sql";
const AT = "2026-01-01T00:00:00.000Z";

function migrate(db: DatabaseSync, files: string[]) {
  for (const file of files) db.exec(readFileSync(new URL(file, MIGRATIONS), "utf8"));
}

function disagreements(db: DatabaseSync) {
  const organizations = db.prepare("select id from organizations").all() as { id: string }[];
  return organizations.flatMap(({ id }) => {
    const projects = db
      .prepare(
        `select p.*, d.access_level as default_access from projects p
         left join access_controls d on d.resource = 'project' and d.resource_id = cast(p.id as text) and d.organization_membership_id is null
         where p.organization_id = ?`,
      )
      .all(id) as ProjectSummaryRow[];
    const shards = db.prepare("select shard, projects from project_summaries where organization_id = ?").all(id) as { shard: number; projects: string }[];
    return summariesThatDisagree(projects, shards).map((problem) => `${id}: ${problem}`);
  });
}

function insertProject(db: DatabaseSync, id: number, organizationId: string, fields: { onboarding?: string; isDemo?: number } = {}) {
  db.prepare(
    `insert into projects (id, uuid, organization_id, name, name_key, api_token, live_events_token, settings, is_demo, has_completed_onboarding_for, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, '{}', ?, ?, ?, ?)`,
  ).run(id, `uuid-${id}`, organizationId, `P${id}`, `p${id}`, `token-${id}`, `live-${id}`, fields.isDemo ?? 0, fields.onboarding ?? null, AT, AT);
  db.prepare("insert into environments (id, project_id, organization_id, name, created_at) values (?, ?, ?, 'Default', ?)").run(id, id, organizationId, AT);
}

function insertRule(db: DatabaseSync, projectId: number, membershipId: string | null, level: string) {
  db.prepare(
    `insert into access_controls (id, environment_id, resource, resource_id, organization_membership_id, access_level, created_at, updated_at)
     values (?, ?, 'project', ?, ?, ?, ?, ?)`,
  ).run(`rule-${projectId}-${membershipId ?? "default"}`, projectId, String(projectId), membershipId, level, AT, AT);
}

describe("the project_summaries migration", () => {
  it("fills every organization's shards from the projects a database holds, and its triggers keep them after", () => {
    const db = new DatabaseSync(":memory:");
    db.exec("PRAGMA foreign_keys = ON");
    const files = readdirSync(MIGRATIONS).filter((file) => file.endsWith(".sql")).sort();
    migrate(db, files.slice(0, files.indexOf(SUMMARIES_MIGRATION)));

    db.exec(`insert into organizations (id, name, slug, created_at, updated_at) values ('org-a', 'A', 'a', '${AT}', '${AT}'), ('org-b', 'B', 'b', '${AT}', '${AT}')`);
    db.exec(`insert into users (id, uuid, distinct_id, email, created_at) values (1, 'u-1', 'u-1', 'u-1@example.com', '${AT}')`);
    db.exec(`insert into organization_memberships (id, organization_id, user_id, level, joined_at, updated_at) values ('m-1', 'org-a', 1, 1, '${AT}', '${AT}')`);
    // 140 projects in one organization (two shards), one in another; fields of every kind; rules of both kinds.
    for (let id = 1; id <= 140; id += 1) insertProject(db, id, "org-a", id % 7 === 0 ? { onboarding: '{"product_analytics":true}', isDemo: 1 } : {});
    insertProject(db, 141, "org-b");
    insertRule(db, 3, null, "none");
    insertRule(db, 130, null, "none");
    insertRule(db, 3, "m-1", "member");
    db.exec("delete from projects where id = 5");
    migrate(db, [SUMMARIES_MIGRATION]);

    expect(disagreements(db)).toEqual([]);
    const shards = db.prepare("select organization_id as organization, shard from project_summaries order by 1, 2").all();
    expect(shards.map((row) => ({ ...row }))).toEqual([
      { organization: "org-a", shard: 0 },
      { organization: "org-a", shard: 1 },
      { organization: "org-b", shard: 0 },
    ]);

    // Writes after the migration: a project added and changed, rules set, changed and removed, projects deleted.
    insertProject(db, 142, "org-a");
    db.exec(`
      update projects set name = 'Renamed', timezone = 'Europe/Paris', access_control = 1, has_completed_onboarding_for = '{"a":1}' where id = 142;
      update projects set ingested_event = 1, completed_snippet_onboarding = 1 where id = 1;
    `);
    insertRule(db, 142, null, "none");
    db.exec(`
      update access_controls set access_level = 'member' where id = 'rule-130-default';
      delete from access_controls where id = 'rule-3-default';
      delete from projects where id = 141;
    `);
    for (let id = 129; id <= 140; id += 1) db.prepare("delete from projects where id = ?").run(id);
    expect(disagreements(db)).toEqual([]);
    // The emptied shards go: org-b's only one; org-a's second holds 142 alone.
    const left = db.prepare("select organization_id as organization, shard from project_summaries order by 1, 2").all();
    expect(left.map((row) => ({ ...row }))).toEqual([
      { organization: "org-a", shard: 0 },
      { organization: "org-a", shard: 1 },
    ]);
    db.exec("delete from organizations where id = 'org-a'");
    expect(db.prepare("select count(*) as shards from project_summaries").get()).toEqual({ shards: 0 });
  });
});
