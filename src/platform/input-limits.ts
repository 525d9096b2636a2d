import { z } from "@hono/zod-openapi";
import { sql, type SQL } from "drizzle-orm";
import { whileHolds } from "./db";
import { validationError } from "./errors";

/**
 * The sizes every stored field keeps to, so that no single write can make a list page huge or a
 * row unreadable for other clients. Depth needs no per-field check: a body nested deeper than
 * `MAX_JSON_DEPTH` is refused whole before validation (request-body.ts).
 */
const MAX_TEXT_LENGTH = 65_536;
const MAX_JSON_BYTES = 64 * 1024;
const MAX_TAGS = 100;
const MAX_TAG_LENGTH = 255;
const MAX_ID_LIST = 1000;

/** Free text (descriptions, messages, queries): at most 65,536 characters. */
export const boundedText = () => z.string().max(MAX_TEXT_LENGTH);

export const serializedBytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value) ?? "").byteLength;

/** Any JSON value stored as given, at most 64 KiB serialized (or `maxBytes`). */
export const boundedJson = <T extends z.ZodType>(schema: T, maxBytes = MAX_JSON_BYTES) =>
  schema
    .refine((value) => serializedBytes(value) <= maxBytes, {
      error: `Ensure this field has no more than ${maxBytes} bytes when serialized.`,
      params: { code: "max_length" },
    })
    .openapi({ description: `At most ${maxBytes} bytes serialized.` });

/** What `boundedJson` answers, for `field`, when a merge in SQL would pass its size. */
export const jsonTooLarge = (field: string) =>
  validationError("max_length", `Ensure this field has no more than ${MAX_JSON_BYTES} bytes when serialized.`, field);

/** `value`, a merge made in the Worker, while it keeps to `boundedJson`'s size; else its 400 for `field`. */
export function withinJsonLimit<T>(value: T, field: string): T {
  if (serializedBytes(value) > MAX_JSON_BYTES) throw jsonTooLarge(field);
  return value;
}

/**
 * A JSON text built in SQL (settings merged key by key into what is stored, a snapshot), while it
 * keeps to `maxBytes` (`boundedJson`'s by default); else null, which fails its batch on the
 * column's NOT NULL (`refusedWhenNull`): writes each within their limits must not add up past it.
 */
export const jsonWithinLimit = (json: SQL, maxBytes = MAX_JSON_BYTES) =>
  whileHolds(json, sql`length(cast(${json} as blob)) <= ${maxBytes}`);

/** A JSON object stored as given (`filters`, `layouts`, `config`...), at most 64 KiB serialized. */
export const boundedJsonObject = () => boundedJson(z.record(z.string(), z.unknown()));

/**
 * Tags of one resource: at most 100, each at most 255 characters as stored (lower-cased first:
 * a few letters lower-case to two characters).
 */
export const tagList = () => z.array(z.string().trim().toLowerCase().max(MAX_TAG_LENGTH)).max(MAX_TAGS);

/** Tags as PostHog stores them: trimmed, lower-cased, without blanks or repeats, in given order. */
export function normalizeTags(tags: string[]): string[] {
  return [...new Set(tags.map((tag) => tag.trim().toLowerCase()).filter((tag) => tag !== ""))];
}

/**
 * An e-mail address in a body: trimmed, lower-cased whole (PostHog lower-cases only the domain), at
 * most 254 characters, so that one address is one person wherever it is compared.
 */
export const emailAddress = () =>
  z.string().trim().toLowerCase().max(254).pipe(z.email()).openapi({ type: "string", format: "email", maxLength: 254 });

/** A list of ids in a body (`scoped_teams`, `private_project_access`...): at most 1,000 items. */
export const idList = <T extends z.ZodType>(item: T) => z.array(item).max(MAX_ID_LIST);

/** What a boolean query parameter may say, as DRF's `BooleanField` reads it; empty: not said. */
const BOOLEAN_QUERY_VALUES = new Map<string, boolean | undefined>([
  ["true", true],
  ["1", true],
  ["false", false],
  ["0", false],
  ["", undefined],
]);

/** A boolean query parameter, documented as one: `true`/`1` or `false`/`0`, else 400 on it. */
export const booleanQuery = (description: string) =>
  z
    .string()
    .optional()
    .refine((value) => value === undefined || BOOLEAN_QUERY_VALUES.has(value), {
      message: "Must be a valid boolean.",
      params: { code: "invalid" },
    })
    .transform((value) => (value === undefined ? undefined : BOOLEAN_QUERY_VALUES.get(value)))
    .openapi({ type: "boolean", description });

/** A comma-separated list of ids or names in a query parameter, at most 1,000 items, else 400 on it. */
export function splitQueryList(value: string, parameter: string): string[] {
  const items = value.split(",");
  if (items.length > MAX_ID_LIST) {
    throw validationError("max_length", `Ensure this field has no more than ${MAX_ID_LIST} elements.`, parameter);
  }
  return items;
}
