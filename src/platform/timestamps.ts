import { z } from "@hono/zod-openapi";

/**
 * A time the API answers with: ISO 8601 in UTC with milliseconds, published as PostHog's document
 * types it (`format: date-time`), so that generated clients can decode it as a date.
 */
export const Timestamp = z.string().openapi({ format: "date-time", example: "2026-01-01T00:00:00.000Z" });

/** The times an input may name, in UTC: those whose ISO form has a four-digit year, as every stored time. */
const EARLIEST = Date.parse("0001-01-01T00:00:00.000Z");
const LATEST = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * ISO 8601 as DRF reads it: the seconds and their fraction optional (`2027-06-01T12:00Z`, which
 * zod's own date-time check refuses once a zone is written), the zone too: a time without one is
 * in UTC, PostHog's time zone.
 */
const ISO_8601 = [
  z.regexes.datetime({ offset: true, local: true }),
  z.regexes.datetime({ offset: true, precision: -1 }),
];
const WITH_ZONE = /(?:Z|[+-]\d\d:\d\d)$/;

/**
 * DRF's other spellings of the same ISO 8601 times, as the patterns above read them: a comma
 * before the fraction of a second (`12:00:00,5`), an offset of hours alone or without its colon
 * (`+02`, `+0200`).
 */
const canonicalIso = (value: string) =>
  value
    .replace(/(T\d\d:\d\d:\d\d),(\d)/, "$1.$2")
    .replace(
      /(T\d\d:\d\d(?::\d\d(?:\.\d+)?)?[+-]\d\d)(?::?(\d\d))?$/,
      (_, time: string, minutes?: string) => `${time}:${minutes ?? "00"}`,
    );

/**
 * DRF's wording for a date-time it cannot read; stored and returned in UTC with `Z`. A time whose
 * UTC form leaves the years 1 to 9999 (`9999-12-31T23:59:59-05:00`) is refused: its ISO form
 * (`+010000-...`) is no RFC 3339 date-time, and stored times are compared as text.
 */
export const TimestampInput = z
  .string()
  .overwrite(canonicalIso)
  .refine((value) => ISO_8601.some((pattern) => pattern.test(value)), {
    error:
      "Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].",
    abort: true,
  })
  .transform((value) => (WITH_ZONE.test(value) ? value : `${value}Z`))
  .refine((value) => Date.parse(value) >= EARLIEST && Date.parse(value) <= LATEST, {
    error: "Datetime is out of range: in UTC it must fall within the years 1 to 9999.",
  })
  .openapi({ format: "date-time" });
