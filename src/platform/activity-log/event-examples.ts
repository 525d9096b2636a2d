import type { Change } from "./record";
import type { ActivityOf, ActivityScope } from "./vocabulary";

/** Every event name of the vocabulary, as a type: an example missing for one fails to compile. */
export type EventName = { [S in ActivityScope]: `${S}.${ActivityOf<S>}` }[ActivityScope];

/** What an example entry says: when it happens, and its `detail` (the rest is the same for all). */
type EventExample = {
  description: string;
  name: string;
  /** The item's id (`item_id`). */
  item: string;
  /** A project's event carries its `project_id`. */
  project?: boolean;
  /** An event about a dashboard or its parts carries its `dashboard_id`. */
  dashboard?: number;
  /** Done by the service itself (`is_system`, no user). */
  system?: boolean;
  changes?: Change[];
  context?: Record<string, unknown>;
};

const USER_UUID = "01a2f3c4-1111-7000-8000-0000000000a1";
const changed = (type: ActivityScope, field: string, before: unknown, after: unknown): Change[] => [
  { type, action: "changed", field, before, after },
];

const dashboard = { name: "Weekly KPIs", item: "42", project: true, dashboard: 42 } as const;
const webhook = { name: "https://hooks.example.com/posthog", item: "01a2f3c4-2222-7000-8000-0000000000b2" } as const;
const batchExport = { name: "Events to S3", item: "01a2f3c4-3333-7000-8000-0000000000c3", project: true } as const;
const membership = {
  name: "ada@example.com",
  item: "01a2f3c4-4444-7000-8000-0000000000d4",
  context: { user_uuid: USER_UUID },
} as const;
const invite = { name: "grace@example.com", item: "01a2f3c4-5555-7000-8000-0000000000e5" } as const;
const domain = { name: "example.com", item: "01a2f3c4-6666-7000-8000-0000000000f6" } as const;
const serviceKey = {
  name: "Nightly sync",
  item: "01a2f3c4-7777-7000-8000-000000000108",
  context: { scopes: ["organization:read"], scoped_teams: [] },
};
const key = {
  name: "CI deploys",
  item: "01a2f3c4-7777-7000-8000-000000000107",
  context: { scopes: ["dashboard:read"], scoped_organizations: [], scoped_teams: [] },
} as const;
const tile = {
  name: "Signups this week",
  item: "1207",
  project: true,
  dashboard: 42,
  context: { dashboard_id: 42 },
} as const;
const collaborator = {
  name: "ada@example.com",
  item: "01a2f3c4-8888-7000-8000-000000000118",
  project: true,
  dashboard: 42,
  context: { dashboard_id: 42, user_uuid: USER_UUID, level: 37 },
} as const;
const sharing = {
  name: "Weekly KPIs",
  item: "42",
  project: true,
  dashboard: 42,
  context: { dashboard_id: 42 },
} as const;
const rule = {
  name: "Weekly KPIs",
  item: "01a2f3c4-9999-7000-8000-000000000129",
  project: true,
  dashboard: 42,
  context: {
    resource: "dashboard",
    resource_id: "42",
    organization_member: "01a2f3c4-4444-7000-8000-0000000000d4",
    role: null,
    access_level: "viewer",
  },
} as const;

const role = { name: "Engineering", item: "01a2f3c4-7777-7000-8000-000000000301" } as const;
const roleMembership = {
  name: "ada@example.com",
  item: "01a2f3c4-7777-7000-8000-000000000302",
  context: { role_id: role.item, role_name: role.name, user_uuid: USER_UUID },
} as const;

/**
 * One example per event, in the vocabulary's order: docs/events.md is generated from these
 * (`npm run docs:events`), and a test fails when the file is stale.
 */
export const EVENT_EXAMPLES: Record<EventName, EventExample> = {
  "Organization.created": {
    description: "An organization was created; its creator's `OrganizationMembership.joined` follows.",
    name: "Acme",
    item: "01a2f3c4-0000-7000-8000-000000000001",
  },
  "Organization.updated": {
    description: "An organization's settings changed (name, members' rights, activity-log retention...).",
    name: "Acme",
    item: "01a2f3c4-0000-7000-8000-000000000001",
    changes: changed("Organization", "members_can_invite", true, false),
  },
  "OrganizationMembership.joined": {
    description: "A user joined the organization: by creating it, or by accepting an invite.",
    ...membership,
  },
  "OrganizationMembership.updated": {
    description: "A member's level changed (member 1, admin 8, owner 15).",
    ...membership,
    changes: changed("OrganizationMembership", "level", 1, 8),
  },
  "OrganizationMembership.left": { description: "A member left the organization or was removed.", ...membership },
  "OrganizationInvite.created": {
    description:
      "Someone was invited by e-mail (the token is never recorded), with the level and private project access " +
      "their joining grants.",
    ...invite,
    context: { level: 1, private_project_access: [{ id: 7, level: "member" }] },
  },
  "OrganizationInvite.cancelled": { description: "An invite was cancelled before it was accepted.", ...invite },
  "OrganizationInvite.accepted": {
    description:
      "An invite was accepted; the new member's `OrganizationMembership.joined` comes with it. The level and " +
      "private project access the joining granted: the invite's, or less when its inviter lost rights meanwhile.",
    ...invite,
    context: { level: 1, private_project_access: [{ id: 7, level: "member" }] },
  },
  "ActivityLogExport.created": {
    description: "An export of the activity log was started: which format, time range and scopes.",
    name: "ndjson",
    item: "01a2f3c4-9999-7000-8000-00000000012a",
    context: { from: "2026-01-01T00:00:00.000Z", to: "2026-02-01T00:00:00.000Z", scopes: null },
  },
  "OrganizationDomain.created": { description: "An authentication domain was added.", ...domain },
  "OrganizationDomain.updated": {
    description:
      "A domain's settings changed: JIT provisioning, SSO enforcement, SAML (a certificate only as `masked`).",
    ...domain,
    changes: changed("OrganizationDomain", "jit_provisioning_enabled", false, true),
  },
  "OrganizationDomain.verified": {
    description: "A domain's DNS TXT record was found: the domain is verified.",
    ...domain,
  },
  "OrganizationDomain.deleted": { description: "An authentication domain was removed.", ...domain },
  "Project.created": {
    description: "A project (and its environment) was created.",
    name: "Mobile app",
    item: "7",
    project: true,
  },
  "Project.updated": {
    description:
      "A project's settings changed, its privacy (`access_control`) among them; " +
      "its Slack incoming-webhook URL only as `masked`.",
    name: "Mobile app",
    item: "7",
    project: true,
    changes: changed("Project", "access_control", false, true),
  },
  "Project.deleted": {
    description:
      "A project was deleted: gone from every route at once; its dashboards, batch exports and rules " +
      "are removed in the background.",
    name: "Mobile app",
    item: "7",
    project: true,
  },
  "PersonalAPIKey.created": {
    description: "A personal API key that can reach the organization was created (never its value).",
    ...key,
  },
  "PersonalAPIKey.updated": {
    description: "A personal API key's label, scopes, scoping or expiry changed (never its value).",
    ...key,
    changes: changed("PersonalAPIKey", "scopes", ["*"], ["project:read"]),
  },
  "PersonalAPIKey.rolled": {
    description: "A personal API key's value was replaced; the old one works until `previous_value_expires_at`.",
    ...key,
    context: { overlap_seconds: 3600, previous_value_expires_at: "2026-01-01T01:00:00.000Z" },
  },
  "PersonalAPIKey.revoked": {
    description: "A personal API key that could reach the organization was revoked.",
    ...key,
  },
  "PersonalAPIKey.blocked": {
    description: "An admin took a member's personal API key out of the organization's reach; it works elsewhere.",
    ...key,
    context: { owner_email: "ada@example.com" },
  },
  "ServiceKey.created": {
    description: "An admin created one of the organization's service keys (never its value).",
    ...serviceKey,
  },
  "ServiceKey.updated": {
    description: "A service key's label, scopes, scoped projects or expiry changed (never its value).",
    ...serviceKey,
    changes: changed("ServiceKey", "scopes", ["organization:write"], ["organization:read"]),
  },
  "ServiceKey.rolled": {
    description: "A service key's value was replaced; the old one works until `previous_value_expires_at`.",
    ...serviceKey,
    context: { overlap_seconds: 3600, previous_value_expires_at: "2026-01-01T01:00:00.000Z" },
  },
  "ServiceKey.revoked": { description: "One of the organization's service keys was revoked.", ...serviceKey },
  "BatchExport.created": { description: "A batch export was created in a project.", ...batchExport },
  "BatchExport.updated": {
    description: "A batch export's settings changed; a destination secret only as `masked`.",
    ...batchExport,
    changes: changed("BatchExport", "destination.config.aws_secret_access_key", "masked", "masked"),
  },
  "BatchExport.paused": { description: "A batch export was paused.", ...batchExport },
  "BatchExport.unpaused": { description: "A batch export was resumed.", ...batchExport },
  "BatchExport.deleted": { description: "A batch export was deleted.", ...batchExport },
  "Dashboard.created": {
    description:
      "A dashboard was created: empty, from a template, or as a copy (one entry, whatever tiles came with it).",
    ...dashboard,
  },
  "Dashboard.updated": {
    description: "A dashboard's name, description, tags, pin or restriction changed.",
    ...dashboard,
    changes: changed("Dashboard", "pinned", false, true),
  },
  "Dashboard.deleted": { description: "A dashboard was deleted (it can be restored).", ...dashboard },
  "Dashboard.restored": { description: "A deleted dashboard was restored.", ...dashboard },
  "DashboardTile.created": { description: "A tile (an insight or a text) was added to a dashboard.", ...tile },
  "DashboardTile.updated": {
    description: "A tile's layout, color or text changed.",
    ...tile,
    changes: changed("DashboardTile", "color", null, "blue"),
  },
  "DashboardTile.deleted": { description: "A tile was removed from a dashboard.", ...tile },
  "DashboardTile.moved": {
    description: "A tile was moved to another dashboard.",
    ...tile,
    context: { from_dashboard_id: 42, to_dashboard_id: 43 },
  },
  "DashboardCollaborator.created": {
    description: "A member was made a collaborator (editor) of a dashboard.",
    ...collaborator,
  },
  "DashboardCollaborator.updated": {
    description:
      "A collaborator's level on a dashboard changed " +
      "(no route changes it yet: edit is the only level a collaborator is given).",
    ...collaborator,
    changes: changed("DashboardCollaborator", "level", 21, 37),
  },
  "DashboardCollaborator.deleted": { description: "A collaborator was removed from a dashboard.", ...collaborator },
  "SharingConfiguration.enabled": {
    description: "A dashboard's public link was turned on (its token is never recorded).",
    ...sharing,
  },
  "SharingConfiguration.disabled": { description: "A dashboard's public link was turned off.", ...sharing },
  "SharingConfiguration.updated": {
    description:
      "A public link's settings, expiry (`expires_at`), `password_required` or e-mail allow-list " +
      "(`allowed_emails`, the addresses lower-cased) changed.",
    ...sharing,
    changes: changed("SharingConfiguration", "settings", {}, { whitelabel: true }),
  },
  "SharingConfiguration.access_token_refreshed": {
    description: "A public link's token was replaced: the old link stops working.",
    ...sharing,
  },
  "SharingConfiguration.password_created": {
    description: "A share password was added (never recorded).",
    ...sharing,
  },
  "SharingConfiguration.password_deleted": {
    description: "A share password was deleted.",
    ...sharing,
  },
  "AccessControl.created": {
    description: "An access rule was set on a dashboard or a project, for a member or as its default.",
    ...rule,
  },
  "AccessControl.updated": {
    description: "An access rule's level changed.",
    ...rule,
    changes: changed("AccessControl", "access_level", "viewer", "editor"),
  },
  "AccessControl.deleted": { description: "An access rule was removed.", ...rule },
  "Role.created": { description: "A role was created.", ...role },
  "Role.updated": {
    description: "A role was renamed.",
    ...role,
    changes: changed("Role", "name", "Analysts", "Engineering"),
  },
  "Role.deleted": { description: "A role was deleted, with its memberships and its access rules.", ...role },
  "RoleMembership.created": { description: "A member was added to a role.", ...roleMembership },
  "RoleMembership.deleted": {
    description: "A member was removed from a role (or left the organization, which removes them from its roles).",
    ...roleMembership,
  },
  "Webhook.created": { description: "A webhook subscription was created (never its secret).", ...webhook },
  "Webhook.updated": {
    description: "A webhook's URL, events, description or state changed.",
    ...webhook,
    changes: changed("Webhook", "enabled", false, true),
  },
  "Webhook.deleted": { description: "A webhook subscription was deleted, with its deliveries.", ...webhook },
  "Webhook.secret_rotated": {
    description: "A webhook's signing secret was replaced; `overlap_seconds` says how long the old one still signs.",
    ...webhook,
    context: { overlap_seconds: 3600 },
  },
  "Webhook.disabled": {
    description:
      "The service turned a webhook off: its receiver answered 410 Gone, every delivery failed for 3 days, " +
      "or its creator is no longer an admin.",
    ...webhook,
    system: true,
    context: { reason: "The receiver answered 410 Gone." },
  },
};
