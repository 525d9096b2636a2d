import { toActivityLogEntry, type PageRow } from "./activity-log.queries";
import type { ActivityEvent } from "./activity-log.schema";

/** An entry's event name, as webhooks subscribe to it: `Scope.activity`. */
export const eventNameOf = (entry: { scope: string; activity: string }) => `${entry.scope}.${entry.activity}`;

/**
 * What a webhook delivery posts and the events feed lists, built once for both: the entry in the
 * activity log's shape with its event name as `type`.
 */
export function eventPayload(row: PageRow): ActivityEvent {
  return { type: eventNameOf(row.entry), ...toActivityLogEntry(row) };
}
