import { sql, type SQL } from "drizzle-orm";
import {
  organizationMemberships,
  personalApiKeyBlocks,
  personalApiKeys,
  projects,
  serviceApiKeys,
  users,
} from "../../db/schema";
import { whileHolds, type Database } from "../../platform/db";
import { nowIso } from "../../platform/ids";
import type { Page, PageLinks } from "../../platform/pagination";
import type { OrganizationRead } from "../../platform/route-context";
import type { OrganizationRef } from "../../platform/route-context/organization";
import type { OrganizationApiKey } from "./api-keys.schema";

/** `list` (a JSON array column) holds `value`. */
const holds = (list: SQL | typeof personalApiKeys.scopedOrganizations, value: unknown) =>
  sql`exists (select 1 from json_each(${list}) where "value" = ${value})`;

/**
 * The organization's projects among a key's `scoped_teams`, as a JSON array of `{id, name}`: not
 * one scheduled for deletion, which the key no longer reaches.
 */
const projectsOfOrganizationIn = (organizationId: OrganizationRef, scopedTeams: SQL) =>
  sql`(select json_group_array(json_object('id', ${projects.id}, 'name', ${projects.name})) from ${projects}
    where ${projects.organizationId} = ${organizationId} and ${projects.deletionScheduledAt} is null
      and ${projects.id} in (select "value" from json_each(${scopedTeams})))`;

/**
 * The personal keys of the organization's members that reach it: scoped to it or to no
 * organization, to none of its projects or to some, and not blocked here by an admin.
 */
const personalKeysReaching = (organizationId: OrganizationRef) => sql`
  select 'personal' as "kind", ${personalApiKeys.id} as "id", ${personalApiKeys.label} as "label",
    ${personalApiKeys.maskValue} as "mask_value", ${personalApiKeys.scopes} as "scopes",
    ${personalApiKeys.scopedOrganizations} as "scoped_organizations",
    ${projectsOfOrganizationIn(organizationId, sql`${personalApiKeys.scopedTeams}`)} as "projects",
    json_array_length(${personalApiKeys.scopedTeams}) as "scoped_team_count",
    ${personalApiKeys.lastUsedAt} as "last_used_at", ${personalApiKeys.createdAt} as "created_at",
    ${personalApiKeys.expiresAt} as "expires_at", ${users.firstName} as "first_name",
    ${users.lastName} as "last_name", ${users.email} as "email", ${organizationMemberships.level} as "owner_level"
  from ${organizationMemberships}
    join ${personalApiKeys} on ${personalApiKeys.userId} = ${organizationMemberships.userId}
    join ${users} on ${users.id} = ${organizationMemberships.userId}
  where ${organizationMemberships.organizationId} = ${organizationId}
    and (json_array_length(${personalApiKeys.scopedOrganizations}) = 0
      or ${holds(personalApiKeys.scopedOrganizations, organizationId)})
    and not exists (select 1 from ${personalApiKeyBlocks} where ${personalApiKeyBlocks.keyId} = ${personalApiKeys.id}
      and ${personalApiKeyBlocks.organizationId} = ${organizationId})`;

const serviceKeysOf = (organizationId: OrganizationRef) => sql`
  select 'service', ${serviceApiKeys.id}, ${serviceApiKeys.label}, ${serviceApiKeys.maskValue},
    ${serviceApiKeys.scopes}, json_array(${organizationId}),
    ${projectsOfOrganizationIn(organizationId, sql`${serviceApiKeys.scopedTeams}`)},
    json_array_length(${serviceApiKeys.scopedTeams}), ${serviceApiKeys.lastUsedAt}, ${serviceApiKeys.createdAt},
    ${serviceApiKeys.expiresAt}, null, null, null, null
  from ${serviceApiKeys} where ${serviceApiKeys.organizationId} = ${organizationId}`;

/** A key scoped to projects reaches the organization only through projects of it. */
const keysReaching = (organizationId: OrganizationRef) =>
  sql`(select * from (${personalKeysReaching(organizationId)} union all ${serviceKeysOf(organizationId)})
    where "scoped_team_count" = 0 or json_array_length("projects") > 0) as "reaching"`;

type KeyRow = {
  kind: "personal" | "service";
  id: string;
  label: string;
  maskValue: string;
  scopes: string;
  scopedOrganizations: string;
  projects: string;
  scopedTeamCount: number;
  lastUsedAt: string | null;
  createdAt: string;
  expiresAt: string | null;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
};

const column = <T>(name: string) => sql<T>`${sql.identifier(name)}`;

/**
 * Where a page starts: past the cursor's key (`created_at`, `id`) when the page carries one (read
 * toward older keys after it, toward newer before it), else `offset` keys from the newest.
 */
function keysPast(page: Page) {
  const valid = (key: unknown[] | undefined) => key?.length === 2 && key.every((part) => typeof part === "string");
  const newestFirst = { order: sql`"created_at" desc, "id" desc`, backward: false };
  if (valid(page.after))
    return { ...newestFirst, where: sql`("created_at", "id") < (${page.after![0]}, ${page.after![1]})` };
  if (valid(page.before)) {
    const where = sql`("created_at", "id") > (${page.before![0]}, ${page.before![1]})`;
    return { order: sql`"created_at" asc, "id" asc`, backward: true, where };
  }
  return { ...newestFirst, where: undefined };
}

/**
 * Every key that reaches the organization, newest first, and their count, with the caller's
 * membership. Their number is what the organization's members hold (at most 10 each) and its
 * service keys (at most 20); a page starts past its cursor's key, so that keys made or revoked
 * meanwhile neither repeat nor skip one.
 */
export async function listKeysReaching(read: OrganizationRead, page: Page) {
  const { db, organizationId } = read;
  const past = keysPast(page);
  const [[total], rows] = await read.batch([
    db.select({ value: sql<number>`count(*)` }).from(keysReaching(organizationId)),
    db
      .select({
        kind: column<"personal" | "service">("kind"),
        id: column<string>("id"),
        label: column<string>("label"),
        maskValue: column<string>("mask_value"),
        scopes: column<string>("scopes"),
        scopedOrganizations: column<string>("scoped_organizations"),
        projects: column<string>("projects"),
        scopedTeamCount: column<number>("scoped_team_count"),
        lastUsedAt: column<string | null>("last_used_at"),
        createdAt: column<string>("created_at"),
        expiresAt: column<string | null>("expires_at"),
        firstName: column<string | null>("first_name"),
        lastName: column<string | null>("last_name"),
        email: column<string | null>("email"),
      })
      .from(keysReaching(organizationId))
      .where(past.where)
      .orderBy(past.order)
      .limit(page.limit + 1)
      .offset(past.where ? 0 : page.offset),
  ]);
  const extra = rows.length > page.limit;
  const kept = past.backward ? rows.slice(0, page.limit).reverse() : rows.slice(0, page.limit);
  const keyOf = (row: KeyRow | undefined) => row && [row.createdAt, row.id];
  const links: PageLinks = {
    hasNext: past.backward || extra,
    hasPrevious: past.backward && extra,
    first: keyOf(kept[0]),
    last: keyOf(kept.at(-1)),
  };
  return { count: total?.value ?? 0, rows: kept, links };
}

const parsedList = <T>(text: string): T[] => {
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? (value as T[]) : [];
};

/** PostHog's `access_scope`: where the key's scopes apply within this organization. */
function accessScopeOf(row: KeyRow): OrganizationApiKey["access_scope"] {
  if (row.scopedTeamCount > 0) {
    return { type: "projects", projects: parsedList<{ id: number; name: string }>(row.projects) };
  }
  return parsedList(row.scopedOrganizations).length === 0 ? { type: "all" } : { type: "organization" };
}

export function toOrganizationApiKey(row: KeyRow): OrganizationApiKey {
  return {
    id: row.id,
    kind: row.kind,
    label: row.label,
    owner:
      row.kind === "personal"
        ? { first_name: row.firstName ?? "", last_name: row.lastName ?? "", email: row.email ?? "" }
        : null,
    mask_value: row.maskValue,
    scopes: parsedList<string>(row.scopes),
    access_scope: accessScopeOf(row),
    last_used_at: row.lastUsedAt,
    created_at: row.createdAt,
    expires_at: row.expiresAt,
  };
}

/**
 * The member's personal key the path names, if it reaches the organization, with its owner's
 * level (an admin may not block an owner's key) and e-mail: read with the caller's membership.
 */
export function selectKeyToBlock(read: Pick<OrganizationRead, "db" | "organizationId">, keyId: string) {
  const { db, organizationId } = read;
  return db
    .select({
      id: column<string>("id"),
      label: column<string>("label"),
      email: column<string | null>("email"),
      ownerLevel: column<number>("owner_level"),
    })
    .from(keysReaching(organizationId))
    .where(sql`"kind" = 'personal' and "id" = ${keyId}`);
}

/** The level in the organization, now, of the user whose personal key `keyId` is. */
export const keyOwnerLevel = (organizationId: string, keyId: string) =>
  sql<number | null>`(select ${organizationMemberships.level} from ${organizationMemberships}
    where ${organizationMemberships.organizationId} = ${organizationId} and ${organizationMemberships.userId} =
      (select ${personalApiKeys.userId} from ${personalApiKeys} where ${personalApiKeys.id} = ${keyId}))`;

/**
 * Blocks the key in the organization while `heldWhile` holds when the write runs (else a NOT NULL
 * failure on `blocked_at`); a block already there changes nothing (and records nothing).
 */
export const insertBlock = (db: Database, organizationId: string, keyId: string, heldWhile: SQL) =>
  db
    .insert(personalApiKeyBlocks)
    .values({ keyId, organizationId, blockedAt: whileHolds(nowIso(), heldWhile) })
    .onConflictDoNothing();
