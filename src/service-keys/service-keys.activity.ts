import { resourceActivity } from "../platform/activity-log/resource-activity";

/** An entry names a key by its label, never its value nor its hash. */
export const serviceKeyActivity = resourceActivity("ServiceKey", {
  fields: ["label", "scopes", "scoped_teams", "expires_at"],
});
