import { visibleName } from "../../platform/names";
import { z } from "@hono/zod-openapi";
import { boundedText, emailAddress, idList } from "../../platform/input-limits";
import { MembershipLevel } from "../../platform/levels";
import { OrganizationParams } from "../../platform/route-context";
import { UserBasic } from "../../platform/user-basic";
import { MembershipLevelField } from "../membership-level-field";
import { Timestamp } from "../../platform/timestamps";

const MAX_BULK_INVITES = 20;

/**
 * An invite's e-mail, as `email_status` says it:
 * - `pending`: written with the invite and queued; retried while the transport fails;
 * - `sent`: the transport accepted it;
 * - `failed`: every attempt failed; the dead-letter queue's consumer recorded it;
 * - `not_sent`: the invite was made with `send_email: false`;
 * - `not_configured`: `send_email` was true but no transport is configured (`EMAIL_TRANSPORT_URL` empty).
 */
const EMAIL_STATUSES = ["pending", "sent", "failed", "not_sent", "not_configured"] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

export const InviteParams = OrganizationParams.extend({ id: z.string().openapi({ description: "Invite id." }) });

const ProjectAccess = z.object({
  id: z.number().int().openapi({ description: "Project id." }),
  level: z.enum(["member", "admin"]),
});

export const InviteInput = z
  .object({
    // One address is one invitee and one account.
    target_email: emailAddress(),
    first_name: visibleName(z.string().trim().max(30)).optional().default(""),
    level: MembershipLevelField.optional().default(MembershipLevel.member),
    message: boundedText().nullable().optional().default(null),
    private_project_access: idList(ProjectAccess)
      .nullable()
      .optional()
      .default(null)
      .openapi({ description: "Private projects the invitee is granted on joining; each in this organization." }),
    send_email: z.boolean().optional().default(true),
    combine_pending_invites: z.boolean().optional().default(false).openapi({
      description: "Merge the unexpired pending invites for this e-mail: highest level, union of project access.",
    }),
  })
  .openapi("InviteInput");
export type InviteInput = z.infer<typeof InviteInput>;

/** Counted before any item is validated, as PostHog does, so that the count error comes first. */
export const BulkInviteInput = z
  .array(z.unknown())
  .refine((items) => items.length > 0, { error: "Send at least one invite.", params: { code: "min_length" } })
  .refine((items) => items.length <= MAX_BULK_INVITES, {
    error: `A maximum of ${MAX_BULK_INVITES} invites can be sent in a single request.`,
    params: { code: "max_length" },
  })
  .pipe(z.array(InviteInput))
  .openapi({
    description: `1 to ${MAX_BULK_INVITES} invites, created all together or not at all.`,
    items: { $ref: "#/components/schemas/InviteInput" },
    minItems: 1,
    maxItems: MAX_BULK_INVITES,
  });

export const Invite = z
  .object({
    id: z.string().uuid(),
    target_email: z.string(),
    first_name: z.string(),
    emailing_attempt_made: z.boolean(),
    email_status: z.enum(EMAIL_STATUSES).openapi({
      description:
        "The invite e-mail: `pending` (queued, or being retried), `sent` (the transport accepted it), `failed` " +
        "(every attempt failed), `not_sent` (`send_email` was false), `not_configured` (no e-mail transport).",
    }),
    level: MembershipLevelField,
    is_expired: z.boolean(),
    created_by: UserBasic.nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
    message: z.string().nullable(),
    private_project_access: z.array(ProjectAccess).nullable(),
    send_email: z.boolean(),
    combine_pending_invites: z.boolean(),
  })
  .openapi("Invite");
export type Invite = z.infer<typeof Invite>;

/** The invite as its creator receives it: once, with the secret that accepts it. */
export const CreatedInvite = Invite.extend({
  token: z.string().openapi({
    description:
      "The secret that accepts the invite (`POST /api/signup/{token}`), to hand over. Shown here once, " +
      "never listed. The invite e-mail carries a token of its own, whose use proves the address.",
  }),
}).openapi("CreatedInvite");
export type CreatedInvite = z.infer<typeof CreatedInvite>;
