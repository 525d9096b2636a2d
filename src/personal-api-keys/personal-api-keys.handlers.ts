import type { RouteHandler } from "@hono/zod-openapi";
import { and, eq, getTableColumns, sql } from "drizzle-orm";
import { organizationMemberships, personalApiKeys, projects, users } from "../db/schema";
import { apiKeyCacheKey, mintApiKey } from "../platform/auth/api-keys";
import { currentEnvironmentGuessKey } from "../platform/route-context/current-environment-guess";
import { scopesGrant } from "../platform/auth/scopes";
import type { Actor, AppEnv } from "../platform/env";
import { notFound, permissionDenied, validationError } from "../platform/errors";
import { nowIso, uuid7 } from "../platform/ids";
import {
  counterOf,
  joinPage,
  pageEnvelope,
  pageOf,
  readPage,
  selectCount,
  type ListOrder,
} from "../platform/pagination";
import { inJsonList, type Database } from "../platform/db";
import { membershipOfCaller, projectVisible } from "../platform/route-context/project";
import { writeWithActivity } from "../platform/activity-log/resource-activity";
import { personalApiKeyEntries } from "./personal-api-keys.activity";
import type { createKey, deleteKey, listKeys, retrieveCurrentKey, retrieveKey } from "./personal-api-keys.routes";

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

const ownKey = (actor: Actor, id: string) => and(eq(personalApiKeys.id, id), eq(personalApiKeys.userId, actor.userId));

const newestFirst: ListOrder = [
  [personalApiKeys.createdAt, "desc"],
  [personalApiKeys.id, "desc"],
];

/** Newest first, paged along the (user, created_at, id) index like every list; counted by the user's counter. */
export const listPersonalApiKeys: RouteHandler<typeof listKeys, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const page = readPage(c);
  const ofCaller = eq(personalApiKeys.userId, actor.userId);
  const counter = counterOf(users.personalApiKeyCount, eq(users.id, actor.userId));
  const [[total], rows] = await db.batch([
    selectCount(db, counter),
    db
      .select(getTableColumns(personalApiKeys))
      .from(personalApiKeys)
      .innerJoin(...joinPage(db, newestFirst, ofCaller, page)),
  ]);
  const listed = pageOf(newestFirst, page, rows);
  return c.json(pageEnvelope(c, page, total?.value ?? 0, listed.rows.map(toPersonalApiKey), listed.links), 200);
};

export const retrievePersonalApiKey: RouteHandler<typeof retrieveKey, AppEnv> = async (c) => {
  const [row] = await c.var.db
    .select()
    .from(personalApiKeys)
    .where(ownKey(c.var.actor, c.req.valid("param").id));
  if (!row) throw notFound();
  return c.json(toPersonalApiKey(row), 200);
};

export const createPersonalApiKey: RouteHandler<typeof createKey, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const input = c.req.valid("json");
  const scopes = [...new Set(input.scopes)];
  const scopedOrganizations = [...new Set(input.scoped_organizations)];
  const scopedTeams = [...new Set(input.scoped_teams)];
  assertWithinCallerKey(actor, scopes, scopedOrganizations);
  const reachable = await assertCallerBelongs(db, actor, scopedOrganizations, scopedTeams);

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
  await writeWithActivity(
    db,
    db.insert(personalApiKeys).values(row),
    ...personalApiKeyEntries(c, "created", row, reachable),
  );
  return c.json({ ...toPersonalApiKey(row), value: key.value }, 201);
};

/** The calling key itself: PostHog's clients read it to learn what they may do. */
export const retrieveCallingApiKey: RouteHandler<typeof retrieveCurrentKey, AppEnv> = async (c) => {
  const [row] = await c.var.db.select().from(personalApiKeys).where(ownKey(c.var.actor, c.var.actor.keyId));
  if (!row) throw notFound();
  return c.json(toPersonalApiKey(row), 200);
};

/**
 * A key never mints a key that could do more than itself: scopes are a ceiling, and so are its
 * organizations. (A key scoped to projects never gets here: key routes are organization-level.)
 */
function assertWithinCallerKey(actor: Actor, scopes: string[], organizations: string[]) {
  for (const scope of scopes) {
    if (!scopesGrant(actor.scopes, scope)) {
      throw permissionDenied(`API key cannot grant scope '${scope}' that it does not have itself`);
    }
  }
  const within = actor.scopedOrganizations;
  if (within.length > 0 && (organizations.length === 0 || organizations.some((id) => !within.includes(id)))) {
    throw permissionDenied("API key cannot grant access to organizations outside its own scope");
  }
}

/**
 * Only organizations the caller belongs to and projects the caller can see: a private project
 * the caller cannot see answers exactly like an id that does not exist, so ids cannot be probed.
 * Returns the organizations the new key reaches (its own, else all the caller's), whose activity
 * logs record it.
 */
async function assertCallerBelongs(db: Database, actor: Actor, organizations: string[], teams: number[]) {
  const [memberOf, visibleTeams] = await db.batch([
    db
      .select({ id: organizationMemberships.organizationId })
      .from(organizationMemberships)
      .where(
        and(
          eq(organizationMemberships.userId, actor.userId),
          organizations.length > 0 ? inJsonList(organizationMemberships.organizationId, organizations) : undefined,
        ),
      ),
    db
      .select({ id: projects.id })
      .from(projects)
      .innerJoin(organizationMemberships, membershipOfCaller(actor.userId))
      // No project named: a constant false, which SQLite answers without reading a row (an empty
      // JSON list would walk every project the caller can see).
      .where(teams.length > 0 ? and(projectVisible, inJsonList(projects.id, teams)) : sql`0`),
  ]);
  if (organizations.length > 0 && memberOf.length !== organizations.length) {
    throw validationError(
      "invalid_input",
      "You must be a member of all organizations that you are scoping the key to.",
      "scoped_organizations",
    );
  }
  if (visibleTeams.length !== teams.length) {
    throw validationError(
      "invalid_input",
      "You must be a member of all projects that you are scoping the key to.",
      "scoped_teams",
    );
  }
  return memberOf.map(({ id }) => id);
}

/**
 * The key and the caller's organizations are read first (its entries name its label and go into
 * each organization it reached); the delete and its entries are then one atomic batch.
 */
export const deletePersonalApiKey: RouteHandler<typeof deleteKey, AppEnv> = async (c) => {
  const { db, actor } = c.var;
  const id = c.req.valid("param").id;
  const [[key], memberships] = await db.batch([
    db.select().from(personalApiKeys).where(ownKey(actor, id)),
    db
      .select({ id: organizationMemberships.organizationId })
      .from(organizationMemberships)
      .where(eq(organizationMemberships.userId, actor.userId)),
  ]);
  if (!key) throw notFound();
  const memberOf = memberships.map((membership) => membership.id);
  const reachable =
    key.scopedOrganizations.length > 0
      ? key.scopedOrganizations.filter((organization) => memberOf.includes(organization))
      : memberOf;
  const [deleted] = await writeWithActivity(
    db,
    db.delete(personalApiKeys).where(ownKey(actor, id)).returning({ secureValue: personalApiKeys.secureValue }),
    ...personalApiKeyEntries(c, "revoked", key, reachable),
  );
  if (!deleted) throw notFound();
  await Promise.all([
    c.env.API_KEY_CACHE.delete(apiKeyCacheKey(deleted.secureValue)),
    c.env.API_KEY_CACHE.delete(currentEnvironmentGuessKey(key.id)),
  ]);
  return c.body(null, 204);
};
