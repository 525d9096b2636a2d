/**
 * IP addresses as bits, and whether an address is globally reachable. Text forms differ (`::1`,
 * `0:0:0:0:0:0:0:1`, `::127.0.0.1` and `::7f00:1` are each one address), so addresses are
 * compared as numbers, never as strings.
 */
export type IpAddress = { version: 4 | 6; bits: bigint };

const WIDTH = { 4: 32, 6: 128 } as const;
const LOW_32 = 0xffff_ffffn;

/**
 * Dotted-quad IPv4 only (`URL.hostname` and DNS answers give that form). A leading zero is
 * refused: `010.0.0.1` is 8.0.0.1 to some parsers and 10.0.0.1 to others.
 */
function parseIpv4(text: string): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((part) => /^(0|[1-9]\d{0,2})$/.test(part) && Number(part) <= 255))
    return undefined;
  return parts.reduce((bits, part) => (bits << 8n) | BigInt(part), 0n);
}

/** An IPv6 text with a dotted IPv4 tail (`::ffff:1.2.3.4`) as the same address in hex groups. */
function withHexTail(text: string): string | undefined {
  const dotted = /^(.*:)([^:]*\.[^:]*)$/.exec(text);
  if (!dotted) return text;
  const ipv4 = parseIpv4(dotted[2]!);
  return ipv4 === undefined ? undefined : `${dotted[1]}${(ipv4 >> 16n).toString(16)}:${(ipv4 & 0xffffn).toString(16)}`;
}

/**
 * RFC 4291 text: eight groups of 1-4 hex digits, `::` standing once for one or more zero groups,
 * the last 32 bits optionally dotted. A zone id (`fe80::1%eth0`) is refused: it only ever names
 * a link-local scope, which no receiver may be in.
 */
export function parseIpv6(text: string): bigint | undefined {
  if (text.includes("%")) return undefined;
  const hex = withHexTail(text);
  const halves = hex?.split("::");
  if (!halves || halves.length > 2) return undefined;
  const [head, tail] = halves.map((half) => (half === "" ? [] : half.split(":")));
  const written = [...head!, ...(tail ?? [])];
  if (!written.every((group) => /^[0-9a-f]{1,4}$/i.test(group))) return undefined;
  const missing = 8 - written.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head!, ...Array<string>(tail === undefined ? 0 : missing).fill("0"), ...(tail ?? [])];
  return groups.reduce((bits, group) => (bits << 16n) | BigInt(parseInt(group, 16)), 0n);
}

/** An address in text, either version (IPv6 without brackets); undefined for anything else. */
export function parseIpAddress(text: string): IpAddress | undefined {
  const bits = text.includes(":") ? parseIpv6(text) : parseIpv4(text);
  if (bits === undefined) return undefined;
  return { version: text.includes(":") ? 6 : 4, bits };
}

type Range = { version: 4 | 6; network: bigint; length: number };

/** `"10.0.0.0/8"` as a range; the tables below are written in the registries' own notation. */
function range(cidr: string): Range {
  const [text, length] = cidr.split("/");
  const address = parseIpAddress(text!);
  if (!address) throw new Error(`Not an address range: ${cidr}`);
  return { version: address.version, network: address.bits, length: Number(length) };
}

function inRange(address: IpAddress, { version, network, length }: Range): boolean {
  if (address.version !== version) return false;
  const hostBits = BigInt(WIDTH[version] - length);
  return address.bits >> hostBits === network >> hostBits;
}

const inAny = (address: IpAddress, ranges: Range[]) => ranges.some((candidate) => inRange(address, candidate));
const ranges = (cidrs: string[]) => cidrs.map(range);

/*
 * The tables follow the "Globally Reachable" column of IANA's special-purpose address registries
 * (RFC 6890, RFC 8190): https://www.iana.org/assignments/iana-ipv4-special-registry/ and
 * https://www.iana.org/assignments/iana-ipv6-special-registry/. Every block whose column is not
 * True is refused, as are multicast, the deprecated IPv6 site-local block (RFC 3879) and any
 * IPv6 address outside 2000::/3, the only space allocated as global unicast
 * (https://www.iana.org/assignments/ipv6-address-space/).
 */

/** IPv4 blocks that are not globally reachable. */
const IPV4_NOT_GLOBAL = ranges([
  "0.0.0.0/8", // "this network"
  "10.0.0.0/8", // private use
  "100.64.0.0/10", // shared address space (carrier-grade NAT)
  "127.0.0.0/8", // loopback
  "169.254.0.0/16", // link local (cloud metadata services)
  "172.16.0.0/12", // private use
  "192.0.0.0/24", // IETF protocol assignments (but see IPV4_GLOBAL)
  "192.0.2.0/24", // documentation
  "192.88.99.0/24", // deprecated 6to4 relay anycast
  "192.168.0.0/16", // private use
  "198.18.0.0/15", // benchmarking
  "198.51.100.0/24", // documentation
  "203.0.113.0/24", // documentation
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, and 255.255.255.255 (limited broadcast)
]);
/** Globally reachable exceptions inside the blocks above: PCP and TURN anycast. */
const IPV4_GLOBAL = ranges(["192.0.0.9/32", "192.0.0.10/32"]);

/** IPv6 blocks that are not globally reachable. */
const IPV6_NOT_GLOBAL = ranges([
  "::/128", // unspecified
  "::1/128", // loopback
  "64:ff9b:1::/48", // local-use IPv4/IPv6 translation
  "100::/64", // discard-only
  "2001::/23", // IETF protocol assignments (but see IPV6_GLOBAL, and Teredo in EMBEDDINGS)
  "2001:db8::/32", // documentation
  "3fff::/20", // documentation
  "5f00::/16", // segment routing (SRv6) SIDs
  "fc00::/7", // unique local
  "fe80::/10", // link local
  "fec0::/10", // site local, deprecated
  "ff00::/8", // multicast
]);
/** Globally reachable blocks inside 2001::/23: anycast services, AMT, AS112, ORCHIDv2, drone DETs. */
const IPV6_GLOBAL = ranges([
  "2001:1::1/128",
  "2001:1::2/128",
  "2001:1::3/128",
  "2001:3::/32",
  "2001:4:112::/48",
  "2001:20::/28",
  "2001:30::/28",
]);
const IPV6_GLOBAL_UNICAST = range("2000::/3");

/**
 * IPv6 blocks whose addresses carry IPv4 addresses that traffic ends up at: such an address is
 * judged by the IPv4 addresses it carries. Teredo (whose registry row says neither True nor
 * False) carries its server in bits 32-63 and its client, inverted, in the last 32 bits.
 */
const EMBEDDINGS: [Range, (bits: bigint) => bigint[]][] = [
  [range("::ffff:0:0/96"), (bits) => [bits & LOW_32]], // IPv4-mapped
  [range("::/96"), (bits) => [bits & LOW_32]], // IPv4-compatible (deprecated)
  [range("64:ff9b::/96"), (bits) => [bits & LOW_32]], // NAT64, well-known prefix
  [range("2002::/16"), (bits) => [(bits >> 80n) & LOW_32]], // 6to4
  [range("2001::/32"), (bits) => [(bits >> 64n) & LOW_32, ~bits & LOW_32]], // Teredo
];

const ipv4 = (bits: bigint): IpAddress => ({ version: 4, bits });

function ipv4GloballyReachable(address: IpAddress): boolean {
  return inAny(address, IPV4_GLOBAL) || !inAny(address, IPV4_NOT_GLOBAL);
}

function ipv6GloballyReachable(address: IpAddress): boolean {
  const embedding = EMBEDDINGS.find(([block]) => inRange(address, block));
  if (embedding) return embedding[1](address.bits).every((bits) => ipv4GloballyReachable(ipv4(bits)));
  if (inAny(address, IPV6_GLOBAL)) return true;
  return !inAny(address, IPV6_NOT_GLOBAL) && inRange(address, IPV6_GLOBAL_UNICAST);
}

/** Whether traffic to the address may leave for the public internet (nothing private, local or reserved). */
export function isGloballyReachable(address: IpAddress): boolean {
  return address.version === 4 ? ipv4GloballyReachable(address) : ipv6GloballyReachable(address);
}
