import { exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import * as schema from "../../src/db/schema";
import { api, db, errorBody, ISO_TIMESTAMP, setupOrganization } from "../support/harness";
import { createDashboard, dashboardsPath } from "../environments/dashboard-fixtures";

const NOT_FOUND = errorBody("invalid_request", "not_found", "Not found.");
const HOSTILE_TEXT = `<script>document.title = "pwned"</script> & "quotes"`;

/** A shared dashboard from a template (insight tiles) with a hostile text tile, and its token. */
async function setupPublicDashboard() {
  const team = await setupOrganization();
  const dashboard = await createDashboard(team.key, team.project.id, {
    name: "Growth <b>board</b>",
    description: "Weekly numbers",
    use_template: "DEFAULT_APP",
  });
  const dashboardPath = `${dashboardsPath(team.project.id)}/${dashboard.id}`;
  await api("PATCH", dashboardPath, {
    key: team.key,
    body: { tiles: [{ text: { body: HOSTILE_TEXT }, layouts: { sm: { x: 0, y: 99 } } }] },
  });
  const sharing = await api("PATCH", `${dashboardPath}/sharing`, { key: team.key, body: { enabled: true } });
  return { ...team, dashboard, dashboardPath, token: sharing.body.access_token as string };
}

function expectPublicHeaders(headers: Headers) {
  const policy = headers.get("Content-Security-Policy") ?? "";
  expect(policy).toContain("default-src 'none'");
  expect(policy).not.toContain("script-src");
  expect(policy).toMatch(/style-src 'nonce-[^']+'/);
  expect(headers.get("X-Content-Type-Options")).toBe("nosniff");
  expect(headers.get("Referrer-Policy")).toBe("no-referrer");
  expect(headers.get("Cache-Control")).toBe("no-store");
}

describe("GET /shared/:access_token", () => {
  it("serves a readable page: name, description, tiles in layout order, values escaped, data embedded", async () => {
    const { token } = await setupPublicDashboard();
    const page = await fetchPage(`/shared/${token}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Type")).toBe("text/html; charset=UTF-8");
    expectPublicHeaders(page.headers);
    expect(page.text).toContain("<h1>Growth &lt;b&gt;board&lt;/b&gt;</h1>");
    expect(page.text).toContain("Weekly numbers");
    expect(page.text).toContain(
      "&lt;script&gt;document.title = &quot;pwned&quot;&lt;/script&gt; &amp; &quot;quotes&quot;",
    );
    expect(page.text).not.toContain("<script>document.title");
    // The only script element is the JSON data block, which cannot be closed from inside.
    expect(page.text.match(/<script/g)).toHaveLength(1);
    expect(page.text).toContain('<script type="application/json" id="dashboard-data">');
    const embedded = /<script type="application\/json" id="dashboard-data">(.*)<\/script>/s.exec(page.text)?.[1] ?? "";
    expect(embedded).not.toContain("<");
    expect(JSON.parse(embedded).dashboard.tiles.at(-1).text.body).toBe(HOSTILE_TEXT);
    const insightNames = [...page.text.matchAll(/<h2>([^<]*)<\/h2>/g)].map((match) => match[1]);
    expect(insightNames.length).toBeGreaterThan(0);
    expect(page.text.indexOf("Note")).toBeGreaterThan(page.text.indexOf(insightNames[0]!));
  });

  it("serves the same data as JSON with .json, without any user or e-mail, in one D1 round trip", async () => {
    const { token, owner } = await setupPublicDashboard();
    const response = await api("GET", `/shared/${token}.json`);
    expect(response.status).toBe(200);
    expectPublicHeaders(response.headers);
    expect(response.cost.queries).toBe(1);
    expect(response.text).not.toContain(owner.email);
    expect(response.text).not.toContain("created_by");
    const { dashboard } = response.body;
    expect(Object.keys(dashboard)).toEqual([
      "id",
      "name",
      "description",
      "created_at",
      "last_modified_at",
      "tags",
      "filters",
      "variables",
      "tiles",
    ]);
    expect(dashboard).toMatchObject({
      name: "Growth <b>board</b>",
      description: "Weekly numbers",
      created_at: expect.stringMatching(ISO_TIMESTAMP),
    });
    expect(dashboard.tiles.map((tile: { order: number }) => tile.order)).toEqual(
      dashboard.tiles.map((_: unknown, index: number) => index),
    );
    expect(dashboard.tiles.at(-1)).toEqual({
      id: expect.any(Number),
      layouts: { sm: { x: 0, y: 99 } },
      color: null,
      order: dashboard.tiles.length - 1,
      insight: null,
      text: { id: expect.any(Number), body: HOSTILE_TEXT, last_modified_at: expect.stringMatching(ISO_TIMESTAMP) },
    });
    expect(dashboard.tiles[0].insight).toEqual({
      id: expect.any(Number),
      short_id: expect.any(String),
      name: expect.any(String),
      derived_name: null,
      description: expect.any(String),
      query: expect.objectContaining({ kind: expect.any(String) }),
    });
  });

  it("answers 404 (a page, or JSON for .json) if paused, unknown, refreshed, deleted, or sharing off", async () => {
    const expectGone = async (token: string, heading = "Not found") => {
      const page = await fetchPage(`/shared/${token}`);
      expect(page.status).toBe(404);
      expect(page.headers.get("Content-Type")).toBe("text/html; charset=UTF-8");
      expect(page.text).toContain(`<h1>${heading}</h1>`);
      expectPublicHeaders(page.headers);
      const json = await api("GET", `/shared/${token}.json`);
      expect(json.status).toBe(404);
      expect(json.body).toEqual(NOT_FOUND);
    };
    await expectGone("unknown-token");

    const refreshed = await setupPublicDashboard();
    const newToken = (await api("POST", `${refreshed.dashboardPath}/sharing/refresh`, { key: refreshed.key })).body
      .access_token;
    await expectGone(refreshed.token);
    expect((await api("GET", `/shared/${newToken}.json`)).status).toBe(200);

    const disabled = await setupPublicDashboard();
    await api("PATCH", `${disabled.dashboardPath}/sharing`, { key: disabled.key, body: { enabled: false } });
    await expectGone(disabled.token, "This link is paused");

    const deleted = await setupPublicDashboard();
    await api("PATCH", deleted.dashboardPath, { key: deleted.key, body: { deleted: true } });
    await expectGone(deleted.token);

    const disallowed = await setupPublicDashboard();
    await db
      .update(schema.organizations)
      .set({ allowPubliclySharedResources: false })
      .where(eq(schema.organizations.id, disallowed.organization.id));
    await expectGone(disallowed.token);
  });
});

/** A browser's request for the page (`api` reads JSON bodies only). */
async function fetchPage(path: string) {
  const response = await exports.default.fetch(
    new Request(`http://localhost${path}`, { headers: { Accept: "text/html" } }),
  );
  return { status: response.status, headers: response.headers, text: await response.text() };
}
