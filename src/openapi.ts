import type { Context } from "hono";
import { Insight, Text } from "./environments/dashboards/dashboards.schema";
import { Organization, TeamBasic } from "./organizations/organizations.schema";
import { UserBasic } from "./platform/user-basic";
import type { AppEnv } from "./platform/env";
import { SCOPES } from "./platform/auth/scopes";
import { IDEMPOTENCY_KEY_HEADER, MAX_IDEMPOTENCY_KEY_LENGTH, REPLAYED_HEADER } from "./platform/idempotency";
import { exampleOf, type JsonSchema } from "./platform/openapi-examples";
import { configuredBaseUrl } from "./platform/public-url";
import type { Router } from "./platform/router";

type OpenApiDocument = ReturnType<Router["getOpenAPI31Document"]>;
type MediaType = { schema?: JsonSchema; example?: unknown };
type Operation = {
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: unknown[];
  requestBody?: { content?: Record<string, MediaType> };
  responses?: Record<string, { content?: Record<string, MediaType> }>;
};

/** Every tag an operation may carry, with what it groups; a test checks that each one is here. */
const TAGS = [
  { name: "users", description: "The caller: `GET /api/users/@me`." },
  {
    name: "organizations",
    description: "Organizations the caller belongs to; creating one makes the caller its owner.",
  },
  { name: "members", description: "Members of an organization and their levels (member 1, admin 8, owner 15)." },
  { name: "invites", description: "Invitations by e-mail, one at a time or up to 20 at once." },
  { name: "signup", description: "Joining an organization by invite, without a key." },
  { name: "projects", description: "Projects of an organization; each has an environment with the same id." },
  { name: "domains", description: "Authentication domains, verified by a DNS TXT record." },
  { name: "batch_exports", description: "Scheduled exports of a project's data to a destination." },
  { name: "dashboards", description: "An environment's dashboards and their tiles." },
  { name: "sharing", description: "A dashboard's public link, and the public page it opens." },
  { name: "roles", description: "An organization's roles and their members, whom access rules may name." },
  {
    name: "access_controls",
    description: "Access rules for a member, a role or everyone, on dashboards, projects and kinds of resources.",
  },
  { name: "environments", description: "A project's environment (the same id), in PostHog's Team shape." },
  { name: "activity log", description: "Who changed what, when: every write, in a hash chain per organization." },
  {
    name: "webhooks",
    description: "Signed deliveries of the activity log's events to your endpoints (Standard Webhooks).",
  },
  {
    name: "personal_api_keys",
    description: "The caller's personal API keys; a value is shown once, at creation or roll. See docs/keys.md.",
  },
  {
    name: "service_keys",
    description:
      "Keys an organization owns (`pho_`): they act as the organization, as an admin, not as a person. " +
      "See docs/keys.md.",
  },
  {
    name: "api_keys",
    description:
      "Every key that reaches an organization, for its admins: members' personal keys and service keys. " +
      "See docs/keys.md.",
  },
  { name: "operations", description: "For load balancers and uptime checks; no key." },
];

/** Components that some routes embed as nullable. */
const EMBEDDED_COMPONENTS = { UserBasic, Organization, TeamBasic, DashboardInsight: Insight, DashboardText: Text };

const SCOPE_DESCRIPTION = [
  "A personal API key (`phx_...`) sent as `Authorization: Bearer <key>` (as PostHog, also read, when that header",
  "is absent, from a JSON body's `personal_api_key` field, then from the `personal_api_key` query parameter).",
  "An expired key answers 401 with code `api_key_expired`; an unknown or revoked one, `authentication_failed`.",
  "Each operation lists the scope it requires; `*` grants all, `X:write` implies `X:read`. Scopes:",
  "",
  ...SCOPES.map((scope) => `- \`${scope}\``),
].join("\n");

/**
 * zod-to-openapi writes a nullable reference as `allOf: [$ref, {type: [object, null]}]`, which no
 * validator accepts `null` for (the reference still demands an object) and which generated
 * clients type as non-null. `anyOf` says what the API does.
 */
function nullableReferences(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nullableReferences);
  if (node === null || typeof node !== "object") return node;
  const entries = Object.entries(node).map(([key, value]) => [key, nullableReferences(value)] as const);
  const schema = Object.fromEntries(entries) as JsonSchema & Record<string, unknown>;
  const [reference, nullable, ...rest] = schema.allOf ?? [];
  if (reference?.$ref && Array.isArray(nullable?.type) && nullable.type.includes("null") && rest.length === 0) {
    const { allOf: _replaced, ...others } = schema;
    return { ...others, anyOf: [reference, { type: "null" }] };
  }
  return schema;
}

/** A request and a response example on every operation, unless a route wrote its own. */
function addExamples(document: OpenApiDocument) {
  const components = (document.components?.schemas ?? {}) as Record<string, JsonSchema>;
  const media = (content: Record<string, MediaType> | undefined) => Object.values(content ?? {});
  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(pathItem as Record<string, Operation>)) {
      const successes = Object.entries(operation.responses ?? {}).filter(([status]) => status.startsWith("2"));
      const targets = [
        ...media(operation.requestBody?.content),
        ...successes.flatMap(([, response]) => media(response.content)),
      ];
      for (const target of targets) {
        if (target.schema && target.example === undefined) target.example = exampleOf(target.schema, components);
      }
    }
  }
  return document;
}

const IDEMPOTENCY_KEY_DESCRIPTION = [
  `Optional, at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters: a retry with the same key, by the same personal API`,
  "key, with the same path and body, within 24 hours, gets the first success again (status and body) with",
  `\`${REPLAYED_HEADER}: true\`, and nothing is done twice. The same key with another request answers 422`,
  "`idempotency_key_reused`; while the first request runs, 409 `idempotency_key_in_use`. A failure frees the key.",
  "See docs/idempotency.md.",
].join("\n");

const errorReference = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

/** Every authenticated POST takes `Idempotency-Key`: one shared parameter, and the answers it adds. */
function addIdempotencyKey(document: OpenApiDocument) {
  for (const pathItem of Object.values(document.paths ?? {})) {
    const operation = (pathItem as Record<string, Operation>).post;
    if (!operation?.security?.some((requirement) => "PersonalAPIKey" in requirement)) continue;
    operation.parameters = [...(operation.parameters ?? []), { $ref: "#/components/parameters/IdempotencyKey" }];
    operation.responses = {
      ...operation.responses,
      409: operation.responses?.["409"] ?? errorReference("Conflicts, or the Idempotency-Key's first request runs."),
      422: errorReference("The Idempotency-Key was used with another request."),
    };
  }
  return document;
}

/** OpenAPI 3.1's SPDX form, which the generator's types predate (hence not written inline). */
const LICENSE = { name: "Proprietary", identifier: "LicenseRef-Proprietary" };

/** The document `/api/schema` serves, less `servers`; scripts/generate-endpoint-reference.mjs builds it too. */
export function buildDocument(app: Router): OpenApiDocument {
  // The generator keeps, as a component, the first form of a schema it meets; a route that embeds
  // one as nullable (`created_by`, `@me`'s `organization`) would make the component itself
  // nullable. Registered schemas are generated before any route, as themselves.
  for (const [name, schema] of Object.entries(EMBEDDED_COMPONENTS)) app.openAPIRegistry.register(name, schema);
  app.openAPIRegistry.registerComponent("securitySchemes", "PersonalAPIKey", {
    type: "http",
    scheme: "bearer",
    description: SCOPE_DESCRIPTION,
  });
  app.openAPIRegistry.registerComponent("parameters", "IdempotencyKey", {
    name: IDEMPOTENCY_KEY_HEADER,
    in: "header",
    required: false,
    description: IDEMPOTENCY_KEY_DESCRIPTION,
    schema: { type: "string", minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
  });
  const document = app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Organization and environment management API",
      version: "1.0.0",
      description:
        "PostHog-compatible management of organizations, projects and environment dashboards. " +
        "Errors share one body: `{type, code, detail, attr}`.",
      license: LICENSE,
    },
    tags: TAGS,
  });
  return addIdempotencyKey(addExamples(nullableReferences(document) as OpenApiDocument));
}

/**
 * The OpenAPI 3.1 document at `/api/schema`, generated from the same route definitions that
 * validate requests. Built once per isolate. `servers` is `PUBLIC_BASE_URL` when set, else `/`:
 * relative to wherever the document was fetched from.
 */
export function serveOpenApiDocument(app: Router) {
  let document: OpenApiDocument | undefined;
  app.get("/api/schema", (c: Context<AppEnv>) => {
    document ??= buildDocument(app);
    const url = configuredBaseUrl(c.env) ?? "/";
    return c.json({ ...document, servers: [{ url, description: "This server" }] });
  });
}
