import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { DASHBOARD_TEMPLATES } from "../../src/environments/dashboards/dashboard-templates";
import { nowIso, uuid7 } from "../../src/platform/ids";
import { MembershipLevel } from "../../src/platform/levels";
import {
  addMember,
  api,
  createApiKey,
  createProject,
  db,
  errorBody,
  ISO_TIMESTAMP,
  setupOrganization,
  userBasic,
  nextLink,
  previousLink,
} from "../support/harness";
import {
  createDashboard,
  dashboardBody,
  dashboardsPath,
  listItemBody,
  textTileBody,
  unchangedSince,
} from "./dashboard-fixtures";
import { countBytesRead } from "../support/d1-limits";

const invalid = (code: string, detail: string, attr: string | null) =>
  errorBody("validation_error", code, detail, attr);
const NOT_FOUND = errorBody("invalid_request", "not_found", "Not found.");
const NO_EDIT_RIGHT = errorBody(
  "authentication_error",
  "permission_denied",
  "You don't have edit permissions for this dashboard.",
);
const NO_RESTRICTION_RIGHT = errorBody(
  "authentication_error",
  "permission_denied",
  "Only the dashboard owner and project admins have the restriction rights required " +
    "to change the dashboard's restriction level.",
);

describe("POST /api/environments/:project_id/dashboards", () => {
  it("creates an empty dashboard with every field derived", async () => {
    const { key, owner, project } = await setupOrganization();
    const response = await api("POST", dashboardsPath(project.id), {
      key,
      body: { name: "Sales", description: "Weekly numbers", pinned: true, tags: [" Growth ", "growth", "KPI", ""] },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual(
      dashboardBody(owner, {
        name: "Sales",
        description: "Weekly numbers",
        pinned: true,
        tags: ["growth", "kpi"],
        team_id: project.id,
        last_accessed_at: null,
      }),
    );
  });

  it("creates at restriction level 37 as access-control version v1", async () => {
    const { key, owner, project } = await setupOrganization();
    const response = await api("POST", dashboardsPath("@current"), {
      key,
      body: { name: "Private", restriction_level: 37 },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual(
      dashboardBody(owner, {
        name: "Private",
        restriction_level: 37,
        effective_restriction_level: 37,
        access_control_version: "v1",
      }),
    );
    const listed = await api("GET", dashboardsPath(project.id), { key });
    expect(listed.body.results.map((item: { id: number }) => item.id)).toEqual([response.body.id]);
  });

  it("creates from the DEFAULT_APP template: its name, insights and text tiles, in layout order", async () => {
    const { key, owner, project } = await setupOrganization();
    const response = await api("POST", dashboardsPath(project.id), { key, body: { use_template: "DEFAULT_APP" } });
    expect(response.status).toBe(201);
    const template = DASHBOARD_TEMPLATES.DEFAULT_APP!;
    expect(response.body).toEqual(
      dashboardBody(owner, {
        name: "My App Dashboard",
        creation_mode: "template",
        tiles: template.tiles.map((tile, order) =>
          "insight" in tile
            ? {
                id: expect.any(Number),
                layouts: tile.layouts,
                color: tile.color,
                insight: {
                  id: expect.any(Number),
                  short_id: expect.stringMatching(/^[0-9A-Za-z]{8}$/),
                  name: tile.insight.name,
                  derived_name: null,
                  description: tile.insight.description,
                  query: tile.insight.query,
                  created_at: expect.stringMatching(ISO_TIMESTAMP),
                  updated_at: expect.stringMatching(ISO_TIMESTAMP),
                  favorited: false,
                  tags: [],
                  deleted: false,
                },
                text: null,
                order,
                show_description: null,
                transparent_background: null,
                filters_overrides: null,
              }
            : textTileBody(owner, tile.text.body, { layouts: tile.layouts, order }),
        ),
      }),
    );
    expect(response.body.tiles[0].insight.name).toBe("Daily active users (DAUs)");
    expect(response.body.tiles[0].insight.query).toMatchObject({
      kind: "InsightVizNode",
      source: { kind: "TrendsQuery" },
    });
    expect(response.body.tiles.at(-1).text.body).toMatch(/^# My App Dashboard/);
  });

  it("creates from WEBSITE_TRAFFIC keeping a given name, its text tile first (top of the grid)", async () => {
    const { key, project } = await setupOrganization();
    const response = await api("POST", dashboardsPath(project.id), {
      key,
      body: { use_template: "WEBSITE_TRAFFIC", name: "Marketing site" },
    });
    expect(response.status).toBe(201);
    expect(response.body.name).toBe("Marketing site");
    expect(response.body.creation_mode).toBe("template");
    expect(
      response.body.tiles.map(
        (tile: { insight: { name: string } | null; text: { body: string } | null }) => tile.insight?.name ?? "text",
      ),
    ).toEqual([
      "text",
      "Website Unique Users (Total)",
      "Website Unique Users (Breakdown)",
      "Top Website Pages (Overall)",
      "Website Users by Location",
    ]);
  });

  it("costs one D1 batch to create from a template", async () => {
    const { key, project } = await setupOrganization();
    await api("GET", dashboardsPath(project.id), { key });
    const response = await api("POST", dashboardsPath(project.id), { key, body: { use_template: "DEFAULT_APP" } });
    expect(response.status).toBe(201);
    // The project resolution, then one batch that writes every row and reads the result back.
    expect(response.cost.queries).toBe(2);
  });

  it("duplicates a dashboard sharing its insights, with copies of its texts, and copies its variables", async () => {
    const { key, owner, project } = await setupOrganization();
    const source = await createDashboard(key, project.id, { use_template: "DEFAULT_APP" });
    await db
      .update(schema.dashboards)
      .set({ variables: { region: "eu" } })
      .where(eq(schema.dashboards.id, source.id));
    await api("GET", dashboardsPath(project.id), { key });
    const response = await api("POST", dashboardsPath(project.id), {
      key,
      body: { use_dashboard: source.id, name: "Copy" },
    });
    expect(response.status).toBe(201);
    const sourceNow = (await api("GET", `${dashboardsPath(project.id)}/${source.id}`, { key })).body;
    expect(response.body).toEqual(
      dashboardBody(owner, {
        name: "Copy",
        creation_mode: "duplicate",
        variables: { region: "eu" },
        tiles: sourceNow.tiles.map((tile: { text: Record<string, unknown> | null }) => ({
          ...tile,
          id: expect.any(Number),
          text: tile.text && {
            ...tile.text,
            id: expect.any(Number),
            last_modified_at: expect.stringMatching(ISO_TIMESTAMP),
          },
        })),
      }),
    );
    const sourceTextIds = source.tiles.flatMap((tile) => (tile.text ? [tile.text.id] : []));
    const copiedTextIds = response.body.tiles.flatMap((tile: { text: { id: number } | null }) =>
      tile.text ? [tile.text.id] : [],
    );
    expect(copiedTextIds).toHaveLength(sourceTextIds.length);
    expect(copiedTextIds.some((id: number) => sourceTextIds.includes(id))).toBe(false);
    const newTileIds = response.body.tiles.map((tile: { id: number }) => tile.id);
    expect(newTileIds.some((id: number) => source.tiles.some((tile) => tile.id === id))).toBe(false);
    // The project with the source the body names, then one batch for every write and the read-back.
    expect(response.cost.queries).toBe(2);
  });

  it("never lets a viewer edit the original's text through a copy of it", async () => {
    const { organization, key, project } = await setupOrganization();
    const viewer = await addMember(organization.id, MembershipLevel.member);
    const original = await createDashboard(key, project.id, { name: "Locked", restriction_level: 37 });
    await api("PATCH", `${dashboardsPath(project.id)}/${original.id}`, {
      key,
      body: { tiles: [{ text: { body: "Quarterly notes" } }] },
    });
    const copy = await api("POST", dashboardsPath(project.id), {
      key: viewer.key,
      body: { use_dashboard: original.id, name: "Mine" },
    });
    expect(copy.status).toBe(201);
    const copiedTile = copy.body.tiles[0];

    const edited = await api("PATCH", `${dashboardsPath(project.id)}/${copy.body.id}`, {
      key: viewer.key,
      body: { tiles: [{ id: copiedTile.id, text: { body: "Defaced" } }] },
    });

    expect(edited.status).toBe(200);
    expect(edited.body.tiles[0].text.body).toBe("Defaced");
    const originalNow = await api("GET", `${dashboardsPath(project.id)}/${original.id}`, { key });
    expect(originalNow.body.tiles.map((tile: { text: { body: string } }) => tile.text.body)).toEqual([
      "Quarterly notes",
    ]);
  });

  it("duplicates with duplicate_tiles: copies of the insights and texts", async () => {
    const { key, project } = await setupOrganization();
    const source = await createDashboard(key, project.id, { use_template: "DEFAULT_APP" });
    const response = await api("POST", dashboardsPath(project.id), {
      key,
      body: { use_dashboard: source.id, duplicate_tiles: true },
    });
    expect(response.status).toBe(201);
    const tiles = response.body.tiles as {
      insight: { id: number; name: string } | null;
      text: { id: number; body: string } | null;
    }[];
    expect(tiles.map((tile) => tile.insight?.name ?? tile.text?.body)).toEqual([
      "Daily active users (DAUs) (Copy)",
      "Weekly active users (WAUs) (Copy)",
      "Retention (Copy)",
      "Referring domain (last 14 days) (Copy)",
      DASHBOARD_TEMPLATES.DEFAULT_APP!.tiles.flatMap((tile) => ("text" in tile ? [tile.text.body] : []))[0],
    ]);
    // Insights and texts are numbered apart: each copy is compared with the source's of its kind.
    const sourceInsightIds = source.tiles.flatMap((tile) => (tile.insight ? [tile.insight.id] : []));
    const sourceTextIds = source.tiles.flatMap((tile) => (tile.text ? [tile.text.id] : []));
    for (const tile of tiles) {
      if (tile.insight) expect(sourceInsightIds).not.toContain(tile.insight.id);
      if (tile.text) expect(sourceTextIds).not.toContain(tile.text.id);
    }
  });

  it("refuses another organization's dashboard, an unknown one, or a deleted one as use_dashboard", async () => {
    const { key, project } = await setupOrganization();
    const stranger = await setupOrganization();
    const foreign = await createDashboard(stranger.key, stranger.project.id, { name: "Elsewhere" });
    const deleted = await createDashboard(key, project.id, { name: "Gone" });
    await api("PATCH", `${dashboardsPath(project.id)}/${deleted.id}`, { key, body: { deleted: true } });
    for (const useDashboard of [foreign.id, 999999, deleted.id]) {
      const response = await api("POST", dashboardsPath(project.id), { key, body: { use_dashboard: useDashboard } });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(invalid("invalid_input", "Invalid value provided", "use_dashboard"));
    }
    const listed = await api("GET", dashboardsPath(project.id), { key });
    expect(listed.body.count).toBe(0);
  });

  it("answers 400 naming the field for each invalid input, and creates nothing", async () => {
    const { key, project } = await setupOrganization();
    const source = await createDashboard(key, project.id, { name: "Source" });
    const cases: [unknown, ReturnType<typeof invalid>][] = [
      [{ name: "x".repeat(401) }, invalid("max_length", "Ensure this field has no more than 400 characters.", "name")],
      [{ name: 7 }, invalid("invalid_input", "Expected string, received number.", "name")],
      [{ restriction_level: 30 }, invalid("invalid_choice", '"30" is not a valid choice.', "restriction_level")],
      [{ pinned: "yes" }, invalid("invalid_input", "Expected boolean, received string.", "pinned")],
      [{ tags: "kpi" }, invalid("invalid_input", "Expected array, received string.", "tags")],
      [{ tags: [1] }, invalid("invalid_input", "Expected string, received number.", "tags.0")],
      // 255 characters as sent, 510 as stored: "İ" lower-cases to two.
      [
        { tags: ["İ".repeat(255)] },
        invalid("max_length", "Ensure this field has no more than 255 characters.", "tags.0"),
      ],
      [{ use_template: "NOPE" }, invalid("invalid_input", "Invalid template provided: NOPE", "use_template")],
      [
        { use_template: "DEFAULT_APP", use_dashboard: source.id },
        invalid("invalid_input", "`use_dashboard` and `use_template` cannot be used together", "use_template"),
      ],
      [{ use_dashboard: "one" }, invalid("invalid_input", "Expected number, received string.", "use_dashboard")],
      [[], errorBody("validation_error", "parse_error", "Invalid data. Expected a dictionary, but got list.")],
    ];
    for (const [body, error] of cases) {
      const response = await api("POST", dashboardsPath(project.id), { key, body });
      expect({ body, status: response.status, error: response.body }).toEqual({ body, status: 400, error });
    }
    const listed = await api("GET", dashboardsPath(project.id), { key });
    expect(listed.body.count).toBe(1);
  });

  it("is served under /api/projects by the same code", async () => {
    const { key, owner, project } = await setupOrganization();
    const response = await api("POST", dashboardsPath(project.id, "projects"), { key, body: { name: "Twin" } });
    expect(response.status).toBe(201);
    expect(response.body).toEqual(dashboardBody(owner, { name: "Twin" }));
    const read = await api("GET", `${dashboardsPath(project.id, "environments")}/${response.body.id}/`, { key });
    expect(read.body).toEqual(response.body);
    const listed = await api("GET", `${dashboardsPath(project.id, "projects")}/`, { key });
    expect(listed.body.results).toEqual([listItemBody(owner, { id: response.body.id, name: "Twin" })]);
  });
});

describe("authentication, scopes and tenancy", () => {
  it("answers 401 without a key and with a bad key", async () => {
    const { project } = await setupOrganization();
    const missing = await api("GET", dashboardsPath(project.id));
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual(
      errorBody("authentication_error", "not_authenticated", "Authentication credentials were not provided."),
    );
    const bad = await api("POST", dashboardsPath(project.id), { key: `phx_${"a".repeat(40)}`, body: {} });
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual(
      errorBody("authentication_error", "authentication_failed", "Personal API key is invalid."),
    );
  });

  it("needs dashboard:read to read and dashboard:write to write", async () => {
    const { key, owner, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id);
    const projectOnly = (await createApiKey(owner, { scopes: ["project:read"] })).value;
    const readOnly = (await createApiKey(owner, { scopes: ["dashboard:read"] })).value;
    const missingRead = errorBody(
      "authentication_error",
      "permission_denied",
      "API key missing required scope 'dashboard:read'",
    );
    const missingWrite = errorBody(
      "authentication_error",
      "permission_denied",
      "API key missing required scope 'dashboard:write'",
    );
    const item = `${dashboardsPath(project.id)}/${dashboard.id}`;
    for (const [method, path, apiKey, expected] of [
      ["GET", dashboardsPath(project.id), projectOnly, missingRead],
      ["GET", item, projectOnly, missingRead],
      ["POST", dashboardsPath(project.id), readOnly, missingWrite],
      ["PATCH", item, readOnly, missingWrite],
      ["PATCH", `${item}/move_tile`, readOnly, missingWrite],
    ] as const) {
      const response = await api(method, path, { key: apiKey, body: method === "GET" ? undefined : { name: "x" } });
      expect({ method, path, status: response.status, body: response.body }).toEqual({
        method,
        path,
        status: 403,
        body: expected,
      });
    }
    expect((await api("GET", item, { key: readOnly })).status).toBe(200);
  });

  it("refuses a key scoped to another project with 403", async () => {
    const { owner, organization, project } = await setupOrganization();
    const other = await createProject(organization.id);
    const scoped = (await createApiKey(owner, { scopedTeams: [other.id] })).value;
    const response = await api("GET", dashboardsPath(project.id), { key: scoped });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(
      errorBody("authentication_error", "permission_denied", "API key does not have access to the requested project"),
    );
    expect((await api("GET", dashboardsPath(other.id), { key: scoped })).status).toBe(200);
  });

  it("answers 404 for another organization's project and dashboards, never leaking them", async () => {
    const mine = await setupOrganization();
    const theirs = await setupOrganization();
    const foreign = await createDashboard(theirs.key, theirs.project.id, { name: "Theirs" });
    for (const [method, path] of [
      ["GET", dashboardsPath(theirs.project.id)],
      ["POST", dashboardsPath(theirs.project.id)],
      ["GET", `${dashboardsPath(theirs.project.id)}/${foreign.id}`],
      ["PATCH", `${dashboardsPath(theirs.project.id)}/${foreign.id}`],
      ["GET", `${dashboardsPath(mine.project.id)}/${foreign.id}`],
      ["PATCH", `${dashboardsPath(mine.project.id)}/${foreign.id}`],
      ["GET", `${dashboardsPath(mine.project.id)}/999999`],
      ["GET", `${dashboardsPath(mine.project.id)}/abc`],
      ["GET", dashboardsPath("abc")],
    ] as const) {
      const response = await api(method, path, {
        key: mine.key,
        body: method === "GET" ? undefined : { name: "Mine now" },
      });
      expect({ method, path, status: response.status, body: response.body }).toEqual({
        method,
        path,
        status: 404,
        body: NOT_FOUND,
      });
    }
    const untouched = await api("GET", `${dashboardsPath(theirs.project.id)}/${foreign.id}`, { key: theirs.key });
    expect(untouched.body.name).toBe("Theirs");
  });
});

describe("DELETE /api/environments/:project_id/dashboards/:id", () => {
  it("is 405 with an empty body and Allow: GET, PATCH for any id once authenticated", async () => {
    const { key, project } = await setupOrganization();
    const other = await setupOrganization();
    const dashboard = await createDashboard(key, project.id);
    for (const path of [
      `${dashboardsPath(project.id)}/${dashboard.id}`,
      `${dashboardsPath(project.id)}/999999/`,
      `${dashboardsPath(project.id)}/not-a-number`,
      `${dashboardsPath(other.project.id)}/1`,
      `${dashboardsPath(project.id, "projects")}/${dashboard.id}`,
    ]) {
      const response = await api("DELETE", path, { key });
      expect({ path, status: response.status, allow: response.headers.get("Allow"), text: response.text }).toEqual({
        path,
        status: 405,
        allow: "GET, PATCH",
        text: "",
      });
    }
    const still = await api("GET", `${dashboardsPath(project.id)}/${dashboard.id}`, { key });
    expect(still.status).toBe(200);
  });

  it("authenticates first", async () => {
    const { project } = await setupOrganization();
    const response = await api("DELETE", `${dashboardsPath(project.id)}/1`);
    expect(response.status).toBe(401);
    expect(response.body.code).toBe("not_authenticated");
  });

  it("leaves other methods to the usual 405 JSON", async () => {
    const { key, project } = await setupOrganization();
    const response = await api("PUT", `${dashboardsPath(project.id)}/1`, { key, body: {} });
    expect(response.status).toBe(405);
    expect(response.headers.get("Allow")).toBe("GET, PATCH");
    expect(response.body).toEqual(errorBody("invalid_request", "method_not_allowed", 'Method "PUT" not allowed.'));
  });
});

describe("GET /api/environments/:project_id/dashboards", () => {
  it("lists live dashboards pinned first, then by name, without tiles, filters or variables", async () => {
    const { key, owner, project } = await setupOrganization();
    const beta = await createDashboard(key, project.id, { name: "Beta", use_template: "DEFAULT_APP" });
    const alpha = await createDashboard(key, project.id, { name: "Alpha" });
    const zulu = await createDashboard(key, project.id, { name: "Zulu", pinned: true });
    const gone = await createDashboard(key, project.id, { name: "Gone" });
    await api("PATCH", `${dashboardsPath(project.id)}/${gone.id}`, { key, body: { deleted: true } });
    const response = await api("GET", dashboardsPath(project.id), { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      count: 3,
      next: null,
      previous: null,
      results: [
        listItemBody(owner, { id: zulu.id, name: "Zulu", pinned: true }),
        listItemBody(owner, { id: alpha.id, name: "Alpha" }),
        listItemBody(owner, { id: beta.id, name: "Beta", creation_mode: "template" }),
      ],
    });
  });

  it("reads of each dashboard what its list item shows, not its filters, colours or quick filters", async () => {
    const { key, owner, project } = await setupOrganization();
    // Within every limit, not in a list item: 1,000 quick filter ids of 200 characters and 64 KiB of colours.
    const heavy = {
      quick_filter_ids: Array.from({ length: 1_000 }, () => "\u20ac".repeat(200)),
      breakdown_colors: ["\u20ac".repeat(21_000)],
    };
    const created = [];
    for (const name of ["Big 1", "Big 2", "Big 3"]) {
      created.push(await createDashboard(key, project.id, { ...heavy, name }));
    }
    const read = countBytesRead();
    const response = await api("GET", dashboardsPath(project.id), { key });
    vi.restoreAllMocks();
    expect(response.body).toEqual({
      count: 3,
      next: null,
      previous: null,
      results: created.map(({ id }, index) => listItemBody(owner, { id, name: `Big ${index + 1}` })),
    });
    // Whole rows would be about 2 MB; a page of a thousand such, 660 MB for an isolate of 128 MB.
    expect(read.bytes).toBeLessThan(64 * 1024);
  }, 30_000);

  it("filters by pinned, search and tags", async () => {
    const { key, project } = await setupOrganization();
    await createDashboard(key, project.id, { name: "Revenue", tags: ["Finance"], pinned: true });
    await createDashboard(key, project.id, { name: "Signups", description: "growth of revenue", tags: ["growth"] });
    await createDashboard(key, project.id, { name: "100% done_", tags: ["growth", "ops"] });
    const names = async (query: string) => {
      const response = await api("GET", `${dashboardsPath(project.id)}?${query}`, { key });
      expect(response.status).toBe(200);
      return response.body.results.map((item: { name: string }) => item.name);
    };
    expect(await names("pinned=true")).toEqual(["Revenue"]);
    expect(await names("pinned=false")).toEqual(["100% done_", "Signups"]);
    // As DRF reads a boolean: 1 and 0 too; empty says nothing.
    expect(await names("pinned=1")).toEqual(["Revenue"]);
    expect(await names("pinned=0")).toEqual(["100% done_", "Signups"]);
    expect(await names("pinned=")).toEqual(["Revenue", "100% done_", "Signups"]);
    expect(await names("search=REVENUE")).toEqual(["Revenue", "Signups"]);
    expect(await names("search=%25")).toEqual(["100% done_"]);
    // Wildcards are literal: "s_" would otherwise match "Signups".
    expect(await names("search=s_")).toEqual([]);
    expect(await names("tags=finance")).toEqual(["Revenue"]);
    expect(await names("tags=ops,%20FINANCE")).toEqual(["Revenue", "100% done_"]);
    expect(await names("tags=growth&pinned=false&search=sign")).toEqual(["Signups"]);
    // A search too short for the index, with tags: counted as listed.
    for (const query of ["tags=growth&search=zz", "tags=growth&search=0%25"]) {
      const response = await api("GET", `${dashboardsPath(project.id)}?${query}`, { key });
      expect(response.body.count, query).toBe(response.body.results.length);
    }
    const withNul = await api("GET", `${dashboardsPath(project.id)}?search=rev%00`, { key });
    expect(withNul.status).toBe(400);
    expect(withNul.body).toEqual(
      errorBody("validation_error", "invalid_input", "Null characters are not allowed.", "search"),
    );
  });

  it("ignores case beyond ASCII in a search too short for the index, as in a longer one", async () => {
    const { key, project } = await setupOrganization();
    await createDashboard(key, project.id, { name: "Écran" });
    await createDashboard(key, project.id, { name: "Plain", description: "ÖL prices" });
    const names = async (search: string) => {
      const response = await api("GET", `${dashboardsPath(project.id)}?search=${encodeURIComponent(search)}`, { key });
      expect(response.status).toBe(200);
      return response.body.results.map((item: { name: string }) => item.name);
    };
    for (const search of ["écr", "éc", "é", "ÉC"]) expect(await names(search), search).toEqual(["Écran"]);
    expect(await names("öl")).toEqual(["Plain"]);
  });

  it("finds what the name and description hold now, within the project, counting the matches", async () => {
    const { key, project } = await setupOrganization();
    const other = await setupOrganization();
    await createDashboard(other.key, other.project.id, { name: "Revenue elsewhere", tags: ["finance"] });
    const renamed = await createDashboard(key, project.id, { name: "Old name", tags: ["finance"] });
    const quoted = await createDashboard(key, project.id, { name: 'Say "hi" AND bye', description: "Été" });
    const gone = await createDashboard(key, project.id, { name: "Revenue gone", tags: ["finance"] });
    const search = async (query: string) => {
      const response = await api("GET", `${dashboardsPath(project.id)}?${query}`, { key });
      expect(response.status).toBe(200);
      expect(response.body.count).toBe(response.body.results.length);
      return response.body.results.map((item: { id: number }) => item.id);
    };
    expect(await search("search=revenue")).toEqual([gone.id]);
    await api("PATCH", `${dashboardsPath(project.id)}/${renamed.id}`, {
      key,
      body: { name: "Net revenue", tags: ["ops"] },
    });
    await api("PATCH", `${dashboardsPath(project.id)}/${gone.id}`, { key, body: { deleted: true } });
    expect(await search("search=REVENUE")).toEqual([renamed.id]);
    expect(await search("search=old%20name")).toEqual([]);
    expect(await search("tags=finance")).toEqual([]);
    expect(await search("tags=ops")).toEqual([renamed.id]);
    // Quotes and FTS5 operators are part of the text searched; case is ignored beyond ASCII.
    expect(await search(`search=${encodeURIComponent('"hi" AND')}`)).toEqual([quoted.id]);
    expect(await search("search=%C3%89T%C3%89")).toEqual([quoted.id]);
    expect(await search("search=%C3%A9t%C3%A9")).toEqual([quoted.id]);
    // Restored, it is found again, with its tags.
    await api("PATCH", `${dashboardsPath(project.id)}/${gone.id}`, { key, body: { deleted: false } });
    expect(await search("search=revenue&tags=finance")).toEqual([gone.id]);
    expect(await search("search=revenue")).toEqual([renamed.id, gone.id]);
  });

  it("searches with its first 200 characters, in the name and the description's first 1,000", async () => {
    const { key, project } = await setupOrganization();
    const long = await createDashboard(key, project.id, { name: `Q${"z".repeat(199)}` });
    const early = await createDashboard(key, project.id, { name: "Early", description: "needle qq" });
    await createDashboard(key, project.id, { name: "Late", description: `${"x".repeat(1000)}needle qq` });
    const search = async (text: string) => {
      const response = await api("GET", `${dashboardsPath(project.id)}?search=${encodeURIComponent(text)}`, { key });
      expect(response.status).toBe(200);
      expect(response.body.count).toBe(response.body.results.length);
      return response.body.results.map((item: { id: number }) => item.id);
    };
    // Cut to 200 characters, the text is the name's.
    expect(await search(`Q${"z".repeat(199)} and more`)).toEqual([long.id]);
    // Past the description's first 1,000 characters, the text is not searched: by the index, and by LIKE.
    expect(await search("needle")).toEqual([early.id]);
    expect(await search("qq")).toEqual([early.id]);
  });

  it("answers 400 for a pinned filter that is not a boolean", async () => {
    const { key, project } = await setupOrganization();
    for (const value of ["maybe", "yes", "2", "toString", "true,false"]) {
      const response = await api("GET", `${dashboardsPath(project.id)}?pinned=${value}`, { key });
      expect({ value, status: response.status }).toEqual({ value, status: 400 });
      expect(response.body).toEqual(invalid("invalid", "Must be a valid boolean.", "pinned"));
    }
  });

  it("paginates with limit and offset, keeping the other parameters", async () => {
    const { key, project } = await setupOrganization();
    for (const name of ["A", "B", "C"]) await createDashboard(key, project.id, { name, tags: ["t"] });
    const first = await api("GET", `${dashboardsPath(project.id)}?tags=t&limit=2`, { key });
    expect(first.body.count).toBe(3);
    expect(first.body.results.map((item: { name: string }) => item.name)).toEqual(["A", "B"]);
    expect(first.body.previous).toBeNull();
    const lastOfFirst = first.body.results[1];
    expect(first.body.next).toBe(nextLink(`${dashboardsPath(project.id)}?tags=t`, 2, 2, [false, "B", lastOfFirst.id]));
    const second = await api("GET", first.body.next.replace("http://localhost", ""), { key });
    expect(second.body.results.map((item: { name: string }) => item.name)).toEqual(["C"]);
    expect(second.body.next).toBeNull();
    expect(second.body.previous).toBe(
      previousLink(`${dashboardsPath(project.id)}?tags=t`, 2, 0, [false, "C", second.body.results[0].id]),
    );
  });

  it("costs the same whatever the number of dashboards", async () => {
    const { key, project } = await setupOrganization();
    await createDashboard(key, project.id, { name: "One" });
    const one = await api("GET", dashboardsPath(project.id), { key });
    for (let index = 0; index < 12; index += 1) await createDashboard(key, project.id, { name: `D${index}` });
    const many = await api("GET", dashboardsPath(project.id), { key });
    expect(many.body.count).toBe(13);
    expect(one.cost.queries).toBe(1);
    expect(many.cost.queries).toBe(one.cost.queries);
  });
});

describe("following a dashboard list's links while it changes", () => {
  /** Dashboards b, d, f and h, and the second page of two (f, h), reached through `next`. */
  async function secondPageOfFour() {
    const { key, project } = await setupOrganization();
    const path = `/api/environments/${project.id}/dashboards`;
    const ids: Record<string, number> = {};
    for (const name of ["b", "d", "f", "h"]) ids[name] = (await api("POST", path, { key, body: { name } })).body.id;
    const second = await api("GET", relative((await api("GET", `${path}?limit=2`, { key })).body.next), { key });
    return { key, path, ids, second };
  }
  const relative = (link: string) => link.replace("http://localhost", "");
  const names = (body: { results: { name: string }[] }) => body.results.map((item) => item.name);

  it("walks back to the first row when rows were added before the page meanwhile", async () => {
    const { key, path, second } = await secondPageOfFour();
    expect(names(second.body)).toEqual(["f", "h"]);
    await api("POST", path, { key, body: { name: "e" } });
    const back = await api("GET", relative(second.body.previous), { key });
    expect(names(back.body)).toEqual(["d", "e"]);
    expect(back.body.previous).not.toBeNull();
    const first = await api("GET", relative(back.body.previous), { key });
    expect(names(first.body)).toEqual(["b", "d"]);
    expect(first.body.previous).toBeNull();
  });

  it("keeps a short page's cursor on its next link: from a page reached by previous, no row is skipped", async () => {
    const { key, path, ids, second } = await secondPageOfFour();
    expect(names(second.body)).toEqual(["f", "h"]);
    // A dashboard before the page goes meanwhile: walking back gives a short page.
    await api("PATCH", `${path}/${ids.b}`, { key, body: { deleted: true } });
    const back = await api("GET", relative(second.body.previous), { key });
    expect(names(back.body)).toEqual(["d"]);
    const forward = await api("GET", relative(back.body.next), { key });
    expect(names(forward.body)).toEqual(["f", "h"]);
  });

  it("leads an empty page reached by previous to the list's start: every row before the cursor went", async () => {
    const { key, path, ids, second } = await secondPageOfFour();
    for (const name of ["b", "d"]) await api("PATCH", `${path}/${ids[name]}`, { key, body: { deleted: true } });
    const back = await api("GET", relative(second.body.previous), { key });
    expect(back.body).toEqual({
      count: 2,
      next: `http://localhost${path}?limit=2&offset=0`,
      previous: null,
      results: [],
    });
    const forward = await api("GET", relative(back.body.next), { key });
    expect(names(forward.body)).toEqual(["f", "h"]);
  });
});

describe("GET /api/environments/:project_id/dashboards/:id", () => {
  it("records when it was last retrieved, after the response and at most once an hour", async () => {
    const { key, project } = await setupOrganization();
    const { id } = await createDashboard(key, project.id);
    const path = `${dashboardsPath(project.id)}/${id}`;
    const first = await api("GET", path, { key });
    expect(first.body).toMatchObject({ team_id: project.id, last_accessed_at: null });
    expect(first.cost.rowsWritten).toBe(0);
    const recorded = await vi.waitFor(async () => {
      const [row] = await db.select().from(schema.dashboards).where(eq(schema.dashboards.id, id));
      expect(row!.lastAccessedAt).toMatch(ISO_TIMESTAMP);
      return row!.lastAccessedAt;
    });
    expect((await api("GET", path, { key })).body.last_accessed_at).toBe(recorded);
    // Within the hour, later retrievals leave it be.
    await api("GET", path, { key });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const [row] = await db.select().from(schema.dashboards).where(eq(schema.dashboards.id, id));
    expect(row!.lastAccessedAt).toBe(recorded);
  });

  it("retrieves a dashboard with its tiles at a fixed cost: 1 tile or 40 tiles cost at most 3 queries", async () => {
    const { key, owner, project } = await setupOrganization();
    const small = await createDashboard(key, project.id, { name: "Small" });
    const large = await createDashboard(key, project.id, { name: "Large", use_template: "DEFAULT_APP" });
    await api("PATCH", `${dashboardsPath(project.id)}/${small.id}`, {
      key,
      body: { tiles: [{ text: { body: "only" } }] },
    });
    const notes = Array.from({ length: 35 }, (_, index) => ({
      text: { body: `note ${index}` },
      layouts: { sm: { x: 0, y: 100 + index, w: 6, h: 2 } },
    }));
    await api("PATCH", `${dashboardsPath(project.id)}/${large.id}`, { key, body: { tiles: notes } });

    const smallRead = await api("GET", `${dashboardsPath(project.id)}/${small.id}`, { key });
    const largeRead = await api("GET", `${dashboardsPath(project.id)}/${large.id}`, { key });
    expect(smallRead.body).toEqual(
      dashboardBody(owner, { id: small.id, name: "Small", tiles: [textTileBody(owner, "only")] }),
    );
    expect(largeRead.body.tiles).toHaveLength(40);
    expect(largeRead.body.tiles.map((tile: { order: number }) => tile.order)).toEqual([...Array(40).keys()]);
    expect(largeRead.body.tiles.at(-1).text.body).toBe("note 34");
    expect(smallRead.cost.queries).toBe(1);
    expect(largeRead.cost.queries).toBe(smallRead.cost.queries);
  });

  it("shows the caller's own rights: a member sees a level-37 dashboard as a viewer", async () => {
    const { key, organization, owner, project } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await createDashboard(key, project.id, { name: "Locked", restriction_level: 37 });
    const response = await api("GET", `${dashboardsPath(project.id)}/${dashboard.id}`, { key: member.key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      dashboardBody(owner, {
        id: dashboard.id,
        name: "Locked",
        restriction_level: 37,
        effective_restriction_level: 37,
        effective_privilege_level: 21,
        user_access_level: "editor",
        access_control_version: "v1",
      }),
    );
  });

  it("reports is_shared from the sharing configuration", async () => {
    const { key, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id);
    const sharing = `${dashboardsPath(project.id)}/${dashboard.id}/sharing`;
    expect((await api("PATCH", sharing, { key, body: { enabled: true } })).status).toBe(200);
    const response = await api("GET", `${dashboardsPath(project.id)}/${dashboard.id}`, { key });
    expect(response.body.is_shared).toBe(true);
    const listed = await api("GET", dashboardsPath(project.id), { key });
    expect(listed.body.results[0].is_shared).toBe(true);
  });
});

describe("PATCH /api/environments/:project_id/dashboards/:id", () => {
  it("updates the dashboard's fields", async () => {
    const { key, owner, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Before", tags: ["old"] });
    const response = await api("PATCH", `${dashboardsPath(project.id)}/${dashboard.id}`, {
      key,
      body: {
        name: "After",
        description: "Now described",
        pinned: true,
        tags: ["New", " new ", "Other"],
        restriction_level: 37,
      },
    });
    expect(response.status).toBe(200);
    const expected = dashboardBody(owner, {
      id: dashboard.id,
      name: "After",
      description: "Now described",
      pinned: true,
      tags: ["new", "other"],
      restriction_level: 37,
      effective_restriction_level: 37,
      access_control_version: "v1",
    });
    expect(response.body).toEqual(expected);
    // The project with the dashboard and its tiles, then the writes with their read-back.
    expect(response.cost.queries).toBe(2);
    expect((await api("GET", `${dashboardsPath(project.id)}/${dashboard.id}`, { key })).body).toEqual(expected);
  });

  it("adds text tiles, edits layouts, colours and bodies, and removes tiles", async () => {
    const { key, owner, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Notes" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const added = await api("PATCH", path, {
      key,
      body: {
        tiles: [
          { text: { body: "second" }, layouts: { sm: { x: 0, y: 5, w: 6, h: 2 } }, color: "blue" },
          { text: { body: "first" }, layouts: { sm: { x: 0, y: 0, w: 6, h: 2 } } },
        ],
      },
    });
    expect(added.status).toBe(200);
    expect(added.body.tiles).toEqual([
      textTileBody(owner, "first", { layouts: { sm: { x: 0, y: 0, w: 6, h: 2 } }, order: 0 }),
      textTileBody(owner, "second", { layouts: { sm: { x: 0, y: 5, w: 6, h: 2 } }, color: "blue", order: 1 }),
    ]);
    const [first, second] = added.body.tiles;

    const editor = await addMember(project.organizationId, MembershipLevel.member);
    const edited = await api("PATCH", path, {
      key: editor.key,
      body: {
        tiles: [
          { id: first.id, layouts: { sm: { x: 0, y: 9, w: 12, h: 3 } }, color: "green" },
          { id: second.id, text: { id: second.text.id, body: "second, edited" } },
        ],
      },
    });
    expect(edited.status).toBe(200);
    expect(edited.body.tiles).toEqual([
      {
        ...second,
        order: 0,
        text: {
          ...second.text,
          body: "second, edited",
          last_modified_by: userBasic(editor.user),
          last_modified_at: expect.stringMatching(ISO_TIMESTAMP),
        },
      },
      { ...first, order: 1, layouts: { sm: { x: 0, y: 9, w: 12, h: 3 } }, color: "green" },
    ]);

    const removed = await api("PATCH", path, { key, body: { tiles: [{ id: first.id, deleted: true }] } });
    expect(removed.status).toBe(200);
    expect(removed.body.tiles.map((tile: { id: number }) => tile.id)).toEqual([second.id]);
    const read = await api("GET", path, { key });
    expect(read.body).toEqual(removed.body);
  });

  it("stores the chart and tile display settings PostHog's app sends, and keeps them on copies", async () => {
    const { key, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Charts", use_template: "DEFAULT_APP" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const [tile] = dashboard.tiles;
    const settings = {
      breakdown_colors: [{ breakdownValue: "Chrome", colorToken: "preset-3" }],
      data_color_theme_id: 7,
      quick_filter_ids: ["0190a8e4-4d0b-7000-8000-000000000001"],
    };
    const display = {
      show_description: true,
      transparent_background: false,
      filters_overrides: { date_from: "-7d" },
    };
    const response = await api("PATCH", path, { key, body: { ...settings, tiles: [{ id: tile!.id, ...display }] } });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject(settings);
    expect(response.body.tiles.find((shown: { id: number }) => shown.id === tile!.id)).toMatchObject(display);
    const read = await api("GET", path, { key });
    expect(read.body).toEqual(unchangedSince(response.body));
    const kept = await api("PATCH", path, { key, body: { tiles: [{ id: tile!.id, show_description: null }] } });
    expect(kept.body).toMatchObject(settings);
    expect(kept.body.tiles.find((shown: { id: number }) => shown.id === tile!.id)).toMatchObject({
      ...display,
      show_description: null,
    });
    const copy = await createDashboard(key, project.id, { use_dashboard: dashboard.id, ...settings });
    const copied = await api("GET", `${dashboardsPath(project.id)}/${copy.id}`, { key });
    expect(copied.body).toMatchObject(settings);
    expect(copied.body.tiles.filter((shown: typeof display) => shown.transparent_background === false)).toHaveLength(1);
  });

  it("refuses chart and display settings of the wrong type with 400 naming them", async () => {
    const { key, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Charts", use_template: "DEFAULT_APP" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const [tile] = dashboard.tiles;
    const cases: [Record<string, unknown>, string][] = [
      [{ data_color_theme_id: "blue" }, "data_color_theme_id"],
      [{ quick_filter_ids: "a,b" }, "quick_filter_ids"],
      [{ tiles: [{ id: tile!.id, show_description: "yes" }] }, "tiles.0.show_description"],
      [{ tiles: [{ id: tile!.id, transparent_background: 1 }] }, "tiles.0.transparent_background"],
      [{ tiles: [{ id: tile!.id, filters_overrides: [] }] }, "tiles.0.filters_overrides"],
    ];
    for (const [body, attr] of cases) {
      const response = await api("PATCH", path, { key, body: { name: "Changed", ...body } });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body, JSON.stringify(body)).toMatchObject({ type: "validation_error", attr });
    }
    expect((await api("GET", path, { key })).body).toMatchObject({ name: "Charts", data_color_theme_id: null });
  });

  it("refuses invalid tiles and tiles of other dashboards or projects with 400, changing nothing", async () => {
    const { key, organization, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Mine", use_template: "DEFAULT_APP" });
    const sibling = await createDashboard(key, project.id, { name: "Sibling", use_template: "DEFAULT_APP" });
    const otherProject = await createProject(organization.id);
    const elsewhere = await createDashboard(key, otherProject.id, { use_template: "DEFAULT_APP" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const before = (await api("GET", path, { key })).body;
    const insightTile = before.tiles[0];
    const textTile = before.tiles.at(-1);
    const cases: [unknown, ReturnType<typeof invalid>][] = [
      [
        { name: "Renamed", tiles: [{ text: { body: "x".repeat(4001) } }] },
        invalid("max_length", "Text body cannot exceed 4000 characters", "tiles.0.text.body"),
      ],
      [
        { tiles: [{ layouts: {} }] },
        invalid("required", 'A new tile needs a text: {"text": {"body": "..."}}.', "tiles.0.text"),
      ],
      [{ tiles: [{ text: {} }] }, invalid("required", "This field is required.", "tiles.0.text.body")],
      [
        { tiles: [{ id: textTile.id, layouts: [] }] },
        invalid("invalid_input", "Expected record, received list.", "tiles.0.layouts"),
      ],
      [
        { tiles: [{ text: { body: "ok" } }, { id: sibling.tiles[0]!.id, deleted: true }] },
        invalid("invalid_input", `Tile ${sibling.tiles[0]!.id} is not on this dashboard.`, "tiles.1.id"),
      ],
      [
        { tiles: [{ id: elsewhere.tiles[0]!.id, color: "red" }] },
        invalid("invalid_input", `Tile ${elsewhere.tiles[0]!.id} is not on this dashboard.`, "tiles.0.id"),
      ],
      [
        { tiles: [{ id: insightTile.id, text: { body: "no" } }] },
        invalid("invalid_input", "Only a text tile has a text body.", "tiles.0.text"),
      ],
      [
        { tiles: [{ id: textTile.id, text: { id: sibling.tiles.at(-1)!.text!.id, body: "steal" } }] },
        invalid("invalid_input", `Text ${sibling.tiles.at(-1)!.text!.id} is not this tile's text.`, "tiles.0.text.id"),
      ],
      [{ name: "x".repeat(401) }, invalid("max_length", "Ensure this field has no more than 400 characters.", "name")],
      [{ restriction_level: 0 }, invalid("invalid_choice", '"0" is not a valid choice.', "restriction_level")],
      [{ deleted: "yes" }, invalid("invalid_input", "Expected boolean, received string.", "deleted")],
    ];
    for (const [body, error] of cases) {
      const response = await api("PATCH", path, { key, body });
      expect({ body, status: response.status, error: response.body }).toEqual({ body, status: 400, error });
    }
    expect((await api("GET", path, { key })).body).toEqual(unchangedSince(before));
  });

  it("soft-deletes with deleted: true and restores with deleted: false", async () => {
    const { key, owner, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Temporary", use_template: "DEFAULT_APP" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const before = (await api("GET", path, { key })).body;

    const deleted = await api("PATCH", path, { key, body: { deleted: true } });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual(
      dashboardBody(owner, {
        id: dashboard.id,
        name: "Temporary",
        creation_mode: "template",
        deleted: true,
        tiles: [],
      }),
    );
    expect((await api("GET", path, { key })).body).toEqual(NOT_FOUND);
    expect((await api("GET", dashboardsPath(project.id), { key })).body.count).toBe(0);
    expect((await api("PATCH", path, { key, body: { name: "Ghost" } })).status).toBe(404);
    // Deleting it again changes nothing else: a re-delete carrying other fields is 404 too.
    const ghost = { deleted: true, name: "Ghost", tiles: [{ text: { body: "added while deleted" } }] };
    expect((await api("PATCH", path, { key, body: ghost })).body).toEqual(NOT_FOUND);
    expect((await api("PATCH", path, { key, body: { deleted: true } })).status).toBe(200);
    expect(
      (
        await api("PATCH", `${path}/move_tile`, {
          key,
          body: { tile: { id: before.tiles[0].id }, toDashboard: dashboard.id },
        })
      ).status,
    ).toBe(404);

    const restored = await api("PATCH", path, { key, body: { deleted: false } });
    expect(restored.status).toBe(200);
    expect(restored.body).toEqual(unchangedSince(before));
    expect((await api("GET", dashboardsPath(project.id), { key })).body.count).toBe(1);
  });

  it("restores with the tile changes sent beside deleted: false, among the tiles it had", async () => {
    const { key, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Restorable" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const added = await api("PATCH", path, { key, body: { tiles: [{ text: { body: "kept" } }] } });
    const kept = added.body.tiles[0];
    expect(kept.layouts.sm).toEqual({ x: 0, y: 0, w: 6, h: 5 });
    expect((await api("PATCH", path, { key, body: { deleted: true } })).status).toBe(200);

    const restored = await api("PATCH", path, {
      key,
      body: { deleted: false, tiles: [{ id: kept.id, color: "blue" }, { text: { body: "new" } }] },
    });

    expect(restored.status).toBe(200);
    expect(restored.body.deleted).toBe(false);
    const tiles = restored.body.tiles as { id: number; color: string | null; layouts: { sm: unknown } }[];
    expect(tiles.find((tile) => tile.id === kept.id)).toMatchObject({ color: "blue", layouts: kept.layouts });
    // A new tile goes on the first free row below the tiles the dashboard has again.
    expect(tiles.find((tile) => tile.id !== kept.id)?.layouts.sm).toEqual({ x: 0, y: 5, w: 6, h: 5 });
  });

  it("with delete_insights soft-deletes the insights no other live tile shows; restore brings them back", async () => {
    const { key, project } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Main", use_template: "DEFAULT_APP" });
    // Shares every insight, then drops the first: that one is now shown by "Main" alone.
    const sharing = await createDashboard(key, project.id, { name: "Sharing", use_dashboard: dashboard.id });
    await api("PATCH", `${dashboardsPath(project.id)}/${sharing.id}`, {
      key,
      body: { tiles: [{ id: sharing.tiles[0]!.id, deleted: true }] },
    });
    const onlyOnMain = dashboard.tiles[0]!.insight!.id;
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;

    const deleted = await api("PATCH", path, { key, body: { deleted: true, delete_insights: true } });
    expect(deleted.status).toBe(200);
    expect(deleted.body.delete_insights).toBe(false);
    const stored = await db
      .select({ id: schema.insights.id, deleted: schema.insights.deleted })
      .from(schema.insights)
      .where(eq(schema.insights.environmentId, project.id));
    expect(stored.filter((insight) => insight.deleted).map((insight) => insight.id)).toEqual([onlyOnMain]);
    const sharingNow = await api("GET", `${dashboardsPath(project.id)}/${sharing.id}`, { key });
    expect(
      sharingNow.body.tiles.map((tile: { insight: { deleted: boolean } | null }) => tile.insight?.deleted ?? null),
    ).toEqual([false, false, false, null]);

    const restored = await api("PATCH", path, { key, body: { deleted: false } });
    expect(restored.body.tiles[0].insight).toMatchObject({ id: onlyOnMain, deleted: false });
    expect(restored.body.tiles).toHaveLength(5);
  });
});

describe("edit rights", () => {
  it("lets every member edit at level 21, but only the creator or an admin change the restriction level", async () => {
    const { key, organization, project } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await createDashboard(key, project.id, { name: "Open" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const renamed = await api("PATCH", path, {
      key: member.key,
      body: { name: "Renamed by a member", restriction_level: 21 },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      name: "Renamed by a member",
      effective_privilege_level: 37,
      user_access_level: "editor",
    });
    const restricted = await api("PATCH", path, { key: member.key, body: { restriction_level: 37 } });
    expect(restricted.status).toBe(403);
    expect(restricted.body).toEqual(NO_RESTRICTION_RIGHT);
    expect((await api("GET", path, { key })).body.restriction_level).toBe(21);
  });

  it("at level 37 refuses a member who is not the creator (403) and lets them read", async () => {
    const { key, organization, project } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await createDashboard(key, project.id, {
      name: "Locked",
      restriction_level: 37,
      use_template: "DEFAULT_APP",
    });
    const target = await createDashboard(key, project.id, { name: "Target" });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    for (const body of [{ name: "Mine" }, { deleted: true }, { tiles: [{ text: { body: "hi" } }] }]) {
      const response = await api("PATCH", path, { key: member.key, body });
      expect({ body, status: response.status, error: response.body }).toEqual({
        body,
        status: 403,
        error: NO_EDIT_RIGHT,
      });
    }
    const lowered = await api("PATCH", path, { key: member.key, body: { restriction_level: 21 } });
    expect(lowered.body).toEqual(NO_RESTRICTION_RIGHT);
    const moved = await api("PATCH", `${path}/move_tile`, {
      key: member.key,
      body: { tile: { id: dashboard.tiles[0]!.id }, toDashboard: target.id },
    });
    expect(moved.status).toBe(403);
    expect(moved.body).toEqual(NO_EDIT_RIGHT);
    const read = await api("GET", path, { key: member.key });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ name: "Locked", effective_privilege_level: 21, tiles: expect.any(Array) });
    expect(read.body.tiles).toHaveLength(5);
  });

  it("at level 37 lets the creator, an organization admin and a collaborator edit", async () => {
    const { organization, project } = await setupOrganization();
    const creator = await addMember(organization.id, MembershipLevel.member);
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const collaborator = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await createDashboard(creator.key, project.id, { name: "Locked", restriction_level: 37 });
    await db.insert(schema.dashboardCollaborators).values({
      id: uuid7(),
      dashboardId: dashboard.id,
      userId: collaborator.user.id,
      level: 37,
      addedAt: nowIso(),
      updatedAt: nowIso(),
    });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    for (const [caller, accessLevel] of [
      [creator, "manager"],
      [admin, "manager"],
      [collaborator, "editor"],
    ] as const) {
      const response = await api("PATCH", path, { key: caller.key, body: { description: `by ${caller.user.id}` } });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        description: `by ${caller.user.id}`,
        created_by: userBasic(creator.user),
        effective_privilege_level: 37,
        user_access_level: accessLevel,
      });
    }
    const adminLowers = await api("PATCH", path, { key: admin.key, body: { restriction_level: 21 } });
    expect(adminLowers.body).toMatchObject({ restriction_level: 21, access_control_version: "v2" });
    const collaboratorRaises = await api("PATCH", path, { key: collaborator.key, body: { restriction_level: 37 } });
    expect(collaboratorRaises.body).toEqual(NO_RESTRICTION_RIGHT);
  });

  it("takes user_access_level from the caller's access-control rule; a viewer cannot edit", async () => {
    const { key, organization, project } = await setupOrganization();
    const viewer = await addMember(organization.id, MembershipLevel.member);
    const dashboard = await createDashboard(key, project.id, { name: "Watched" });
    await db.insert(schema.accessControls).values({
      id: uuid7(),
      environmentId: project.id,
      resource: "dashboard",
      resourceId: String(dashboard.id),
      organizationMembershipId: viewer.membership.id,
      accessLevel: "viewer",
      createdAt: nowIso(),
      updatedAt: nowIso(),
    });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const read = await api("GET", path, { key: viewer.key });
    expect(read.body).toMatchObject({ user_access_level: "viewer", effective_privilege_level: 21 });
    const write = await api("PATCH", path, { key: viewer.key, body: { name: "No" } });
    expect(write.status).toBe(403);
    expect(write.body).toEqual(NO_EDIT_RIGHT);
    expect((await api("GET", path, { key })).body).toMatchObject({ name: "Watched", user_access_level: "manager" });
  });
});

describe("PATCH /api/environments/:project_id/dashboards/:id/move_tile", () => {
  async function twoDashboards() {
    const setup = await setupOrganization();
    const source = await createDashboard(setup.key, setup.project.id, { name: "Source", use_template: "DEFAULT_APP" });
    const destination = await createDashboard(setup.key, setup.project.id, { name: "Destination" });
    const movePath = `${dashboardsPath(setup.project.id)}/${source.id}/move_tile`;
    return { ...setup, source, destination, movePath };
  }

  it("moves a tile to another dashboard and answers with the source dashboard, in one batch", async () => {
    const { key, owner, project, source, destination, movePath } = await twoDashboards();
    const before = (await api("GET", `${dashboardsPath(project.id)}/${source.id}`, { key })).body;
    const [moving, ...staying] = before.tiles;
    const response = await api("PATCH", movePath, {
      key,
      body: { tile: { id: moving.id }, toDashboard: destination.id },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ...unchangedSince(before),
      tiles: staying.map((tile: Record<string, unknown>, order: number) => ({ ...tile, order })),
    });
    // The project with both dashboards and the tile, then the move with its read-back.
    expect(response.cost.queries).toBe(2);
    const target = await api("GET", `${dashboardsPath(project.id)}/${destination.id}`, { key });
    expect(target.body).toEqual(
      dashboardBody(owner, { id: destination.id, name: "Destination", tiles: [{ ...moving, order: 0 }] }),
    );
  });

  it("answers 400 for missing keys", async () => {
    const { key, source, destination, movePath } = await twoDashboards();
    const tileId = source.tiles[0]!.id;
    for (const [body, attr] of [
      [{ toDashboard: destination.id }, "tile"],
      // PostHog's field (older clients' `toDashboard` is taken too).
      [{ tile: { id: tileId } }, "to_dashboard"],
      [{ tile: {}, toDashboard: destination.id }, "tile.id"],
    ] as const) {
      const response = await api("PATCH", movePath, { key, body });
      expect({ attr, status: response.status, body: response.body }).toEqual({
        attr,
        status: 400,
        body: invalid("required", "This field is required.", attr),
      });
    }
  });

  it("answers 404 for an unknown tile, a tile of another dashboard, or an unknown or foreign destination", async () => {
    const { key, organization, project, source, destination, movePath } = await twoDashboards();
    const otherProject = await createProject(organization.id);
    const foreign = await createDashboard(key, otherProject.id, { name: "Other project" });
    const sibling = await createDashboard(key, project.id, { use_template: "WEBSITE_TRAFFIC" });
    const tileId = source.tiles[0]!.id;
    for (const body of [
      { tile: { id: 999999 }, toDashboard: destination.id },
      { tile: { id: sibling.tiles[0]!.id }, toDashboard: destination.id },
      { tile: { id: tileId }, toDashboard: 999999 },
      { tile: { id: tileId }, toDashboard: foreign.id },
    ]) {
      const response = await api("PATCH", movePath, { key, body });
      expect({ body, status: response.status, error: response.body }).toEqual({ body, status: 404, error: NOT_FOUND });
    }
    const unknownSource = await api("PATCH", `${dashboardsPath(project.id)}/999999/move_tile`, {
      key,
      body: { tile: { id: tileId }, toDashboard: destination.id },
    });
    expect(unknownSource.body).toEqual(NOT_FOUND);
    expect((await api("GET", `${dashboardsPath(project.id)}/${source.id}`, { key })).body.tiles).toHaveLength(5);
  });

  it("answers 403 without an edit right on the destination", async () => {
    const { key, organization, project, source } = await twoDashboards();
    const member = await addMember(organization.id, MembershipLevel.member);
    const locked = await createDashboard(key, project.id, { name: "Locked", restriction_level: 37 });
    const response = await api("PATCH", `${dashboardsPath(project.id)}/${source.id}/move_tile`, {
      key: member.key,
      body: { tile: { id: source.tiles[0]!.id }, toDashboard: locked.id },
    });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(
      errorBody(
        "authentication_error",
        "permission_denied",
        "You don't have edit permissions for the destination dashboard.",
      ),
    );
    expect((await api("GET", `${dashboardsPath(project.id)}/${locked.id}`, { key })).body.tiles).toEqual([]);
  });

  it("answers 400 when the destination already shows the tile's insight", async () => {
    const { key, project, source, movePath } = await twoDashboards();
    const copy = await createDashboard(key, project.id, { name: "Copy", use_dashboard: source.id });
    for (const tile of [source.tiles[0]!]) {
      const response = await api("PATCH", movePath, { key, body: { tile: { id: tile.id }, toDashboard: copy.id } });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(
        invalid("invalid_input", "The destination dashboard already shows this tile's insight or text.", "toDashboard"),
      );
    }
    const itself = await api("PATCH", movePath, {
      key,
      body: { tile: { id: source.tiles[0]!.id }, toDashboard: source.id },
    });
    expect(itself.status).toBe(400);
  });
});

describe("OpenAPI document", () => {
  it("documents the dashboard routes of both trees with their scopes", async () => {
    const response = await api("GET", "/api/schema");
    expect(response.status).toBe(200);
    for (const tree of ["environments", "projects"]) {
      const collection = response.body.paths[`/api/${tree}/{project_id}/dashboards`];
      const item = response.body.paths[`/api/${tree}/{project_id}/dashboards/{id}`];
      const moveTile = response.body.paths[`/api/${tree}/{project_id}/dashboards/{id}/move_tile`];
      expect(Object.keys(collection).sort()).toEqual(["get", "post"]);
      // DELETE is never an operation (it always answers 405), so PATCH says so instead.
      expect(Object.keys(item).sort()).toEqual(["get", "patch"]);
      expect(item.patch.description).toContain("`DELETE` answers 405");
      expect(collection.get.security).toEqual([{ PersonalAPIKey: ["dashboard:read"] }]);
      expect(item.patch.security).toEqual([{ PersonalAPIKey: ["dashboard:write"] }]);
      expect(moveTile.patch.security).toEqual([{ PersonalAPIKey: ["dashboard:write"] }]);
    }
  });
});

describe("a newcomer's walk through the README", () => {
  it("creates from a template, adds a note, duplicates, moves a tile, pins, soft-deletes and restores", async () => {
    const { key } = await setupOrganization();
    const base = dashboardsPath("@current");
    const created = await api("POST", base, { key, body: { use_template: "WEBSITE_TRAFFIC" } });
    expect(created.status).toBe(201);
    const path = `${base}/${created.body.id}`;

    const noted = await api("PATCH", path, {
      key,
      body: { tiles: [{ text: { body: "Read me" }, layouts: { sm: { x: 0, y: 50, w: 12, h: 2 } } }] },
    });
    const note = noted.body.tiles.at(-1);
    expect(note.text.body).toBe("Read me");

    const copy = await api("POST", base, {
      key,
      body: { name: "Copy", use_dashboard: created.body.id, duplicate_tiles: true },
    });
    expect(copy.body.tiles).toHaveLength(6);
    const empty = await api("POST", base, { key, body: { name: "Notes only" } });

    const moved = await api("PATCH", `${path}/move_tile`, {
      key,
      body: { tile: { id: note.id }, toDashboard: empty.body.id },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.tiles.map((tile: { id: number }) => tile.id)).not.toContain(note.id);
    expect(
      (await api("GET", `${base}/${empty.body.id}`, { key })).body.tiles.map((tile: { id: number }) => tile.id),
    ).toEqual([note.id]);

    await api("PATCH", path, { key, body: { pinned: true } });
    const listed = await api("GET", base, { key });
    expect(listed.body.results.map((item: { name: string; pinned: boolean }) => [item.name, item.pinned])).toEqual([
      ["Website Traffic", true],
      ["Copy", false],
      ["Notes only", false],
    ]);

    expect((await api("PATCH", path, { key, body: { deleted: true } })).body.deleted).toBe(true);
    expect((await api("GET", path, { key })).status).toBe(404);
    const restored = await api("PATCH", path, { key, body: { deleted: false } });
    expect(restored.body).toEqual({ ...moved.body, pinned: true });
  });
});
