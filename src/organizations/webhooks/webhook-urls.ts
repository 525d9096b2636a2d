import { lookupDnsRecords } from "../domains/dns-challenge";
import type { Bindings } from "../../platform/env";
import { validationError } from "../../platform/errors";

/** IPv4 ranges no webhook may reach: loopback, private, link-local, shared, "this network", multicast and reserved. */
const FORBIDDEN_IPV4: [number, number][] = [
  [0x00000000, 8],
  [0x0a000000, 8],
  [0x64400000, 10],
  [0x7f000000, 8],
  [0xa9fe0000, 16],
  [0xac100000, 12],
  [0xc0a80000, 16],
  [0xe0000000, 3],
];

function ipv4Number(host: string): number | undefined {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255)) return undefined;
  return parts.reduce((value, part) => value * 256 + Number(part), 0);
}

function forbiddenIpv4(address: number): boolean {
  return FORBIDDEN_IPV4.some(([network, bits]) => Math.floor(address / 2 ** (32 - bits)) === Math.floor(network / 2 ** (32 - bits)));
}

/**
 * An IPv6 literal (URL hosts keep their brackets) that is loopback, unspecified, unique-local,
 * link-local, multicast, or an IPv4-mapped address of a forbidden IPv4 range.
 */
function forbiddenIpv6(host: string): boolean {
  const address = host.slice(1, -1).toLowerCase();
  if (address === "::1" || address === "::") return true;
  const mapped = /^::ffff:(.+)$/.exec(address);
  if (mapped) {
    const v4 = ipv4Number(mapped[1]!);
    if (v4 !== undefined) return forbiddenIpv4(v4);
    const [high, low] = mapped[1]!.split(":").map((group) => parseInt(group, 16));
    return high === undefined || low === undefined || forbiddenIpv4(high * 65536 + low);
  }
  return /^(fc|fd|fe8|fe9|fea|feb|ff)/.test(address);
}

/** Whether the host (as `URL.hostname` gives it) names a loopback, private or link-local address. */
export function isPrivateHost(host: string): boolean {
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (host.startsWith("[")) return forbiddenIpv6(host);
  const v4 = ipv4Number(host);
  return v4 !== undefined && forbiddenIpv4(v4);
}

/** Local development and tests set `WEBHOOKS_ALLOW_INSECURE`: http and loopback receivers are allowed then. */
export const insecureReceiversAllowed = (env: Pick<Bindings, "WEBHOOKS_ALLOW_INSECURE">) => Boolean(env.WEBHOOKS_ALLOW_INSECURE);

/**
 * A receiver's URL: https (http only when insecure receivers are allowed), no credentials, and
 * never a private, loopback or link-local address literal unless insecure receivers are allowed.
 */
export function assertReceiverUrl(value: string, env: Pick<Bindings, "WEBHOOKS_ALLOW_INSECURE">): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw validationError("invalid_input", "Enter a valid URL.", "url");
  }
  const insecure = insecureReceiversAllowed(env);
  const schemes = insecure ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol)) throw validationError("invalid_input", "The URL must use https.", "url");
  if (url.username || url.password) throw validationError("invalid_input", "The URL may not carry credentials.", "url");
  if (!insecure && isPrivateHost(url.hostname)) {
    throw validationError("invalid_input", "The URL may not point to a private, loopback or link-local address.", "url");
  }
  return url.toString();
}


/**
 * Whether a receiver's host may be reached: an address literal must be public; a name must
 * resolve (A and AAAA, through the DoH resolver) and every address it gives must be public, so
 * that a name pointing at an internal address is refused at delivery time too. The fetch resolves
 * the name again, so this narrows rebinding to the moments between the two lookups.
 */
export async function receiverHostAllowed(env: Pick<Bindings, "DNS_RESOLVER_URL">, host: string): Promise<boolean> {
  if (isPrivateHost(host)) return false;
  if (host.startsWith("[") || ipv4Number(host) !== undefined) return true;
  const answers = (await Promise.all((["A", "AAAA"] as const).map((type) => lookupDnsRecords(env.DNS_RESOLVER_URL, host, type)))).flat();
  return answers.length > 0 && answers.every((address) => !isPrivateHost(address.includes(":") ? `[${address}]` : address));
}
