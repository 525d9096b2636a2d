import { and, eq, sql, type SQL } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { accessControls, organizationMemberships, projects, roleMemberships, roles } from "../../src/db/schema";
import {
  dashboardRights,
  dashboardVisibleInSql,
  PrivilegeLevel,
  RestrictionLevel,
  type AccessLevel,
} from "../../src/platform/access-rules/dashboard-rights";
import { grantableLevel, grantableLevelInSql } from "../../src/platform/access-rules/grantable-level";
import { memberRule, ruleOfMember, type AccessLevelOf } from "../../src/platform/access-rules/member-rule";
import { effectiveProjectLevel, projectLevel, projectLevelInSql } from "../../src/platform/access-rules/project-level";
import {
  projectVisible,
  projectVisibleAtLevel,
  projectVisibleInSql,
  projectVisibleTo,
} from "../../src/platform/access-rules/project-visibility";
import { nowIso, uuid7 } from "../../src/platform/ids";
import { MembershipLevel } from "../../src/platform/levels";
import { membershipOfCaller } from "../../src/platform/route-context/project";
import { addMember, createProject, db, grantProjectAccess, setupOrganization } from "../support/harness";

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

/** The dashboard visibility's SQL form, for its creator and for another member, with one dashboard rule. */
function dashboardForms(member: Member, project: Project, dashboardRule: AccessLevel | null) {
  const visibleIf = (createdById: number) =>
    dashboardVisibleInSql(
      { userId: member.userId, projectLevel: effectiveProjectLevel },
      { createdById: literal(createdById), rule: literal(dashboardRule) },
    );
  return db
    .select({ creator: visibleIf(member.userId).as("creator"), notCreator: visibleIf(otherUserId).as("not_creator") })
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
