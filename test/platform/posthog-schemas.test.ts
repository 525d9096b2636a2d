import Ajv, { type ValidateFunction } from "ajv";
import { describe, expect, it } from "vitest";
import schemas from "../fixtures/posthog-response-schemas.json";
import { addMembership, api, createUser, setupOrganization } from "../support/harness";

/*
 * PostHog's clients validate what they read against PostHog's published schemas: so do we. Ajv
 * compiles schemas into functions (`new Function`); workerd refuses that in a deployed Worker,
 * but the test pool runs with code generation allowed, and Ajv is a dev dependency only, never
 * part of the Worker.
 */
const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addSchema({ $id: "posthog", definitions: schemas.definitions });

type OperationName = keyof typeof schemas.operations;

function validatorFor(operation: OperationName): ValidateFunction {
  const reference = schemas.operations[operation].schema.$ref;
  const validate = ajv.getSchema(`posthog${reference}`);
  if (!validate) throw new Error(`no schema at ${reference}`);
  return validate;
}

/** One organization with something of every kind, made through the API, and where each operation reads it. */
async function arrangeEverything() {
  const { organization, project, key } = await setupOrganization();
  const colleague = await createUser({ roleAtOrganization: "engineering" });
  await addMembership(organization.id, colleague, 8);
  await api("PATCH", "/api/users/@me", { key, body: { role_at_organization: "founder", theme_mode: "dark" } });
  const post = async (path: string, body: unknown) => {
    const response = await api("POST", path, { key, body });
    expect(response.status, path).toBeLessThan(300);
    return response.body as { id: string | number };
  };
  const domain = await post(`/api/organizations/${organization.id}/domains`, { domain: `d${Date.now()}.example.com` });
  await post(`/api/organizations/${organization.id}/invites`, { target_email: "invitee@example.com", level: 8 });
  const batchExport = await post(`/api/environments/${project.id}/batch_exports`, {
    name: "Events to S3",
    interval: "hour",
    destination: {
      type: "S3",
      config: { bucket_name: "b", region: "eu-west-1", prefix: "", aws_secret_access_key: "s" },
    },
  });
  const dashboard = await post(`/api/environments/${project.id}/dashboards`, {
    name: "Overview",
    use_template: "DEFAULT_APP",
  });
  const dashboardPath = `/api/environments/${project.id}/dashboards/${dashboard.id}`;
  const organizationPath = `/api/organizations/${organization.id}`;
  const batchExportPath = `${organizationPath}/batch_exports/${batchExport.id}`;
  const paths: Record<OperationName, string> = {
    "GET /api/users/@me/": "/api/users/@me/",
    "GET /api/organizations/": "/api/organizations/",
    "GET /api/organizations/{id}/": `/api/organizations/${organization.id}/`,
    "GET /api/organizations/{organization_id}/projects/": `/api/organizations/${organization.id}/projects/`,
    "GET /api/organizations/{organization_id}/projects/{id}/": `${organizationPath}/projects/${project.id}/`,
    "GET /api/projects/{id}/": `/api/projects/${project.id}/`,
    "GET /api/organizations/{organization_id}/domains/": `/api/organizations/${organization.id}/domains/`,
    "GET /api/organizations/{organization_id}/domains/{id}/": `${organizationPath}/domains/${domain.id}/`,
    "GET /api/organizations/{organization_id}/invites/": `/api/organizations/${organization.id}/invites/`,
    "GET /api/organizations/{organization_id}/members/": `/api/organizations/${organization.id}/members/`,
    "GET /api/organizations/{organization_id}/batch_exports/": `/api/organizations/${organization.id}/batch_exports/`,
    "GET /api/organizations/{organization_id}/batch_exports/{id}/": `${batchExportPath}/`,
    "GET /api/environments/{project_id}/dashboards/": `/api/environments/${project.id}/dashboards/`,
    "GET /api/environments/{project_id}/dashboards/{id}/": `${dashboardPath}/`,
    "GET /api/environments/{project_id}/dashboards/{dashboard_id}/collaborators/": `${dashboardPath}/collaborators/`,
    "GET /api/environments/{project_id}/dashboards/{dashboard_id}/sharing/": `${dashboardPath}/sharing/`,
  };
  return { key, paths };
}

/** An operation whatever its parameters are called and with or without the trailing slash. */
const normalize = (operation: string) => operation.replace(/\{[a-z_]+\}/g, "{}").replace(/\/$/, "");

/** The operations this build serves, by its OpenAPI document. */
async function servedOperations(): Promise<Set<string>> {
  const document = (await api("GET", "/api/schema")).body as { paths: Record<string, Record<string, unknown>> };
  return new Set(
    Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => normalize(`${method.toUpperCase()} ${path}`)),
    ),
  );
}

describe("PostHog's published response schemas", () => {
  it("are all checked: every operation of the fixture has a path here", async () => {
    const { paths } = await arrangeEverything();
    expect(Object.keys(paths).sort()).toEqual(Object.keys(schemas.operations).sort());
  });

  it("catch what is missing: a body without a required field fails", async () => {
    const { key } = await setupOrganization();
    const { team: _team, ...withoutTeam } = (await api("GET", "/api/users/@me", { key })).body;
    const validate = validatorFor("GET /api/users/@me/");
    expect(validate(withoutTeam)).toBe(false);
    expect(validate.errors?.[0]?.params).toEqual({ missingProperty: "team" });
  });

  it.for(Object.keys(schemas.operations) as OperationName[])("%s validates", async (operation, context) => {
    // Collaborators and sharing come with their own resources: checked as soon as this build serves them.
    if (!(await servedOperations()).has(normalize(operation))) context.skip();
    const { key, paths } = await arrangeEverything();
    const response = await api("GET", paths[operation], { key });
    expect(response.status).toBe(schemas.operations[operation].status);
    const validate = validatorFor(operation);
    const valid = validate(response.body);
    expect(validate.errors ?? [], JSON.stringify(response.body).slice(0, 2000)).toEqual([]);
    expect(valid).toBe(true);
  });
});
