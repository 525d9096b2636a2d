import { z } from "@hono/zod-openapi";

/**
 * Numeric ids in paths are read as text, so that a malformed one answers 404 like any unknown
 * id, and documented as integers, so that generated clients take numbers.
 */
export const integerPathId = (description: string) => z.string().openapi({ type: "integer", example: 1, description });

/** A numeric id, or `@current` for the caller's current one. */
export const integerOrCurrentPathId = (description: string) =>
  z.string().openapi({
    type: ["integer", "string"],
    anyOf: [{ type: "integer" }, { type: "string", enum: ["@current"] }],
    example: 1,
    description,
  });
