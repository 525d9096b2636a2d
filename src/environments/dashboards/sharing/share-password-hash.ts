import { constantTimeEqual, fromBase64Url, toBase64Url } from "../../../platform/ids";

/**
 * Share passwords are stored as PBKDF2-SHA-256 hashes, each with its own random salt: 100,000
 * iterations, the most Workers' WebCrypto allows, so that a leaked table is slow to guess from.
 */
const ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BITS = 256;
const SCHEME = "pbkdf2-sha256";

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<string> {
  const material = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false, [
    "deriveBits",
  ]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations },
    material,
    HASH_BITS,
  );
  return toBase64Url(new Uint8Array(bits));
}

/** `pbkdf2-sha256$<iterations>$<salt>$<hash>`, salt and hash in base64url. */
export async function hashSharePassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  return `${SCHEME}$${ITERATIONS}$${toBase64Url(salt)}$${await derive(password, salt, ITERATIONS)}`;
}

/** Whether `password` is the one `stored` hashes; the hashes are compared in constant time. */
export async function sharePasswordMatches(password: string, stored: string): Promise<boolean> {
  const [scheme, iterations, salt, hash] = stored.split("$");
  if (scheme !== SCHEME || !iterations || !salt || !hash) return false;
  return constantTimeEqual(await derive(password, fromBase64Url(salt), Number(iterations)), hash);
}
