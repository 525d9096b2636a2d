import { OrganizationParams } from "../../platform/route-context";
import { apiRoute, jsonResponse as json } from "../../platform/route";
import { EventsPage, EventsQuery } from "./events.schema";

// No level: a member reads what the activity log already shows them (their projects' entries).
export const listEvents = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}/events",
  scope: "activity_log:read",
  serviceKeys: true,
  context: "organization",
  tags: ["activity log"],
  summary: "The organization's events from a cursor, oldest first, as webhooks deliver them",
  description:
    "Each answer reads at most `limit` + 1 entries after `after`: a filtered one may list fewer, " +
    "`has_more` says to read `next` at once.",
  request: { params: OrganizationParams, query: EventsQuery },
  responses: { 200: json(EventsPage, "The events after the cursor, and the next cursor") },
});
