const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** The last UUID's time and counter: ids minted in one millisecond still sort in minting order. */
const clock = { milliseconds: 0, counter: 0 };
const COUNTER_MAX = 0xfff;

/**
 * The 12-bit `rand_a` counter of RFC 9562 (method 1): it starts at a random value below half its
 * range in each new millisecond and counts up within one; when it runs out, the next ids borrow the
 * next millisecond. workerd's clock does not move during a request, so this is what orders the
 * rows one request creates (six bulk invites, a template's tiles).
 */
function tick(now: number): { milliseconds: number; counter: number } {
  if (now > clock.milliseconds) {
    clock.milliseconds = now;
    clock.counter = crypto.getRandomValues(new Uint16Array(1))[0]! & 0x7ff;
  } else if (clock.counter < COUNTER_MAX) {
    clock.counter += 1;
  } else {
    clock.milliseconds += 1;
    clock.counter = 0;
  }
  return { ...clock };
}

/** UUID version 7: time-ordered and, from one isolate, strictly increasing. */
export function uuid7(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const { milliseconds, counter } = tick(Date.now());
  let timestamp = milliseconds;
  for (let index = 5; index >= 0; index -= 1) {
    bytes[index] = timestamp & 0xff;
    timestamp = Math.floor(timestamp / 256);
  }
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = toHex(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Uniform base62 characters (rejection sampling: no modulo bias). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** A new user's `distinct_id`, as PostHog's analytics knows them. */
export const newDistinctId = () => randomBase62(43);

/** A new project's ingestion token (PostHog's `phc_` form) and live-events token. */
export const newProjectTokens = () => ({
  apiToken: `phc_${randomBase62(43)}`,
  liveEventsToken: randomUrlSafeToken(24),
});

export function randomUrlSafeToken(byteLength: number): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(byteLength)));
}

/** base64url without padding (RFC 4648 section 5). */
export const toBase64Url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");

/** The bytes of base64url text; throws on text that is not base64. */
export const fromBase64Url = (text: string) =>
  Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (character) => character.charCodeAt(0));

/** Bytes as lower-case hex, two digits each. */
export const toHex = (bytes: ArrayBuffer | Uint8Array) =>
  [...new Uint8Array(bytes)].map((byte) => byte.toString(16).padStart(2, "0")).join("");

export async function sha256Hex(value: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value)));
}

export function constantTimeEqual(left: string, right: string): boolean {
  const encoder = new TextEncoder();
  const a = encoder.encode(left);
  const b = encoder.encode(right);
  if (a.byteLength !== b.byteLength) return false;
  return crypto.subtle.timingSafeEqual(a, b);
}

export const nowIso = () => new Date().toISOString();
