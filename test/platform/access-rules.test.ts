import { and, eq, sql, type SQL } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  accessControls,
  dashboards,
  organizationMemberships,
  projects,
  resourceAccessControls,
  roleMemberships,
  roles,
} from "../../src/db/schema";
import {
  dashboardRights,
  dashboardRuleInSql,
  dashboardEditorInSql,
  dashboardManagerInSql,
  dashboardRestrictionChangerInSql,
  dashboardVisibleInSql,
  PrivilegeLevel,
  RestrictionLevel,
  type AccessLevel,
} from "../../src/platform/access-rules/dashboard-rights";
import { grantableLevel, grantableLevelInSql } from "../../src/platform/access-rules/grantable-level";
import { kindRule, memberRule, ruleOfMember, type AccessLevelOf } from "../../src/platform/access-rules/member-rule";
import { effectiveProjectLevel, projectLevel, projectLevelInSql } from "../../src/platform/access-rules/project-level";
import {
  projectVisible,
  projectVisibleAtLevel,
  projectVisibleInSql,
  projectVisibleTo,
} from "../../src/platform/access-rules/project-visibility";
import { chunkForInsert } from "../../src/platform/db";
import { nowIso, uuid7 } from "../../src/platform/ids";
import { MembershipLevel } from "../../src/platform/levels";
import { membershipOfCaller } from "../../src/platform/route-context/project";
import { addMember, createProject, db, grantProjectAccess, setupOrganization } from "../support/harness";
import { createDashboard } from "../environments/dashboard-fixtures";

/*
 * Each access rule has an SQL form (for the statements that filter and rank rows) and a JS form
 * (for the checks made on rows already read), side by side in src/platform/access-rules/. For
 * every combination of an organization level, a member's own project rule, the rules of the roles
 * they hold and the project's default, a dashboard rule, restriction level, collaboration and
 * authorship, both forms are evaluated, the SQL one in D1 against real rules, and must agree.
 */

type ProjectRule = AccessLevelOf<"project">;

const LEVELS = [MembershipLevel.member, MembershipLevel.admin, MembershipLevel.owner];
const PROJECT_RULES: (ProjectRule | null)[] = [null, "none", "member", "admin"];
const DASHBOARD_RULES: (AccessLevel | null)[] = [null, "none", "viewer", "editor", "manager"];
const RESTRICTIONS = [RestrictionLevel.everyoneCanEdit, RestrictionLevel.onlyCollaboratorsCanEdit];
/** A collaborator's level, if any: only edit access can be given (`PrivilegeLevel.canEdit`). */
const COLLABORATIONS = [null, PrivilegeLevel.canEdit];
const REQUESTED = ["member", "admin"] as const;
/** The roles a member holds, by the rule each role has on every project: none, one, or two that differ. */
const ROLE_SETS: ProjectRule[][] = [[], ["none"], ["admin"], ["none", "member"], ["member", "admin"]];

/** A value bound in a statement, null included. */
const literal = (value: string | number | null): SQL => (value === null ? sql`null` : sql`${value}`);
const truth = (value: unknown) => Boolean(Number(value));

type Member = {
  userId: number;
  membershipId: string;
  level: number;
  ownRule: ProjectRule | null;
  roleRules: ProjectRule[];
};
type Project = { id: number; defaultRule: ProjectRule | null };

let otherUserId: number;
const members: Member[] = [];
const projectsByDefault: Project[] = [];

beforeAll(async () => {
  const { organization, owner } = await setupOrganization();
  otherUserId = owner.id;
  const now = nowIso();
  for (const defaultRule of PROJECT_RULES) {
    const project = await createProject(organization.id);
    projectsByDefault.push({ id: project.id, defaultRule });
    if (defaultRule === null) continue;
    await db.insert(accessControls).values({
      id: uuid7(),
      environmentId: project.id,
      resource: "project",
      resourceId: String(project.id),
      organizationMembershipId: null,
      accessLevel: defaultRule,
      createdAt: now,
      updatedAt: now,
    });
  }
  // One role per level, with that rule on every project.
  const roleOfRule = new Map<ProjectRule, string>();
  for (const roleRule of ["none", "member", "admin"] as const) {
    const roleId = uuid7();
    roleOfRule.set(roleRule, roleId);
    await db
      .insert(roles)
      .values({ id: roleId, organizationId: organization.id, name: roleRule, nameKey: roleRule, createdAt: now });
    for (const project of projectsByDefault) {
      await db.insert(accessControls).values({
        id: uuid7(),
        environmentId: project.id,
        resource: "project",
        resourceId: String(project.id),
        roleId,
        accessLevel: roleRule,
        createdAt: now,
        updatedAt: now,
      });
    }
  }
  for (const level of LEVELS) {
    for (const ownRule of PROJECT_RULES) {
      for (const roleRules of ROLE_SETS) {
        const { user, membership } = await addMember(organization.id, level);
        members.push({ userId: user.id, membershipId: membership.id, level, ownRule, roleRules });
        for (const roleRule of roleRules) {
          await db.insert(roleMemberships).values({
            id: uuid7(),
            roleId: roleOfRule.get(roleRule)!,
            organizationMembershipId: membership.id,
            joinedAt: now,
            updatedAt: now,
          });
        }
        if (ownRule === null) continue;
        for (const project of projectsByDefault) await grantProjectAccess(project.id, membership.id, ownRule);
      }
    }
  }
});

/** The project rules' SQL forms for one member and one project, read in one statement. */
function projectForms(member: Member, project: Project) {
  const rule = ruleOfMember("project", projects.id, organizationMemberships.id);
  // A level known to the statement folds the rule (an admin's: no condition); one read in SQL does not.
  const atKnownLevel = projectVisibleAtLevel({ membershipId: member.membershipId, level: member.level });
  const levelInSql = sql<number>`(select ${organizationMemberships.level} from ${organizationMemberships}
    where ${organizationMemberships.id} = ${member.membershipId})`;
  const atLevelInSql = projectVisibleAtLevel({ membershipId: member.membershipId, level: levelInSql });
  // Each aliased: a batch's rows come back by column name, and two forms may be the same text.
  return db
    .select({
      rule: rule.as("rule"),
      visible: projectVisible.as("visible"),
      visibleFromParts: projectVisibleInSql(organizationMemberships.level, rule).as("visibleFromParts"),
      visibleAtKnownLevel: (atKnownLevel ?? sql`1`).as("visibleAtKnownLevel"),
      visibleAtLevelInSql: (atLevelInSql ?? sql`0`).as("visibleAtLevelInSql"),
      level: effectiveProjectLevel.as("level"),
      levelFromParts: projectLevelInSql(organizationMemberships.level, rule).as("levelFromParts"),
      grantsMember: grantableLevelInSql(organizationMemberships.level, rule, literal("member")).as("grantsMember"),
      grantsAdmin: grantableLevelInSql(organizationMemberships.level, rule, literal("admin")).as("grantsAdmin"),
    })
    .from(projects)
    .innerJoin(organizationMemberships, membershipOfCaller(member.userId))
    .where(and(eq(projects.id, project.id), eq(organizationMemberships.id, member.membershipId)));
}

/** The column of `dashboardEditorInSql` for one authorship, restriction level and collaboration. */
const editorColumn = (creator: boolean, restrictionLevel: number, collaboration: number | null) =>
  `editor_${creator ? "creator" : "other"}_${restrictionLevel}_${collaboration ?? "none"}`;

/** The dashboard visibility's, manager's and editor's SQL forms, for its creator and another member, with a rule. */
function dashboardForms(member: Member, project: Project, dashboardRule: AccessLevel | null) {
  const caller = { userId: member.userId, projectLevel: effectiveProjectLevel };
  // The creator's id inlined (a test's own integer): bound, the statement's forms pass D1's 100 parameters.
  const dashboardBy = (createdById: number) => ({
    createdById: sql.raw(String(Math.trunc(createdById))),
    rule: literal(dashboardRule),
  });
  const visibleIf = (createdById: number) => dashboardVisibleInSql(caller, dashboardBy(createdById));
  const managerIf = (createdById: number) => dashboardManagerInSql(caller, dashboardBy(createdById));
  const editors = Object.fromEntries(
    [true, false].flatMap((creator) =>
      RESTRICTIONS.flatMap((restrictionLevel) =>
        COLLABORATIONS.map((collaboration) => {
          const name = editorColumn(creator, restrictionLevel, collaboration);
          const dashboard = {
            ...dashboardBy(creator ? member.userId : otherUserId),
            restrictionLevel: literal(restrictionLevel),
            isCollaborator: literal(collaboration === null ? 0 : 1),
          };
          return [name, dashboardEditorInSql(caller, dashboard).as(name)];
        }),
      ),
    ),
  );
  return db
    .select({
      creator: visibleIf(member.userId).as("creator"),
      notCreator: visibleIf(otherUserId).as("not_creator"),
      creatorManages: managerIf(member.userId).as("creator_manages"),
      notCreatorManages: managerIf(otherUserId).as("not_creator_manages"),
      creatorRestricts: dashboardRestrictionChangerInSql(caller, dashboardBy(member.userId)).as("creator_restricts"),
      notCreatorRestricts: dashboardRestrictionChangerInSql(caller, dashboardBy(otherUserId)).as(
        "not_creator_restricts",
      ),
      ...editors,
    })
    .from(projects)
    .innerJoin(organizationMemberships, membershipOfCaller(member.userId))
    .where(and(eq(projects.id, project.id), eq(organizationMemberships.id, member.membershipId)));
}

/** Each statement's rows, in order. */
async function readAll<S extends ReturnType<typeof projectForms> | ReturnType<typeof dashboardForms>>(statements: S[]) {
  const [first, ...rest] = statements;
  return first ? db.batch([first, ...rest]) : [];
}

describe("access rules: the SQL and JS forms agree", () => {
  it("for every combination of levels, rules, restriction, collaboration and authorship", async () => {
    const pairs = members.flatMap((member) => projectsByDefault.map((project) => ({ member, project })));
    const projectResults = await readAll(pairs.map(({ member, project }) => projectForms(member, project)));
    const dashboardResults = await readAll(
      pairs.flatMap(({ member, project }) => DASHBOARD_RULES.map((rule) => dashboardForms(member, project, rule))),
    );
    let combinations = 0;
    pairs.forEach(({ member, project }, index) => {
      const [row] = projectResults[index]!;
      if (!row) throw new Error("no row for a member and a project");
      const rules = `own rule ${member.ownRule}, roles' rules ${member.roleRules}, default ${project.defaultRule}`;
      const context = `level ${member.level}, ${rules}`;
      // The rule a member has: the highest of their own and their roles', else the project's default.
      const rule = memberRule("project", {
        own: member.ownRule,
        ofRoles: member.roleRules,
        default: project.defaultRule,
      });
      expect(row.rule, context).toBe(rule);
      const visible = projectVisibleTo(member.level, rule);
      for (const form of [row.visible, row.visibleFromParts, row.visibleAtKnownLevel, row.visibleAtLevelInSql]) {
        expect(truth(form), `visible: ${context}`).toBe(visible);
      }
      const level = projectLevel(member.level, rule);
      expect([row.level, row.levelFromParts], `level: ${context}`).toEqual([level, level]);
      for (const requested of REQUESTED) {
        const granted = requested === "member" ? row.grantsMember : row.grantsAdmin;
        expect(granted, `grantable ${requested}: ${context}`).toBe(grantableLevel(member.level, rule, requested));
        combinations += 1;
      }
      const caller = { userId: member.userId, organizationLevel: level };
      DASHBOARD_RULES.forEach((accessRule, ruleIndex) => {
        const [dashboardRow] = dashboardResults[index * DASHBOARD_RULES.length + ruleIndex]!;
        for (const creator of [true, false]) {
          const sqlVisible = truth(creator ? dashboardRow?.creator : dashboardRow?.notCreator);
          const sqlManager = truth(creator ? dashboardRow?.creatorManages : dashboardRow?.notCreatorManages);
          const sqlRestricts = truth(creator ? dashboardRow?.creatorRestricts : dashboardRow?.notCreatorRestricts);
          for (const restrictionLevel of RESTRICTIONS) {
            for (const collaboration of COLLABORATIONS) {
              const facts = {
                createdById: creator ? member.userId : otherUserId,
                restrictionLevel,
                // As the dashboard read says it: only where it bears on the rights.
                isCollaborator: collaboration !== null && restrictionLevel > RestrictionLevel.everyoneCanEdit,
                accessRule,
              };
              const rights = dashboardRights(facts, caller);
              expect(sqlVisible, `dashboard ${JSON.stringify(facts)}: ${context}`).toBe(
                rights.userAccessLevel !== "none",
              );
              expect(sqlManager, `manager ${JSON.stringify(facts)}: ${context}`).toBe(
                rights.userAccessLevel === "manager",
              );
              const editorCell = (dashboardRow as Record<string, unknown> | undefined)?.[
                editorColumn(creator, restrictionLevel, collaboration)
              ];
              const sqlEditor = truth(editorCell);
              expect(sqlEditor, `editor ${JSON.stringify(facts)}: ${context}`).toBe(rights.canEdit);
              expect(sqlRestricts, `restricts ${JSON.stringify(facts)}: ${context}`).toBe(rights.canChangeRestriction);
              combinations += 1;
            }
          }
        }
      });
    });
    expect(combinations).toBe(
      LEVELS.length *
        PROJECT_RULES.length ** 2 *
        ROLE_SETS.length *
        (REQUESTED.length + DASHBOARD_RULES.length * 2 * RESTRICTIONS.length * COLLABORATIONS.length),
    );
  });
});

/*
 * A member's rule on a dashboard, for every combination of their own rule on it, their roles'
 * rules on it, its default, and the rules on every dashboard of its project (PostHog's
 * resource-level rules: the member's own, their roles', the default for everyone). The SQL form
 * is read both ways a statement reads it: for a list's environment (a value, read once per
 * statement) and for a dashboard found by id (its own environment's column).
 */
const DASHBOARD_DEFAULTS: (AccessLevel | null)[] = [null, "none", "editor"];
const KIND_DEFAULTS: (AccessLevel | null)[] = [null, "none", "viewer"];
const OWN_DASHBOARD_RULES: (AccessLevel | null)[] = [null, "none", "viewer", "manager"];
const OWN_KIND_RULES: (AccessLevel | null)[] = [null, "none", "editor"];
/** Each role's rule on every dashboard and its rule on every dashboard of the kind (null: none). */
const DASHBOARD_ROLES: Record<string, { onDashboard: AccessLevel | null; onKind: AccessLevel | null }> = {
  a: { onDashboard: "none", onKind: "none" },
  b: { onDashboard: "viewer", onKind: null },
  c: { onDashboard: null, onKind: "viewer" },
  d: { onDashboard: "editor", onKind: "manager" },
};
const DASHBOARD_ROLE_SETS = [[], ["a"], ["b"], ["c"], ["a", "c"], ["b", "d"]];

type RuledMember = {
  membershipId: string;
  onDashboard: AccessLevel | null;
  onKind: AccessLevel | null;
  roles: string[];
};
type RuledDashboard = { id: number; environmentId: number; default: AccessLevel | null };

describe("access rules: a member's rule on a dashboard, with the rules on every dashboard", () => {
  const ruledMembers: RuledMember[] = [];
  const ruledDashboards: RuledDashboard[] = [];
  const kindDefaults = new Map<number, AccessLevel | null>();

  beforeAll(async () => {
    const { organization, key } = await setupOrganization();
    const now = nowIso();
    const rules: (typeof accessControls.$inferInsert)[] = [];
    const kindRules: (typeof resourceAccessControls.$inferInsert)[] = [];
    const onDashboard = (dashboard: RuledDashboard, accessLevel: AccessLevel, subject: object) =>
      rules.push({
        id: uuid7(),
        environmentId: dashboard.environmentId,
        resource: "dashboard",
        resourceId: String(dashboard.id),
        accessLevel,
        createdAt: now,
        updatedAt: now,
        ...subject,
      });
    const onKind = (environmentId: number, accessLevel: AccessLevel, subject: object) =>
      kindRules.push({
        id: uuid7(),
        environmentId,
        resource: "dashboard",
        accessLevel,
        createdAt: now,
        updatedAt: now,
        ...subject,
      });
    for (const kindDefault of KIND_DEFAULTS) {
      const project = await createProject(organization.id);
      kindDefaults.set(project.id, kindDefault);
      if (kindDefault !== null) onKind(project.id, kindDefault, {});
      for (const dashboardDefault of DASHBOARD_DEFAULTS) {
        const { id } = await createDashboard(key, project.id, { name: `default ${dashboardDefault}` });
        const dashboard = { id, environmentId: project.id, default: dashboardDefault };
        ruledDashboards.push(dashboard);
        if (dashboardDefault !== null) onDashboard(dashboard, dashboardDefault, {});
      }
    }
    const roleIds = new Map<string, string>();
    for (const [name, rule] of Object.entries(DASHBOARD_ROLES)) {
      const roleId = uuid7();
      roleIds.set(name, roleId);
      await db
        .insert(roles)
        .values({ id: roleId, organizationId: organization.id, name, nameKey: name, createdAt: now });
      for (const dashboard of ruledDashboards) {
        if (rule.onDashboard !== null) onDashboard(dashboard, rule.onDashboard, { roleId });
      }
      for (const environmentId of kindDefaults.keys()) {
        if (rule.onKind !== null) onKind(environmentId, rule.onKind, { roleId });
      }
    }
    const memberships: (typeof roleMemberships.$inferInsert)[] = [];
    for (const ownOnDashboard of OWN_DASHBOARD_RULES) {
      for (const ownOnKind of OWN_KIND_RULES) {
        for (const roleSet of DASHBOARD_ROLE_SETS) {
          const { membership } = await addMember(organization.id, MembershipLevel.member);
          ruledMembers.push({
            membershipId: membership.id,
            onDashboard: ownOnDashboard,
            onKind: ownOnKind,
            roles: roleSet,
          });
          const subject = { organizationMembershipId: membership.id };
          for (const dashboard of ruledDashboards) {
            if (ownOnDashboard !== null) onDashboard(dashboard, ownOnDashboard, subject);
          }
          for (const environmentId of kindDefaults.keys()) {
            if (ownOnKind !== null) onKind(environmentId, ownOnKind, subject);
          }
          for (const role of roleSet) {
            const roleId = roleIds.get(role)!;
            memberships.push({
              id: uuid7(),
              roleId,
              organizationMembershipId: membership.id,
              joinedAt: now,
              updatedAt: now,
            });
          }
        }
      }
    }
    const inserts = [
      ...chunkForInsert(accessControls, rules).map((chunk) => db.insert(accessControls).values(chunk)),
      ...chunkForInsert(resourceAccessControls, kindRules).map((chunk) =>
        db.insert(resourceAccessControls).values(chunk),
      ),
      ...chunkForInsert(roleMemberships, memberships).map((chunk) => db.insert(roleMemberships).values(chunk)),
    ];
    const [first, ...rest] = inserts;
    if (first) await db.batch([first, ...rest]);
  });

  /** The member's rule on each dashboard of an environment, for the environment as a value and as a column. */
  const ruleForms = (member: RuledMember, environmentId: number) =>
    db
      .select({
        id: dashboards.id,
        inList: dashboardRuleInSql({ id: dashboards.id, environmentId }, member.membershipId).as("in_list"),
        byId: dashboardRuleInSql(dashboards, member.membershipId).as("by_id"),
      })
      .from(dashboards)
      .where(eq(dashboards.environmentId, environmentId));

  it("agree for every combination of the rules on the dashboard and on every dashboard", async () => {
    const environments = [...kindDefaults.keys()];
    const pairs = ruledMembers.flatMap((member) => environments.map((environmentId) => ({ member, environmentId })));
    const [first, ...rest] = pairs.map(({ member, environmentId }) => ruleForms(member, environmentId));
    const results = first ? await db.batch([first, ...rest]) : [];
    let combinations = 0;
    pairs.forEach(({ member, environmentId }, index) => {
      const rows = new Map(results[index]!.map((row) => [row.id, row]));
      const ofRoles = member.roles.map((role) => DASHBOARD_ROLES[role]!);
      const ofKind = kindRule("dashboard", {
        own: member.onKind,
        ofRoles: ofRoles.flatMap((role) => (role.onKind === null ? [] : [role.onKind])),
        default: kindDefaults.get(environmentId) ?? null,
      });
      for (const dashboard of ruledDashboards.filter((each) => each.environmentId === environmentId)) {
        const expected = memberRule("dashboard", {
          own: member.onDashboard,
          ofRoles: ofRoles.flatMap((role) => (role.onDashboard === null ? [] : [role.onDashboard])),
          ofKind,
          default: dashboard.default,
        });
        const defaults = `dashboard default ${dashboard.default}, kind default ${kindDefaults.get(environmentId)}`;
        const context = `${JSON.stringify(member)}, ${defaults}`;
        const row = rows.get(dashboard.id);
        expect([row?.inList, row?.byId], context).toEqual([expected, expected]);
        combinations += 1;
      }
    });
    expect(combinations).toBe(
      OWN_DASHBOARD_RULES.length *
        OWN_KIND_RULES.length *
        DASHBOARD_ROLE_SETS.length *
        KIND_DEFAULTS.length *
        DASHBOARD_DEFAULTS.length,
    );
  });

  it("follow PostHog's order on a few cases written out", () => {
    const rule = (own: AccessLevel | null, ofKind: AccessLevel | null, byDefault: AccessLevel | null) =>
      memberRule("dashboard", { own, ofRoles: [], ofKind, default: byDefault });
    // The dashboard's rule for the member first, even below the rule on every dashboard.
    expect(rule("none", "manager", "editor")).toBe("none");
    expect(rule("editor", "none", null)).toBe("editor");
    // Then the rules on every dashboard, before the dashboard's default.
    expect(rule(null, "viewer", "none")).toBe("viewer");
    expect(rule(null, "none", "manager")).toBe("none");
    expect(rule(null, null, "none")).toBe("none");
    expect(rule(null, null, null)).toBeNull();
    // On every dashboard, the default is weighed with the member's and their roles' rules.
    expect(kindRule("dashboard", { own: "none", ofRoles: [], default: "viewer" })).toBe("viewer");
    expect(kindRule("dashboard", { own: null, ofRoles: ["none", "editor"], default: "none" })).toBe("editor");
    expect(kindRule("dashboard", { own: null, ofRoles: [], default: null })).toBeNull();
  });
});
