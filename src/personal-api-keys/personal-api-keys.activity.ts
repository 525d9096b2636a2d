import type { Context } from "hono";
import type { BatchItem } from "drizzle-orm/batch";
import type { personalApiKeys } from "../db/schema";
import { resourceActivity } from "../platform/activity-log/resource-activity";
import type { AppEnv } from "../platform/env";
import type { ActivityOf } from "../platform/activity-log/vocabulary";

type KeyRow = typeof personalApiKeys.$inferSelect;

/** Keys are created, updated, rolled and revoked; an entry names a key by its label, never its value nor its hash. */
export const personalApiKeyActivity = resourceActivity("PersonalAPIKey", {
  fields: ["label", "scopes", "scoped_organizations", "scoped_teams", "expires_at"],
});

/**
 * A key belongs to a user, not to an organization: its entry goes into each organization it can
 * reach (`reachable`: its scoped organizations, else every one of the user's), one statement
 * each, chained after the write. None when the user belongs to no organization.
 */
export function personalApiKeyEntries(
  c: Context<AppEnv>,
  activity: ActivityOf<"PersonalAPIKey">,
  key: Pick<KeyRow, "id" | "label" | "scopes" | "scopedOrganizations" | "scopedTeams">,
  reachable: readonly string[],
): BatchItem<"sqlite">[] {
  const context = { scopes: key.scopes, scoped_organizations: key.scopedOrganizations, scoped_teams: key.scopedTeams };
  return reachable.map((organizationId) =>
    personalApiKeyActivity.record(c, activity, { organizationId, itemId: key.id, name: key.label, context }),
  );
}
