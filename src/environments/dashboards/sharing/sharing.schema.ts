import { z } from "@hono/zod-openapi";
import { dashboardPathId } from "../../../platform/path-ids";
import { ProjectParams } from "../../../platform/route-context";
import { Timestamp, TimestampInput } from "../../../platform/timestamps";
import { ACCESS_LEVELS } from "../../../platform/access-rules/dashboard-rights";
import { emailAddress } from "../../../platform/input-limits";

/** The most addresses one link's allow-list holds. */
export const MAX_ALLOWED_EMAILS = 100;

/** An allow-listed address that opened the link, and how often: nothing about it the owner did not give. */
const VerifiedViewer = z
  .object({ email: z.string(), view_count: z.number().int(), last_viewed_at: Timestamp })
  .openapi("VerifiedViewer");

/** The settings keys PostHog's sharing accepts; any other key is dropped. */
export const SHARING_SETTINGS_KEYS = [
  "whitelabel",
  "noHeader",
  "showInspector",
  "legend",
  "detailed",
  "hideExtraDetails",
] as const;

/** PostHog's SharePassword: never the password, which only its creation answers. */
export const SharePassword = z
  .object({
    id: z.string(),
    created_at: Timestamp,
    note: z.string(),
    created_by_email: z.string(),
    is_active: z.boolean(),
  })
  .openapi("SharePassword");
export type SharePassword = z.infer<typeof SharePassword>;

export const CreatedSharePassword = SharePassword.omit({ is_active: true })
  .extend({ password: z.string() })
  .openapi("CreatedSharePassword");

export const CreateSharePasswordInput = z
  .object({
    // One string schema, not a union: a union's refusal quotes what was sent, here a password.
    raw_password: z
      .string()
      .max(200)
      .refine((password) => password === "" || [...password].length >= 8, {
        error: "Ensure this field has at least 8 characters.",
        params: { code: "min_length" },
      })
      .optional()
      .openapi({
        description: "8 characters or more; absent or empty: random.",
        example: "correct horse battery",
      }),
    note: z.string().max(100).optional(),
  })
  .openapi("CreateSharePassword");

export const SharingConfiguration = z
  .object({
    created_at: Timestamp,
    enabled: z.boolean().openapi({ description: "`false` pauses the link; its token is kept." }),
    access_token: z.string().openapi({ description: "The public link is `/shared/<access_token>`." }),
    settings: z.record(z.string(), z.boolean()),
    expires_at: Timestamp.nullable(),
    password_required: z.boolean(),
    share_passwords: z.array(SharePassword),
    view_count: z.number().int(),
    last_viewed_at: Timestamp.nullable(),
    allowed_emails: z.array(z.string()).nullable().openapi({
      description: "The e-mail allow-list, lower-cased; null: none. Visitors prove an address by a one-time link.",
    }),
    verified_viewers: z.array(VerifiedViewer).openapi({
      description: "The allow-listed addresses that viewed the link, most recent first.",
    }),
    user_access_level: z
      .enum(ACCESS_LEVELS)
      .openapi({ description: "The caller's access to the dashboard shared, as the dashboard answers it." }),
  })
  .openapi("SharingConfiguration");
export type SharingConfiguration = z.infer<typeof SharingConfiguration>;

export const UpdateSharingInput = z
  .object({
    enabled: z.boolean().optional(),
    settings: z
      .unknown()
      .optional()
      .openapi({
        type: ["object", "null"],
        additionalProperties: { type: "boolean" },
        description: `An object of booleans; only ${SHARING_SETTINGS_KEYS.join(", ")} are kept. Null clears them.`,
        example: { whitelabel: true },
      }),
    expires_at: TimestampInput.nullable().optional(),
    password_required: z.boolean().optional(),
    allowed_emails: z
      .array(emailAddress())
      .max(MAX_ALLOWED_EMAILS)
      .nullable()
      .optional()
      .openapi({
        description:
          `At most ${MAX_ALLOWED_EMAILS} addresses, compared lower-cased; \`[]\` or null lifts the allow-list. ` +
          "Not with `password_required`.",
      }),
  })
  // By hand: an allow-list needs e-mail configured and excludes a password, an expiry must be ahead.
  .openapi("UpdateSharingConfiguration", { example: { enabled: true, settings: { whitelabel: true } } });
export type UpdateSharingInput = z.infer<typeof UpdateSharingInput>;

export const SharingParams = ProjectParams.extend({
  dashboard_id: dashboardPathId,
});
