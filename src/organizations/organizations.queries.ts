import { and, eq, gte, lt, or, sql, type SQL } from "drizzle-orm";
import { organizationMemberships, organizations, projects, users } from "../db/schema";
import { raisedVersion } from "../platform/conditional-requests";
import { isNotNullViolationOf, unchangedSinceRead, whileHolds, type Database } from "../platform/db";
import { jsonRow, rowFromJson } from "../platform/json-rows";
import type { Actor } from "../platform/env";
import { nowIso } from "../platform/ids";
import {
  callerMembershipOf,
  callerMembershipsInScope,
  callerOrganizationId,
  keyPolicyOf,
} from "../platform/route-context/organization";
import { counterOf, pageIds, pageOf, selectCount, type ListOrder, type Page } from "../platform/pagination";
import { projectVisible } from "../platform/access-rules/project-visibility";
import { projectsInKeyScope } from "../platform/route-context/project";
import { toOrganization, type Organization, type OrganizationUpdateInput } from "./organizations.schema";
import { toProjectListItem, type ProjectListRow } from "../projects/projects.schema";
import { projectListColumns } from "../projects/projects.queries";

type OrganizationRow = { organization: typeof organizations.$inferSelect; level: number };
type ProjectRow = { project: ProjectListRow };

/**
 * The selected organizations, as full objects: their rows (with the caller's level), and their projects the caller
 * sees.
 */
type OrganizationReads = readonly [OrganizationRow[], ProjectRow[]];

/** The caller's organizations `memberships` selects, with their level. */
function selectCallerOrganizations(db: Database, actor: Actor, memberships: SQL | undefined) {
  return db
    .select({ organization: organizations, level: organizationMemberships.level, ...keyPolicyOf(actor) })
    .from(organizationMemberships)
    .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
    .where(memberships);
}

/** The caller's membership of each organization of `"listed"` (a query of `id`): one entry of their index. */
const membershipOfListed = (actor: Actor) =>
  and(eq(organizationMemberships.userId, actor.userId), eq(organizationMemberships.organizationId, sql`"listed"."id"`));

/**
 * The caller's organizations `listed` (a query of `id`) names, each read by its id with their
 * level, and beside each the projects the caller sees in it (and the key reaches), along the
 * (organization, created_at, id) index: a row per project, one with no project for an
 * organization where they see none. CROSS JOIN keeps that order (SQLite would otherwise walk all
 * the caller's memberships).
 */
function selectListedWithProjects(db: Database, actor: Actor, listed: SQL) {
  return db
    .select({ organization: organizations, level: organizationMemberships.level, project: projectListColumns })
    .from(sql`(${listed}) as "listed"`)
    .crossJoin(organizationMemberships)
    .crossJoin(organizations)
    .leftJoin(
      projects,
      and(eq(projects.organizationId, sql`"listed"."id"`), projectVisible, ...projectsInKeyScope(actor)),
    )
    .where(and(membershipOfListed(actor), eq(organizations.id, sql`"listed"."id"`)));
}

/**
 * The projects the caller sees (and the key reaches) in the organizations `listed` (a query of
 * `id`) names: for each, the caller's membership read once, then its projects along the
 * (organization, created_at, id) index, the visibility rule tested on each.
 */
function selectVisibleProjectsIn(db: Database, actor: Actor, listed: SQL) {
  return db
    .select({ project: projectListColumns })
    .from(sql`(${listed}) as "listed"`)
    .crossJoin(organizationMemberships)
    .crossJoin(projects)
    .where(visibleInListed(actor));
}

const visibleInListed = (actor: Actor) =>
  and(
    membershipOfListed(actor),
    eq(projects.organizationId, sql`"listed"."id"`),
    projectVisible,
    ...projectsInKeyScope(actor),
  );

/** Creation order, as the index holds it; put in order here (an ORDER BY costs a row read per row sorted). */
const byProjectCreation = ({ project: a }: ProjectRow, { project: b }: ProjectRow) =>
  a.createdAt === b.createdAt ? a.id - b.id : a.createdAt < b.createdAt ? -1 : 1;

/** Full objects from organization rows (with the caller's level) and the visible projects read beside them. */
function organizationObjects([rows, projectRows]: OrganizationReads): Organization[] {
  return rows.map(({ organization, level }) => {
    const visible = projectRows
      .filter(({ project }) => project.organizationId === organization.id)
      .sort(byProjectCreation);
    return toOrganization(
      organization,
      level,
      visible.map(({ project }) => toProjectListItem(project)),
    );
  });
}

/**
 * Oldest first, as PostHog lists a user's organizations: by id, which is creation order (UUIDv7,
 * time first), along the user's (user, organization) membership index.
 */
const byCreation: ListOrder = [[organizationMemberships.organizationId, "asc"]];

/**
 * The caller's organizations: their count is the user's counter (one row; a key scoped to some
 * organizations counts its memberships of those, as many as the scope names).
 */
function countOfCallerOrganizations(db: Database, actor: Actor) {
  if (actor.scopedOrganizations.length > 0) return db.$count(organizationMemberships, callerMembershipsInScope(actor));
  return counterOf(users.organizationCount, eq(users.id, actor.userId));
}

/**
 * A page of the caller's organizations as full objects: one round trip. The page's ids (and the
 * one after) along the caller's membership index, then the page's organizations with their
 * projects in one statement.
 */
export async function readOrganizationsPage(db: Database, actor: Actor, page: Page) {
  const ids = pageIds(db, byCreation, callerMembershipsInScope(actor), page);
  const [[total], idRows, rows] = await db.batch([
    selectCount(db, countOfCallerOrganizations(db, actor)),
    db.select({ organizationId: sql<string>`"id"` }).from(sql`(${ids})`),
    // The page's organizations alone: not the extra one `pageIds` reads to know whether a page follows.
    selectListedWithProjects(db, actor, sql`select "id" from (${ids}) limit ${page.limit}`),
  ]);
  const listed = pageOf(byCreation, page, idRows);
  const organizationRows = listed.rows.flatMap(({ organizationId }) => {
    const row = rows.find(({ organization }) => organization.id === organizationId);
    return row ? [row] : [];
  });
  const projectRows = rows.flatMap(({ project }) => (project ? [{ project }] : []));
  return {
    count: total?.value ?? 0,
    organizations: organizationObjects([organizationRows, projectRows]),
    links: listed.links,
  };
}

/** The statements reading one organization (an id, or `@current`) as a full object, for a caller's batch. */
export function organizationObjectStatements(db: Database, actor: Actor, requested: string) {
  const organization = selectCallerOrganizations(db, actor, callerMembershipOf(db, actor, requested));
  return [organization, visibleProjectsStatement(db, actor, requested)] as const;
}

/**
 * `organizationObjectStatements`' organization as one JSON value of another statement: its row and
 * the caller's level, or null when the caller is not a member. The projects the caller sees there
 * are `visibleProjectsStatement`'s rows, beside it in the batch: as one JSON value, every project's
 * row together would grow past D1's limit on a value (2 MB) long before an organization's limit
 * on projects.
 */
export function organizationObjectJson(db: Database, actor: Actor, requested: string) {
  const organization = db
    .select({
      object: sql`json_object('organization', ${jsonRow(organizations)}, 'level', ${organizationMemberships.level})`,
    })
    .from(organizationMemberships)
    .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
    .where(callerMembershipOf(db, actor, requested));
  return sql<string | null>`(${organization})`;
}

/** The projects the caller sees in the organization `requested` names, for `organizationObjectFromJson`. */
export function visibleProjectsStatement(db: Database, actor: Actor, requested: string) {
  const listed = sql`select (${callerOrganizationId(db, actor, requested)}) as "id"`;
  return selectVisibleProjectsIn(db, actor, listed);
}

/** The object `organizationObjectJson` read, with its projects' rows, if the caller is a member. */
export function organizationObjectFromJson(json: string | null, projectRows: ProjectRow[]): Organization | undefined {
  if (json === null) return undefined;
  const read = JSON.parse(json) as { organization: JsonObject; level: number };
  const organization = rowFromJson(organizations, read.organization);
  return toOrganizationObject([[{ organization, level: read.level }], projectRows]);
}

type JsonObject = Record<string, unknown>;

/** The object `organizationObjectStatements` read, if the caller is a member. */
export function toOrganizationObject(reads: OrganizationReads): Organization | undefined {
  return organizationObjects(reads)[0];
}

/** Lower-case ASCII letters and digits joined by single hyphens: `Acme, Inc.` → `acme-inc`. */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/, "");
  return slug || "organization";
}

/** Slugs already taken among `base`, `base-2`, `base-3`...: one range of the unique index. */
export async function takenSlugs(db: Database, base: string): Promise<Set<string>> {
  const rows = await db
    .select({ slug: organizations.slug })
    .from(organizations)
    // "-" and "." are neighbours in ASCII: this range is exactly the slugs starting with "base-".
    .where(
      or(eq(organizations.slug, base), and(gte(organizations.slug, `${base}-`), lt(organizations.slug, `${base}.`))),
    );
  return new Set(rows.map((row) => row.slug));
}

export function firstFreeSlug(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  for (let suffix = 2; ; suffix += 1) {
    if (!taken.has(`${base}-${suffix}`)) return `${base}-${suffix}`;
  }
}

/** Each setting a PATCH may send, by its name in the API, and the column that keeps it. */
const SETTING_COLUMNS = {
  name: organizations.name,
  logo_media_id: organizations.logoMediaId,
  is_member_join_email_enabled: organizations.isMemberJoinEmailEnabled,
  enforce_2fa: organizations.enforce2fa,
  members_can_invite: organizations.membersCanInvite,
  members_can_use_personal_api_keys: organizations.membersCanUsePersonalApiKeys,
  allow_publicly_shared_resources: organizations.allowPubliclySharedResources,
  activity_log_retention_days: organizations.activityLogRetentionDays,
  share_link_max_lifetime_days: organizations.shareLinkMaxLifetimeDays,
  personal_api_key_max_scopes: organizations.personalApiKeyMaxScopes,
  api_key_max_lifetime_days: organizations.apiKeyMaxLifetimeDays,
} as const;

/**
 * Only the fields sent change; `updated_at` and the version move with them (with `expected`, only
 * from that version: `raisedVersion`). Written only while `allowed` holds and each setting sent is
 * still as read (`read`, by API name): else `updated_at` is NULL (`isSettingChangedMeanwhile`), so
 * that an entry worked out against the settings read never misses a change the write makes. A
 * statement for the caller's batch.
 */
export function updateOrganizationSettings(
  db: Database,
  organizationId: string,
  input: OrganizationUpdateInput,
  allowed: SQL,
  read: Record<string, unknown>,
  expected?: number,
) {
  const sent = Object.entries(SETTING_COLUMNS).filter(
    ([name]) => input[name as keyof OrganizationUpdateInput] !== undefined,
  );
  // A write pinned to the version read (`If-Match`, or a policy change judged on it) holds all of it: 412.
  const asRead =
    expected === undefined ? unchangedSinceRead(sent.map(([name, column]) => [column, read[name]])) : undefined;
  const now = nowIso();
  return db
    .update(organizations)
    .set({
      // Only while `allowed` holds when the write runs (the caller still at the level its change
      // was judged on): else NULL, which the column refuses.
      name: whileHolds(input.name ?? sql<string>`${organizations.name}`, allowed),
      logoMediaId: input.logo_media_id,
      isMemberJoinEmailEnabled: input.is_member_join_email_enabled,
      enforce2fa: input.enforce_2fa,
      membersCanInvite: input.members_can_invite,
      membersCanUsePersonalApiKeys: input.members_can_use_personal_api_keys,
      allowPubliclySharedResources: input.allow_publicly_shared_resources,
      activityLogRetentionDays: input.activity_log_retention_days,
      shareLinkMaxLifetimeDays: input.share_link_max_lifetime_days,
      personalApiKeyMaxScopes: input.personal_api_key_max_scopes,
      apiKeyMaxLifetimeDays: input.api_key_max_lifetime_days,
      updatedAt: asRead ? whileHolds(now, asRead) : now,
      version: raisedVersion(organizations.version, expected),
    })
    .where(eq(organizations.id, organizationId));
}

/** An organization PATCH refused because a setting it sends was changed meanwhile (`updateOrganizationSettings`). */
export const isSettingChangedMeanwhile = (error: unknown) => isNotNullViolationOf(error, organizations.updatedAt);
