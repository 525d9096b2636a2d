import { z } from "@hono/zod-openapi";
import { boundedText, idList } from "../../platform/input-limits";
import { MembershipLevel } from "../../platform/levels";
import { OrganizationParams, organizationRead, routeReads } from "../../platform/route-context";
import { peekJsonBody } from "../../platform/request-body";
import { paginated, PaginationQuery } from "../../platform/pagination";
import { noStore } from "../../platform/response-headers";
import { apiRoute, conflictResponse, jsonBody, jsonResponse } from "../../platform/route";
import { UserBasic } from "../../users/user-basic";
import { MembershipLevelField } from "../membership-level-field";
import { EMAIL_STATUSES } from "./invite-emails";
import { inputsOf, inviteContextStatements, type PreloadedInviteContext } from "./invites.queries";
import { requireInvitePermission } from "./invites.rules";
import { Timestamp } from "../../platform/timestamps";

export const MAX_BULK_INVITES = 20;

const InviteParams = OrganizationParams.extend({ id: z.string().openapi({ description: "Invite id." }) });

export const ProjectAccess = z.object({
  id: z.number().int().openapi({ description: "Project id." }),
  level: z.enum(["member", "admin"]),
});

export const InviteInput = z
  .object({
    // Lower-cased whole (PostHog lower-cases only the domain), so that one address is one invitee and one account.
    target_email: z
      .string()
      .trim()
      .toLowerCase()
      .max(254)
      .pipe(z.email())
      .openapi({ type: "string", format: "email", maxLength: 254 }),
    first_name: z.string().trim().max(30).optional().default(""),
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
      "The secret that accepts the invite (`POST /api/signup/{token}`). Shown here once, never listed; " +
      "also in the invite e-mail's accept link.",
  }),
}).openapi("CreatedInvite");
export type CreatedInvite = z.infer<typeof CreatedInvite>;

export const listInvites = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}/invites",
  scope: "organization_member:read",
  context: "organization",
  tags: ["invites"],
  summary: "List the organization's invites, newest first",
  request: { params: OrganizationParams, query: PaginationQuery },
  responses: { 200: jsonResponse(paginated(Invite), "A page of invites") },
});

/**
 * The organization and what validating the invites needs, as the body will read them, in one
 * round trip: the write is the second.
 */
const inviteReads = (schema: z.ZodType<InviteInput | InviteInput[]>) =>
  routeReads(async (c): Promise<PreloadedInviteContext> => {
    const body = await peekJsonBody(c, schema);
    const read = organizationRead(c);
    const statements = inviteContextStatements(read.db, read.organizationId, c.var.actor.userId, inputsOf(body));
    return { body, results: await read.batch(statements) };
  });
export const oneInviteReads = inviteReads(InviteInput);
export const bulkInviteReads = inviteReads(BulkInviteInput);

export const createInvite = apiRoute({
  method: "post",
  path: "/api/organizations/{organization_id}/invites",
  scope: "organization_member:write",
  context: "organization",
  reads: oneInviteReads,
  middleware: [requireInvitePermission, noStore],
  tags: ["invites"],
  summary: "Invite someone by e-mail; replaces earlier invites for the same e-mail",
  request: { params: OrganizationParams, body: jsonBody(InviteInput) },
  responses: { 201: jsonResponse(CreatedInvite, "The invite, with its acceptance token") },
});

export const createInvitesInBulk = apiRoute({
  method: "post",
  path: "/api/organizations/{organization_id}/invites/bulk",
  scope: "organization_member:write",
  context: "organization",
  reads: bulkInviteReads,
  middleware: [requireInvitePermission, noStore],
  tags: ["invites"],
  summary: "Invite up to 20 people at once: all are created, or none",
  request: { params: OrganizationParams, body: jsonBody(BulkInviteInput) },
  responses: {
    201: jsonResponse(z.array(CreatedInvite), "The invites, in the order sent, with their acceptance tokens"),
  },
});

export const deleteInvite = apiRoute({
  method: "delete",
  path: "/api/organizations/{organization_id}/invites/{id}",
  scope: "organization_member:write",
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["invites"],
  summary: "Cancel an invite (admin or owner)",
  request: { params: InviteParams },
  responses: { 204: { description: "Deleted" } },
});

export const resendInviteEmail = apiRoute({
  method: "post",
  path: "/api/organizations/{organization_id}/invites/{id}/resend_email",
  scope: "organization_member:write",
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["invites"],
  summary: "Send again an invite e-mail that failed (admin or owner): the same e-mail, its attempts from the start",
  request: { params: InviteParams },
  responses: { 202: jsonResponse(Invite, "The invite, its e-mail pending again"), 409: conflictResponse },
});
