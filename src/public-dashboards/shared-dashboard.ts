import { z } from "@hono/zod-openapi";
import { inLayoutOrder, toInsight } from "../environments/dashboards/dashboard-response";
import { Insight } from "../environments/dashboards/dashboards.schema";
import type { SharedDashboardRow } from "./shared.queries";
import { Timestamp } from "../platform/timestamps";

const PublicInsight = Insight.pick({
  id: true,
  short_id: true,
  name: true,
  derived_name: true,
  description: true,
  query: true,
});

/** The insight without its bookkeeping (tags, favorited...), as a public view shows it. */
function toPublicInsight(
  row: NonNullable<SharedDashboardRow["tiles"][number]["insight"]>,
): z.infer<typeof PublicInsight> {
  const { id, short_id, name, derived_name, description, query } = toInsight(row);
  return { id, short_id, name, derived_name, description, query };
}

/** What a public link shows: the dashboard read-only, with no user (so no e-mail address) in it. */
export const SharedDashboard = z
  .object({
    dashboard: z.object({
      id: z.number().int(),
      name: z.string(),
      description: z.string(),
      created_at: Timestamp,
      last_modified_at: Timestamp,
      tags: z.array(z.string()),
      filters: z.record(z.string(), z.unknown()),
      variables: z.record(z.string(), z.unknown()),
      tiles: z.array(
        z.object({
          id: z.number().int(),
          layouts: z.record(z.string(), z.unknown()),
          color: z.string().nullable(),
          order: z.number().int(),
          insight: PublicInsight.nullable(),
          text: z.object({ id: z.number().int(), body: z.string(), last_modified_at: Timestamp }).nullable(),
        }),
      ),
    }),
  })
  .openapi("SharedDashboard");
export type SharedDashboard = z.infer<typeof SharedDashboard>;

export function toSharedDashboard({ dashboard, tiles }: SharedDashboardRow): SharedDashboard {
  return {
    dashboard: {
      id: dashboard.id,
      name: dashboard.name,
      description: dashboard.description,
      created_at: dashboard.createdAt,
      last_modified_at: dashboard.lastModifiedAt,
      tags: dashboard.tags,
      filters: dashboard.filters,
      variables: dashboard.variables,
      tiles: inLayoutOrder(tiles).map(({ tile, insight, text }, order) => ({
        id: tile.id,
        layouts: tile.layouts,
        color: tile.color,
        order,
        insight: insight && toPublicInsight(insight),
        text: text && { id: text.id, body: text.body, last_modified_at: text.lastModifiedAt },
      })),
    },
  };
}
