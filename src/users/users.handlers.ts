import type { RouteHandler } from "@hono/zod-openapi";
import { assertOrganizationInKeyScope, assertProjectInKeyScope } from "../platform/auth/key-scoping";
import type { Context } from "hono";
import type { AppEnv } from "../platform/env";
import { refusedWhenNull } from "../platform/db";
import { notFound, validationError } from "../platform/errors";
import { jsonTooLarge } from "../platform/input-limits";
import { findCurrentChoices, readCurrentUser, userChanges } from "./users.queries";
import type { getCurrentUser, updateCurrentUser } from "./users.routes";
import type { CurrentUserUpdate } from "./users.schema";

export const currentUser: RouteHandler<typeof getCurrentUser, AppEnv> = async (c) => {
  const user = await readCurrentUser(c.var.db, c.var.actor);
  if (!user) throw notFound();
  return c.json(user, 200);
};

const doesNotExist = (value: string | number, attr: string) =>
  validationError("does_not_exist", `Object with id=${value} does not exist.`, attr);

/**
 * What `@current` is to become. Choosing a project chooses its organization too, and choosing an
 * organization alone lets `@current` take its first project, so the two always agree. Checked
 * before the write; a membership lost meanwhile makes `@current` fall back, never fail.
 */
async function currentChoices(c: Context<AppEnv>, input: CurrentUserUpdate) {
  const { set_current_organization: organizationId, set_current_team: projectId } = input;
  if (organizationId === undefined && projectId === undefined) return {};
  if (organizationId !== undefined) assertOrganizationInKeyScope(c.var.actor, organizationId);
  if (projectId !== undefined) assertProjectInKeyScope(c.var.actor, projectId);
  const found = await findCurrentChoices(c.var.db, c.var.actor, organizationId, projectId);
  if (organizationId !== undefined && !found.organization)
    throw doesNotExist(organizationId, "set_current_organization");
  if (projectId !== undefined) {
    if (!found.project) throw doesNotExist(projectId, "set_current_team");
    return { organizationId: found.project.organizationId, projectId: found.project.id };
  }
  return { organizationId, projectId: null };
}

export const updateUser: RouteHandler<typeof updateCurrentUser, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const input = c.req.valid("json");
  const changes = userChanges(input, await currentChoices(c, input));
  const user = await refusedWhenNull(readCurrentUser(db, actor, changes), () => jsonTooLarge("notification_settings"));
  if (!user) throw notFound();
  return c.json(user, 200);
};
