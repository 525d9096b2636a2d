import type { RouteHandler } from "@hono/zod-openapi";
import { and, desc, eq, inArray } from "drizzle-orm";
import { environments, organizationMemberships, personalApiKeys } from "../db/schema";
import { apiKeyCacheKey, mintApiKey } from "../platform/auth/api-keys";
import { scopesGrant } from "../platform/auth/scopes";
import type { Actor, AppEnv } from "../platform/env";
import { notFound, permissionDenied, validationError } from "../platform/errors";
import { nowIso, uuid7 } from "../platform/ids";
import type { Database } from "../platform/db";
import type { createKey, deleteKey, listKeys, retrieveKey } from "./personal-api-keys.routes";

type KeyRow = typeof personalApiKeys.$inferSelect;

export function toPersonalApiKey(row: KeyRow) {
  return {
    id: row.id,
    label: row.label,
    mask_value: row.maskValue,
    created_at: row.createdAt,
    last_used_at: row.lastUsedAt,
    user_id: row.userId,
    scopes: row.scopes,
    scoped_organizations: row.scopedOrganizations,
    scoped_teams: row.scopedTeams,
  };
}

const ownKey = (actor: Actor, id: string) =>
  and(eq(personalApiKeys.id, id), eq(personalApiKeys.userId, actor.userId));

export const listPersonalApiKeys: RouteHandler<typeof listKeys, AppEnv> = async (c) => {
  const rows = await c.var.db
    .select()
    .from(personalApiKeys)
    .where(eq(personalApiKeys.userId, c.var.actor.userId))
    .orderBy(desc(personalApiKeys.createdAt), desc(personalApiKeys.id));
  return c.json(rows.map(toPersonalApiKey), 200);
};

export const retrievePersonalApiKey: RouteHandler<typeof retrieveKey, AppEnv> = async (c) => {
  const [row] = await c.var.db.select().from(personalApiKeys).where(ownKey(c.var.actor, c.req.valid("param").id));
  if (!row) throw notFound();
  return c.json(toPersonalApiKey(row), 200);
};

export const createPersonalApiKey: RouteHandler<typeof createKey, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const input = c.req.valid("json");
  const scopes = [...new Set(input.scopes)];
  const scopedOrganizations = [...new Set(input.scoped_organizations)];
  const scopedTeams = [...new Set(input.scoped_teams)];
  assertWithinCallerKey(actor, scopes, scopedOrganizations, scopedTeams);
  await assertCallerBelongs(db, actor, scopedOrganizations, scopedTeams);

  const key = await mintApiKey();
  const row: KeyRow = {
    id: uuid7(),
    userId: actor.userId,
    label: input.label,
    secureValue: key.secureValue,
    maskValue: key.maskValue,
    scopes,
    scopedOrganizations,
    scopedTeams,
    createdAt: nowIso(),
    lastUsedAt: null,
  };
  await db.insert(personalApiKeys).values(row);
  return c.json({ ...toPersonalApiKey(row), value: key.value }, 201);
};

/** A key never mints a key that could do more than itself: scopes are a ceiling. */
function assertWithinCallerKey(actor: Actor, scopes: string[], organizations: string[], teams: number[]) {
  for (const scope of scopes) {
    if (!scopesGrant(actor.scopes, scope)) {
      throw permissionDenied(`API key cannot grant scope '${scope}' that it does not have itself`);
    }
  }
  const widens = <T>(callerScope: T[], requested: T[]) =>
    callerScope.length > 0 && (requested.length === 0 || requested.some((id) => !callerScope.includes(id)));
  if (widens(actor.scopedOrganizations, organizations)) {
    throw permissionDenied("API key cannot grant access to organizations outside its own scope");
  }
  if (widens(actor.scopedTeams, teams)) {
    throw permissionDenied("API key cannot grant access to projects outside its own scope");
  }
}

async function assertCallerBelongs(db: Database, actor: Actor, organizations: string[], teams: number[]) {
  if (organizations.length === 0 && teams.length === 0) return;
  const [memberOf, teamsOfMember] = await db.batch([
    db
      .select({ id: organizationMemberships.organizationId })
      .from(organizationMemberships)
      .where(
        and(
          eq(organizationMemberships.userId, actor.userId),
          inArray(organizationMemberships.organizationId, organizations),
        ),
      ),
    db
      .select({ id: environments.id })
      .from(environments)
      .innerJoin(
        organizationMemberships,
        and(
          eq(organizationMemberships.organizationId, environments.organizationId),
          eq(organizationMemberships.userId, actor.userId),
        ),
      )
      .where(inArray(environments.id, teams)),
  ]);
  if (memberOf.length !== organizations.length) {
    throw validationError(
      "invalid_input",
      "You must be a member of all organizations that you are scoping the key to.",
      "scoped_organizations",
    );
  }
  if (teamsOfMember.length !== teams.length) {
    throw validationError(
      "invalid_input",
      "You must be a member of all projects that you are scoping the key to.",
      "scoped_teams",
    );
  }
}

export const deletePersonalApiKey: RouteHandler<typeof deleteKey, AppEnv> = async (c) => {
  const [deleted] = await c.var.db
    .delete(personalApiKeys)
    .where(ownKey(c.var.actor, c.req.valid("param").id))
    .returning({ secureValue: personalApiKeys.secureValue });
  if (!deleted) throw notFound();
  await c.env.API_KEY_CACHE.delete(apiKeyCacheKey(deleted.secureValue));
  return c.body(null, 204);
};
