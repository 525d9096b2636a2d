// docs/endpoints.md from the OpenAPI document (`/api/schema`): one section per tag, each operation
// with its method, path, summary, scope, minimum level, parameters, body fields and answers. Pure:
// scripts/generate-endpoint-reference.mjs writes the file with it, and
// test/platform/endpoint-reference.test.ts renders the document the worker serves and compares.

const LEVELS = { 1: "member", 8: "admin", 15: "owner" };
const COMPONENT = "#/components/schemas/";

/** A schema's type in a few words: a component's name, a union, `X[]`, or its enumeration. */
function typeOf(schema) {
  if (!schema || typeof schema !== "object") return "any";
  if (schema.$ref) return schema.$ref.slice(COMPONENT.length);
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return [...new Set(union.map(typeOf))].join(" | ");
  if (schema.allOf?.length === 1) return typeOf(schema.allOf[0]);
  if ("const" in schema) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
  const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? "object"];
  return types.map((type) => (type === "array" ? `${typeOf(schema.items)}[]` : type)).join(" | ");
}

/** A component's own schema, for the fields of a body given by reference. */
const resolve = (document, schema) =>
  schema?.$ref ? document.components.schemas[schema.$ref.slice(COMPONENT.length)] : schema;

function scopeOf(operation) {
  const requirement = operation.security?.[0];
  if (!requirement) return "none (no key)";
  const scopes = Object.values(requirement).flat();
  return scopes.length === 0 ? "any valid key" : scopes.map((scope) => `\`${scope}\``).join(", ");
}

function parametersOf(operation, place) {
  const parameters = (operation.parameters ?? []).filter((parameter) => parameter.in === place);
  return parameters.map((parameter) => {
    const required = parameter.required && place !== "path" ? ", required" : "";
    return `\`${parameter.name}\` (${typeOf(parameter.schema)}${required})`;
  });
}

function bodyOf(document, operation) {
  const content = operation.requestBody?.content;
  if (!content) return undefined;
  const [mediaType, { schema }] = Object.entries(content)[0];
  const resolved = resolve(document, schema);
  const properties = resolved?.properties;
  if (!properties) return `${typeOf(schema)} (${mediaType})`;
  const required = new Set(resolved.required ?? []);
  const fields = Object.entries(properties).map(
    ([name, property]) => `\`${name}\` (${typeOf(property)}${required.has(name) ? ", required" : ""})`,
  );
  return fields.join(", ");
}

function answersOf(operation) {
  const codes = Object.keys(operation.responses);
  const successes = codes
    .filter((code) => code < "400")
    .map((code) => `${code} ${operation.responses[code].description}`.trim());
  const errors = codes.filter((code) => code >= "400");
  return [...successes, ...(errors.length > 0 ? [`errors ${errors.join(", ")}`] : [])].join("; ");
}

function operationSection(document, method, path, operation) {
  const level = operation["x-minimum-level"];
  const lines = [
    `### \`${method.toUpperCase()} ${path}\``,
    "",
    operation.summary ?? "",
    "",
    `- Scope: ${scopeOf(operation)}${level ? `; at least ${LEVELS[level] ?? "level"} (${level})` : ""}`,
  ];
  const pathParameters = parametersOf(operation, "path");
  if (pathParameters.length > 0) lines.push(`- Path: ${pathParameters.join(", ")}`);
  const query = parametersOf(operation, "query");
  if (query.length > 0) lines.push(`- Query: ${query.join(", ")}`);
  const body = bodyOf(document, operation);
  if (body) lines.push(`- Body: ${body}`);
  lines.push(`- Answers: ${answersOf(operation)}`);
  return lines.join("\n");
}

const anchorOf = (tag) => tag.toLowerCase().replaceAll(" ", "-");

/** The whole page, tags in the document's order, operations in the order of its paths. */
export function renderEndpointReference(document) {
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ method, path, operation })),
  );
  const sections = document.tags.map((tag) => {
    const ofTag = operations.filter(({ operation }) => operation.tags?.[0] === tag.name);
    return [
      `## ${tag.name}`,
      "",
      tag.description,
      "",
      ...ofTag.map(({ method, path, operation }) => `${operationSection(document, method, path, operation)}\n`),
    ].join("\n");
  });
  return [
    "# Endpoints",
    "",
    "<!-- Generated from the OpenAPI document by `npm run docs:endpoints`: do not edit. -->",
    "",
    `Every operation the API serves (${operations.length}), by tag, as the OpenAPI document at \`/api/schema\``,
    "describes it; `/docs` on a running server shows the same document with its schemas and examples.",
    "Scope: the personal API key scope the operation needs; the level, where there is one, is the",
    "caller's minimum level in the organization. The errors share one body, described with pagination,",
    "limits and rate limits in [the contract](contract.md).",
    "",
    ...document.tags.map((tag) => `- [${tag.name}](#${anchorOf(tag.name)}): ${tag.description}`),
    "",
    ...sections,
  ]
    .join("\n")
    .replace(/\n+$/, "\n");
}
