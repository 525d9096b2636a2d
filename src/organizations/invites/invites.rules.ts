import { createMiddleware } from "hono/factory";
import type { PrivateProjectAccess } from "../../db/schema";
import type { AppEnv } from "../../platform/env";
import { insufficientLevel, permissionDenied, validationError } from "../../platform/errors";
import { isAdmin } from "../../platform/levels";
import { grantableLevel } from "../../platform/access-rules/grantable-level";
import type { InviteContext, InviteRow } from "./invites.queries";
import type { InviteInput } from "./invites.schema";

/** Names a field of the invite at `index`: `target_email` for one invite, `6.target_email` in bulk. */
export type AttrOf = (index: number, field: string) => string;

type ProjectAccessItem = NonNullable<PrivateProjectAccess>[number];

const PROJECT_NOT_INVITABLE =
  "Project does not exist on this organization, or it is private and you do not have access to it.";
const accessRank = { none: 0, member: 1, admin: 2 } as const;

/** The organization setting `members_can_invite: false` leaves inviting to admins and owners. */
export const requireInvitePermission = createMiddleware<AppEnv>(async (c, next) => {
  const { membersCanInvite, level } = c.var.organization;
  if (!membersCanInvite && !isAdmin(level)) throw insufficientLevel();
  await next();
});

/** Two invites in one bulk request for one address would replace each other: refused whole. */
export function assertDistinctEmails(inputs: InviteInput[], attrOf: AttrOf) {
  const seen = new Set<string>();
  inputs.forEach((input, index) => {
    if (seen.has(input.target_email)) {
      throw validationError(
        "unique",
        "This email address is already invited earlier in this request.",
        attrOf(index, "target_email"),
      );
    }
    seen.add(input.target_email);
  });
}

/**
 * The checks of one invite as it will be stored, in PostHog's order (level, project access,
 * membership), but first whether the caller may replace the open invites for the e-mail: a
 * project that only another's invite names, merged in by `combine_pending_invites`, must not
 * change the answer of a caller who may not replace it.
 */
export function assertInvitable(
  input: InviteInput,
  inviterLevel: number,
  context: InviteContext,
  attr: (field: string) => string,
) {
  if (input.level > inviterLevel) {
    throw permissionDenied("You cannot invite a user with a higher permission level than your own.");
  }
  assertReplaceable(context.pendingByEmail.get(input.target_email) ?? [], inviterLevel, context.inviter.id);
  for (const item of input.private_project_access ?? []) {
    assertProjectInvitable(item, inviterLevel, context, attr("private_project_access"));
  }
  if (context.memberEmails.has(input.target_email)) {
    throw validationError(
      "invalid_input",
      "A user with this email address already belongs to the organization.",
      attr("target_email"),
    );
  }
}

/**
 * A new invite replaces the open ones for its e-mail, which cancels them, and cancelling is for
 * admins: below admin, only one's own invites may be replaced (`replaceInvites` holds to it in the
 * write too).
 */
function assertReplaceable(pending: InviteRow[], inviterLevel: number, inviterId: number) {
  if (isAdmin(inviterLevel) || pending.every((invite) => invite.createdById === inviterId)) return;
  throw permissionDenied("Only an admin can replace an invite someone else sent to this e-mail address.");
}

/**
 * A project of this organization, at a level the inviter may grant there (`grantableLevel`): a
 * project the inviter cannot see is not invitable at all.
 */
function assertProjectInvitable(item: ProjectAccessItem, inviterLevel: number, context: InviteContext, attr: string) {
  const project = context.projects.get(item.id);
  if (!project) throw validationError("invalid_input", PROJECT_NOT_INVITABLE, attr);
  const granted = grantableLevel(inviterLevel, project.inviterRule, item.level);
  if (granted === null) throw validationError("invalid_input", PROJECT_NOT_INVITABLE, attr);
  if (granted !== item.level) {
    throw validationError(
      "invalid_input",
      "You cannot invite to a private project with a higher level than your own.",
      attr,
    );
  }
}

/** One entry per project at its highest level, in first-seen order; none is null, as PostHog stores it. */
function mergeProjectAccess(lists: PrivateProjectAccess[]): PrivateProjectAccess {
  const merged = new Map<number, ProjectAccessItem>();
  for (const item of lists.flatMap((list) => list ?? [])) {
    const known = merged.get(item.id);
    if (!known || accessRank[item.level] > accessRank[known.level])
      merged.set(item.id, { id: item.id, level: item.level });
  }
  return merged.size > 0 ? [...merged.values()] : null;
}

/**
 * The invite as it will be stored. `combine_pending_invites`: the highest level and the union of
 * access of the unexpired pending invites, which the inviter's rules then apply to, so that
 * combining can never grant more than the inviter could grant directly. A pending invite's
 * project that `kept` says no to (deleted, being deleted, or hidden from the inviter) is left out,
 * not refused: the caller never named it.
 */
export function combineWithPending(
  input: InviteInput,
  pending: InviteRow[],
  kept: (projectId: number) => boolean,
): InviteInput {
  return {
    ...input,
    level: Math.max(input.level, ...pending.map((invite) => invite.level)) as InviteInput["level"],
    private_project_access: mergeProjectAccess([
      input.private_project_access,
      ...pending.map((invite) => invite.privateProjectAccess?.filter((item) => kept(item.id)) ?? null),
    ]),
  };
}
