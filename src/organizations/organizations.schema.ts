import { z } from "@hono/zod-openapi";
import type { organizations } from "../db/schema";
import { MembershipLevelField } from "./membership-level-field";
import { ProjectListItem, toProjectListItem, type ProjectListRow } from "../projects/projects.schema";
import { visibleName } from "../platform/names";
import { KeyScope } from "../platform/auth/scopes";
import { idList } from "../platform/input-limits";
import { Timestamp } from "../platform/timestamps";

type ProjectItem = z.infer<typeof ProjectListItem>;

/** PostHog's TeamBasic: a project's environment as other objects embed it (same id as the project). */
export const TeamBasic = ProjectListItem.openapi("TeamBasic");
export type TeamBasic = z.infer<typeof TeamBasic>;

export const toTeamBasic = (project: ProjectListRow): TeamBasic => toProjectListItem(project);

/**
 * PostHog's Organization. Fields we do not model carry PostHog's neutral values, so that clients
 * validating against PostHog's schema accept it.
 */
export const Organization = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    slug: z.string(),
    logo_media_id: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
    membership_level: MembershipLevelField.nullable(),
    plugins_access_level: z
      .number()
      .int()
      .openapi({ description: "Always 9 (PostHog's root level): no plugins here." }),
    teams: z.array(TeamBasic).openapi({ description: "The environments of `projects`." }),
    projects: z.array(ProjectListItem).openapi({ description: "The organization's projects the caller can see." }),
    available_product_features: z.array(z.unknown()),
    is_member_join_email_enabled: z.boolean(),
    metadata: z.record(z.string(), z.unknown()),
    customer_id: z.string().nullable(),
    enforce_2fa: z.boolean().nullable(),
    members_can_invite: z.boolean(),
    members_can_use_personal_api_keys: z.boolean(),
    is_active: z.boolean().openapi({ description: "Always true: organizations are not deactivated here." }),
    is_not_active_reason: z.string().nullable(),
    is_pending_deletion: z.boolean().openapi({ description: "Always false: an organization is deleted at once." }),
    allow_publicly_shared_resources: z.boolean(),
    activity_log_retention_days: z.number().int().nullable(),
    share_link_max_lifetime_days: z.number().int().nullable(),
    personal_api_key_max_scopes: z.array(z.string()).nullable().openapi({
      description: "The most scopes members' personal API keys may use here (owners' excepted); null: no ceiling.",
    }),
    api_key_max_lifetime_days: z.number().int().nullable().openapi({
      description:
        "The longest a personal API key reaching this organization may be made to live, in days; null: no limit.",
    }),
    member_count: z.number().int(),
    is_ai_data_processing_approved: z.boolean().nullable(),
    default_experiment_stats_method: z.string().nullable(),
    default_role_id: z.string().nullable(),
    is_ai_training_locked: z.boolean().nullable(),
    is_ai_training_cta_shown: z.boolean().nullable(),
    has_signed_baa: z.boolean(),
    uses_most_specific_access_resolution: z.boolean().openapi({
      description:
        "Always false: a member's access to a resource is the highest of their own rule, their roles' rules and " +
        "the default (PostHog's enforced resolution); the own-rule-first resolution is not offered.",
    }),
  })
  .openapi("Organization");
export type Organization = z.infer<typeof Organization>;

/** PostHog's OrganizationBasic: the organizations listed in `/api/users/@me`. */
export const OrganizationBasic = Organization.pick({
  id: true,
  name: true,
  slug: true,
  logo_media_id: true,
  membership_level: true,
  members_can_use_personal_api_keys: true,
  is_active: true,
  is_not_active_reason: true,
  is_pending_deletion: true,
}).openapi("OrganizationBasic");
export type OrganizationBasic = z.infer<typeof OrganizationBasic>;

export const OrganizationInput = z
  .object({ name: visibleName(z.string().trim().min(1).max(64)) })
  .openapi("OrganizationInput");

/** The settings an admin may change (PATCH); every field optional. */
export const OrganizationUpdateInput = z
  .object({
    name: OrganizationInput.shape.name,
    logo_media_id: z.string().uuid().nullable(),
    is_member_join_email_enabled: z.boolean(),
    enforce_2fa: z.boolean().nullable(),
    members_can_invite: z.boolean().openapi({ description: "`false`: only admins and owners may invite." }),
    members_can_use_personal_api_keys: z
      .boolean()
      .openapi({ description: "`false`: plain members' personal API keys get 403 on this organization." }),
    allow_publicly_shared_resources: z.boolean(),
    activity_log_retention_days: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Days the activity log keeps entries (null: the deployment's maximum).", example: 90 }),
    share_link_max_lifetime_days: z
      .number()
      .int()
      .min(1)
      .max(3650)
      .nullable()
      .openapi({ description: "Longest share link lifetime in days (null: none).", example: 30 }),
    personal_api_key_max_scopes: idList(KeyScope)
      .nullable()
      .openapi({
        description: "A ceiling on members' personal API keys here (owners' excepted); null: none.",
        example: ["project:read", "dashboard:read"],
      }),
    api_key_max_lifetime_days: z.number().int().min(1).max(3650).nullable().openapi({
      description: "Personal keys created or rolled to reach it must expire within (null: no limit).",
      example: 90,
    }),
  })
  .partial()
  .openapi("OrganizationUpdate");
/** PUT: PostHog's full update, where `name` is required; fields left out are kept, as Django REST framework does. */
export const OrganizationFullInput = OrganizationUpdateInput.required({ name: true }).openapi("OrganizationFullUpdate");
export type OrganizationUpdateInput = z.infer<typeof OrganizationUpdateInput>;

type OrganizationRow = typeof organizations.$inferSelect;
export function toOrganizationBasic(organization: OrganizationRow, level: number): OrganizationBasic {
  return {
    id: organization.id,
    name: organization.name,
    slug: organization.slug,
    logo_media_id: organization.logoMediaId,
    membership_level: level as OrganizationBasic["membership_level"],
    members_can_use_personal_api_keys: organization.membersCanUsePersonalApiKeys,
    is_active: true,
    is_not_active_reason: null,
    is_pending_deletion: false,
  };
}

/** `visibleProjects`: the organization's projects the caller sees, in creation order. */
export function toOrganization(
  organization: OrganizationRow,
  level: number,
  visibleProjects: ProjectItem[],
): Organization {
  return {
    ...toOrganizationBasic(organization, level),
    created_at: organization.createdAt,
    updated_at: organization.updatedAt,
    plugins_access_level: 9,
    teams: visibleProjects,
    projects: visibleProjects,
    available_product_features: [],
    is_member_join_email_enabled: organization.isMemberJoinEmailEnabled,
    metadata: {},
    customer_id: null,
    enforce_2fa: organization.enforce2fa,
    members_can_invite: organization.membersCanInvite,
    allow_publicly_shared_resources: organization.allowPubliclySharedResources,
    activity_log_retention_days: organization.activityLogRetentionDays,
    share_link_max_lifetime_days: organization.shareLinkMaxLifetimeDays,
    personal_api_key_max_scopes: organization.personalApiKeyMaxScopes,
    api_key_max_lifetime_days: organization.apiKeyMaxLifetimeDays,
    member_count: organization.memberCount,
    is_ai_data_processing_approved: null,
    default_experiment_stats_method: null,
    default_role_id: null,
    is_ai_training_locked: false,
    is_ai_training_cta_shown: false,
    has_signed_baa: false,
    uses_most_specific_access_resolution: false,
  };
}
