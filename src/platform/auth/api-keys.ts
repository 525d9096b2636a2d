// The extension lets `npm run bootstrap` (plain Node) import this module as the Worker does.
import { randomBase62, sha256Hex } from "../ids.ts";

export const API_KEY_PREFIX = "phx_";
/** An organization's service key; PostHog's own prefixes (`phc_`, `phx_`, `phs_`, `pha_`) are not reused. */
export const SERVICE_KEY_PREFIX = "pho_";
/** The body field and query parameter PostHog also takes a personal API key from. */
export const KEY_PARAMETER = "personal_api_key";
const API_KEY_PATTERN = /^ph[xo]_[0-9A-Za-z]{40,}$/;

/** A new key; the value leaves the server once, in the response that creates it. */
export async function mintApiKey(prefix: string = API_KEY_PREFIX) {
  const value = `${prefix}${randomBase62(44)}`;
  return { value, secureValue: await sha256Hex(value), maskValue: maskApiKey(value) };
}

export const isWellFormedApiKey = (value: string) => API_KEY_PATTERN.test(value);

export const isServiceKey = (value: string) => value.startsWith(SERVICE_KEY_PREFIX);

const maskApiKey = (value: string) => `${value.slice(0, 4)}...${value.slice(-4)}`;

/**
 * A key's KV entry. Versioned by what an entry holds: a deploy that changes it (v2: whether the
 * value presented is one a roll replaced) reads every key from D1 again, rather than trusting
 * entries written without the new field.
 */
export const apiKeyCacheKey = (secureValue: string) => `api_key:v2:${secureValue}`;
