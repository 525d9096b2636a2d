import { constantTimeEqual, toBase64Url } from "../platform/ids";

/** PostHog's cookie name; its value is `<password id>.<expiry, seconds>.<signature>`. */
export const SHARE_SESSION_COOKIE = "posthog_sharing_token";
export const SHARE_SESSION_SECONDS = 24 * 60 * 60;

type StoredPassword = { id: string; passwordHash: string };

/**
 * HMAC-SHA-256 keyed by the password's stored hash (a secret that never leaves the database):
 * deleting the password, or refreshing the link's token, ends every session it opened.
 */
async function signature(accessToken: string, password: StoredPassword, expiresAt: number) {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(password.passwordHash),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const message = new TextEncoder().encode(`${accessToken}.${password.id}.${expiresAt}`);
  return toBase64Url(new Uint8Array(await crypto.subtle.sign("HMAC", key, message)));
}

/** A session on the link `accessToken`, opened with `password`, for a day from `nowSeconds`. */
export async function newShareSession(accessToken: string, password: StoredPassword, nowSeconds: number) {
  const expiresAt = nowSeconds + SHARE_SESSION_SECONDS;
  return `${password.id}.${expiresAt}.${await signature(accessToken, password, expiresAt)}`;
}

/** Whether `session` was signed for this link with one of its current passwords, and is unexpired. */
export async function isShareSessionValid(
  session: string,
  accessToken: string,
  passwords: StoredPassword[],
  nowSeconds: number,
) {
  const [passwordId, expiry, signed] = session.split(".");
  const password = passwords.find(({ id }) => id === passwordId);
  const expiresAt = Number(expiry);
  if (!password || !signed || !Number.isInteger(expiresAt) || expiresAt <= nowSeconds) return false;
  return constantTimeEqual(await signature(accessToken, password, expiresAt), signed);
}
