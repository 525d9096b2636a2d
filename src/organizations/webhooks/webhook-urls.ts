import { lookupDnsRecords } from "../../platform/dns";
import { isExplicitYes, type Bindings } from "../../platform/env";
import { validationError } from "../../platform/errors";
import { isGloballyReachable, parseIpAddress, type IpAddress } from "../../platform/ip-addresses";

/**
 * Names kept for local use, which no public resolver answers but a local one may point at
 * internal hosts: localhost (RFC 6761), .local (mDNS, RFC 6762), home.arpa (RFC 8375) and
 * .internal (reserved by ICANN for private use).
 */
const LOCAL_NAMES = ["localhost", "local", "home.arpa", "internal"];

/**
 * Receivers listen on the web's ports only: with any port allowed, the `test` endpoint's
 * per-attempt errors would tell which ports of a host are open.
 */
const RECEIVER_PORTS = ["443", "80"];

/** The host as compared: a fully qualified name's trailing dot (`localhost.`) is the same host. */
const withoutTrailingDot = (host: string) => host.replace(/\.+$/, "");

/** The address a host (as `URL.hostname` gives it, IPv6 in brackets) names literally, if it does. */
function literalAddress(host: string): IpAddress | undefined {
  return parseIpAddress(host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host);
}

const isLocalName = (name: string) => LOCAL_NAMES.some((local) => name === local || name.endsWith(`.${local}`));

/**
 * Whether the host is refused without a lookup: an address that is not globally reachable,
 * however it is written, or a name kept for local use.
 */
function isPrivateHost(host: string): boolean {
  const bare = withoutTrailingDot(host);
  const address = literalAddress(bare);
  return address ? !isGloballyReachable(address) : isLocalName(bare);
}

/** Whether a DNS answer is an address, read by the same parser as literals, that is globally reachable. */
function isPublicAnswer(answer: string): boolean {
  const address = parseIpAddress(answer);
  return address !== undefined && isGloballyReachable(address);
}

/** The URL's port, its scheme's default (the empty string) included, is one of `RECEIVER_PORTS`. */
const onReceiverPort = (url: URL) => url.port === "" || RECEIVER_PORTS.includes(url.port);

/**
 * Local development and tests set `WEBHOOKS_ALLOW_INSECURE`: http, loopback receivers and any port are allowed then.
 */
export const insecureReceiversAllowed = (env: Pick<Bindings, "WEBHOOKS_ALLOW_INSECURE">) =>
  isExplicitYes(env.WEBHOOKS_ALLOW_INSECURE);

/** Why a receiver's port or host is refused outside local development, in the words of a 400 on `url`. */
function destinationRefusal(url: URL): string | undefined {
  if (!onReceiverPort(url)) return "The URL's port must be 443 or 80.";
  if (isPrivateHost(url.hostname)) return "The URL may not point to a private, loopback or link-local address.";
  return undefined;
}

/** How long a receiver's URL may be, as it is stored. */
export const MAX_RECEIVER_URL_LENGTH = 2000;

/**
 * A receiver's URL: https, on port 443 or 80, no credentials, and never an address literal that
 * is not globally reachable nor a local name; unless insecure receivers are allowed, when http
 * and any host and port are too.
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
  const refusal = insecure ? undefined : destinationRefusal(url);
  if (refusal) throw validationError("invalid_input", refusal, "url");
  // Stored as the URL parser writes it (host lower-cased, path percent-encoded): held to the limit as written.
  const written = url.toString();
  if ([...written].length > MAX_RECEIVER_URL_LENGTH) {
    throw validationError(
      "max_length",
      `Ensure this field has no more than ${MAX_RECEIVER_URL_LENGTH} characters.`,
      "url",
    );
  }
  return written;
}

/**
 * Whether a receiver's host may be reached: an address literal must be globally reachable; a
 * name must resolve (A and AAAA, through the DoH resolver, both lookups answered: one that failed
 * could hide an internal address) and every address it gives must be, so that a name pointing at
 * an internal address is refused at delivery time too. The fetch resolves the name again, so this
 * narrows rebinding to the moments between the two lookups.
 */
async function receiverHostAllowed(env: Pick<Bindings, "DNS_RESOLVER_URL">, host: string): Promise<boolean> {
  if (isPrivateHost(host)) return false;
  const name = withoutTrailingDot(host);
  if (literalAddress(name)) return true;
  const lookups = await Promise.all(
    (["A", "AAAA"] as const).map((type) => lookupDnsRecords(env.DNS_RESOLVER_URL, name, type)),
  );
  if (lookups.some((records) => records === undefined)) return false;
  const answers = lookups.flat() as string[];
  return answers.length > 0 && answers.every(isPublicAnswer);
}

/**
 * Why a delivery to `url` is refused before any request, if it is: the port (a receiver stored
 * before ports were limited is held to them at delivery), then the host and what it resolves to.
 */
export async function deliveryRefusal(env: Pick<Bindings, "DNS_RESOLVER_URL">, url: URL): Promise<string | undefined> {
  if (!onReceiverPort(url)) return "The receiver's port must be 443 or 80.";
  if (!(await receiverHostAllowed(env, url.hostname)))
    return "The receiver's host does not resolve to a public address.";
  return undefined;
}
