import { visibleName } from "../platform/names";
import { z } from "@hono/zod-openapi";
import type { users } from "../db/schema";
import { boundedJson, boundedJsonObject } from "../platform/input-limits";
import { Organization, OrganizationBasic, TeamBasic } from "../organizations/organizations.schema";
import { toUserBasic, UserBasic } from "../platform/user-basic";
import { Timestamp } from "../platform/timestamps";

/** The most a hedgehog configuration may take, serialized (`UserBasic` carries it everywhere). */
const HEDGEHOG_CONFIG_BYTES = 4096;

const ROLES_AT_ORGANIZATION = [
  "engineering",
  "data",
  "product",
  "founder",
  "leadership",
  "marketing",
  "sales",
  "student",
  "other",
] as const;
// PostHog takes "" (blank) as well as null, and answers it as stored.
const THEME_MODES = ["light", "dark", "system", ""] as const;
const TOOLBAR_MODES = ["disabled", "toolbar", ""] as const;
const SHORTCUT_POSITIONS = ["above", "below", "hidden", ""] as const;

/**
 * The user's preferences this API stores and echoes without acting on them (no toolbar, 2FA,
 * impersonation or sidebar here), in one JSON column; PostHog's defaults fill what was never set.
 */
const UserPreferencesInput = z.object({
  // Nullable in PostHog (its column is): null is stored and answered as sent.
  anonymize_data: z.boolean().nullable(),
  toolbar_mode: z.enum(TOOLBAR_MODES).nullable(),
  allow_impersonation: z.boolean().nullable(),
  allow_sidebar_suggestions: z.boolean().nullable(),
  shortcut_position: z.enum(SHORTCUT_POSITIONS).nullable(),
  passkeys_enabled_for_2fa: z.boolean().nullable(),
  hide_mcp_hints: z.boolean(),
  events_column_config: boundedJsonObject(),
  has_seen_product_intro_for: boundedJsonObject().nullable(),
  ui_configuration: boundedJson(z.unknown()).nullable(),
});
type UserPreferences = z.infer<typeof UserPreferencesInput>;
export const USER_PREFERENCE_KEYS = Object.keys(UserPreferencesInput.shape) as (keyof UserPreferences)[];
const USER_PREFERENCE_DEFAULTS: UserPreferences = {
  anonymize_data: false,
  toolbar_mode: "toolbar",
  allow_impersonation: true,
  allow_sidebar_suggestions: false,
  shortcut_position: null,
  passkeys_enabled_for_2fa: true,
  hide_mcp_hints: false,
  events_column_config: { active: "DEFAULT" },
  has_seen_product_intro_for: null,
  ui_configuration: null,
};

/** PostHog's PendingInvite: an unexpired invite to the user's e-mail from an organization they are not in. */
const PendingInvite = z
  .object({
    id: z.string().uuid(),
    target_email: z.string(),
    organization_id: z.string().uuid(),
    organization_name: z.string(),
    created_at: Timestamp,
  })
  .openapi("PendingInvite");
export type PendingInvite = z.infer<typeof PendingInvite>;

/**
 * PostHog's User, as `/api/users/@me` answers it. What we do not model (passwords, 2FA, social
 * login, impersonation, the toolbar) takes the value PostHog gives a user without it.
 */
export const CurrentUser = UserBasic.omit({ role_at_organization: true })
  .extend({
    // Always present, as PostHog's serializer writes it: null when none was chosen.
    role_at_organization: z.enum(ROLES_AT_ORGANIZATION).nullable(),
    date_joined: Timestamp,
    pending_email: z.string().nullable(),
    notification_settings: z.record(z.string(), z.unknown()),
    ...UserPreferencesInput.shape,
    hedgehog_config: z.record(z.string(), z.unknown()).nullable(),
    pending_invites: z.array(PendingInvite).openapi({
      description:
        "Empty until the address is proven (`is_email_verified`): by an invite e-mail's own token. " +
        "The newest 100, oldest first.",
    }),
    has_password: z.boolean(),
    is_staff: z.boolean(),
    is_impersonated: z.boolean(),
    is_impersonated_until: Timestamp.nullable(),
    sensitive_session_expires_at: Timestamp.nullable(),
    // TeamBasic is an `allOf`, with no type of its own to make nullable: say it here.
    team: TeamBasic.nullable().openapi({
      type: ["object", "null"],
      description: "The current project (what `@current` stands for).",
    }),
    organization: Organization.nullable().openapi({ description: "The current organization." }),
    organizations: z.array(OrganizationBasic),
    is_2fa_enabled: z.boolean(),
    has_social_auth: z.boolean(),
    has_sso_enforcement: z.boolean(),
    scene_personalisation: z.array(z.object({ scene: z.string(), dashboard: z.number().int().nullable() })),
    theme_mode: z.enum(THEME_MODES).nullable(),
  })
  .openapi("User");
export type CurrentUser = z.infer<typeof CurrentUser>;

const NotificationSettingName = z
  .string()
  .regex(/^[A-Za-z0-9_]{1,64}$/, "Setting names are letters, digits and underscores.");

export const CurrentUserUpdate = z
  .object({
    first_name: visibleName(z.string().trim().max(150)),
    last_name: visibleName(z.string().trim().max(150)),
    role_at_organization: z.enum(ROLES_AT_ORGANIZATION).or(z.literal("")).nullable(),
    notification_settings: boundedJson(z.record(NotificationSettingName, z.unknown())).openapi({
      description:
        "Merged into the stored settings: only the keys sent change. At most 64 KiB serialized, merged settings too.",
    }),
    theme_mode: z.enum(THEME_MODES).nullable(),
    ...UserPreferencesInput.shape,
    // Embedded wherever the user is (`UserBasic`: every activity-log entry, event and member they
    // appear in): PostHog's own is a few hundred bytes.
    hedgehog_config: boundedJson(z.record(z.string(), z.unknown()), HEDGEHOG_CONFIG_BYTES).nullable(),
    set_current_organization: z
      .string()
      .openapi({ description: "An organization of the caller: `@current` now stands for it (and its first project)." }),
    set_current_team: z
      .union([
        z.number().int().nonnegative(),
        z
          .string()
          .regex(/^\d{1,15}$/)
          .transform(Number),
      ])
      .openapi({
        type: "integer",
        description: "A project the caller sees: `@current` now stands for it and its organization.",
      }),
  })
  .partial()
  .openapi("UserUpdate");
export type CurrentUserUpdate = z.infer<typeof CurrentUserUpdate>;

type UserRow = typeof users.$inferSelect;

export function toCurrentUser(
  user: UserRow,
  current: {
    team: TeamBasic | null;
    organization: Organization | null;
    organizations: OrganizationBasic[];
    pending_invites: PendingInvite[];
  },
): CurrentUser {
  const { role_at_organization: role, ...basic } = toUserBasic(user);
  return {
    ...basic,
    role_at_organization: isRole(role) ? role : null,
    date_joined: user.createdAt,
    pending_email: null,
    notification_settings: user.notificationSettings,
    ...USER_PREFERENCE_DEFAULTS,
    ...(user.preferences as Partial<UserPreferences>),
    has_password: false,
    is_staff: false,
    is_impersonated: false,
    is_impersonated_until: null,
    sensitive_session_expires_at: null,
    ...current,
    is_2fa_enabled: false,
    has_social_auth: false,
    has_sso_enforcement: false,
    scene_personalisation: [],
    theme_mode: isThemeMode(user.themeMode) ? user.themeMode : null,
  };
}

const isRole = (value: string): value is (typeof ROLES_AT_ORGANIZATION)[number] =>
  (ROLES_AT_ORGANIZATION as readonly string[]).includes(value);
const isThemeMode = (value: string | null): value is (typeof THEME_MODES)[number] =>
  value !== null && (THEME_MODES as readonly string[]).includes(value);
