import { RESOURCE_ACCESS_LEVELS, type AccessLevelOf } from "../../platform/access-controls/access-rules";
import { isAdmin } from "../../platform/levels";

/** PostHog's dashboard restriction levels and privilege levels share these numbers. */
export const RestrictionLevel = { everyoneCanEdit: 21, onlyCollaboratorsCanEdit: 37 } as const;
export const PrivilegeLevel = { canView: 21, canEdit: 37 } as const;

export const ACCESS_LEVELS = RESOURCE_ACCESS_LEVELS.dashboard;
export type AccessLevel = AccessLevelOf<"dashboard">;

/** Who is asking, as far as a dashboard's rights go. */
export type DashboardCaller = { userId: number; organizationLevel: number };

/** What about a dashboard bears on the caller's rights, read with the dashboard in one query. */
export type DashboardAccessFacts = {
  createdById: number | null;
  restrictionLevel: number;
  /** The caller is one of the dashboard's collaborators. */
  isCollaborator: boolean;
  /** The caller's access-control rule on the dashboard (their own, else the default), if any. */
  accessRule: AccessLevel | null;
};

export type DashboardRights = {
  canEdit: boolean;
  canChangeRestriction: boolean;
  userAccessLevel: AccessLevel;
  effectivePrivilegeLevel: number;
};

/**
 * The one place that decides what a caller may do with a dashboard (restriction level, collaborators,
 * access rules). The creator and organization admins manage it; otherwise an access-control rule, if
 * any, sets the level, and at restriction level 37 only collaborators (or managers) edit.
 */
export function dashboardRights(facts: DashboardAccessFacts, caller: DashboardCaller): DashboardRights {
  const isOwnerOrAdmin = facts.createdById === caller.userId || isAdmin(caller.organizationLevel);
  const userAccessLevel: AccessLevel = isOwnerOrAdmin ? "manager" : (facts.accessRule ?? "editor");
  const canEdit =
    userAccessLevel === "manager" ||
    (userAccessLevel === "editor" &&
      (facts.restrictionLevel === RestrictionLevel.everyoneCanEdit || facts.isCollaborator));
  return {
    canEdit,
    canChangeRestriction: isOwnerOrAdmin,
    userAccessLevel,
    effectivePrivilegeLevel: canEdit ? PrivilegeLevel.canEdit : PrivilegeLevel.canView,
  };
}
