import { constantTimeEqual, toBase64Url } from "../platform/ids";

/** PostHog's cookie name; its value is `<credential id>.<expiry, seconds>.<signature>`. */
export const SHARE_SESSION_COOKIE = "posthog_sharing_token";
export const SHARE_SESSION_SECONDS = 24 * 60 * 60;

/**
 * What a session was opened with: a share password (its id, keyed by its stored hash) or a
 * verified allow-listed address (`viewerCredential`). The id travels in the session; the secret,
 * which never leaves the database, keys its signature.
 */
export type SessionCredential = { id: string; secret: string };

/**
 * HMAC-SHA-256 keyed by the credential's secret: deleting the password, or refreshing the link's
 * token, ends every session it opened.
 */
async function signature(accessToken: string, credential: SessionCredential, expiresAt: number) {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(credential.secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const message = new TextEncoder().encode(`${accessToken}.${credential.id}.${expiresAt}`);
  return toBase64Url(new Uint8Array(await crypto.subtle.sign("HMAC", key, message)));
}

/** A password as the credential of its sessions. */
export const passwordCredential = (password: { id: string; passwordHash: string }) => ({
  id: password.id,
  secret: password.passwordHash,
});

/**
 * An allow-listed address as the credential of its viewers' sessions, signed with the link's viewer
 * secret: the address, in base64url (no `.`), is the session's id, so taking it off the list ends
 * its sessions and no other.
 */
export const viewerCredential = (email: string, viewerSessionSecret: string) => ({
  id: `e${toBase64Url(new TextEncoder().encode(email))}`,
  secret: viewerSessionSecret,
  email,
});

/** A session on the link `accessToken`, opened with `credential`, for a day from `nowSeconds`. */
export async function newShareSession(accessToken: string, credential: SessionCredential, nowSeconds: number) {
  const expiresAt = nowSeconds + SHARE_SESSION_SECONDS;
  return `${credential.id}.${expiresAt}.${await signature(accessToken, credential, expiresAt)}`;
}

/**
 * The credential `session` was signed with for this link, among the link's current ones, if it
 * is unexpired; else undefined.
 */
export async function shareSessionCredential<C extends SessionCredential>(
  session: string,
  accessToken: string,
  credentials: C[],
  nowSeconds: number,
): Promise<C | undefined> {
  const [credentialId, expiry, signed] = session.split(".");
  const credential = credentials.find(({ id }) => id === credentialId);
  const expiresAt = Number(expiry);
  if (!credential || !signed || !Number.isInteger(expiresAt) || expiresAt <= nowSeconds) return undefined;
  return constantTimeEqual(await signature(accessToken, credential, expiresAt), signed) ? credential : undefined;
}
