import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { isAdmin, isAdminInSql } from "../levels";
import { kindRuleOfMember, RESOURCE_ACCESS_LEVELS, ruleOfMember, type AccessLevelOf } from "./member-rule";

/** PostHog's dashboard restriction levels and privilege levels share these numbers. */
export const RestrictionLevel = { everyoneCanEdit: 21, onlyCollaboratorsCanEdit: 37 } as const;
export const PrivilegeLevel = { canView: 21, canEdit: 37 } as const;

export const ACCESS_LEVELS = RESOURCE_ACCESS_LEVELS.dashboard;
export type AccessLevel = AccessLevelOf<"dashboard">;

/**
 * Who is asking, as far as a dashboard's rights go: `organizationLevel` is their level in the
 * dashboard's project (`projectLevel`).
 */
export type DashboardCaller = { userId: number; organizationLevel: number };

/** What about a dashboard bears on the caller's rights, read with the dashboard in one query. */
type DashboardAccessFacts = {
  createdById: number | null;
  restrictionLevel: number;
  /** The caller is one of the dashboard's collaborators. */
  isCollaborator: boolean;
  /** The caller's access-control rule on the dashboard (`dashboardRuleInSql`), if any. */
  accessRule: AccessLevel | null;
};

export type DashboardRights = {
  canEdit: boolean;
  canChangeRestriction: boolean;
  userAccessLevel: AccessLevel;
  effectivePrivilegeLevel: number;
};

/**
 * What a caller may do with a dashboard (restriction level, collaborators, access rules). The
 * creator and the project's admins manage it; otherwise an access-control rule, if any, sets the
 * level (`editor` without one), and at restriction level 37 only collaborators edit among them.
 * A level of `none` hides the dashboard (`dashboardVisibleInSql` for lists).
 */
export function dashboardRights(facts: DashboardAccessFacts, caller: DashboardCaller): DashboardRights {
  const isOwnerOrAdmin = facts.createdById === caller.userId || isAdmin(caller.organizationLevel);
  const userAccessLevel: AccessLevel = isOwnerOrAdmin ? "manager" : (facts.accessRule ?? "editor");
  // At restriction level 37 a rule alone never edits (PostHog's `can_edit`): the creator, a project
  // admin or a collaborator does; a `manager` rule manages the rules, not the content.
  const canEdit =
    isOwnerOrAdmin ||
    ((userAccessLevel === "editor" || userAccessLevel === "manager") &&
      (facts.restrictionLevel === RestrictionLevel.everyoneCanEdit || facts.isCollaborator));
  return {
    canEdit,
    canChangeRestriction: isOwnerOrAdmin,
    userAccessLevel,
    effectivePrivilegeLevel: canEdit ? PrivilegeLevel.canEdit : PrivilegeLevel.canView,
  };
}

/**
 * `dashboardRights` leaves the dashboard visible (a level other than `none`), in SQL: the
 * project's admins and its creator always see it; a `none` rule hides it from anyone else.
 * `readDashboard` wraps the test of the dashboard's own columns where they are not the outer
 * query's (an `exists` that reads it), so that an admin's rows never read them.
 */
export function dashboardVisibleInSql(
  caller: { userId: number; projectLevel: SQLWrapper },
  dashboard: { createdById: SQLWrapper; rule: SQLWrapper },
  readDashboard: (notHidden: SQL) => SQL = (notHidden) => notHidden,
): SQL {
  const notHidden = sql`(${dashboard.createdById} = ${caller.userId}
    or coalesce(${dashboard.rule}, 'editor') <> 'none')`;
  return sql`(${isAdminInSql(caller.projectLevel)} or ${readDashboard(notHidden)})`;
}

/**
 * `dashboardRights` makes the caller the dashboard's manager, in SQL: its creator, a project
 * admin, or a `manager` rule. For writes that must hold only while it does.
 */
export function dashboardManagerInSql(
  caller: { userId: number; projectLevel: SQLWrapper },
  dashboard: { createdById: SQLWrapper; rule: SQLWrapper },
): SQL {
  return sql`(${isAdminInSql(caller.projectLevel)} or ${dashboard.createdById} = ${caller.userId}
    or coalesce(${dashboard.rule}, 'editor') = 'manager')`;
}

/**
 * `dashboardRights` lets the caller change the dashboard's restriction level, in SQL: its creator
 * or a project admin, whatever the rules say.
 */
export function dashboardRestrictionChangerInSql(
  caller: { userId: number; projectLevel: SQLWrapper },
  dashboard: { createdById: SQLWrapper },
): SQL {
  return sql`(${isAdminInSql(caller.projectLevel)} or ${dashboard.createdById} = ${caller.userId})`;
}

/**
 * `dashboardRights` lets the caller edit the dashboard, in SQL: its creator or a project admin, or
 * an `editor` (the default) or `manager` where everyone edits or who is one of its collaborators.
 * For writes that must hold only while it does.
 */
export function dashboardEditorInSql(
  caller: { userId: number; projectLevel: SQLWrapper },
  dashboard: { createdById: SQLWrapper; rule: SQLWrapper; restrictionLevel: SQLWrapper; isCollaborator: SQLWrapper },
): SQL {
  return sql`(${dashboardRestrictionChangerInSql(caller, dashboard)}
    or (coalesce(${dashboard.rule}, 'editor') in ('editor', 'manager')
      and (${dashboard.restrictionLevel} = ${RestrictionLevel.everyoneCanEdit} or ${dashboard.isCollaborator})))`;
}

/**
 * The caller's rule on a dashboard (`memberRule`), in SQL: the rules on the dashboard for them
 * and their roles, else the rules on every dashboard of its environment (`kindRuleOfMember`),
 * else the dashboard's default. `environmentId` a value (a list's environment) reads the rules
 * on the kind once per statement; a column (a dashboard found by id alone) once per row.
 */
export const dashboardRuleInSql = (
  dashboard: { id: SQLWrapper | string; environmentId: SQLWrapper | number },
  membershipId: SQLWrapper | string,
): SQL<AccessLevel | null> =>
  ruleOfMember(
    "dashboard",
    dashboard.id,
    membershipId,
    kindRuleOfMember("dashboard", dashboard.environmentId, membershipId),
  );
