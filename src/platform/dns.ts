// A DNS-over-HTTPS resolver, shared by domain verification (TXT) and webhook receivers (A, AAAA).
import { errorFields, logLine } from "./log";
import { z } from "@hono/zod-openapi";

/** Used when the `DNS_RESOLVER_URL` variable is left empty. */
const DEFAULT_DNS_RESOLVER_URL = "https://cloudflare-dns.com/dns-query";

/** A slow resolver must not hold the request: past this, the attempt counts as failed. */
const DNS_LOOKUP_TIMEOUT_MS = 3000;

/** Record types as a query names them, and their numbers in answers. */
const RECORD_TYPES = { TXT: 16, A: 1, AAAA: 28 } as const;
type RecordType = keyof typeof RECORD_TYPES;
const NO_ERROR = 0;
/** The name does not exist: an answer, not a failure. */
const NAME_ERROR = 3;

/** The `application/dns-json` answer of a DNS-over-HTTPS resolver, as Cloudflare and Google serve it. */
const DnsJsonResponse = z.object({
  Status: z.number(),
  Answer: z.array(z.object({ type: z.number(), data: z.string() })).optional(),
});

/** Data that is quoted strings only, one or more, spaces between: nothing outside the quotes. */
const QUOTED_STRINGS = /^\s*"(?:[^"\\]|\\.)*"(?:\s*"(?:[^"\\]|\\.)*")*\s*$/;

/**
 * A TXT record's text. Resolvers give it as one or more quoted strings (long records are split
 * into 255-byte strings, which join into one value); some leave the quotes off, and then the data
 * is the text as it is, quotes it holds included: a record that merely contains a quoted value is
 * not that value.
 */
function txtText(data: string): string {
  if (!QUOTED_STRINGS.test(data)) return data;
  const strings = data.match(/"(?:[^"\\]|\\.)*"/g) ?? [];
  return strings.map((quoted) => quoted.slice(1, -1).replace(/\\(.)/g, "$1")).join("");
}

/**
 * The records of `name` of one type (the data of each answer) through the resolver's JSON API;
 * none for a name that does not exist. Undefined when the lookup failed (an error answer such as
 * SERVFAIL, a resolver failure or a timeout): the caller decides what that means, and never
 * answers 500 for it.
 */
export async function lookupDnsRecords(
  resolverUrl: string,
  name: string,
  type: RecordType,
): Promise<string[] | undefined> {
  try {
    const url = new URL(resolverUrl || DEFAULT_DNS_RESOLVER_URL);
    url.searchParams.set("name", name);
    url.searchParams.set("type", type);
    const response = await fetch(url, {
      headers: { Accept: "application/dns-json" },
      signal: AbortSignal.timeout(DNS_LOOKUP_TIMEOUT_MS),
    });
    if (!response.ok) throw new Error(`resolver answered ${response.status}`);
    const answer = DnsJsonResponse.parse(await response.json());
    if (answer.Status === NAME_ERROR) return [];
    if (answer.Status !== NO_ERROR) throw new Error(`resolver answered DNS status ${answer.Status}`);
    return (answer.Answer ?? []).filter((record) => record.type === RECORD_TYPES[type]).map((record) => record.data);
  } catch (error) {
    // Operators need to tell a broken resolver from a missing record.
    logLine("warn", { task: "dns lookup", record_type: type, error: errorFields(error) });
    return undefined;
  }
}

/** The TXT texts of `name`: verification simply fails when there are none. */
export async function lookupTxtRecords(resolverUrl: string, name: string): Promise<string[]> {
  return ((await lookupDnsRecords(resolverUrl, name, "TXT")) ?? []).map(txtText);
}
