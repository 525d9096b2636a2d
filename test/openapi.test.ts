import { describe, expect, it } from "vitest";
import { api } from "./support/harness";

type Schema = Record<string, unknown>;
type Operation = {
  operationId: string;
  tags: string[];
  description: string;
  security: Record<string, string[]>[];
  parameters?: { name: string; in: string; schema: Schema }[];
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses: Record<string, { content?: Record<string, { example?: unknown }> }>;
};
type Document = {
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties: Record<string, Schema> }> };
};

async function openApiDocument() {
  const response = await api("GET", "/api/schema");
  expect(response.status).toBe(200);
  return response.body as Document;
}

/**
 * A time by its name (`*_at`, `*_until`, `date_*`, PostHog's `last_login`, ranges' ends) or by an
 * example that is one; a cursor named `after` has no such example.
 */
const TIME_NAMES = /(_at|_until|^date_.*|^last_login|^last_refresh|^since|^until|^from|^to)$/;
const isTime = (name: string, schema: Schema) =>
  TIME_NAMES.test(name) || /^\d{4}-\d{2}-\d{2}T/.test(String(schema.example ?? ""));

const operationsOf = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ label: `${method.toUpperCase()} ${path}`, operation })),
  );

describe("the OpenAPI document", () => {
  it("names every operation as PostHog does, once", async () => {
    const operations = operationsOf(await openApiDocument());
    const ids = Object.fromEntries(operations.map(({ label, operation }) => [label, operation.operationId]));
    expect(ids).toMatchObject({
      "GET /api/users/@me": "users_retrieve",
      "GET /api/organizations": "organizations_list",
      "GET /api/organizations/{organization_id}/members": "organizations_members_list",
      "PATCH /api/organizations/{organization_id}/members/{user__uuid}": "organizations_members_partial_update",
      "POST /api/organizations/{organization_id}/invites/bulk": "organizations_invites_bulk_create",
      "DELETE /api/organizations/{organization_id}/invites/{id}": "organizations_invites_destroy",
      "GET /api/environments/{project_id}/dashboards/{id}": "environments_dashboards_retrieve",
      "PATCH /api/projects/{project_id}/dashboards/{id}/move_tile": "projects_dashboards_move_tile_partial_update",
      "POST /api/signup/{token}": "signup_create",
    });
    expect(new Set(Object.values(ids)).size).toBe(operations.length);
  });

  it("describes every tag it uses, and says each operation's scope", async () => {
    const document = await openApiDocument();
    const declared = document.tags.map((tag) => tag.name);
    for (const { label, operation } of operationsOf(document)) {
      expect(declared, `${label}: add its tag to TAGS in src/openapi.ts`).toEqual(
        expect.arrayContaining(operation.tags),
      );
      const scope = operation.security[0]?.PersonalAPIKey?.[0];
      if (scope) expect(operation.description, label).toContain(`\`${scope}\``);
    }
    expect(document.servers).toEqual([{ url: "/", description: "This server" }]);
  });

  it("shows a request and a response example on every operation", async () => {
    for (const { label, operation } of operationsOf(await openApiDocument())) {
      for (const media of Object.values(operation.requestBody?.content ?? {}))
        expect(media.example, label).toBeDefined();
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith("2"));
      for (const media of Object.values(success?.[1].content ?? {})) expect(media.example, label).toBeDefined();
    }
  });

  it("documents 413, 415, 429 and 500 once, in the shared error responses", async () => {
    const document = await openApiDocument();
    const invites = document.paths["/api/organizations/{organization_id}/invites"]!.post!;
    expect(Object.keys(invites.responses).sort()).toEqual([
      "201",
      "400",
      "401",
      "403",
      "404",
      "409",
      "413",
      "415",
      "422",
      "429",
      "500",
    ]);
    expect(Object.keys(document.paths["/api/signup/{token}"]!.post!.responses)).toEqual(
      expect.arrayContaining(["413", "415", "500"]),
    );
  });

  it("takes Idempotency-Key on every authenticated POST, as one shared parameter", async () => {
    const document = (await openApiDocument()) as Document & {
      components: { parameters: Record<string, { name: string; in: string }> };
    };
    expect(document.components.parameters.IdempotencyKey).toMatchObject({ name: "Idempotency-Key", in: "header" });
    const reference = { $ref: "#/components/parameters/IdempotencyKey" };
    for (const { label, operation } of operationsOf(document)) {
      const takesKey = (operation.parameters ?? []).some((parameter) => "$ref" in parameter);
      const authenticatedPost = label.startsWith("POST ") && operation.security.length > 0;
      expect({ label, takesKey }).toEqual({ label, takesKey: authenticatedPost });
      if (takesKey) expect(operation.parameters).toContainEqual(reference);
    }
  });

  it("types every time as a date-time: answers, bodies and parameters", async () => {
    const document = await openApiDocument();
    const untyped: string[] = [];
    let times = 0;
    /** Every schema under `node`, however deep (properties, items, unions), with the name it has. */
    const visit = (node: unknown, path: string, name: string) => {
      if (node === null || typeof node !== "object") return;
      const schema = node as Schema & {
        properties?: Record<string, unknown>;
        items?: unknown;
        anyOf?: unknown[];
        allOf?: unknown[];
      };
      const types = [schema.type].flat();
      if (types.includes("string") && isTime(name, schema)) {
        times += 1;
        if (schema.format !== "date-time") untyped.push(path);
      }
      for (const [property, value] of Object.entries(schema.properties ?? {})) {
        visit(value, `${path}.${property}`, property);
      }
      visit(schema.items, `${path}[]`, name);
      for (const variant of [...(schema.anyOf ?? []), ...(schema.allOf ?? [])]) visit(variant, path, name);
    };
    for (const [name, schema] of Object.entries(document.components.schemas)) visit(schema, name, name);
    for (const { label, operation } of operationsOf(document)) {
      for (const parameter of operation.parameters ?? []) {
        visit(parameter.schema, `${label} ${parameter.in} ${parameter.name}`, parameter.name);
      }
      const media = [
        ...Object.values(operation.requestBody?.content ?? {}),
        ...Object.values(operation.responses).flatMap((response) => Object.values(response.content ?? {})),
      ] as { schema?: unknown }[];
      for (const content of media) visit(content.schema, label, "");
    }
    expect(Object.keys(document.components.schemas).length).toBeGreaterThan(20);
    expect(times).toBeGreaterThan(50);
    expect(untyped).toEqual([]);
  });

  it("describes every operation, and every parameter of every operation", async () => {
    const document = (await openApiDocument()) as Document & {
      components: { parameters: Record<string, { description?: string }> };
    };
    const undescribed: string[] = [];
    for (const { label, operation } of operationsOf(document)) {
      if (!operation.description?.trim()) undescribed.push(label);
      for (const parameter of (operation.parameters ?? []) as ({ $ref?: string } & Schema)[]) {
        const shared = parameter.$ref ? document.components.parameters[parameter.$ref.split("/").at(-1)!] : undefined;
        const described = (shared ?? parameter) as { name?: string; in?: string; description?: string };
        if (!described.description?.trim()) undescribed.push(`${label} ${described.in} ${described.name}`);
      }
    }
    expect(operationsOf(document).length).toBeGreaterThan(100);
    expect(undescribed).toEqual([]);
  });

  it("lets embedded users be null and numeric parameters be integers", async () => {
    const document = await openApiDocument();
    expect(document.components.schemas.Invite!.properties.created_by).toEqual({
      anyOf: [{ $ref: "#/components/schemas/UserBasic" }, { type: "null" }],
    });
    // The components themselves stay non-null, whichever route embeds them as nullable first.
    const components = document.components.schemas as Record<string, { type?: unknown }>;
    for (const name of ["UserBasic", "Organization", "DashboardInsight", "DashboardText"]) {
      expect(components[name]!.type, name).toBe("object");
    }
    const parameters = document.paths["/api/environments/{project_id}/dashboards/{id}"]!.get!.parameters ?? [];
    const schemaOf = (name: string) => parameters.find((parameter) => parameter.name === name)?.schema;
    expect(schemaOf("id")).toMatchObject({ type: "integer" });
    expect(schemaOf("project_id")).toMatchObject({
      anyOf: [{ type: "integer" }, { type: "string", enum: ["@current"] }],
    });
    const sharing = document.paths["/api/projects/{project_id}/dashboards/{dashboard_id}/sharing"]!.get!;
    expect(sharing.parameters?.find((parameter) => parameter.name === "dashboard_id")?.schema).toMatchObject({
      type: "integer",
    });
    const dashboards = document.paths["/api/environments/{project_id}/dashboards"]!.get!.parameters ?? [];
    expect(dashboards.find((parameter) => parameter.name === "pinned")?.schema).toMatchObject({ type: "boolean" });
    const list = document.paths["/api/organizations/{organization_id}/members"]!.get!.parameters ?? [];
    expect(
      list.filter((parameter) => parameter.in === "query" && ["limit", "offset"].includes(parameter.name)),
    ).toEqual([
      expect.objectContaining({ name: "limit", schema: expect.objectContaining({ type: "integer" }) }),
      expect.objectContaining({ name: "offset", schema: expect.objectContaining({ type: "integer" }) }),
    ]);
  });
});
