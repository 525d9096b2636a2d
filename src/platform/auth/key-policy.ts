import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import {
  organizationMemberships,
  organizations,
  personalApiKeyBlocks,
  personalApiKeys,
  projects,
  serviceApiKeys,
} from "../../db/schema";
import type { Database } from "../db";
import type { Actor } from "../env";
import { type ApiError, authenticationFailed, permissionDenied, validationError } from "../errors";
import { isAdmin, MembershipLevel } from "../levels";
import { scopesGrant } from "./scopes";

/**
 * An organization's policy for the personal keys that reach it (docs/keys.md, "Key policy"),
 * read with the caller's membership in the round trip that admits every request, so that a
 * change applies from the next request at every location. Every rule of it lives here.
 */
export type KeyPolicy = {
  membersCanUsePersonalApiKeys: boolean;
  /** The most scopes a personal key may use here; null: no ceiling. */
  personalApiKeyMaxScopes: string[] | null;
  /** An admin took the calling key out of the organization's reach. */
  keyBlocked: boolean;
  /** The caller's organization level (a project rule does not lift it). */
  organizationLevel: number;
};

const PERSONAL_KEYS_NOT_ALLOWED = "Your organization does not allow members using personal API keys.";
export const KEY_BLOCKED = "An admin of this organization revoked this personal API key's access to it.";
const beyondScopeCeiling = (scope: string) =>
  `This organization's key policy (personal_api_key_max_scopes) does not allow personal API keys the scope '${scope}'.`;

/**
 * The calling key still holds the value presented when the statement runs. A write that makes,
 * changes or rolls a key holds to it being the key's current value (a replaced value manages no
 * key, and one replaced by a roll meanwhile must not either); a joining, to it being its current
 * or replaced value (`orReplaced`). One landing after the key was revoked, rolled or its account
 * claimed would leave whoever held it a key, or a place, that outlives it.
 */
export const callingKeyLive = (actor: Actor, { orReplaced = false } = {}) => {
  const table = actor.kind === "service" ? serviceApiKeys : personalApiKeys;
  const values = orReplaced ? sql`${table.secureValue}, ${table.previousSecureValue}` : sql`${table.secureValue}`;
  return sql<boolean>`exists (select 1 from ${table} where ${table.id} = ${actor.keyId}
    and ${actor.secureValue} in (${values}))`;
};

/**
 * A write held to `callingKeyLive` was refused: 401, as the key's next request is answered, when
 * the key no longer holds its value; else null (another hold refused it). Read only on that path.
 */
export async function refusalOfGoneKey(
  db: Database,
  actor: Actor,
  holds: { orReplaced?: boolean } = {},
): Promise<ApiError | null> {
  const row = await db.get<{ live: number }>(sql`select ${callingKeyLive(actor, holds)} as "live"`);
  return row?.live ? null : authenticationFailed();
}

/** Whether the calling personal key is blocked in `organizationId`, as a condition (a service key never is). */
export const keyBlockedCondition = (actor: Actor, organizationId: SQLWrapper | string) =>
  actor.kind === "service"
    ? sql<boolean>`0`
    : sql<boolean>`exists (select 1 from ${personalApiKeyBlocks}
    where ${personalApiKeyBlocks.keyId} = ${actor.keyId}
      and ${personalApiKeyBlocks.organizationId} = ${organizationId})`;

/** Whether the calling personal key is blocked in `organizationId` (a column or a value of the statement). */
export function keyBlockedIn(actor: Actor, organizationId: SQLWrapper): SQL.Aliased<boolean> {
  // Named: a column named by a bare number (`0`) would come first among a D1 row's keys.
  return keyBlockedCondition(actor, organizationId).mapWith(Boolean).as("key_blocked");
}

/**
 * The policy's checks of a request, once its organization is known. A service key is the
 * organization's own and is held by its scopes alone. A personal key is refused where plain
 * members may not use one (admins may), where an admin blocked it, and, below owner, for a scope
 * beyond the ceiling: owners are exempt so that the policy can always be changed back.
 */
export function keyPolicyRefusal(actor: Actor, policy: KeyPolicy): string | undefined {
  if (actor.kind === "service") return undefined;
  if (!policy.membersCanUsePersonalApiKeys && !isAdmin(policy.organizationLevel)) return PERSONAL_KEYS_NOT_ALLOWED;
  if (policy.keyBlocked) return KEY_BLOCKED;
  const ceiling = policy.personalApiKeyMaxScopes;
  if (ceiling === null || policy.organizationLevel >= MembershipLevel.owner) return undefined;
  const beyond = (actor.requestScopes ?? []).find((required) => !scopesGrant(ceiling, required));
  return beyond === undefined ? undefined : beyondScopeCeiling(beyond);
}

/** `keyPolicyRefusal` as a 403 naming the rule. */
export function assertKeyPolicyAllows(actor: Actor, policy: KeyPolicy) {
  const refusal = keyPolicyRefusal(actor, policy);
  if (refusal) throw permissionDenied(refusal);
}

/**
 * The scopes a personal key below owner gives a service key (made, changed or rolled) stay
 * within the organization's ceiling: service keys are not held to it, so a key that is would
 * otherwise mint its way past it.
 */
export function assertServiceKeyWithinCeiling(
  actor: Actor,
  organization: { personalApiKeyMaxScopes: string[] | null; level: number },
  scopes: string[],
) {
  const ceiling = organization.personalApiKeyMaxScopes;
  if (actor.kind === "service" || ceiling === null || organization.level >= MembershipLevel.owner) return;
  const beyond = scopes.find((scope) => !scopesGrant(ceiling, scope));
  if (beyond !== undefined) throw permissionDenied(beyondScopeCeiling(beyond));
}

/** The policy's fields, as an organization holds them and as a change names them (undefined: unchanged). */
type KeyPolicyFields = {
  personalApiKeyMaxScopes: string[] | null;
  apiKeyMaxLifetimeDays: number | null;
  membersCanUsePersonalApiKeys: boolean;
};

/** A wider ceiling or none, a longer lifetime or none, members' keys allowed again. */
function loosensKeyPolicy(before: KeyPolicyFields, change: Partial<KeyPolicyFields>): boolean {
  const { personalApiKeyMaxScopes: ceiling, apiKeyMaxLifetimeDays: days } = change;
  const held = before.personalApiKeyMaxScopes;
  const widerCeiling =
    ceiling !== undefined && held !== null && (ceiling === null || ceiling.some((scope) => !scopesGrant(held, scope)));
  const longerLife =
    days !== undefined &&
    before.apiKeyMaxLifetimeDays !== null &&
    (days === null || days > before.apiKeyMaxLifetimeDays);
  return (
    widerCeiling || longerLife || (change.membersCanUsePersonalApiKeys === true && !before.membersCanUsePersonalApiKeys)
  );
}

/** Why a value a roll replaced is refused: it works only for its overlap, and manages no key (docs/keys.md). */
export const REPLACED_VALUE_REFUSED = "A key's replaced value cannot manage keys: use the key's current value";

/** Whether `change` sets a field of the policy to another value than it holds. */
const changesKeyPolicy = (before: KeyPolicyFields, change: Partial<KeyPolicyFields>) =>
  (Object.keys(change) as (keyof KeyPolicyFields)[]).some(
    (field) => change[field] !== undefined && JSON.stringify(change[field]) !== JSON.stringify(before[field]),
  );

/**
 * Who may change the policy: anyone who may change the organization may tighten it; only an
 * owner's own key loosens it (anyone else held to it could free themselves, or a service key they
 * make, from it); no value a roll replaced changes it, which would cut the organization's other
 * keys off as revoking them would. Returns whether the change was judged on the policy as read (anyone but an
 * owner's key changing it): it must then be written only over that version of the organization.
 */
export function keyPolicyChangeJudgedOnRead(
  actor: Actor,
  level: number,
  before: KeyPolicyFields,
  change: Partial<KeyPolicyFields>,
): boolean {
  if (actor.replacedValue && changesKeyPolicy(before, change)) throw permissionDenied(REPLACED_VALUE_REFUSED);
  if (actor.kind === "user" && level >= MembershipLevel.owner) return false;
  if (loosensKeyPolicy(before, change)) {
    throw permissionDenied("Only an owner can loosen this organization's key policy.");
  }
  return Object.values(change).some((value) => value !== undefined);
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The shortest of `api_key_max_lifetime_days` limits (one per organization); null when none has one. */
export function strictestLifetime(limits: (number | null)[]): number | null {
  const days = Math.min(...limits.filter((limit): limit is number => limit !== null));
  return Number.isFinite(days) ? days : null;
}

/**
 * A personal key created, rolled, or given a new expiry or reach must expire within the shortest
 * `api_key_max_lifetime_days` of the organizations it reaches (`limits`, one per organization),
 * counted from now. Keys made before a limit was set keep working until one of those (docs/keys.md).
 */
export function assertLifetimeWithinPolicy(expiresAt: string | null, limits: (number | null)[]) {
  const days = strictestLifetime(limits);
  if (days === null) return;
  if (expiresAt === null || Date.parse(expiresAt) > Date.now() + days * DAY_MS) {
    throw validationError(
      "invalid_input",
      `An organization this key reaches (api_key_max_lifetime_days) requires it to expire within ${days} days.`,
      "expires_at",
    );
  }
}

/** Joining refused while a key of the joining user would reach the organization beyond its lifetime limit. */
export const keysOutliveLifetime = (days: number | null) =>
  `This organization (api_key_max_lifetime_days) requires every personal API key that reaches it to expire within ${
    days ?? "its limit of"
  } days. Give your keys that would reach it (those not scoped to other organizations or projects) an expires_at ` +
  "within that, or scope them, then accept the invite again.";

/** A personal key's expiry and reach: its columns, or the values a write gives it. */
type KeyReach = {
  expiresAt: SQLWrapper | string | null;
  scopedOrganizations: SQLWrapper | string;
  scopedTeams: SQLWrapper | string;
};

/**
 * Whether a key scoped so reaches an organization, its user a member of it or not: a key naming
 * projects (`projectOrganizations`, the organizations of those not being deleted; null when it
 * names none) reaches their organizations alone, one naming organizations those alone. In SQL:
 * `reachesOrganization`, below.
 */
export const scopingReaches =
  (scopedOrganizations: string[], projectOrganizations: string[] | null) => (organizationId: string) =>
    (scopedOrganizations.length === 0 || scopedOrganizations.includes(organizationId)) &&
    (projectOrganizations === null || projectOrganizations.includes(organizationId));

/** A key's `scoped_organizations` name `organizationId`, or none (it names no organization, so all). */
const namesOrganization = (scopedOrganizations: SQLWrapper | string, organizationId: SQLWrapper | string) =>
  sql`(json_array_length(${scopedOrganizations}) = 0
    or exists (select 1 from json_each(${scopedOrganizations}) as named where named.value = ${organizationId}))`;

/** `scopingReaches` in SQL: a key's reach includes `organizationId`, its user a member of it or not. */
export const reachesOrganization = (
  key: Pick<KeyReach, "scopedOrganizations" | "scopedTeams">,
  organizationId: SQLWrapper,
) => sql`${namesOrganization(key.scopedOrganizations, organizationId)}
  and (json_array_length(${key.scopedTeams}) = 0
    or exists (select 1 from json_each(${key.scopedTeams}) as team
      join ${projects} on ${projects.id} = team.value
      where ${projects.organizationId} = ${organizationId} and ${projects.deletionScheduledAt} is null))`;

/** An expiry beyond the `organizations` row's `api_key_max_lifetime_days` counted from now (none: beyond any). */
const outlivesLimit = (expiresAt: KeyReach["expiresAt"]) => sql`${organizations.apiKeyMaxLifetimeDays} is not null
  and (${expiresAt} is null or ${expiresAt} >
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+' || ${organizations.apiKeyMaxLifetimeDays} || ' days'))`;

/** The key reaches the `organizations` row in scope and outlives its `api_key_max_lifetime_days` counted from now. */
const outlivesLimitOfOrganization = (key: KeyReach) =>
  sql`${outlivesLimit(key.expiresAt)} and ${reachesOrganization(key, organizations.id)}`;

/**
 * Whether a personal key of `userId` reaching `organizationId` outlives its lifetime limit. Joining
 * gives every such key the organization as new reach, which the limit holds as it holds a key
 * given a new reach by its own change.
 */
export const keyOutlivesLifetimeIn = (userId: number, organizationId: string) => sql<boolean>`exists (
  select 1 from ${personalApiKeys}, ${organizations}
  where ${organizations.id} = ${organizationId} and ${personalApiKeys.userId} = ${userId}
    and ${outlivesLimitOfOrganization({
      expiresAt: personalApiKeys.expiresAt,
      scopedOrganizations: personalApiKeys.scopedOrganizations,
      scopedTeams: personalApiKeys.scopedTeams,
    })})`;

/**
 * Whether a personal key of a member of `organizationId` scoped to project `projectId` outlives
 * that organization's lifetime limit: moving the project there gives such keys the organization as
 * new reach. Nothing is read where the organization has no limit.
 */
export const keyOutlivesLifetimeThroughProject = (projectId: number, organizationId: string) => sql<boolean>`exists (
  select 1 from ${organizations}
    join ${organizationMemberships} on ${organizationMemberships.organizationId} = ${organizations.id}
    join ${personalApiKeys} on ${personalApiKeys.userId} = ${organizationMemberships.userId}
  where ${organizations.id} = ${organizationId} and ${outlivesLimit(personalApiKeys.expiresAt)}
    and exists (select 1 from json_each(${personalApiKeys.scopedTeams}) as team where team.value = ${projectId})
    and ${namesOrganization(personalApiKeys.scopedOrganizations, organizationId)})`;

/**
 * Whether a key of `userId` written with `key`'s expiry and reach would outlive the limit of an
 * organization it reaches, among the user's memberships when the write runs: a write checked
 * (`assertLifetimeWithinPolicy`) on memberships read before a join landed is held by it, as the
 * join is held by the keys written before it.
 */
export const keyWouldOutliveLifetime = (
  userId: number,
  key: { expiresAt: string | null; scopedOrganizations: string[]; scopedTeams: number[] },
) => sql<boolean>`exists (
  select 1 from ${organizationMemberships} join ${organizations}
    on ${organizations.id} = ${organizationMemberships.organizationId}
  where ${organizationMemberships.userId} = ${userId}
    and ${outlivesLimitOfOrganization({
      expiresAt: key.expiresAt,
      scopedOrganizations: JSON.stringify(key.scopedOrganizations),
      scopedTeams: JSON.stringify(key.scopedTeams),
    })})`;

/**
 * A minute under the limit: the write checks the expiry against the database's clock
 * (`outlivesLimit`), which may run behind the Worker's.
 */
const CLOCK_MARGIN_MS = 60_000;

/**
 * The latest expiry an organization's `api_key_max_lifetime_days` allows a key made now (a minute
 * under it: `CLOCK_MARGIN_MS`); null: no limit.
 */
export const latestExpiryAllowed = (days: number | null) =>
  days === null ? null : new Date(Date.now() + days * DAY_MS - CLOCK_MARGIN_MS).toISOString();
