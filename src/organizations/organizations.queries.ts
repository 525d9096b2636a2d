import { and, asc, count, eq, gte, inArray, lt, or, sql, type SQLWrapper } from "drizzle-orm";
import { accessControls, organizationMemberships, organizations, projectSummaries, type ProjectSummary } from "../db/schema";
import type { Database } from "../platform/db";
import type { Actor } from "../platform/env";
import { nowIso } from "../platform/ids";
import { callerMemberships, callerMembershipsInScope, callerOrganizationId, CURRENT, currentOrganizationFirst } from "../platform/organization-context";
import type { Page } from "../platform/pagination";
import { projectInKeyScope } from "../platform/auth/key-scoping";
import { MembershipLevel } from "../platform/levels";
import { projectSummaryVisible } from "../platform/project-context";
import { summaryToProjectListItem, toOrganization, type Organization, type OrganizationUpdateInput } from "./organizations.schema";

/**
 * The caller's own rules on the organization's projects, as `{project id: access}` (null for an
 * admin, who sees every project): read along the rules' (membership, resource) index beside the
 * membership itself, so a member's rules on other resources stay unread.
 */
const ownProjectRules = sql<string | null>`case when ${organizationMemberships.level} < ${MembershipLevel.admin} then (
  select json_group_object(${accessControls.resourceId}, ${accessControls.accessLevel}) from ${accessControls}
  where ${accessControls.organizationMembershipId} = ${organizationMemberships.id} and ${accessControls.resource} = 'project') end`;

/** The caller's organizations with their level; `requested` is an id, or `@current` for any in the key's scope. */
function selectCallerOrganizations(db: Database, actor: Actor, requested: string) {
  return db
    .select({ organization: organizations, level: organizationMemberships.level, ownProjectRules })
    .from(organizationMemberships)
    .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
    .where(callerMemberships(actor, requested));
}

type OrganizationRow = { organization: typeof organizations.$inferSelect; level: number; ownProjectRules: string | null };
type SummaryRow = { organizationId: string; projects: Record<string, ProjectSummary> };

/** The selected organizations, as full objects: their rows (with the caller's rules), their project summaries. */
type OrganizationReads = readonly [OrganizationRow[], SummaryRow[]];

/** The project summaries of the organizations `organizationIds` selects: a few rows each, however many projects. */
function selectProjectSummariesIn(db: Database, organizationIds: SQLWrapper) {
  return db
    .select({ organizationId: projectSummaries.organizationId, projects: projectSummaries.projects })
    .from(projectSummaries)
    .where(inArray(projectSummaries.organizationId, organizationIds));
}

/** The projects of one organization the caller sees and the key reaches, in creation (id) order. */
function visibleProjects(actor: Actor, { organization, level, ownProjectRules }: OrganizationRow, summaries: SummaryRow[]) {
  const ownRule = new Map(Object.entries(JSON.parse(ownProjectRules ?? "{}") as Record<string, string>));
  return summaries
    .filter((row) => row.organizationId === organization.id)
    .flatMap((row) => Object.values(row.projects))
    .filter((project) => projectInKeyScope(actor, project.id))
    .filter((project) => projectSummaryVisible(level, ownRule.get(String(project.id)), project.default_access))
    .sort((a, b) => a.id - b.id)
    .map((project) => summaryToProjectListItem(organization.id, project));
}

/** Full objects from organization rows (with the caller's level) and the project reads beside them. */
function organizationObjects(actor: Actor, [rows, summaries]: OrganizationReads): Organization[] {
  return rows.map((row) => toOrganization(row.organization, row.level, visibleProjects(actor, row, summaries)));
}

/** A page of the caller's organizations as full objects: one round trip. */
export async function readOrganizationsPage(db: Database, actor: Actor, page: Page) {
  const pageIds = db
    .select({ id: organizations.id })
    .from(organizationMemberships)
    .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
    .where(callerMemberships(actor, CURRENT))
    .orderBy(asc(organizations.createdAt), asc(organizations.id))
    .limit(page.limit)
    .offset(page.offset);
  const [[total], ...reads] = await db.batch([
    db.select({ value: count() }).from(organizationMemberships).where(callerMembershipsInScope(actor)),
    selectCallerOrganizations(db, actor, CURRENT)
      .orderBy(asc(organizations.createdAt), asc(organizations.id))
      .limit(page.limit)
      .offset(page.offset),
    selectProjectSummariesIn(db, pageIds),
  ]);
  return { count: total?.value ?? 0, organizations: organizationObjects(actor, reads) };
}

/** The statements reading one organization (an id, or `@current`) as a full object, for a caller's batch. */
export function organizationObjectStatements(db: Database, actor: Actor, requested: string) {
  const organization = selectCallerOrganizations(db, actor, requested)
    .orderBy(...currentOrganizationFirst(actor.userId))
    .limit(1);
  return [organization, selectProjectSummariesIn(db, callerOrganizationId(db, actor, requested))] as const;
}

/** The object `organizationObjectStatements` read, if the caller is a member. */
export function toOrganizationObject(actor: Actor, reads: OrganizationReads): Organization | undefined {
  return organizationObjects(actor, reads)[0];
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
    .where(or(eq(organizations.slug, base), and(gte(organizations.slug, `${base}-`), lt(organizations.slug, `${base}.`))));
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
