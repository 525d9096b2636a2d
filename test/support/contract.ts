import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import { createApp } from "../../src/app";
import { buildDocument } from "../../src/openapi";

/*
 * Every JSON answer a test receives through `api()` is held to what `/api/schema` declares for
 * its operation and status: a client generated from the document (openapi-typescript, a Go or
 * Kotlin generator) decodes exactly that. Ajv compiles schemas into functions, which the test
 * pool allows (a deployed Worker would not); it is a dev dependency only.
 */

type Schema = Record<string, unknown>;
type Operation = { responses?: Record<string, { $ref?: string; content?: Record<string, { schema?: Schema }> }> };
type Document = ReturnType<typeof buildDocument>;

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let contract: { document: Document; ajv: Ajv2020; templates: { pattern: RegExp; template: string }[] } | undefined;

function loadContract() {
  if (contract) return contract;
  const document = buildDocument(createApp());
  const ajv = new Ajv2020({ strict: false, allErrors: true, verbose: true });
  ajv.addFormat("date-time", ISO_DATE_TIME);
  ajv.addFormat("email", EMAIL);
  ajv.addFormat("uuid", UUID);
  ajv.addFormat("uri", { validate: (value: string) => URL.canParse(value) });
  const parts = allOfParts(document);
  const schemas = Object.entries(document.components?.schemas ?? {}).map(([name, schema]) => [
    name,
    strict(schema, parts.has(name)),
  ]);
  ajv.addSchema({ $id: "doc", components: { ...document.components, schemas: Object.fromEntries(schemas) } });
  // A literal segment (`@me`) before a parameter (`{uuid}`): fewer parameters first.
  const templates = Object.keys(document.paths ?? {})
    .sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))
    .map((template) => {
      const source = template
        .replace(/\/$/, "")
        .split(/\{[^}]+\}/)
        .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))
        .join("[^/]+");
      return { pattern: new RegExp(`^${source}/?$`), template };
    });
  contract = { document, ajv, templates };
  return contract;
}

const validators = new Map<string, ValidateFunction | null>();

/**
 * A schema as the check reads it: local references (`#/components/...`) point at the document
 * added as `doc`, and an object admits no property it does not declare, unless it is a part of an
 * `allOf` (the whole it is part of declares the rest).
 */
function strict(schema: unknown, partOfAllOf = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => strict(item));
  if (schema === null || typeof schema !== "object") return schema;
  const closed = !partOfAllOf && ("properties" in schema || "allOf" in schema) && !("additionalProperties" in schema);
  return Object.fromEntries([
    ...Object.entries(schema).map(([key, value]) => {
      if (key === "$ref" && typeof value === "string" && value.startsWith("#")) return [key, `doc${value}`];
      if (key === "allOf" && Array.isArray(value)) return [key, value.map((part) => strict(part, true))];
      return [key, strict(value)];
    }),
    ...(closed ? [["unevaluatedProperties", false]] : []),
  ]);
}

/** Components some `allOf` is made of: parts, not wholes. */
function allOfParts(document: Document): Set<string> {
  const parts = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== "object") return;
    for (const [key, child] of Object.entries(value)) {
      if (key === "allOf" && Array.isArray(child))
        for (const part of child) if (typeof part?.$ref === "string") parts.add(part.$ref.split("/").at(-1));
      visit(child);
    }
  };
  visit(document);
  return parts;
}

function responseSchema(document: Document, operation: Operation, status: number): Schema | undefined | null {
  const responses = operation.responses ?? {};
  let response = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
  if (response?.$ref) {
    const name = response.$ref.split("/").at(-1)!;
    response = (document.components?.responses as Record<string, typeof response>)[name];
  }
  if (!response) return null;
  return response.content?.["application/json"]?.schema;
}

/** Why `body` is not what the document declares for the answer, or undefined when it is. */
export function contractBreach(method: string, url: string, status: number, body: unknown): string | undefined {
  const { document, ajv, templates } = loadContract();
  const path = new URL(url, "http://localhost").pathname;
  const match = templates.find(({ pattern }) => pattern.test(path));
  const operation = match && (document.paths?.[match.template] as Record<string, Operation>)[method.toLowerCase()];
  // An endpoint or method that does not exist: its 404 or 405 (401 first, without a key) is the answer tested.
  if (!operation) return [401, 404, 405].includes(status) ? undefined : `${method} ${path}: not in the document`;
  const key = `${method} ${match!.template} ${status}`;
  let validate = validators.get(key);
  if (validate === undefined) {
    const schema = responseSchema(document, operation, status);
    if (schema === null) return `${key}: status not declared`;
    validate = schema ? ajv.compile(strict(schema) as Schema) : null;
    validators.set(key, validate);
  }
  if (!validate) return `${key}: answered JSON, declared none`;
  if (validate(body)) return undefined;
  const errors = (validate.errors ?? [])
    .slice(0, 4)
    .map((error) =>
      error.keyword === "unevaluatedProperties"
        ? `${error.instancePath || "/"} has ${error.params.unevaluatedProperty}, undeclared`
        : `${error.instancePath || "/"} ${error.message}, not ${JSON.stringify(error.data)}`,
    );
  return `${key}: ${errors.join("; ")}`;
}
