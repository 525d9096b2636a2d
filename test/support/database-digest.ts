import { env } from "cloudflare:workers";
import { sealOrganizations } from "../../src/platform/activity-log/after-response";
import { organizationsWithUnsealedEntries } from "../../src/platform/activity-log/chain";
import { createDatabase, D1Meter } from "../../src/platform/db";

/** Tables the platform keeps for itself, not the API's data. */
const PLATFORM_TABLES = ["d1_migrations", "_cf_KV", "_cf_METADATA"];

async function sha256(text: string) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Every table's row count and a hash of all its rows, read straight from D1 in one batch: equal
 * digests before and after a request mean the request changed nothing. Ordinary tables only: a
 * full-text index (a virtual table and its shadow tables) follows the rows it indexes.
 */
export async function databaseDigest(): Promise<Record<string, string>> {
  await sealPendingActivity();
  const { results: tables } = await env.DB.prepare(
    "select name, wr from pragma_table_list where schema = 'main' and type = 'table' and name not like 'sqlite_%' " +
      "order by name",
  ).all<{ name: string; wr: number }>();
  const kept = tables.filter((table) => !PLATFORM_TABLES.includes(table.name));
  const names = kept.map((table) => table.name);
  // A table WITHOUT ROWID is read in its primary key's order, as deterministic as rowid's.
  const contents = await env.DB.batch(
    kept.map(({ name, wr }) => env.DB.prepare(`select * from "${name}"${wr ? "" : " order by rowid"}`)),
  );
  const digests = await Promise.all(
    contents.map(async (content) => `${content.results.length}:${await sha256(JSON.stringify(content.results))}`),
  );
  return Object.fromEntries(names.map((name, index) => [name, digests[index]!]));
}

/**
 * A key's first use records `last_used_at` after the response, which would show as a change:
 * marks every key used now, before the requests a digest compares.
 */
export async function markKeysUsed() {
  await env.DB.prepare("update personal_api_keys set last_used_at = ?").bind(new Date().toISOString()).run();
}

/**
 * Entries are hashed after their response, under `waitUntil`: a seal of an earlier write landing
 * between two digests would show as a change. Sealing every pending entry first settles them.
 */
async function sealPendingActivity() {
  const db = createDatabase(env.DB.withSession("first-primary"), new D1Meter());
  await sealOrganizations(env, await organizationsWithUnsealedEntries(db, 10_000));
}
