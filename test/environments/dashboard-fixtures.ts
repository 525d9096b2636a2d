import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { TestUser } from "../support/harness";
import { api, ISO_TIMESTAMP, userBasic } from "../support/harness";

/** A whole dashboard as its creator sees it, with the given differences. */
export const dashboardBody = (creator: TestUser, fields: Record<string, unknown> = {}) => ({
  id: expect.any(Number),
  name: "",
  description: "",
  pinned: false,
  created_at: expect.stringMatching(ISO_TIMESTAMP),
  created_by: userBasic(creator),
  is_shared: false,
  deleted: false,
  creation_mode: "default",
  delete_insights: false,
  tags: [],
  restriction_level: 21,
  effective_restriction_level: 21,
  effective_privilege_level: 37,
  user_access_level: "manager",
  access_control_version: "v2",
  team_id: expect.any(Number),
  // Recorded after a retrieval's response: whether an earlier one landed yet is not this helper's concern.
  last_accessed_at: expect.toBeOneOf([null, expect.stringMatching(ISO_TIMESTAMP)]),
  last_viewed_at: null,
  last_refresh: null,
  filters: {},
  variables: {},
  tiles: [],
  breakdown_colors: [],
  data_color_theme_id: null,
  quick_filter_ids: null,
  persisted_filters: null,
  persisted_variables: null,
  ...fields,
});

/**
 * A dashboard read earlier, as it must read now: the retrieval that read it records
 * `last_accessed_at` after its response, which may or may not have landed yet.
 */
export const unchangedSince = (earlier: Record<string, unknown>) => ({
  ...earlier,
  last_accessed_at: expect.toBeOneOf([null, expect.stringMatching(ISO_TIMESTAMP)]),
});

/** A list item: the dashboard without tiles, filters, variables and their persisted forms. */
export const listItemBody = (creator: TestUser, fields: Record<string, unknown> = {}) => {
  const {
    tiles: _tiles,
    filters: _filters,
    variables: _variables,
    breakdown_colors: _breakdownColors,
    data_color_theme_id: _dataColorThemeId,
    quick_filter_ids: _quickFilterIds,
    persisted_filters: _persistedFilters,
    persisted_variables: _persistedVariables,
    ...item
  } = dashboardBody(creator, fields);
  return item;
};

/** Where a tile added without layouts lands on an empty dashboard: the grid's first row. */
export const FIRST_ROW_LAYOUTS = {
  sm: { x: 0, y: 0, w: 6, h: 5 },
  xs: { x: 0, y: 0, w: 6, h: 5 },
};

export const textTileBody = (author: TestUser, body: string, fields: Record<string, unknown> = {}) => ({
  id: expect.any(Number),
  layouts: FIRST_ROW_LAYOUTS,
  color: null,
  insight: null,
  text: {
    id: expect.any(Number),
    body,
    created_by: userBasic(author),
    last_modified_by: userBasic(author),
    last_modified_at: expect.stringMatching(ISO_TIMESTAMP),
  },
  order: 0,
  show_description: null,
  transparent_background: null,
  filters_overrides: null,
  ...fields,
});

export const dashboardsPath = (projectId: number | string, tree = "environments") =>
  `/api/${tree}/${projectId}/dashboards`;

export async function createDashboard(key: string, projectId: number, body: Record<string, unknown> = {}) {
  const response = await api("POST", dashboardsPath(projectId), { key, body });
  expect(response.status).toBe(201);
  return response.body as {
    id: number;
    tiles: { id: number; insight: { id: number } | null; text: { id: number } | null }[];
  };
}

/** `count` dashboards in the project's environment, in one statement. */
export async function seedDashboards(projectId: number, count: number) {
  await env.DB.prepare(
    `with recursive n(i) as (select 1 union all select i + 1 from n where i < ?1)
     insert into dashboards (environment_id, name, created_at, last_modified_at)
     select ?2, 'Seeded ' || i, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' from n`,
  )
    .bind(count, projectId)
    .run();
}
