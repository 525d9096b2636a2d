/**
 * Examples for the OpenAPI document, built from the schemas themselves: a field's own
 * `example` (`.openapi({ example })`) when it has one, else a value of its type, so that every
 * operation shows a request and a response without a second description to keep in step.
 */
export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  example?: unknown;
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minimum?: number;
};

type Components = Record<string, JsonSchema>;

const EXAMPLE_BY_FORMAT: Record<string, unknown> = {
  uuid: "0195d3a6-7c1e-7f3a-9b2c-5d4e3f2a1b0c",
  "date-time": "2026-01-15T09:30:00.000Z",
  email: "ada@example.com",
  uri: "https://example.com",
};

/** Our timestamps and e-mails are plain strings in the schemas; their names say what they hold. */
function formatByName(name: string): string | undefined {
  if (name.endsWith("_at")) return "date-time";
  if (name.endsWith("email")) return "email";
  return undefined;
}

/** Deep enough for every resource here, and a stop for self-referencing schemas. */
const MAX_DEPTH = 8;

function exampleOfType(schema: JsonSchema, components: Components, depth: number): unknown {
  const type = Array.isArray(schema.type) ? schema.type.find((name) => name !== "null") : schema.type;
  switch (type) {
    case "string":
      return EXAMPLE_BY_FORMAT[schema.format ?? ""] ?? "string";
    case "integer":
    case "number":
      return schema.minimum ?? 1;
    case "boolean":
      return false;
    case "array":
      return schema.items ? [exampleOf(schema.items, components, depth + 1)] : [];
    case "object":
      return Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([name, property]) => [
          name,
          exampleOf(
            property.type === "string" && !property.format ? { ...property, format: formatByName(name) } : property,
            components,
            depth + 1,
          ),
        ]),
      );
    default:
      return null;
  }
}

export function exampleOf(schema: JsonSchema, components: Components, depth = 0): unknown {
  if (depth > MAX_DEPTH) return null;
  if (schema.$ref) return exampleOf(components[schema.$ref.split("/").at(-1) ?? ""] ?? {}, components, depth);
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((part) => exampleOf(part, components, depth)));
  const first = (schema.anyOf ?? schema.oneOf)?.find((choice) => choice.type !== "null");
  if (first) return exampleOf(first, components, depth);
  return exampleOfType(schema, components, depth);
}
