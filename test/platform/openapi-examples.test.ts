import { afterEach, describe, expect, it, vi } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { addMembership, api, createUser, setupOrganization } from "../support/harness";

/*
 * A client generated from `/api/schema` sends what the document describes, its examples first:
 * the request examples of operations whose fields have rules between them are written by hand,
 * and the server must take them as they are (with real ids in place of the example's).
 */

type Schema = Record<string, unknown>;
type Operation = { requestBody?: { content: Record<string, { schema: Schema; example?: unknown }> } };
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

afterEach(() => {
  vi.restoreAllMocks();
});

async function openApiDocument(): Promise<Document> {
  const response = await api("GET", "/api/schema");
  expect(response.status).toBe(200);
  return response.body as Document;
}

/** An organization with real objects of every kind the examples below name, made by its owner through the API. */
async function makeWorld() {
  const team = await setupOrganization();
  const { key, organization, project } = team;
  const environment = `/api/environments/${project.id}`;
  const send = async (method: string, path: string, body?: unknown) => {
    const response = await api(method, path, { key, body });
    expect(response.status, `${method} ${path}: ${response.text}`).toBeLessThan(300);
    return response.body;
  };
  const memberUser = await createUser();
  const membership = await addMembership(organization.id, memberUser, MembershipLevel.member);
  const dashboard = await send("POST", `${environment}/dashboards`, { name: "Revenue" });
  const otherDashboard = await send("POST", `${environment}/dashboards`, { name: "Costs" });
  await send("PATCH", `${environment}/dashboards/${dashboard.id}`, { restriction_level: 37 });
  const role = await send("POST", `/api/organizations/${organization.id}/roles`, { name: "Analysts" });
  const batchExport = await send("POST", `${environment}/batch_exports`, {
    name: "Nightly",
    interval: "hour",
    destination: { type: "S3", config: { bucket_name: "bucket", region: "us-east-1", prefix: "events/" } },
  });
  return { key, organization, project, memberUser, membership, dashboard, otherDashboard, role, batchExport };
}
type World = Awaited<ReturnType<typeof makeWorld>>;

/** The path with every `{name}` replaced by a real object of the world. */
function fillPath(template: string, world: World) {
  return template
    .replace("{organization_id}", world.organization.id)
    .replace("{project_id}", String(world.project.id))
    .replace(/^\/api\/projects\/\{id\}/, `/api/projects/${world.project.id}`)
    .replace("{dashboard_id}", String(world.dashboard.id))
    .replace("/dashboards/{id}", `/dashboards/${world.dashboard.id}`)
    .replace("/batch_exports/{id}", `/batch_exports/${world.batchExport.id}`);
}

/**
 * The example as a client would send it after reading the document: the ids it names (a user, a
 * membership, a role, a dashboard) replaced by real ones of the caller's organization.
 */
function withRealIds(example: unknown, world: World): unknown {
  if (example === null || typeof example !== "object" || Array.isArray(example)) return example;
  const ids: Record<string, unknown> = {
    user_uuid: world.memberUser.uuid,
    organization_member: world.membership.id,
    role: world.role.id,
    use_dashboard: world.otherDashboard.id,
  };
  return Object.fromEntries(
    Object.entries(example).map(([name, value]) => [name, name in ids && value !== null ? ids[name] : value]),
  );
}

/**
 * Operations whose request example an example built from the types alone would get wrong: a
 * field's rules (an IANA zone, a level of the resource) or rules between fields. The
 * `/api/projects/{project_id}/...` twins publish the same examples.
 */
const REFUSED_EXAMPLES = [
  // from == to: "Must be after `from`" (both take the property's one example, 2026-01-01T00:00:00Z).
  ["POST", "/api/organizations/{organization_id}/activity_log/exports"],
  // use_template "string" with use_dashboard: "cannot be used together"; "string" alone: "Invalid template provided".
  ["POST", "/api/environments/{project_id}/dashboards"],
  // access_level "string", and both organization_member and role: "You can not scope ... to both a member and a role."
  ["PUT", "/api/environments/{project_id}/access_controls"],
  ["PUT", "/api/environments/{project_id}/dashboards/{id}/access_controls"],
  ["PUT", "/api/environments/{project_id}/resource_access_controls"],
  // level 21 (the enum's first value): "Only edit access can be explicitly specified currently."
  ["POST", "/api/environments/{project_id}/dashboards/{dashboard_id}/collaborators"],
  // destination S3 with config {}: "destination.config.bucket_name: This field is required."
  ["POST", "/api/environments/{project_id}/batch_exports"],
  // timezone "string", then start_at == end_at, then offset_day and offset_hour 0 with interval "hour".
  ["PATCH", "/api/environments/{project_id}/batch_exports/{id}"],
  ["PUT", "/api/environments/{project_id}/batch_exports/{id}"],
  // settings null: "Invalid settings format" (see the test below).
  ["PATCH", "/api/environments/{project_id}/dashboards/{dashboard_id}/sharing"],
  // timezone "string": "\"string\" is not a valid choice."
  ["PATCH", "/api/projects/{project_id}"],
  ["PUT", "/api/projects/{project_id}"],
  ["PATCH", "/api/environments/{project_id}"],
] as const;

describe("a client generated from /api/schema", () => {
  it.each(REFUSED_EXAMPLES)("can send the document's own request example: %s %s", async (method, template) => {
    // Receivers and resolvers are never called by these operations; stubbed so that none leaves the test.
    vi.spyOn(globalThis, "fetch").mockResolvedValue(new Response("ok"));
    const document = await openApiDocument();
    const media = document.paths[template]![method.toLowerCase()]!.requestBody!.content["application/json"]!;
    expect(media.example, `${method} ${template} publishes a request example`).toBeDefined();
    const world = await makeWorld();
    const body = withRealIds(media.example, world);
    const response = await api(method, fillPath(template, world), { key: world.key, body });
    expect(
      response.status,
      `${method} ${template}: the document's example ${JSON.stringify(body)} was answered ${response.status} ` +
        response.text,
    ).toBeLessThan(300);
  });

  it("may send `settings: null` on a dashboard's sharing, which clears them, as in PostHog", async () => {
    const document = await openApiDocument();
    const sharing = document.components.schemas.UpdateSharingConfiguration as { properties: Record<string, Schema> };
    expect(sharing.properties.settings!.type).toEqual(["object", "null"]);
    const world = await makeWorld();
    const path = `/api/environments/${world.project.id}/dashboards/${world.dashboard.id}/sharing`;

    const response = await api("PATCH", path, { key: world.key, body: { settings: null } });

    // PostHog: `settings = serializers.JSONField(required=False, allow_null=True)`; None is no settings.
    expect(response.status, `PATCH ${path} {"settings":null} was answered ${response.status} ${response.text}`).toBe(
      200,
    );
    expect(response.body.settings).toEqual({});
  });
});
