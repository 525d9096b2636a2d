import { deferOrganization, OrganizationParams } from "../../platform/organization-context";
import { apiRoute, jsonResponse as json } from "../../platform/route";
import { EventsPage, EventsQuery } from "./events.schema";

// No level: a member reads what the activity log already shows them (their projects' entries).
export const listEvents = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}/events",
  scope: "activity_log:read",
  middleware: [deferOrganization],
  tags: ["activity log"],
  summary: "The organization's events oldest first from a cursor, as webhooks deliver them: poll instead of (or to catch up on) webhooks",
  description:
    "Each answer reads at most `limit` + 1 entries of the log from `after`, whatever the filters: a filtered answer may hold fewer events than `limit`, and `has_more` says whether to read `next` again right away. Only sealed entries (with their `hash`) are listed, so an event never changes once seen.",
  request: { params: OrganizationParams, query: EventsQuery },
  responses: { 200: json(EventsPage, "The events after the cursor, and the next cursor") },
});
