import type { Context } from "hono";
import type { AppEnv } from "../env";
import { type ApiError, authenticationFailed, throttled } from "../errors";
import { IsolateMemory } from "../isolate-memory";
import { parseIpv6 } from "../ip-addresses";
import { secondsUntil, windowEnd } from "./windows";

/**
 * How long an isolate answers a key hash D1 did not hold without asking again. Short, so that a
 * key stored after it was looked up works within seconds; keys are minted at random, so only a
 * key presented before it existed can ever wait.
 */
export const UNKNOWN_KEY_MEMORY_MS = 5_000;
/** The period of `AUTH_FAILURE_LIMITER` (wrangler.toml). */
const REFUSED_KEYS_PERIOD_MS = 60_000;
const REMEMBERED_AT_MOST = 10_000;

const unknownKeys = new IsolateMemory<string, true>(REMEMBERED_AT_MOST);
/** Addresses past their limit of refused keys, until their window ends. */
const throttledAddresses = new IsolateMemory<string, number>(REMEMBERED_AT_MOST);

export const isKnownUnknown = (secureValue: string) => unknownKeys.get(secureValue) !== undefined;

export function rememberUnknown(secureValue: string) {
  unknownKeys.set(secureValue, true, Date.now() + UNKNOWN_KEY_MEMORY_MS);
}

/**
 * Cloudflare sets `CF-Connecting-IP` on every request from the Internet (and `wrangler dev` on
 * every local one); only a caller inside the runtime (a test, another Worker's binding) has none,
 * and it is not throttled by address.
 */
const clientAddress = (c: Context<AppEnv>) => {
  const address = c.req.header("CF-Connecting-IP");
  return address ? limitedAs(address) : undefined;
};

/**
 * What the limits count an address as: an IPv6 address by its /64, the block one subscriber is
 * given and may fill with addresses at will (else each guess could come from a new address); an
 * IPv4 address, or one written as IPv6 but mapped from IPv4, whole.
 */
export function limitedAs(address: string): string {
  const bits = address.includes(":") ? parseIpv6(address) : undefined;
  if (bits === undefined || bits >> 32n === 0xffffn) return address;
  return `${(bits >> 64n).toString(16)}::/64`;
}

/**
 * Before looking a key up in D1: 429 from an address this isolate already throttled, so that
 * a stream of random keys stops costing queries. A known key in KV never gets here.
 */
export function assertAddressMayLookUp(c: Context<AppEnv>) {
  const address = clientAddress(c);
  const until = address === undefined ? undefined : throttledAddresses.get(address);
  if (until !== undefined) throw throttled(secondsUntil(until));
}

/**
 * The answer to a refused credential (a key; an invite or share token, whose `answer` is a 404):
 * `answer`, or 429 once its address is past its limit of refusals. Guessing any kind of secret
 * counts against the same limit.
 */
export async function refusal(c: Context<AppEnv>, answer: () => ApiError = authenticationFailed): Promise<ApiError> {
  const address = clientAddress(c);
  if (address === undefined) return answer();
  const throttledUntil = throttledAddresses.get(address);
  if (throttledUntil !== undefined) return throttled(secondsUntil(throttledUntil));
  // Counted per Cloudflare location, without a network round trip (the binding's own cache).
  const { success } = await c.env.AUTH_FAILURE_LIMITER.limit({ key: address });
  if (success) return answer();
  const until = windowEnd(Date.now(), REFUSED_KEYS_PERIOD_MS);
  throttledAddresses.set(address, until, until);
  return throttled(secondsUntil(until));
}

/**
 * Counts a request that costs someone else (an e-mail sent on the caller's word) as a refusal,
 * whatever its answer: 429 once the address is past its limit.
 */
export async function countAsRefusal(c: Context<AppEnv>) {
  const refused = await refusal(c);
  if (refused.status === 429) throw refused;
}
