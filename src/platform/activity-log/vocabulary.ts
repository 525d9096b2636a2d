/**
 * What the activity log records: each scope (PostHog's `ActivityScope` names) with the activities
 * an entry of it can have. Webhook subscriptions name events as `Scope.activity`, checked
 * against this list.
 */
export const ACTIVITIES_BY_SCOPE = {
  Organization: ["created", "updated"],
  OrganizationMembership: ["joined", "updated", "left"],
  OrganizationInvite: ["created", "cancelled", "accepted"],
  OrganizationDomain: ["created", "updated", "verified", "deleted"],
  Project: ["created", "updated", "deleted"],
  PersonalAPIKey: ["created", "updated", "rolled", "revoked", "blocked"],
  ServiceKey: ["created", "updated", "rolled", "revoked"],
  BatchExport: ["created", "updated", "paused", "unpaused", "deleted"],
  Dashboard: ["created", "updated", "deleted", "restored"],
  DashboardTile: ["created", "updated", "deleted", "moved"],
  DashboardCollaborator: ["created", "updated", "deleted"],
  SharingConfiguration: [
    "enabled",
    "disabled",
    "updated",
    "access_token_refreshed",
    "password_created",
    "password_deleted",
  ],
  AccessControl: ["created", "updated", "deleted"],
  Role: ["created", "updated", "deleted"],
  RoleMembership: ["created", "deleted"],
  Webhook: ["created", "updated", "deleted", "secret_rotated", "disabled"],
  // Who copied the log out, and which of it: the trail of the trail.
  ActivityLogExport: ["created"],
} as const;

export type ActivityScope = keyof typeof ACTIVITIES_BY_SCOPE;
export type ActivityOf<S extends ActivityScope> = (typeof ACTIVITIES_BY_SCOPE)[S][number];

export const ACTIVITY_SCOPES = Object.keys(ACTIVITIES_BY_SCOPE) as ActivityScope[];

/** Every event name a webhook can subscribe to: `OrganizationMembership.joined`, ... */
export const ACTIVITY_EVENTS: readonly string[] = ACTIVITY_SCOPES.flatMap((scope) =>
  ACTIVITIES_BY_SCOPE[scope].map((activity) => `${scope}.${activity}`),
);

export const ACTIVITY_NAMES: readonly string[] = [...new Set(Object.values(ACTIVITIES_BY_SCOPE).flat())];
