import fc from "fast-check";
import { expect, vi } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { databaseDigest, markKeysUsed } from "./database-digest";
import { addMember, api, createApiKey, setupOrganization } from "./harness";
import { insertInvite } from "./people";

/**
 * Property-based: every write operation the OpenAPI document publishes (so routes added later
 * are covered too) receives generated bodies, shaped like its schema with fields replaced by
 * wrong types, huge and deep values, lone surrogates and prototype keys, or not JSON at all. It
 * must never answer 5xx; a 4xx has PostHog's error body and leaves the database as it was; a
 * body that can never be stored (a lone surrogate, over 32 levels, not JSON) is always refused.
 */
const RUNS_PER_OPERATION = 80;
/** Under the 480 requests a minute each key may make. */
const REQUESTS_PER_KEY = 400;

type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
};
type Document = {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema }> } }>>;
  components: { schemas: Record<string, JsonSchema> };
};
type WriteOperation = { method: string; path: string; schema: JsonSchema | undefined };

const WRITE_METHODS = ["post", "put", "patch"];

function writeOperations(document: Document): WriteOperation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([method]) => WRITE_METHODS.includes(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        schema: operation.requestBody?.content["application/json"]?.schema,
      })),
  );
}

// Values no validator should let through to storage, nor turn into a 500.
const loneSurrogate = fc.constantFrom("\ud800", "x\udfff", "\udc00\ud800", "ok \ud83d");
const scalar = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 8 }),
  loneSurrogate,
  fc.constantFrom(
    "",
    " ",
    "@current",
    "@me",
    "-1",
    "1e309",
    "9007199254740993",
    "true",
    "null",
    "2026-13-45T99:00:00Z",
  ),
);
const nested = (depth: number, leaf: unknown, asObject: boolean): unknown => {
  let value = leaf;
  for (let level = 0; level < depth; level += 1) value = asObject ? { a: value } : [value];
  return value;
};
/** Stands for a list nested 5,000 deep, written into the body text (JSON.stringify would recurse). */
const VERY_DEEP = "\u0000nested 5000 deep";
const VERY_DEEP_TEXT = `${"[".repeat(5000)}1${"]".repeat(5000)}`;
const huge = fc.constantFrom<unknown>(
  "x".repeat(70_000),
  { blob: "y".repeat(70_000) },
  Array.from({ length: 1001 }, (_, index) => index),
  Array.from({ length: 150 }, (_, index) => index + 1),
  Array.from({ length: 150 }, (_, index) => `tag-${index}`),
  Array.from({ length: 501 }, () => ({ text: { body: "t" } })),
);
const deep = fc.oneof(
  fc
    .tuple(fc.integer({ min: 28, max: 40 }), scalar, fc.boolean())
    .map(([depth, leaf, asObject]) => nested(depth, leaf, asObject)),
  fc.constant(VERY_DEEP),
);
const nasty: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: scalar },
  { weight: 1, arbitrary: huge },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), scalar, { maxKeys: 3 }) },
);
const PROTOTYPE_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty"];

function resolve(schema: JsonSchema, document: Document): JsonSchema {
  if (!schema.$ref) return schema;
  return document.components.schemas[schema.$ref.replace("#/components/schemas/", "")] ?? {};
}

/** Plausible values for a schema: its choices, its types, its fields (a few levels down). */
function plausible(schema: JsonSchema, document: Document, depth = 0): fc.Arbitrary<unknown> {
  const resolved = resolve(schema, document);
  const alternatives = resolved.anyOf ?? resolved.oneOf ?? resolved.allOf;
  if (alternatives && alternatives.length > 0)
    return fc.oneof(...alternatives.map((item) => plausible(item, document, depth)));
  if (resolved.enum) return fc.constantFrom(...resolved.enum);
  if (resolved.const !== undefined) return fc.constant(resolved.const);
  const type = Array.isArray(resolved.type) ? resolved.type[0] : resolved.type;
  if (depth > 3) return scalar;
  switch (type) {
    case "integer":
      return fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer());
    case "number":
      return fc.double();
    case "boolean":
      return fc.boolean();
    case "string":
      return fc.oneof(
        fc.string({ maxLength: 30 }),
        fc.constantFrom("example.com", "a@example.com", "UTC", "2026-01-01T00:00:00Z"),
      );
    case "array":
      return fc.array(resolved.items ? fieldValue(resolved.items, document, depth + 1) : scalar, { maxLength: 3 });
    case "object":
      return objectBody(resolved, document, depth + 1).map((entries) => Object.fromEntries(entries));
    default:
      return scalar;
  }
}

/** A field is plausible three times in four, else a value it must refuse. */
const fieldValue = (schema: JsonSchema, document: Document, depth: number) =>
  fc.oneof({ weight: 3, arbitrary: plausible(schema, document, depth) }, { weight: 1, arbitrary: nasty });

/** Entries rather than an object, so that `__proto__` stays a key and is not a prototype. */
function objectBody(schema: JsonSchema, document: Document, depth: number): fc.Arbitrary<[string, unknown][]> {
  const properties = Object.entries(resolve(schema, document).properties ?? {});
  const known = properties.map(([name, property]) =>
    fc.option(
      fieldValue(property, document, depth).map((value): [string, unknown] => [name, value]),
      { nil: undefined },
    ),
  );
  const extra = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.string({ maxLength: 8 })), nasty), {
    maxLength: 2,
  });
  return fc
    .tuple(fc.tuple(...known), extra)
    .map(([fields, extras]) => [...fields.filter((field) => field !== undefined), ...extras]);
}

const jsonText = (value: unknown) =>
  (JSON.stringify(value) ?? "null").replaceAll(JSON.stringify(VERY_DEEP), VERY_DEEP_TEXT);
const objectText = (entries: [string, unknown][]) =>
  `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${jsonText(value)}`).join(",")}}`;

/** Levels of lists and objects, as the server counts them (a scalar is 0). */
function depthOf(value: unknown): number {
  if (value === VERY_DEEP) return 5000;
  if (value === null || typeof value !== "object") return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}
const LONE_SURROGATE = /\p{Cs}/u;
function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === "string") return LONE_SURROGATE.test(value);
  if (value === null || typeof value !== "object") return false;
  return Object.entries(value).some(([key, item]) => LONE_SURROGATE.test(key) || holdsLoneSurrogate(item));
}
/** What no route may store, whatever its schema. */
const unstorable = (value: unknown) => depthOf(value) > 32 || holdsLoneSurrogate(value);

type Body = { text: string | Uint8Array; mustRefuse: boolean };
/** As the server parses the text: an own `__proto__` key, and the last of repeated keys. */
const parsedObject = (entries: [string, unknown][]) => Object.fromEntries(entries);
const entriesBody = (entries: [string, unknown][]): Body => ({
  text: objectText(entries),
  mustRefuse: unstorable(parsedObject(entries)),
});

const INVALID_UTF8 = [
  new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
  new Uint8Array([0x22, 0xed, 0xa0, 0x80, 0x22]),
];

/** A whole request body: schema-shaped JSON mostly, else the wrong JSON type, broken JSON or bytes. */
function requestBody(operation: WriteOperation, document: Document): fc.Arbitrary<Body> {
  const schema = operation.schema ?? {};
  const resolved = resolve(schema, document);
  const shaped: fc.Arbitrary<Body> =
    resolved.type === "array" && resolved.items
      ? fc.array(objectBody(resolved.items, document, 1), { maxLength: 3 }).map((items) => ({
          text: `[${items.map(objectText).join(",")}]`,
          mustRefuse: unstorable(items.map(parsedObject)),
        }))
      : objectBody(schema, document, 0).map(entriesBody);
  const broken = fc.constantFrom("{", '{"a": }', "[1, 2", "nul", '{"a": 1}}', VERY_DEEP_TEXT);
  return fc.oneof(
    { weight: 12, arbitrary: shaped },
    { weight: 1, arbitrary: nasty.map((value) => ({ text: jsonText(value), mustRefuse: unstorable(value) })) },
    { weight: 1, arbitrary: broken.map((text) => ({ text, mustRefuse: true })) },
    { weight: 1, arbitrary: fc.constantFrom(...INVALID_UTF8).map((text) => ({ text, mustRefuse: true })) },
  );
}

/** Real ids for path parameters, so that requests reach validation and the handlers behind it. */
async function arrangeTenant() {
  const tenant = await setupOrganization();
  const member = await addMember(tenant.organization.id, MembershipLevel.member);
  const invite = await insertInvite(tenant.organization.id, tenant.owner, { targetEmail: "fuzz@example.com" });
  const dashboard = await api("POST", `/api/environments/${tenant.project.id}/dashboards`, {
    key: tenant.key,
    body: { name: "Fuzzed", tiles: [] },
  });
  const exported = await api("POST", `/api/environments/${tenant.project.id}/batch_exports`, {
    key: tenant.key,
    body: {
      name: "Fuzzed",
      interval: "hour",
      destination: { type: "HTTP", config: { url: "https://h.example.com", token: "t" } },
    },
  });
  // A live, password-protected share link, so that its unlock route reads the body it is sent: of a
  // dashboard of its own, whose link no other fuzzed route refreshes or pauses.
  const shared = await api("POST", `/api/environments/${tenant.project.id}/dashboards`, {
    key: tenant.key,
    body: { name: "Shared" },
  });
  const sharingPath = `/api/environments/${tenant.project.id}/dashboards/${shared.body.id}/sharing`;
  const sharing = await api("PATCH", sharingPath, { key: tenant.key, body: { enabled: true } });
  await api("PATCH", sharingPath, { key: tenant.key, body: { password_required: true } });
  const password = await api("POST", `${sharingPath}/passwords`, {
    key: tenant.key,
    body: { raw_password: "fuzzed-password-1" },
  });
  expect(password.status).toBe(201);
  const domain = await api("POST", `/api/organizations/${tenant.organization.id}/domains`, {
    key: tenant.key,
    body: { domain: `fuzz-${Date.now()}.example.com` },
  });
  const idAfter: Record<string, string> = {
    dashboards: String(dashboard.body.id),
    batch_exports: exported.body.id,
    domains: domain.body.id,
    invites: invite.id,
  };
  return {
    ...tenant,
    pathFor(template: string) {
      return template
        .replace("{organization_id}", tenant.organization.id)
        .replace("{project_id}", String(tenant.project.id))
        .replace("{user__uuid}", member.user.uuid)
        .replace("{invite_id}", invite.id)
        .replace("{access_token}", sharing.body.access_token)
        .replace(/([a-z_]+)\/\{id\}/g, (_, collection: string) => `${collection}/${idAfter[collection] ?? "1"}`)
        .replace(/\{[a-z_]+\}/g, "1");
    },
  };
}

function expectErrorShape(status: number, body: unknown, label: string) {
  expect(body, label).toEqual({
    type: expect.any(String),
    code: expect.any(String),
    detail: expect.any(String),
    attr: expect.toSatisfy((attr: unknown) => attr === null || typeof attr === "string"),
  });
  expect(Object.keys(body as object).sort(), label).toEqual(["attr", "code", "detail", "type"]);
  expect(status, label).toBeLessThan(500);
}

/** A write operation of the OpenAPI document, as the fuzz picks them. */
type FuzzedOperation = Pick<WriteOperation, "method" | "path">;

/**
 * Fuzzes the write operations `select` keeps (test/platform/fuzz-writes-*.test.ts share them out,
 * so that the test pool runs them side by side).
 */
export async function fuzzWriteOperations(select: (operation: FuzzedOperation) => boolean) {
  const document = (await api("GET", "/api/schema")).body as Document;
  const operations = writeOperations(document).filter(select);
  expect(operations.length).toBeGreaterThan(5);
  const tenant = await arrangeTenant();
  // Domain verification asks a DNS resolver: it finds no record, without leaving the test.
  vi.spyOn(globalThis, "fetch").mockImplementation(async () => Response.json({ Status: 3 }));
  const keys = await Promise.all(
    Array.from({ length: Math.ceil((operations.length * RUNS_PER_OPERATION) / REQUESTS_PER_KEY) + 1 }, () =>
      createApiKey(tenant.owner).then((created) => created.value),
    ),
  );
  await markKeysUsed();

  let sent = 0;
  let digest = await databaseDigest();
  for (const operation of operations) {
    const path = tenant.pathFor(operation.path);
    await fc.assert(
      fc.asyncProperty(requestBody(operation, document), async ({ text, mustRefuse }) => {
        const key = keys[Math.floor(sent / REQUESTS_PER_KEY)]!;
        sent += 1;
        const response = await api(operation.method, path, { key, body: text });
        const label = `${operation.method} ${path} ${typeof text === "string" ? text.slice(0, 300) : "bytes"}`;
        expect(response.status, label).toBeLessThan(500);
        if (mustRefuse) expect(response.status, label).toBe(400);
        const after = await databaseDigest();
        if (response.status >= 400) {
          expectErrorShape(response.status, response.body, label);
          expect(after, label).toEqual(digest);
        }
        digest = after;
      }),
      { numRuns: RUNS_PER_OPERATION, endOnFailure: true },
    );
  }
  console.log(`fuzz: ${sent} bodies over ${operations.length} write operations`);
  expect(sent).toBe(operations.length * RUNS_PER_OPERATION);
}
