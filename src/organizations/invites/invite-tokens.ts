import { randomBase62, sha256Hex } from "../../platform/ids";

/**
 * An invite's id is seen by every member who lists invites; accepting one needs a secret token
 * instead. Only their SHA-256 is stored. An invite has one the inviter is answered once, in the
 * response that creates it, to hand over; and, when an e-mail is composed, one that only the
 * e-mail's accept link carries, whose use proves the address.
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
