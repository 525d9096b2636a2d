import { permissionDenied, validationError } from "../../platform/errors";
import { isAdmin, MembershipLevel } from "../../platform/levels";
import type { OrganizationContext } from "../../platform/env";
import type { MembershipRow } from "./members.queries";

type Caller = Pick<OrganizationContext, "membershipId" | "level">;

const isLastOwner = (target: MembershipRow, ownerCount: number) =>
  target.level === MembershipLevel.owner && ownerCount <= 1;

/**
 * Who may change or remove whom, with PostHog's messages. Only the last owner themself can reach "demoting the last
 * owner" (anyone else editing them is below them); it is answered before the own-level rule so
 * that the reason is the one the caller needs.
 */
export function assertCanChangeLevel(caller: Caller, target: MembershipRow, level: number, ownerCount: number) {
  if (target.id === caller.membershipId) {
    if (level !== MembershipLevel.owner && isLastOwner(target, ownerCount)) {
      throw validationError(
        "invalid_input",
        "Cannot demote the organization's only owner. Make another member owner first.",
        "level",
      );
    }
    throw permissionDenied("You can't change your own access level.");
  }
  assertCanEditOther(caller, target);
  // Past the admin check, the only level above the caller's is owner, granted only by owners.
  if (level > caller.level) {
    throw permissionDenied("You can only make another member owner if you're this organization's owner.");
  }
}

/** Anyone may leave, except the last owner; removing others follows the editing rules. */
export function assertCanRemove(caller: Caller, target: MembershipRow, ownerCount: number) {
  if (target.id !== caller.membershipId) return assertCanEditOther(caller, target);
  if (isLastOwner(target, ownerCount)) {
    throw validationError(
      "invalid_input",
      "Cannot leave the organization as its only owner. Make another member owner first.",
    );
  }
}

export function assertCanEditOther(caller: Caller, target: MembershipRow) {
  if (target.id === caller.membershipId) return;
  if (!isAdmin(caller.level)) throw permissionDenied("You can only edit others if you are an admin.");
  if (target.level > caller.level) throw permissionDenied("You can only edit others with level lower or equal to you.");
}
