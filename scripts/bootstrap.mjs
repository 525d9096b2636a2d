#!/usr/bin/env node
// First-run set-up, safe to run again and while the server runs: ensures the first organization,
// its owner and a project exist, then mints a new all-scopes key for the owner. Only the key's
// sha256 reaches the database (through `wrangler d1 execute`). Ids, tokens and the key come from
// the Worker's own generators (Node runs the TypeScript modules as they are).
//   npm run bootstrap [-- --json] [-- --persist-to <state folder>]
//   npm run bootstrap -- --remote [--env staging|production]   (the deployed D1; prints its URL)
import "./toolchain.mjs";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { publicAddress, readTarget } from "./deploy-target.mjs";
import { localUrl } from "./local-url.mjs";
import { d1Execute, environmentArgs, scriptOptions } from "./wrangler.mjs";

// Lower-cased like every stored e-mail, so that look-ups by e-mail use the unique index.
const OWNER_EMAIL = (process.env.BOOTSTRAP_OWNER_EMAIL ?? "owner@example.com").toLowerCase();

const quote = (value) => `'${String(value).replaceAll("'", "''")}'`;

/** Imported when needed: Node runs TypeScript from 22.18 on, and scripts/toolchain.mjs says so first. */
const workerModules = () => Promise.all([import("../src/platform/auth/api-keys.ts"), import("../src/platform/ids.ts")]);

/**
 * The key's `PersonalAPIKey.created` in each organization of its owner (an all-scopes key reaches
 * them all), as the API records one, but by the service (`is_system`): the operator made it, not
 * the owner. Numbered after the organization's last entry as src/platform/activity-log/record.ts
 * numbers them; the chain seals it with the next write or read of the log. Entry ids: one uuid7
 * made unique per organization by the membership's row number.
 */
function keyCreatedEntries(keyId, ownerOfFirst, entryId) {
  const detail = JSON.stringify({
    name: "bootstrap",
    changes: null,
    context: { scopes: ["*"], scoped_organizations: [], scoped_teams: [] },
  });
  return `INSERT INTO activity_log (id, organization_id, seq, project_id, dashboard_id, user_id, api_key_id,
    is_system, activity, scope, item_id, detail, request_id, created_at, hash)
  SELECT substr(${quote(entryId)}, 1, 24) || printf('%012x', m.rowid), m.organization_id,
    max(
      coalesce((SELECT seq FROM activity_log WHERE organization_id = m.organization_id ORDER BY seq DESC LIMIT 1), 0),
      coalesce((SELECT max(last_seq) FROM activity_log_segments WHERE organization_id = m.organization_id), 0),
      coalesce((SELECT seq FROM activity_log_anchors WHERE organization_id = m.organization_id), 0)
    ) + 1,
    NULL, NULL, NULL, NULL, 1, 'created', 'PersonalAPIKey', ${quote(keyId)}, ${quote(detail)}, NULL,
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NULL
  FROM organization_memberships m WHERE m.user_id = (${ownerOfFirst});`;
}

function bootstrapSql({ secureValue, maskValue }, { newDistinctId, newProjectTokens, uuid7 }) {
  const now = new Date().toISOString();
  const firstOrganization = "(SELECT id FROM organizations ORDER BY created_at, id LIMIT 1)";
  const ownerOfFirst = `SELECT user_id FROM organization_memberships
    WHERE organization_id = ${firstOrganization} AND level = 15 ORDER BY joined_at LIMIT 1`;
  const projectUuid = uuid7();
  const keyId = uuid7();
  const tokens = newProjectTokens();
  return `
INSERT INTO organizations (id, name, slug, created_at, updated_at)
  SELECT ${quote(uuid7())}, 'My organization', 'my-organization', ${quote(now)}, ${quote(now)}
  WHERE NOT EXISTS (SELECT 1 FROM organizations);
INSERT INTO users (uuid, distinct_id, first_name, last_name, email, is_email_verified, role_at_organization, created_at)
  SELECT ${quote(uuid7())}, ${quote(newDistinctId())}, 'Owner', '', ${quote(OWNER_EMAIL)}, 1, '', ${quote(now)}
  WHERE NOT EXISTS (${ownerOfFirst}) AND NOT EXISTS (SELECT 1 FROM users WHERE email = ${quote(OWNER_EMAIL)});
INSERT INTO organization_memberships (id, organization_id, user_id, level, joined_at, updated_at)
  SELECT ${quote(uuid7())}, ${firstOrganization}, id, 15, ${quote(now)}, ${quote(now)}
  FROM users WHERE email = ${quote(OWNER_EMAIL)} AND NOT EXISTS (${ownerOfFirst})
  AND NOT EXISTS (SELECT 1 FROM organization_memberships m
    WHERE m.user_id = users.id AND m.organization_id = ${firstOrganization});
INSERT INTO projects
  (uuid, organization_id, name, name_key, api_token, live_events_token, settings, created_at, updated_at)
  SELECT ${quote(projectUuid)}, ${firstOrganization}, 'Default project', 'default project',
    ${quote(tokens.apiToken)}, ${quote(tokens.liveEventsToken)}, '{}', ${quote(now)}, ${quote(now)}
  WHERE NOT EXISTS (SELECT 1 FROM projects WHERE organization_id = ${firstOrganization});
INSERT INTO environments (id, project_id, organization_id, name, created_at)
  SELECT id, id, organization_id, name, created_at FROM projects WHERE uuid = ${quote(projectUuid)};
INSERT INTO personal_api_keys
  (id, user_id, label, secure_value, mask_value, scopes, scoped_organizations, scoped_teams, created_at)
  SELECT ${quote(keyId)}, (${ownerOfFirst}), 'bootstrap', ${quote(secureValue)}, ${quote(maskValue)},
    '["*"]', '[]', '[]', ${quote(now)};
${keyCreatedEntries(keyId, ownerOfFirst, uuid7())}
SELECT o.id AS organization_id,
  (SELECT id FROM projects WHERE organization_id = o.id ORDER BY created_at, id LIMIT 1) AS project_id,
  u.uuid AS user_uuid, u.email AS user_email
FROM organizations o
JOIN users u ON u.id = (${ownerOfFirst})
WHERE o.id = ${firstOrganization};
`;
}

/**
 * Where `wrangler d1 execute` runs: the deployed database of `environment` (the top level when
 * none), or the local state in `persistTo` (wrangler's default folder when none).
 */
function d1Target({ remote = false, persistTo, environment }) {
  if (remote) return { location: "--remote", options: environmentArgs(environment) };
  return { location: "--local", options: persistTo ? ["--persist-to", persistTo] : [] };
}

/** How many organizations the database holds: none means it was never set up. */
export function organizationCount(target = {}) {
  const { location, options } = d1Target(target);
  const [{ results }] = d1Execute(
    ["--command", "SELECT count(*) AS organizations FROM organizations", ...options],
    location,
  );
  return results[0].organizations;
}

/** Ensures the first organization exists and mints a key; returns what a client needs. */
export async function bootstrap(target = {}) {
  const [{ mintApiKey }, ids] = await workerModules();
  const { value, secureValue, maskValue } = await mintApiKey();
  const directory = mkdtempSync(path.join(tmpdir(), "bootstrap-"));
  const file = path.join(directory, "bootstrap.sql");
  try {
    writeFileSync(file, bootstrapSql({ secureValue, maskValue }, ids));
    const { location, options } = d1Target(target);
    // --yes: the remote execution's confirmation, which a script cannot answer.
    const results = d1Execute(["--file", file, ...options, ...(target.remote ? ["--yes"] : [])], location);
    const [row] = results.at(-1).results;
    return {
      api_key: value,
      organization_id: row.organization_id,
      project_id: row.project_id,
      user: { uuid: row.user_uuid, email: row.user_email },
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

export function printWelcome(result, baseUrl) {
  console.log(`
Organization ${result.organization_id}, project ${result.project_id}, owner ${result.user.email}.
Personal API key (shown once, all scopes):

  ${result.api_key}

Try it:

  curl -H "Authorization: Bearer ${result.api_key}" ${baseUrl}/api/organizations/@current
`);
}

/**
 * The address the welcome's curl line names: `API_URL` when given; for a deployed database its
 * `PUBLIC_BASE_URL`, else its workers.dev form (`npm run deploy` passes the URL it deployed to);
 * else the running local server's.
 */
async function welcomeUrl({ remote, persistTo, environment }) {
  if (process.env.API_URL) return process.env.API_URL;
  if (!remote) return localUrl(persistTo);
  return publicAddress(await readTarget(environment));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  let options;
  try {
    options = scriptOptions("bootstrap", {
      remote: { type: "boolean" },
      env: { type: "string" },
      "persist-to": { type: "string" },
      json: { type: "boolean" },
    });
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  }
  const target = { remote: options.remote ?? false, persistTo: options["persist-to"], environment: options.env };
  const result = await bootstrap(target);
  if (options.json) console.log(JSON.stringify(result));
  else printWelcome(result, await welcomeUrl(target));
}
