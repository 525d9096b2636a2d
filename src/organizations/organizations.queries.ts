import { and, asc, count, eq, gte, inArray, lt, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { organizationMemberships, organizations, projects } from "../db/schema";
import type { Database } from "../platform/db";
import type { Actor } from "../platform/env";
import { nowIso } from "../platform/ids";
import {
  callerMemberships,
  callerMembershipsInScope,
  callerOrganizationId,
  CURRENT,
  currentOrganizationFirst,
} from "../platform/route-context/organization";
import { pageIds, pageOf, type ListOrder, type Page } from "../platform/pagination";
import { membershipOfCaller, projectsInKeyScope, projectVisible } from "../platform/route-context/project";
import { toOrganization, type Organization, type OrganizationUpdateInput } from "./organizations.schema";
import { toProjectListItem } from "./projects/projects.schema";

type OrganizationRow = { organization: typeof organizations.$inferSelect; level: number };
type ProjectRow = { project: typeof projects.$inferSelect };

/** The selected organizations, as full objects: their rows (with the caller's level), and their projects the caller sees. */
type OrganizationReads = readonly [OrganizationRow[], ProjectRow[]];

/** The caller's organizations with their level; `requested` is an id, or `@current` for any in the key's scope. */
function selectCallerOrganizations(db: Database, actor: Actor, requested: string, among?: SQL) {
  return db
    .select({ organization: organizations, level: organizationMemberships.level })
    .from(organizationMemberships)
    .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
    .where(and(callerMemberships(actor, requested), among));
}

/**
 * The projects the caller sees (and the key reaches) in the organizations `organizationIds`
 * selects: one read along the (organization, created_at, id) index, the caller's membership read
 * once per organization and the visibility rule tested on each project.
 */
function selectVisibleProjectsIn(db: Database, actor: Actor, organizationIds: SQLWrapper) {
  return db
    .select({ project: projects })
    .from(projects)
    .innerJoin(organizationMemberships, membershipOfCaller(actor.userId))
    .where(and(inArray(projects.organizationId, organizationIds), projectVisible, ...projectsInKeyScope(actor)))
    .orderBy(asc(projects.organizationId), asc(projects.createdAt), asc(projects.id));
}

/** Full objects from organization rows (with the caller's level) and the visible projects read beside them. */
function organizationObjects([rows, projectRows]: OrganizationReads): Organization[] {
  return rows.map(({ organization, level }) => {
    const visible = projectRows.filter(({ project }) => project.organizationId === organization.id);
    return toOrganization(
      organization,
      level,
      visible.map(({ project }) => toProjectListItem(project)),
    );
  });
}

/** Oldest first, as PostHog lists a user's organizations. */
const byCreation: ListOrder = [
  [organizations.createdAt, "asc"],
  [organizations.id, "asc"],
];

/** A page of the caller's organizations as full objects: one round trip. */
export async function readOrganizationsPage(db: Database, actor: Actor, page: Page) {
  const ofCaller = inArray(
    organizations.id,
    db
      .select({ id: organizationMemberships.organizationId })
      .from(organizationMemberships)
      .where(callerMembershipsInScope(actor)),
  );
  const ids = pageIds(db, byCreation, ofCaller, page);
  const [[total], rows, projectRows] = await db.batch([
    db.select({ value: count() }).from(organizationMemberships).where(callerMembershipsInScope(actor)),
    selectCallerOrganizations(db, actor, CURRENT, sql`${organizations.id} in (select "id" from (${ids}))`),
    // The page's organizations alone: not the extra one `pageIds` reads to know whether a page follows.
    selectVisibleProjectsIn(db, actor, sql`(select "id" from (${ids}) limit ${page.limit})`),
  ]);
  const listed = pageOf(byCreation, page, rows, (row) => row.organization);
  return {
    count: total?.value ?? 0,
    organizations: organizationObjects([listed.rows, projectRows]),
    links: listed.links,
  };
}

/** The statements reading one organization (an id, or `@current`) as a full object, for a caller's batch. */
export function organizationObjectStatements(db: Database, actor: Actor, requested: string) {
  const organization = selectCallerOrganizations(db, actor, requested)
    .orderBy(...currentOrganizationFirst(actor.userId))
    .limit(1);
  return [organization, selectVisibleProjectsIn(db, actor, callerOrganizationId(db, actor, requested))] as const;
}

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

/** Only the fields sent change; `updated_at` moves with them. A statement for the caller's batch. */
export function updateOrganizationSettings(db: Database, organizationId: string, input: OrganizationUpdateInput) {
  return db
    .update(organizations)
    .set({
      name: input.name,
      logoMediaId: input.logo_media_id,
      isMemberJoinEmailEnabled: input.is_member_join_email_enabled,
      enforce2fa: input.enforce_2fa,
      membersCanInvite: input.members_can_invite,
      membersCanUsePersonalApiKeys: input.members_can_use_personal_api_keys,
      allowPubliclySharedResources: input.allow_publicly_shared_resources,
      activityLogRetentionDays: input.activity_log_retention_days,
      updatedAt: nowIso(),
    })
    .where(eq(organizations.id, organizationId));
}

/**
 * One statement, so one atomic write: every table of an organization's data references it (or
 * a project, environment or dashboard of it) with ON DELETE CASCADE, so SQLite removes all of
 * it with the organization or nothing at all.
 */
export async function deleteOrganization(db: Database, organizationId: string) {
  await db.delete(organizations).where(eq(organizations.id, organizationId));
}
