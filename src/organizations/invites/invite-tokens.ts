import { randomBase62, sha256Hex } from "../../platform/ids";

/**
 * An invite's id is seen by every member who lists invites; accepting one needs this secret
 * instead. Only its SHA-256 is stored: the value reaches the inviter once, in the response that
 * creates the invite, and the invitee in the e-mail's accept link.
 */
const INVITE_TOKEN_PREFIX = "phi_";
const INVITE_TOKEN_PATTERN = /^phi_[0-9A-Za-z]{40,}$/;

export async function mintInviteToken() {
  const value = `${INVITE_TOKEN_PREFIX}${randomBase62(44)}`;
  return { value, hash: await sha256Hex(value) };
}

/** The stored hash a presented token would have, or null for anything that is not a token. */
export async function inviteTokenHash(presented: string): Promise<string | null> {
  return INVITE_TOKEN_PATTERN.test(presented) ? sha256Hex(presented) : null;
}
