import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { localServer } from "../browser/support";

type Entry = Record<string, unknown> & { seq: number; item_id: string; organization_id: string };

/** `npm run bootstrap -- --json` on the running server's state, as an operator runs it again. */
function bootstrapAgain(statePath: string): { api_key: string } {
  const run = spawnSync("npm", ["run", "--silent", "bootstrap", "--", "--persist-to", statePath, "--json"], {
    encoding: "utf8",
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "");
}

async function call(url: string, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: await response.json() };
}

async function keyEntries(url: string, key: string, organizationId: string, keyId: string): Promise<Entry[]> {
  const log = await call(url, key, "GET", `/api/organizations/${organizationId}/activity_log?item_id=${keyId}`);
  expect(log.status).toBe(200);
  return log.body.results;
}

describe("npm run bootstrap", () => {
  it("records each key it mints in every organization of the owner, by the service, in the chain", async () => {
    const { url, apiKey, statePath } = localServer();
    const current = await call(url, apiKey, "GET", "/api/organizations/@current");
    const first = current.body.id as string;
    const keys = await call(url, apiKey, "GET", "/api/personal_api_keys/");
    const firstKey = keys.body.find((key: { label: string }) => key.label === "bootstrap");

    const [entry] = await keyEntries(url, apiKey, first, firstKey.id);
    expect(entry).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      user: null,
      unread: false,
      organization_id: first,
      project_id: null,
      dashboard_id: null,
      was_impersonated: false,
      is_system: true,
      activity: "created",
      scope: "PersonalAPIKey",
      item_id: firstKey.id,
      detail: {
        id: firstKey.id,
        name: "bootstrap",
        short_id: null,
        type: null,
        changes: null,
        merge: null,
        trigger: null,
        context: { scopes: ["*"], scoped_organizations: [], scoped_teams: [] },
      },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      request_id: null,
      api_key_id: null,
      service_key: null,
      seq: expect.any(Number),
      // Sealed by the next write to the organization (another test's, say), its next cron run, or `verify`.
      hash: expect.toBeOneOf([null, expect.stringMatching(/^[0-9a-f]{64}$/)]),
    });

    // Run again, once the owner has a second organization: the new key is entered in both, each
    // after that organization's last entry.
    const second = await call(url, apiKey, "POST", "/api/organizations/", { name: "Second" });
    expect(second.status).toBe(201);
    const lastSeqs = await Promise.all(
      [first, second.body.id].map(async (id) => {
        const log = await call(url, apiKey, "GET", `/api/organizations/${id}/activity_log?limit=1`);
        return log.body.results[0]?.seq ?? 0;
      }),
    );
    const again = bootstrapAgain(statePath);
    const newKeys = await call(url, again.api_key, "GET", "/api/personal_api_keys/");
    const newKey = newKeys.body.find(
      (key: { id: string; label: string }) => key.id !== firstKey.id && key.label === "bootstrap",
    );

    for (const [index, organizationId] of [first, second.body.id].entries()) {
      const entries = await keyEntries(url, again.api_key, organizationId, newKey.id);
      expect(entries.map(({ activity, is_system, seq }) => ({ activity, is_system, seq }))).toEqual([
        { activity: "created", is_system: true, seq: lastSeqs[index] + 1 },
      ]);
      const verdict = await call(url, again.api_key, "GET", `/api/organizations/${organizationId}/activity_log/verify`);
      expect(verdict.body).toMatchObject({ valid: true, first_invalid: null });
      const [sealed] = await keyEntries(url, again.api_key, organizationId, newKey.id);
      expect(sealed?.hash).toMatch(/^[0-9a-f]{64}$/);
    }
  });
});
