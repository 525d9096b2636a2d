import { resourceActivity } from "../platform/activity-log/resource-activity";

/** An organization is created, and its settings updated; an entry names it. */
export const organizationActivity = resourceActivity("Organization", {
  fields: [
    "name",
    "logo_media_id",
    "is_member_join_email_enabled",
    "enforce_2fa",
    "members_can_invite",
    "members_can_use_personal_api_keys",
    "allow_publicly_shared_resources",
    "activity_log_retention_days",
    "share_link_max_lifetime_days",
    "personal_api_key_max_scopes",
    "api_key_max_lifetime_days",
  ],
});

type OrganizationSettings = {
  name: string;
  logoMediaId: string | null;
  isMemberJoinEmailEnabled: boolean;
  enforce2fa: boolean | null;
  membersCanInvite: boolean;
  membersCanUsePersonalApiKeys: boolean;
  allowPubliclySharedResources: boolean;
  activityLogRetentionDays: number | null;
  shareLinkMaxLifetimeDays: number | null;
  personalApiKeyMaxScopes: string[] | null;
  apiKeyMaxLifetimeDays: number | null;
};

/** The settings a PATCH can change, as the API names them. */
export const trackedOrganizationFields = (organization: OrganizationSettings): Record<string, unknown> => ({
  name: organization.name,
  logo_media_id: organization.logoMediaId,
  is_member_join_email_enabled: organization.isMemberJoinEmailEnabled,
  enforce_2fa: organization.enforce2fa,
  members_can_invite: organization.membersCanInvite,
  members_can_use_personal_api_keys: organization.membersCanUsePersonalApiKeys,
  allow_publicly_shared_resources: organization.allowPubliclySharedResources,
  activity_log_retention_days: organization.activityLogRetentionDays,
  share_link_max_lifetime_days: organization.shareLinkMaxLifetimeDays,
  personal_api_key_max_scopes: organization.personalApiKeyMaxScopes,
  api_key_max_lifetime_days: organization.apiKeyMaxLifetimeDays,
});

export const organizationItem = (organization: { id: string; name: string }) => ({
  organizationId: organization.id,
  itemId: organization.id,
  name: organization.name,
});
