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

/** A dashboard's id, as `{id}` of the dashboards or `{dashboard_id}` of what belongs to one. */
export const dashboardPathId = integerPathId("Dashboard id.");

/** A key's id in a path (personal or service key): never its value, which is not stored. */
export const keyPathId = z.string().openapi({ description: "The key's id, as listed (not its value)." });
