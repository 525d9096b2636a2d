import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { accessControls } from "../../db/schema";

export type AccessLevel = (typeof accessControls.accessLevel.enumValues)[number];

/** What the rules of a resource type are about: `"dashboard"`, `"project"`. */
export type AccessControlledResourceName = "dashboard" | "project";

/**
 * The access level a member's rules give them on one resource: their own rule first, else the
 * resource's default for everyone (null when neither exists). `resourceId` is usually a column of
 * the outer query, so that a list reads each row's rule through the rules' unique index.
 */
export function ruleOfMember(
  resource: AccessControlledResourceName,
  resourceId: SQLWrapper,
  membershipId: SQLWrapper | string,
): SQL<AccessLevel | null> {
  return sql<AccessLevel | null>`(select ${accessControls.accessLevel} from ${accessControls}
    where ${accessControls.resource} = ${resource}
      and ${accessControls.resourceId} = cast(${resourceId} as text)
      and (${accessControls.organizationMembershipId} = ${membershipId} or ${accessControls.organizationMembershipId} is null)
    order by ${accessControls.organizationMembershipId} is null limit 1)`;
}
