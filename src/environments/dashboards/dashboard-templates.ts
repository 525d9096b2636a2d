import type { TileLayouts } from "../../db/schema";

/** A tile a template creates: an insight with its PostHog-shaped query, or a text note. */
type TemplateTile =
  | {
      insight: { name: string; description: string; query: Record<string, unknown> };
      layouts: TileLayouts;
      color: string | null;
    }
  | { text: { body: string }; layouts: TileLayouts; color: string | null };

export type DashboardTemplate = { name: string; description: string; tiles: TemplateTile[] };

/** A place on PostHog's 12-column grid; the front end derives the one-column layout from it. */
const layout = (x: number, y: number, w: number, h: number): TileLayouts => ({ sm: { x, y, w, h, minW: 3, minH: 2 } });

const trends = (
  series: Record<string, unknown>[],
  options: { display?: string; breakdown?: string; dateFrom?: string; interval?: string } = {},
) => ({
  kind: "InsightVizNode",
  source: {
    kind: "TrendsQuery",
    series,
    interval: options.interval ?? "day",
    dateRange: { date_from: options.dateFrom ?? "-30d" },
    trendsFilter: { display: options.display ?? "ActionsLineGraph" },
    ...(options.breakdown ? { breakdownFilter: { breakdown: options.breakdown, breakdown_type: "event" } } : {}),
  },
});

const pageviews = (math: string) => ({ kind: "EventsNode", event: "$pageview", name: "$pageview", math });

/*
 * The built-in templates are data: creating from a template walks this list, so a new template
 * is a new entry here and never a new code path.
 */
export const DASHBOARD_TEMPLATES: Record<string, DashboardTemplate> = {
  DEFAULT_APP: {
    name: "My App Dashboard",
    description: "",
    tiles: [
      {
        insight: {
          name: "Daily active users (DAUs)",
          description: "Shows the number of unique users that use your app every day.",
          query: trends([pageviews("dau")]),
        },
        layouts: layout(0, 0, 6, 5),
        color: "blue",
      },
      {
        insight: {
          name: "Weekly active users (WAUs)",
          description: "Shows the number of unique users that use your app every week.",
          query: trends([pageviews("dau")], { interval: "week", dateFrom: "-90d" }),
        },
        layouts: layout(6, 0, 6, 5),
        color: "green",
      },
      {
        insight: {
          name: "Retention",
          description: "Weekly retention of your users.",
          query: {
            kind: "InsightVizNode",
            source: {
              kind: "RetentionQuery",
              retentionFilter: {
                period: "Week",
                totalIntervals: 9,
                targetEntity: { id: "$pageview", type: "events" },
                returningEntity: { id: "$pageview", type: "events" },
                retentionType: "retention_first_time",
              },
              dateRange: { date_from: "-7d" },
            },
          },
        },
        layouts: layout(0, 5, 6, 5),
        color: "blue",
      },
      {
        insight: {
          name: "Referring domain (last 14 days)",
          description: "Shows the most common referring domains for your users over the past 14 days.",
          query: trends([pageviews("dau")], {
            display: "ActionsBarValue",
            breakdown: "$referring_domain",
            dateFrom: "-14d",
          }),
        },
        layouts: layout(6, 5, 6, 5),
        color: "black",
      },
      {
        text: { body: "# My App Dashboard\nThe numbers every product team watches. Edit this note to explain yours." },
        layouts: layout(0, 10, 12, 2),
        color: null,
      },
    ],
  },
  WEBSITE_TRAFFIC: {
    name: "Website Traffic",
    description: "",
    tiles: [
      {
        text: { body: "# Website traffic\nWho visits the website, from where, and what they read." },
        layouts: layout(0, 0, 12, 2),
        color: null,
      },
      {
        insight: {
          name: "Website Unique Users (Total)",
          description: "Shows the number of unique users that use your app every day.",
          query: trends([pageviews("dau")], { display: "BoldNumber" }),
        },
        layouts: layout(0, 2, 6, 5),
        color: "blue",
      },
      {
        insight: {
          name: "Website Unique Users (Breakdown)",
          description: "Unique users per day, by device type.",
          query: trends([pageviews("dau")], { breakdown: "$device_type" }),
        },
        layouts: layout(6, 2, 6, 5),
        color: "green",
      },
      {
        insight: {
          name: "Top Website Pages (Overall)",
          description: "The pages with the most unique visitors.",
          query: trends([pageviews("unique_session")], { display: "ActionsBarValue", breakdown: "$pathname" }),
        },
        layouts: layout(0, 7, 6, 5),
        color: "black",
      },
      {
        insight: {
          name: "Website Users by Location",
          description: "Unique users by country.",
          query: trends([pageviews("dau")], { display: "WorldMap", breakdown: "$geoip_country_code" }),
        },
        layouts: layout(6, 7, 6, 5),
        color: "blue",
      },
    ],
  },
};
