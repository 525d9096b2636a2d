import { expect } from "vitest";
import type { api } from "./harness";

/**
 * What a client's decoder needs of an answer, written as a table of field → JSON type, and the
 * check that an answer fits it. Fields a table leaves out are ignored, as every PostHog client
 * ignores fields it does not know.
 *
 * - `"string"`, `"integer"`, `"number"`, `"boolean"`, `"object"`, `"array"`: present, of that type;
 * - the same with `?`: absent, null or of that type (a Go pointer, an optional TS field);
 * - `{ field: shape }`: an object with those fields; `[shape]`: an array of items of that shape;
 * - `maybe(shape)`: absent, null, or of that shape.
 */
type JsonType = "string" | "integer" | "number" | "boolean" | "object" | "array";
export type Shape = JsonType | `${JsonType}?` | { [field: string]: Shape } | [Shape] | Maybe;
type Maybe = { readonly maybe: Shape };

export const maybe = (shape: Shape): Maybe => ({ maybe: shape });

function jsonTypeOf(value: unknown): JsonType | "null" {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value as JsonType;
}

const isMaybe = (shape: Shape): shape is Maybe =>
  typeof shape === "object" && !Array.isArray(shape) && "maybe" in shape;

/** Where `value` does not fit `shape`, as `path: expected, got` lines; empty when it decodes. */
export function decodeErrors(value: unknown, shape: Shape, path = "$"): string[] {
  if (typeof shape === "string") {
    const optional = shape.endsWith("?");
    const expected = (optional ? shape.slice(0, -1) : shape) as JsonType;
    const actual = jsonTypeOf(value);
    if (value === undefined || actual === "null") return optional ? [] : [`${path}: ${expected}, got ${actual}`];
    const fits = actual === expected || (expected === "number" && actual === "integer");
    return fits ? [] : [`${path}: ${expected}, got ${actual}`];
  }
  if (isMaybe(shape)) return value === undefined || value === null ? [] : decodeErrors(value, shape.maybe, path);
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return [`${path}: array, got ${jsonTypeOf(value)}`];
    return value.flatMap((item, index) => decodeErrors(item, shape[0], `${path}[${index}]`));
  }
  if (jsonTypeOf(value) !== "object") return [`${path}: object, got ${jsonTypeOf(value)}`];
  const record = value as Record<string, unknown>;
  return Object.entries(shape).flatMap(([field, fieldShape]) =>
    decodeErrors(record[field], fieldShape, `${path}.${field}`),
  );
}

/** A 2xx answer that decodes into `shape`, failing with where it does not; its body. */
export function expectDecoded(response: Awaited<ReturnType<typeof api>>, shape: Shape, label: string) {
  expect(response.status, `${label}: ${response.text.slice(0, 300)}`).toBeLessThan(300);
  expect(decodeErrors(response.body, shape), label).toEqual([]);
  return response.body;
}
