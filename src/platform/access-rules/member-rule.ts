import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { accessControls } from "../../db/schema";

/** The levels a rule may give, per kind of resource, lowest first (PostHog's). */
export const RESOURCE_ACCESS_LEVELS = {
  dashboard: ["none", "viewer", "editor", "manager"],
  project: ["none", "member", "admin"],
} as const;

/** What the rules of a resource type are about: `"dashboard"`, `"project"`. */
export type AccessControlledResourceName = keyof typeof RESOURCE_ACCESS_LEVELS;
export type AccessLevelOf<R extends AccessControlledResourceName> = (typeof RESOURCE_ACCESS_LEVELS)[R][number];

/**
 * The access level a member's rules give them on one resource: their own rule first, else the
 * resource's default for everyone (null when neither exists). `resourceId` is usually a column of
 * the outer query, so that a list reads each row's rule through the rules' unique indexes: two
 * lookups, each reading the one rule it finds (an OR of both would also sort what it found).
 */
export function ruleOfMember<R extends AccessControlledResourceName>(
  resource: R,
  resourceId: SQLWrapper | string,
  membershipId: SQLWrapper | string,
): SQL<AccessLevelOf<R> | null> {
  const ofResource = sql`${accessControls.resource} = ${resource}
    and ${accessControls.resourceId} = cast(${resourceId} as text)`;
  return sql<AccessLevelOf<R> | null>`coalesce(
    (select ${accessControls.accessLevel} from ${accessControls}
      where ${ofResource} and ${accessControls.organizationMembershipId} = ${membershipId}),
    (select ${accessControls.accessLevel} from ${accessControls}
      where ${ofResource} and ${accessControls.organizationMembershipId} is null))`;
}
