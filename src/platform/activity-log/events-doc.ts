import type { activityLog, users } from "../../db/schema";
import { EVENT_EXAMPLES, type EventName } from "./event-examples";
import { eventPayload } from "./event-payload";
import { ACTIVITIES_BY_SCOPE, ACTIVITY_EVENTS, ACTIVITY_SCOPES } from "./vocabulary";

/** Who makes the examples' changes: a user as every payload embeds one (`UserBasic`). */
const EXAMPLE_USER: typeof users.$inferSelect = {
  id: 3,
  uuid: "01a2f3c4-1111-7000-8000-0000000000a0",
  distinctId: "f1d2c3b4-a5e6-4f70-8a91-b2c3d4e5f607",
  firstName: "Grace",
  lastName: "Hopper",
  email: "grace@example.com",
  isEmailVerified: true,
  hedgehogConfig: null,
  roleAtOrganization: "engineering",
  createdAt: "2026-01-05T10:00:00.000Z",
  lastLogin: null,
  notificationSettings: {},
  themeMode: null,
  preferences: {},
  currentOrganizationId: null,
  currentProjectId: null,
  organizationCount: 1,
};

/** An event's example entry, as stored: the rest of every example is the same. */
function exampleEntry(event: EventName): typeof activityLog.$inferSelect {
  const example = EVENT_EXAMPLES[event];
  const [scope, activity] = event.split(".") as [string, string];
  return {
    id: "01a2f3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b",
    organizationId: "01a2f3c4-0000-7000-8000-000000000001",
    seq: 42,
    projectId: example.project ? 7 : null,
    dashboardId: example.dashboard ?? null,
    userId: example.system ? null : EXAMPLE_USER.id,
    apiKeyId: example.system ? null : "01a2f3c4-7777-7000-8000-000000000107",
    isSystem: example.system ?? false,
    activity,
    scope,
    itemId: example.item,
    detail: JSON.stringify({ name: example.name, changes: example.changes ?? null, context: example.context ?? null }),
    requestId: example.system ? null : "3cdcb3b1-6f0e-4c4e-9d0a-5b1f2e3d4c5b",
    createdAt: "2026-11-22T09:08:17.714Z",
    hash: "9f2c4e1a7b3d5f6081a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708",
  };
}

/** What a delivery posts (and the feed lists) for the event: the delivery's own payload builder. */
export const examplePayload = (event: EventName) =>
  eventPayload({
    entry: exampleEntry(event),
    user: EVENT_EXAMPLES[event].system ? null : EXAMPLE_USER,
    serviceKey: null,
  });

const anchorOf = (event: string) => event.toLowerCase().replaceAll(".", "");

/**
 * docs/events.md: every event of the vocabulary (`vocabulary.ts`), with when it happens and an
 * example payload. Generated (`npm run docs:events`), never edited: a test compares the two.
 */
export function renderEventsDoc(): string {
  const linkTo = (scope: string, activity: string) => `[\`${activity}\`](#${anchorOf(`${scope}.${activity}`)})`;
  const index = ACTIVITY_SCOPES.map(
    (scope) => `| \`${scope}\` | ${ACTIVITIES_BY_SCOPE[scope].map((activity) => linkTo(scope, activity)).join(", ")} |`,
  );
  const sections = ([...ACTIVITY_EVENTS] as EventName[]).map((event) =>
    [
      `### ${event}`,
      "",
      EVENT_EXAMPLES[event].description,
      "",
      "```json",
      JSON.stringify(examplePayload(event), null, 2),
      "```",
      "",
    ].join("\n"),
  );
  return [
    "# Events",
    "",
    "<!-- Generated from src/platform/activity-log/vocabulary.ts and event-examples.ts " +
      "by `npm run docs:events`: do not edit. -->",
    "",
    "Every event the activity log records, as webhooks deliver it and the events feed",
    "(`GET /api/organizations/:id/events`) lists it: the entry in the activity log's shape, with its",
    "name as `type`. Subscribe to an event by its name (`Scope.activity`), or to `*` for all. See",
    "[the activity log](activity-log.md) for what each field means, and [webhooks](webhooks.md) for",
    "how deliveries are signed and retried.",
    "",
    `${ACTIVITY_EVENTS.length} events:`,
    "",
    "| scope | activities |",
    "|---|---|",
    ...index,
    "",
    "## The events",
    "",
    ...sections,
  ].join("\n");
}
