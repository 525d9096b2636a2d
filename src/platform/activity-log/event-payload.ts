import type { activityLog, users } from "../../db/schema";
import { toActivityLogEntry } from "./activity-log.queries";
import type { ActivityEvent } from "./activity-log.schema";

/** An entry's event name, as webhooks subscribe to it: `Scope.activity`. */
export const eventNameOf = (entry: { scope: string; activity: string }) => `${entry.scope}.${entry.activity}`;

/**
 * What a webhook delivery posts and the events feed lists, built once for both: the entry in the
 * activity log's shape with its event name as `type`.
 */
export function eventPayload(
  entry: typeof activityLog.$inferSelect,
  user: typeof users.$inferSelect | null,
): ActivityEvent {
  return { type: eventNameOf(entry), ...toActivityLogEntry(entry, user) };
}
