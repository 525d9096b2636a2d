import type { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./env";
import { ApiError, parseError, unsupportedMediaType, validationError } from "./errors";

const MAX_BODY_BYTES = 1024 * 1024;
const WRITE_METHODS = ["POST", "PUT", "PATCH"];
/** Deeper JSON is refused before validation: nothing stored needs more, and deep values blow stacks. */
const MAX_JSON_DEPTH = 32;
const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;
/** With the `u` flag a well-formed surrogate pair is one code point, so only lone halves match. */
const LONE_SURROGATE = /\p{Cs}/u;

const payloadTooLarge = () => new ApiError(413, "payload_too_large", "Request body is too large (over 1 MiB).");

/**
 * hono's `bodyLimit` refuses a Content-Length past the limit and counts the bytes of a body sent
 * without one (chunked) as they arrive, stopping past the limit, so an oversized body never sits
 * in memory whole.
 */
const limitByHeaderOrCount = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw payloadTooLarge();
  },
});

/**
 * The bytes read, counted too: a Content-Length that understates them is not taken at its word
 * (Cloudflare holds a request from the Internet to its header; a caller inside the runtime need not).
 */
const limitBytesRead = createMiddleware<AppEnv>(async (c, next) => {
  if (WRITE_METHODS.includes(c.req.method) && (await c.req.arrayBuffer()).byteLength > MAX_BODY_BYTES) {
    throw payloadTooLarge();
  }
  await next();
});

/** The size limit on a write's body, before anything reads it. */
export const limitBodySize = [limitByHeaderOrCount, limitBytesRead] as const;

/**
 * Strings that SQLite would store as invalid UTF-8 (lone surrogates), numbers JSON cannot hold
 * (`1e309` parses as Infinity, which would be stored as null), a `__proto__` key and nesting
 * deeper than a stored field needs, refused before validation. So is a NUL character, as DRF
 * refuses it, naming the field: SQLite's text functions stop at it, so search and the activity
 * log would read less than was stored. `path` is where `value` stands; recursion stops at the
 * depth limit.
 */
function assertStorableJson(value: unknown, path: readonly (string | number)[] = []): void {
  if (typeof value === "string") {
    if (LONE_SURROGATE.test(value)) throw parseError("JSON parse error - A string holds a lone UTF-16 surrogate.");
    if (value.includes("\u0000")) {
      throw validationError("null_characters_not_allowed", "Null characters are not allowed.", path.join(".") || null);
    }
    return;
  }
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw parseError("JSON parse error - A number is too large to store.");
  }
  if (value === null || typeof value !== "object") return;
  if (path.length >= MAX_JSON_DEPTH)
    throw parseError(`JSON parse error - Nested deeper than ${MAX_JSON_DEPTH} levels.`);
  for (const [key, item] of Object.entries(value)) {
    // Validation rebuilds objects, and a rebuilt object leaves this key out: what is stored would not be what was sent.
    if (key === "__proto__") throw parseError("JSON parse error - An object holds the key __proto__.");
    assertStorableJson(key, path);
    assertStorableJson(item, [...path, Array.isArray(value) ? Number(key) : key]);
  }
}

function decodeUtf8(bytes: ArrayBuffer): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw parseError("JSON parse error - The body is not valid UTF-8.");
  }
}

/**
 * What the JSON parser says, without the stretch of the body it quotes (V8 writes
 * `Unexpected token 'c', "{"password": co"... is not valid JSON`): a body may hold a secret, and
 * an answer or a log line must not echo it. DRF's detail names the position alone too.
 */
function withoutQuotedText({ message }: Error) {
  if (!message.endsWith("is not valid JSON")) return message;
  const token = /^Unexpected token '.'/s.exec(message)?.[0];
  return token ? `${token}: the body is not valid JSON.` : "The body is not valid JSON.";
}

/** An empty body is `{}` whatever its type (PostHog's web app sends form-typed empty bodies on DELETE and actions). */
function parseJsonText(text: string, mediaType: string): unknown {
  if (text.trim() === "") return {};
  if (!JSON_MEDIA_TYPE.test(mediaType)) throw unsupportedMediaType(mediaType);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw parseError(`JSON parse error - ${withoutQuotedText(error as Error)}`);
  }
  assertStorableJson(body);
  return body;
}

/**
 * Parses a JSON body once, for every route: a body that is not JSON (or not UTF-8, or holds lone
 * surrogates, or is nested too deep) is 400 `parse_error`, and an empty body counts as `{}` (as
 * DRF treats it), so that each route's Zod schema always runs and applies its defaults.
 */
const parseJsonBody = createMiddleware<AppEnv>(async (c, next) => {
  if (!WRITE_METHODS.includes(c.req.method)) return next();
  const mediaType = (c.req.header("Content-Type") ?? "").split(";")[0]!.trim();
  const text = decodeUtf8(await c.req.arrayBuffer());
  const body = parseJsonText(text, mediaType);
  // Hono's validators check the media type again, more narrowly than HTTP does (`application/json;`
  // or a space before `;` fail there), and an empty body of another type is `{}`: whatever was
  // taken as JSON here, they see as plain JSON.
  const takenAsJson = mediaType !== "" && (JSON_MEDIA_TYPE.test(mediaType) || text.trim() === "");
  if (takenAsJson && c.req.header("Content-Type") !== "application/json") {
    const headers = new Headers(c.req.raw.headers);
    headers.set("Content-Type", "application/json");
    c.req.raw = new Request(c.req.raw.url, { method: c.req.method, headers });
  }
  // Hono's validators read the body through this cache, from its first entry: the parsed body
  // (an empty body is `{}`), not the bytes.
  delete c.req.bodyCache.arrayBuffer;
  c.req.bodyCache.json = Promise.resolve(body);
  await next();
});

/** The size limit while reading, then parsing: the last middleware of every route. */
export const readJsonBody = [...limitBodySize, parseJsonBody] as const;

/**
 * The body as the route's `schema` will validate it, read ahead of the access checks so that a
 * write can send the reads its body names in the round trip that resolves the caller: undefined
 * whenever that is not certain (no Content-Length within the limit, not JSON, or not valid),
 * and never an error, which the checks and then the validator answer in their order. The body is
 * read once: hono caches it for `parseJsonBody`.
 */
export async function peekJsonBody<S extends z.ZodType>(
  c: Context<AppEnv>,
  schema: S,
): Promise<z.output<S> | undefined> {
  const length = Number(c.req.header("Content-Length") ?? Number.NaN);
  if (
    !WRITE_METHODS.includes(c.req.method) ||
    !(length <= MAX_BODY_BYTES) ||
    c.req.header("Transfer-Encoding") !== undefined
  ) {
    return undefined;
  }
  try {
    const bytes = await c.req.arrayBuffer();
    // More than its Content-Length said: the size limit answers it.
    if (bytes.byteLength > MAX_BODY_BYTES) return undefined;
    const parsed = schema.safeParse(JSON.parse(decodeUtf8(bytes)));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
