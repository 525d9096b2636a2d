import type { Bindings } from "./env";
import { sha256Hex, toHex } from "./ids";

/**
 * Encryption at rest for secrets the API must keep but never show (batch export passwords,
 * private keys, tokens): AES-256-GCM through WebCrypto, keyed by a Worker secret, so that a
 * database dump alone reveals none of them.
 *
 * A sealed value is `enc:v1:<key id>:<base64 of IV and ciphertext>`. The key id (the first 8 hex
 * digits of the key's SHA-256) says which key sealed it, so keys can rotate: the new key goes in
 * `SECRETS_ENCRYPTION_KEY`, the old one in `SECRETS_ENCRYPTION_OLD_KEYS`, values sealed under an
 * old key still open, and every write (and the scheduled re-sealing pass) seals with the new one.
 */
const SEALED_PREFIX = "enc:v1:";
const IV_BYTES = 12;
const KEY_BYTES = 32;

/** A sealing key, and the HMAC key derived from it for `fingerprint`. */
type SealingKey = { id: string; key: CryptoKey; fingerprinting: CryptoKey };
export type Keyring = { current: SealingKey; byId: Map<string, CryptoKey>; fingerprintingById: Map<string, CryptoKey> };

const fromBase64 = (text: string) => Uint8Array.from(atob(text), (character) => character.charCodeAt(0));
const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** `variable` names where the key came from in the error, never the key itself. */
async function importKey(encoded: string, variable: string): Promise<SealingKey> {
  let raw: Uint8Array;
  try {
    raw = fromBase64(encoded);
  } catch {
    raw = new Uint8Array();
  }
  if (raw.byteLength !== KEY_BYTES) throw new Error(`${variable} is not ${KEY_BYTES} bytes in base64`);
  const key = await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
  // A key of its own for fingerprints (HKDF), not the sealing key used for two algorithms.
  const base = await crypto.subtle.importKey("raw", raw, "HKDF", false, ["deriveKey"]);
  const fingerprinting = await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(), info: new TextEncoder().encode("fingerprint") },
    base,
    { name: "HMAC", hash: "SHA-256", length: 256 },
    false,
    ["sign"],
  );
  return { id: (await sha256Hex(encoded)).slice(0, 8), key, fingerprinting };
}

async function buildKeyring(current: string, old: string[]): Promise<Keyring> {
  const keys = await Promise.all([
    importKey(current, "SECRETS_ENCRYPTION_KEY"),
    ...old.map((key) => importKey(key, "a key of SECRETS_ENCRYPTION_OLD_KEYS")),
  ]);
  return {
    current: keys[0]!,
    byId: new Map(keys.map(({ id, key }) => [id, key])),
    fingerprintingById: new Map(keys.map(({ id, fingerprinting }) => [id, fingerprinting])),
  };
}

/** Imported once per isolate and configuration, not on every request. */
const keyrings = new Map<string, Promise<Keyring>>();

export function loadKeyring(
  env: Pick<Bindings, "SECRETS_ENCRYPTION_KEY" | "SECRETS_ENCRYPTION_OLD_KEYS">,
): Promise<Keyring> {
  const current = (env.SECRETS_ENCRYPTION_KEY ?? "").trim();
  if (current === "") throw new Error("SECRETS_ENCRYPTION_KEY is not set");
  const old = (env.SECRETS_ENCRYPTION_OLD_KEYS ?? "")
    .split(",")
    .map((key) => key.trim())
    .filter((key) => key !== "");
  const cacheKey = [current, ...old].join(",");
  let keyring = keyrings.get(cacheKey);
  if (!keyring) {
    keyring = buildKeyring(current, old);
    keyrings.set(cacheKey, keyring);
  }
  return keyring;
}

/** Why no secret could be sealed or opened with this configuration; null when the keys are usable. */
export async function keyringProblem(
  env: Pick<Bindings, "SECRETS_ENCRYPTION_KEY" | "SECRETS_ENCRYPTION_OLD_KEYS">,
): Promise<string | null> {
  try {
    await loadKeyring(env);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : "the encryption keys cannot be loaded";
  }
}

export const isSealed = (value: string) => value.startsWith(SEALED_PREFIX);

/** A SQL `LIKE` pattern that values sealed under the current key match, and no other. */
export const sealedUnderCurrentKey = (keyring: Keyring) => `${SEALED_PREFIX}${keyring.current.id}:%`;

/** `context` (which row, which field) is authenticated with the value: a sealed value moved elsewhere does not open. */
export async function seal(keyring: Keyring, plaintext: string, context: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(context) },
    keyring.current.key,
    new TextEncoder().encode(plaintext),
  );
  const sealed = new Uint8Array(IV_BYTES + ciphertext.byteLength);
  sealed.set(iv);
  sealed.set(new Uint8Array(ciphertext), IV_BYTES);
  return `${SEALED_PREFIX}${keyring.current.id}:${toBase64(sealed)}`;
}

export async function unseal(keyring: Keyring, sealed: string, context: string): Promise<string> {
  const [keyId = "", payload = ""] = sealed.slice(SEALED_PREFIX.length).split(":");
  const key = keyring.byId.get(keyId);
  if (!key) throw new Error(`a secret is sealed with key ${keyId}, which is not configured`);
  const bytes = fromBase64(payload);
  const plaintext = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: bytes.subarray(0, IV_BYTES), additionalData: new TextEncoder().encode(context) },
    key,
    bytes.subarray(IV_BYTES),
  );
  return new TextDecoder().decode(plaintext);
}

/**
 * A keyed fingerprint of `text`, `<key id>:<HMAC-SHA-256 in hex>`, under the current key or the
 * key `keyId` names (null when the keyring no longer holds it). Where a plain hash of a text that
 * holds a secret (a request body with a password) would let a database dump test guesses of it,
 * this does not: the key is the Worker's secret.
 */
export async function fingerprint(keyring: Keyring, text: string, keyId = keyring.current.id): Promise<string | null> {
  const key = keyring.fingerprintingById.get(keyId);
  if (!key) return null;
  const signature = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(text));
  return `${keyId}:${toHex(signature)}`;
}
