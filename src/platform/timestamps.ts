import { z } from "@hono/zod-openapi";

/**
 * A time the API answers with: ISO 8601 in UTC with milliseconds, published as PostHog's document
 * types it (`format: date-time`), so that generated clients can decode it as a date.
 */
export const Timestamp = z.string().openapi({ format: "date-time", example: "2026-01-01T00:00:00.000Z" });

/** DRF's wording for a date-time it cannot read; stored and returned in UTC with `Z`. */
export const TimestampInput = z.iso.datetime({
  offset: true,
  error:
    "Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].",
});
