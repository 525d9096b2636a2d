import { and, eq, ne, sql } from "drizzle-orm";
import { environments, projects } from "../db/schema";
import type { AccessControlDefinition } from "../platform/access-controls/access-controls";
import { raisedVersion } from "../platform/conditional-requests";
import type { Database } from "../platform/db";
import { isAdmin } from "../platform/levels";
import { callerStillProjectAdmin } from "../platform/route-context/project";
import { callerStillAdmin } from "../platform/route-context/organization";
import { ProjectParams } from "../platform/route-context";
import { projectActivity, projectItem } from "./projects.activity";

export const PRIVACY_NEEDS_ORGANIZATION_ADMIN =
  "Your organization access level is insufficient to configure project access restrictions.";

const selectEnvironment = (db: Database, environmentId: number) =>
  db.select({ projectId: environments.projectId }).from(environments).where(eq(environments.id, environmentId));

/**
 * Projects under access control, addressed by any of their environments: a `none` rule (or a
 * default of `none`: a private project) hides the project from a member, `admin` makes them a
 * project admin. Organization admins and owners see and manage every project.
 */
export const projectAccessControl: AccessControlDefinition<"project", ReturnType<typeof selectEnvironment>> = {
  resource: "project",
  defaultLevel: "member",
  managerLevel: "admin",
  notManager: "Must be admin to modify project permissions.",
  params: ProjectParams,
  read: (c, environmentId) => ({
    statement: selectEnvironment(c.var.db, environmentId),
    resourceId: sql`cast((select ${environments.projectId} from ${environments}
      where ${environments.id} = ${environmentId}) as text)`,
  }),
  // The project resolved, so the caller sees it: their effective level says the rest.
  levelOf: (c) => (isAdmin(c.var.project.level) ? "admin" : "member"),
  stillManager: (c, environmentId) => callerStillProjectAdmin(c.var.actor, environmentId),
  // The default rule is the project's privacy: as PostHog, only an organization admin changes it
  // (a project admin by a rule who opened it could not close it again).
  defaultRule: {
    mayChange: (c) => isAdmin(c.var.project.organizationLevel),
    stillMayChange: (c) => callerStillAdmin(c.var.actor, c.var.project.organizationId),
    refused: PRIVACY_NEEDS_ORGANIZATION_ADMIN,
  },
  // `access_control` (a private project) is the default rule's `none`, kept in step for readers:
  // a change of the project's own fields, so of its version, and logged as a PATCH of it is.
  onDefaultChange: (c, resourceId, level) => {
    const { organizationId, projectId } = c.var.project;
    const isPrivate = level === "none";
    return [
      c.var.db
        .update(projects)
        .set({ accessControl: isPrivate, version: raisedVersion(projects.version) })
        .where(and(eq(projects.id, sql`cast(${resourceId} as integer)`), ne(projects.accessControl, isPrivate))),
      projectActivity.changed(
        c,
        "updated",
        projectItem(
          organizationId,
          projectId,
          sql`select ${projects.name} from ${projects} where ${projects.id} = ${projectId}`,
        ),
        { access_control: !isPrivate },
        { access_control: isPrivate },
      )!,
    ];
  },
};
