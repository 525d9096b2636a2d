import type { Context } from "hono";
import type { BatchItem } from "drizzle-orm/batch";
import type { personalApiKeys } from "../db/schema";
import type { ActivityActor } from "../platform/activity-log/record";
import { resourceActivity } from "../platform/activity-log/resource-activity";
import type { AppEnv } from "../platform/env";
import type { ActivityOf } from "../platform/activity-log/vocabulary";

type KeyRow = typeof personalApiKeys.$inferSelect;

/** Keys are created, updated, rolled and revoked; an entry names a key by its label, never its value nor its hash. */
export const personalApiKeyActivity = resourceActivity("PersonalAPIKey", {
  fields: ["label", "scopes", "scoped_organizations", "scoped_teams", "expires_at"],
});

/** Which organization each project a key names belongs to. */
export type ProjectOrganizations = ReadonlyMap<number, string>;

/**
 * A key's reach as one organization's log shows it: the ids of that organization and of its own
 * projects, and `null` for each id of another organization or of its projects, so that the lists
 * keep their meaning (an empty one is "all") without naming what this organization does not hold.
 */
export function reachSeenBy<T extends { scoped_organizations: string[]; scoped_teams: number[] }>(
  organizationId: string,
  fields: T,
  projectOrganizations: ProjectOrganizations,
) {
  return {
    ...fields,
    scoped_organizations: fields.scoped_organizations.map((id) => (id === organizationId ? id : null)),
    scoped_teams: fields.scoped_teams.map((id) => (projectOrganizations.get(id) === organizationId ? id : null)),
  };
}

/**
 * A key belongs to a user, not to an organization: its entry goes into each organization it can
 * reach (`reachable`: the organizations it reaches that its user belongs to), one statement
 * each, chained after the write, with the reach that organization may see. None when the user
 * belongs to no organization. `actor`: who made it, when not the request's caller (a sign-up).
 */
export function personalApiKeyEntries(
  c: Context<AppEnv>,
  activity: ActivityOf<"PersonalAPIKey">,
  key: Pick<KeyRow, "id" | "label" | "scopes" | "scopedOrganizations" | "scopedTeams">,
  reachable: readonly string[],
  projectOrganizations: ProjectOrganizations,
  actor?: ActivityActor,
): BatchItem<"sqlite">[] {
  const reach = { scoped_organizations: key.scopedOrganizations, scoped_teams: key.scopedTeams };
  return reachable.map((organizationId) =>
    personalApiKeyActivity.record(
      c,
      activity,
      {
        organizationId,
        itemId: key.id,
        name: key.label,
        context: { scopes: key.scopes, ...reachSeenBy(organizationId, reach, projectOrganizations) },
      },
      actor,
    ),
  );
}
