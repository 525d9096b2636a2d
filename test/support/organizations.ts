import { expect } from "vitest";
import type * as schema from "../../src/db/schema";
import { expectedProjectListItem } from "./projects";

type ProjectRow = typeof schema.projects.$inferSelect;
type OrganizationRow = typeof schema.organizations.$inferSelect;

/** A project as PostHog's TeamBasic embeds it (its environment: the same id). */
export const teamBasic = (project: ProjectRow) => expectedProjectListItem(project);

/** PostHog's Organization: what we model, and the neutral values of what we do not. */
export function expectedOrganization(
  organization: Pick<OrganizationRow, "id" | "name" | "slug"> & Partial<OrganizationRow>,
  fields: { level: number; projects: ProjectRow[]; memberCount?: number; overrides?: Record<string, unknown> },
) {
  return {
    id: organization.id,
    name: organization.name,
    slug: organization.slug,
    logo_media_id: null,
    created_at: organization.createdAt ?? expect.any(String),
    updated_at: organization.updatedAt ?? expect.any(String),
    membership_level: fields.level,
    plugins_access_level: 9,
    teams: fields.projects.map(teamBasic),
    projects: fields.projects.map(expectedProjectListItem),
    available_product_features: [],
    is_member_join_email_enabled: true,
    metadata: {},
    customer_id: null,
    enforce_2fa: null,
    members_can_invite: true,
    members_can_use_personal_api_keys: true,
    is_active: true,
    is_not_active_reason: null,
    is_pending_deletion: false,
    allow_publicly_shared_resources: true,
    activity_log_retention_days: null,
    share_link_max_lifetime_days: null,
    personal_api_key_max_scopes: null,
    api_key_max_lifetime_days: null,
    member_count: fields.memberCount ?? 1,
    is_ai_data_processing_approved: null,
    default_experiment_stats_method: null,
    default_role_id: null,
    is_ai_training_locked: false,
    is_ai_training_cta_shown: false,
    has_signed_baa: false,
    uses_most_specific_access_resolution: false,
    ...fields.overrides,
  };
}

/** PostHog's OrganizationBasic, as `/api/users/@me` lists it. */
export const organizationBasic = (organization: Pick<OrganizationRow, "id" | "name" | "slug">, level: number) => ({
  id: organization.id,
  name: organization.name,
  slug: organization.slug,
  logo_media_id: null,
  membership_level: level,
  members_can_use_personal_api_keys: true,
  is_active: true,
  is_not_active_reason: null,
  is_pending_deletion: false,
});
