import type { RouteHandler } from "@hono/zod-openapi";
import {
  assertKeyReachesAnyOrganization,
  assertOrganizationInKeyScope,
  assertProjectInKeyScope,
} from "../platform/auth/key-scoping";
import type { Context } from "hono";
import type { AppEnv } from "../platform/env";
import { refusedWhenNull } from "../platform/db";
import { notFound, validationError } from "../platform/errors";
import { jsonTooLarge } from "../platform/input-limits";
import { findCurrentChoices, readCurrentUser, userChanges } from "./users.queries";
import type {
  getCurrentUser,
  getUserByUuid,
  updateCurrentUser,
  updateUserByUuid as updateUserByUuidRoute,
} from "./users.routes";
import type { CurrentUserUpdate } from "./users.schema";

/** The caller as `@me` answers. */
async function callerAnswer(c: Context<AppEnv>) {
  const user = await readCurrentUser(c.var.db, c.var.actor);
  if (!user) throw notFound();
  return user;
}

/**
 * A user's uuid names the caller alone: another user is 404, as PostHog answers a non-staff caller.
 * So does `@me` sent encoded (`%40me`, as PostHog's MCP server encodes it), which PostHog decodes
 * before routing.
 */
function assertCaller(c: Context<AppEnv>, uuid: string) {
  if (uuid !== "@me" && uuid !== c.var.actor.userUuid) throw notFound();
}

export const currentUser: RouteHandler<typeof getCurrentUser, AppEnv> = async (c) => c.json(await callerAnswer(c), 200);

export const userByUuid: RouteHandler<typeof getUserByUuid, AppEnv> = async (c) => {
  assertCaller(c, c.req.valid("param").user_uuid);
  return c.json(await callerAnswer(c), 200);
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
    if (!found.project) {
      assertKeyReachesAnyOrganization(c.var.actor);
      throw doesNotExist(projectId, "set_current_team");
    }
    assertOrganizationInKeyScope(c.var.actor, found.project.organizationId);
    return { organizationId: found.project.organizationId, projectId: found.project.id };
  }
  return { organizationId, projectId: null };
}

/** The caller after `input`, as `@me` answers. */
async function updatedCaller(c: Context<AppEnv>, input: CurrentUserUpdate) {
  const changes = userChanges(input, await currentChoices(c, input));
  const user = await refusedWhenNull(readCurrentUser(c.var.db, c.var.actor, changes), () =>
    jsonTooLarge("notification_settings"),
  );
  if (!user) throw notFound();
  return user;
}

export const updateUser: RouteHandler<typeof updateCurrentUser, AppEnv> = async (c) =>
  c.json(await updatedCaller(c, c.req.valid("json")), 200);

export const updateUserByUuid: RouteHandler<typeof updateUserByUuidRoute, AppEnv> = async (c) => {
  assertCaller(c, c.req.valid("param").user_uuid);
  return c.json(await updatedCaller(c, c.req.valid("json")), 200);
};
