import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { currentEnvironmentGuessKey } from "../../../src/platform/route-context/current-environment-guess";
import { sha256Hex } from "../../../src/platform/ids";
import { MembershipLevel } from "../../../src/platform/levels";
import { seedDashboards } from "../../environments/dashboard-fixtures";
import { addMembership, api, createProject, setupOrganization } from "../../support/harness";

/*
 * An `@current` read goes in one round trip when the environment `@current` picks is guessed
 * right. The guess is kept per key in the isolate and in KV: an isolate that has not seen the key
 * starts from KV. These keys are new to this isolate, so their guesses come from KV alone.
 */

/** The key's id; and a first request, so that the key is in the cache: the reads measured then need it warm. */
async function warmKeyId(key: string) {
  expect((await api("GET", "/api/personal_api_keys/@current", { key })).status).toBe(200);
  return (await env.DB.prepare("select id from personal_api_keys where secure_value = ?")
    .bind(await sha256Hex(key))
    .first<{ id: string }>())!.id;
}

/** The guess in KV, once the response's background write (if any) has landed. */
async function storedGuess(keyId: string, expected: string | null) {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const stored = await env.API_KEY_CACHE.get(currentEnvironmentGuessKey(keyId));
    if (stored === expected) return stored;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return env.API_KEY_CACHE.get(currentEnvironmentGuessKey(keyId));
}

const dashboards = (id: number | string) => `/api/environments/${id}/dashboards`;

describe("the guess of the environment @current picks", () => {
  it("lets a key new to the isolate read @current in one round trip, from another isolate's guess in KV", async () => {
    const { project, key } = await setupOrganization();
    await env.API_KEY_CACHE.put(currentEnvironmentGuessKey(await warmKeyId(key)), String(project.id));

    const current = await api("GET", dashboards("@current"), { key });
    const explicit = await api("GET", dashboards(project.id), { key });
    expect(current.status).toBe(200);
    expect(current.body).toEqual(explicit.body);
    expect(current.cost.queries).toBe(1);
  });

  it("costs a second round trip when stale, answers for the current project, and corrects KV", async () => {
    const { project, key } = await setupOrganization();
    const other = await setupOrganization();
    const keyId = await warmKeyId(key);
    // Another organization's project: the guess grants nothing, it is only checked.
    await env.API_KEY_CACHE.put(currentEnvironmentGuessKey(keyId), String(other.project.id));

    const current = await api("GET", dashboards("@current"), { key });
    expect(current.status).toBe(200);
    expect(current.body).toEqual((await api("GET", dashboards(project.id), { key })).body);
    expect(current.cost.queries).toBe(2);
    // The first round trip read the guessed project, the caller's no more: its rows are not told.
    expect(current.headers.get("Server-Timing")).toMatch(/d1;desc="queries=2"/);
    expect(await storedGuess(keyId, String(project.id))).toBe(String(project.id));
  });

  it("tells nothing in Server-Timing of a guessed project its caller has lost sight of since", async () => {
    const elsewhere = await setupOrganization();
    const big = await createProject(elsewhere.organization.id, { name: "Big" });
    await seedDashboards(big.id, 400);
    const { owner, project, key } = await setupOrganization();
    await addMembership(elsewhere.organization.id, owner, MembershipLevel.member);
    expect((await api("PATCH", "/api/users/@me", { key, body: { set_current_team: big.id } })).status).toBe(200);
    const path = `${dashboards("@current")}?limit=1000`;
    expect((await api("GET", path, { key })).body.count).toBe(400);

    const removed = await api("DELETE", `/api/organizations/${elsewhere.organization.id}/members/${owner.uuid}`, {
      key: elsewhere.key,
    });
    expect(removed.status).toBe(204);
    const after = await api("GET", path, { key });
    expect(after.status).toBe(200);
    expect(after.body).toEqual((await api("GET", `${dashboards(project.id)}?limit=1000`, { key })).body);
    expect(after.headers.get("Server-Timing")).toMatch(/d1;desc="queries=2"/);
    // Once the guess is right again, the cost is told as ever.
    expect((await api("GET", path, { key })).cost).toMatchObject({ queries: 1, rowsRead: expect.any(Number) });
    expect((await api("GET", path, { key })).cost.rowsRead).toBeLessThan(100);
  });

  it("without a guess takes 2 round trips, leaves one in KV; a new choice replaces it; revoking drops it", async () => {
    const { organization, project, key } = await setupOrganization();
    const keyId = await warmKeyId(key);
    expect(await env.API_KEY_CACHE.get(currentEnvironmentGuessKey(keyId))).toBeNull();

    expect((await api("GET", dashboards("@current"), { key })).cost.queries).toBe(2);
    expect(await storedGuess(keyId, String(project.id))).toBe(String(project.id));
    expect((await api("GET", dashboards("@current"), { key })).cost.queries).toBe(1);

    const chosen = await createProject(organization.id, { name: "Chosen" });
    await api("PATCH", "/api/users/@me", { key, body: { set_current_team: chosen.id } });
    const afterChoice = await api("GET", dashboards("@current"), { key });
    expect(afterChoice.body).toEqual((await api("GET", dashboards(chosen.id), { key })).body);
    expect(afterChoice.cost.queries).toBe(2);
    expect(await storedGuess(keyId, String(chosen.id))).toBe(String(chosen.id));

    const keys = await api("GET", "/api/personal_api_keys", { key });
    expect((await api("DELETE", `/api/personal_api_keys/${keys.body[0].id}`, { key })).status).toBe(204);
    expect(await env.API_KEY_CACHE.get(currentEnvironmentGuessKey(keyId))).toBeNull();
  });
});
