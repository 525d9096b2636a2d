import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { openDestination } from "../../src/environments/batch-exports/destination-secrets";
import { MembershipLevel } from "../../src/platform/levels";
import { loadKeyring } from "../../src/platform/secrets";
import { beforeWrites } from "../support/races";
import {
  addMember,
  api,
  createApiKey,
  createProject,
  db,
  errorBody,
  ISO_TIMESTAMP,
  setupOrganization,
  UUID,
  nextLink,
  previousLink,
} from "../support/harness";
import {
  AUTHENTICATION_FAILED,
  NOT_AUTHENTICATED,
  NOT_FOUND,
  expectError,
  missingScope,
} from "../support/error-bodies";
import { countBytesRead } from "../support/d1-limits";

const exportsPath = (projectId: number | string, tree = "environments") => `/api/${tree}/${projectId}/batch_exports`;

const S3_CONFIG = { bucket_name: "my-bucket", region: "us-east-1", prefix: "posthog/events/" };
const S3_SECRETS = { aws_access_key_id: "AKIAEXAMPLE", aws_secret_access_key: "s3cr3t" };
const S3_EXPORT = {
  name: "Events to S3",
  interval: "hour",
  destination: { type: "S3", config: { ...S3_CONFIG, ...S3_SECRETS } },
};

/** The whole body of an export created from S3_EXPORT, with what a test changed. */
const s3ExportBody = (teamId: number, changes: Record<string, unknown> = {}) => ({
  id: expect.stringMatching(UUID),
  team_id: teamId,
  name: "Events to S3",
  model: "events",
  destination: { type: "S3", config: S3_CONFIG },
  interval: "hour",
  paused: false,
  created_at: expect.stringMatching(ISO_TIMESTAMP),
  last_updated_at: expect.stringMatching(ISO_TIMESTAMP),
  last_paused_at: null,
  start_at: null,
  end_at: null,
  hogql_query: "",
  filters: null,
  timezone: "UTC",
  offset_day: null,
  offset_hour: null,
  latest_runs: [],
  schema: null,
  ...changes,
});

async function createExport(projectId: number, key: string, body: Record<string, unknown> = {}) {
  const response = await api("POST", exportsPath(projectId), { key, body: { ...S3_EXPORT, ...body } });
  expect(response.status).toBe(201);
  return response.body as { id: string; created_at: string; last_updated_at: string };
}

/** Secrets never come back through the API, so whether they are kept is read from D1 (and opened). */
async function storedConfig(id: string) {
  const [row] = await db.select().from(schema.batchExports).where(eq(schema.batchExports.id, id));
  return row && openDestination(await loadKeyring(env), row);
}

afterEach(() => {
  vi.useRealTimers();
});

describe("POST /api/environments/:project_id/batch_exports", () => {
  it("creates an S3 export with PostHog's defaults, and never returns its secrets", async () => {
    const { project, key } = await setupOrganization();
    await api("GET", exportsPath(project.id), { key });
    const response = await api("POST", `${exportsPath(project.id)}/`, {
      key,
      body: { ...S3_EXPORT, id: "ignored", team_id: 1 },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual(s3ExportBody(project.id));
    expect(response.body.created_at).toBe(response.body.last_updated_at);
    expect(response.cost.queries).toBe(2);
    expect(await storedConfig(response.body.id)).toEqual({ ...S3_CONFIG, ...S3_SECRETS });
  });

  it("stores every field it is given, in UTC", async () => {
    const { project, key } = await setupOrganization();
    const response = await api("POST", exportsPath(project.id), {
      key,
      body: {
        ...S3_EXPORT,
        model: "persons",
        interval: "every 5 minutes",
        paused: true,
        start_at: "2026-03-01T02:00:00+02:00",
        end_at: "2026-04-01T00:00:00Z",
        hogql_query: "SELECT event FROM events",
        filters: [{ key: "$browser", value: ["Chrome"], type: "event", operator: "exact" }],
        timezone: "Europe/Paris",
      },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual(
      s3ExportBody(project.id, {
        model: "persons",
        interval: "every 5 minutes",
        paused: true,
        last_paused_at: response.body.created_at,
        start_at: "2026-03-01T00:00:00.000Z",
        end_at: "2026-04-01T00:00:00.000Z",
        hogql_query: "SELECT event FROM events",
        filters: [{ key: "$browser", value: ["Chrome"], type: "event", operator: "exact" }],
        timezone: "Europe/Paris",
      }),
    );
  });

  it.each([
    [
      "Snowflake",
      { account: "acme", user: "loader", database: "db", warehouse: "wh", schema: "public", password: "pw", role: "r" },
      { account: "acme", database: "db", warehouse: "wh", schema: "public", role: "r" },
    ],
    [
      "Postgres",
      { user: "u", password: "pw", host: "db.example.com", database: "posthog", port: 5433 },
      { host: "db.example.com", database: "posthog", port: 5433 },
    ],
    [
      "Redshift",
      { user: "u", password: "pw", host: "rs.example.com", database: "dev", properties_data_type: "super" },
      { host: "rs.example.com", database: "dev", properties_data_type: "super" },
    ],
    [
      "BigQuery",
      {
        project_id: "p",
        dataset_id: "d",
        private_key: "k",
        private_key_id: "kid",
        token_uri: "https://oauth2.googleapis.com/token",
        client_email: "sa@p.iam.gserviceaccount.com",
        table_id: "events",
      },
      { project_id: "p", dataset_id: "d", table_id: "events" },
    ],
    ["HTTP", { url: "https://ingest.example.com/batch", token: "tok" }, { url: "https://ingest.example.com/batch" }],
    ["NoOp", {}, {}],
  ])("creates a %s export and strips its secrets", async (type, config, shown) => {
    const { project, key } = await setupOrganization();
    const response = await api("POST", exportsPath(project.id), {
      key,
      body: { ...S3_EXPORT, destination: { type, config } },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual(s3ExportBody(project.id, { destination: { type, config: shown } }));
    expect(await storedConfig(response.body.id)).toEqual(config);
  });

  it("takes a whole number or a yes/no sent as text, as PostHog's forms send them, and stores it typed", async () => {
    const { project, key } = await setupOrganization();
    const postgres = { user: "u", password: "pw", host: "db.example.com", database: "d" };
    const response = await api("POST", exportsPath(project.id), {
      key,
      body: {
        ...S3_EXPORT,
        destination: { type: "Postgres", config: { ...postgres, port: " 5432 ", has_self_signed_cert: "True" } },
      },
    });
    expect(response.status).toBe(201);
    const shown = { host: "db.example.com", database: "d", port: 5432, has_self_signed_cert: true };
    expect(response.body.destination).toEqual({ type: "Postgres", config: shown });
    expect(await storedConfig(response.body.id)).toEqual({ ...postgres, port: 5432, has_self_signed_cert: true });
  });

  it("takes the event names PostHog takes in every config, and Redshift's INSERT mode", async () => {
    const { project, key } = await setupOrganization();
    const events = { exclude_events: ["$feature_flag_called"], include_events: ["$pageview"] };
    const redshift = { user: "u", password: "pw", host: "rs.example.com", database: "dev", mode: "INSERT" };
    for (const [type, config] of [
      ["S3", { ...S3_CONFIG, ...events }],
      ["NoOp", events],
      ["Redshift", redshift],
    ] as const) {
      const response = await api("POST", exportsPath(project.id), {
        key,
        body: { ...S3_EXPORT, destination: { type, config } },
      });
      expect(response.status).toBe(201);
      expect(await storedConfig(response.body.id)).toEqual(config);
    }
  });

  const invalid = (
    attr: string,
    change: Record<string, unknown>,
    code: string,
    detail: string,
  ): [string, Record<string, unknown>, string, string] => [attr, { ...S3_EXPORT, ...change }, code, detail];
  const s3With = (config: Record<string, unknown>) => ({ destination: { type: "S3", config } });
  const { bucket_name: _bucket, ...withoutBucket } = S3_CONFIG;

  it.each([
    invalid("name", { name: undefined }, "required", "This field is required."),
    invalid("name", { name: "  " }, "blank", "This field may not be blank."),
    invalid("name", { name: "n".repeat(256) }, "max_length", "Ensure this field has no more than 255 characters."),
    invalid("destination", { destination: undefined }, "required", "This field is required."),
    invalid(
      "destination.type",
      { destination: { type: "Kafka", config: {} } },
      "invalid_choice",
      '"Kafka" is not a valid choice.',
    ),
    invalid("destination.type", { destination: { config: S3_CONFIG } }, "required", "This field is required."),
    invalid(
      "destination.config",
      { destination: { type: "S3", config: ["bucket"] } },
      "invalid_input",
      "Expected record, received list.",
    ),
    invalid("destination.config.bucket_name", s3With(withoutBucket), "required", "This field is required."),
    invalid(
      "destination.config.bucket_name",
      s3With({ ...S3_CONFIG, bucket_name: "" }),
      "blank",
      "This field may not be blank.",
    ),
    invalid(
      "destination.config.bucket_name",
      s3With({ ...S3_CONFIG, bucket_name: 7 }),
      "invalid_input",
      "Expected string, received number.",
    ),
    // All unknown keys are named; attr is the first of them.
    invalid(
      "destination.config.acl",
      s3With({ ...S3_CONFIG, colour: "red", acl: "x" }),
      "invalid_input",
      "Configuration has unknown field/s: 'acl', 'colour'.",
    ),
    invalid(
      "destination.config.file_format",
      s3With({ ...S3_CONFIG, file_format: "CSV" }),
      "invalid_choice",
      '"CSV" is not a valid choice.',
    ),
    invalid(
      "destination.config.port",
      {
        destination: { type: "Postgres", config: { user: "u", password: "p", host: "h", database: "d", port: "54x" } },
      },
      "invalid_input",
      "Expected number, received string.",
    ),
    invalid(
      "destination.config.has_self_signed_cert",
      {
        destination: {
          type: "Postgres",
          config: { user: "u", password: "p", host: "h", database: "d", has_self_signed_cert: "maybe" },
        },
      },
      "invalid_input",
      "Expected boolean, received string.",
    ),
    invalid(
      "destination.config.mode",
      {
        destination: { type: "Redshift", config: { user: "u", password: "p", host: "h", database: "d", mode: "COPY" } },
      },
      "invalid_choice",
      '"COPY" is not a valid choice.',
    ),
    invalid(
      "destination.config.exclude_events",
      s3With({ ...S3_CONFIG, exclude_events: "$pageview" }),
      "invalid_input",
      "Expected array, received string.",
    ),
    invalid(
      "destination.config.token",
      { destination: { type: "HTTP", config: { url: "https://x.example.com" } } },
      "required",
      "This field is required.",
    ),
    invalid(
      "destination.config.url",
      { destination: { type: "HTTP", config: { url: "ftp://x.example.com", token: "t" } } },
      "invalid_input",
      "Enter a valid URL.",
    ),
    invalid("interval", { interval: undefined }, "required", "This field is required."),
    invalid("interval", { interval: "minute" }, "invalid_choice", '"minute" is not a valid choice.'),
    invalid("model", { model: "groups" }, "invalid_choice", '"groups" is not a valid choice.'),
    invalid(
      "model",
      { model: "persons", destination: { type: "HTTP", config: { url: "https://x.example.com", token: "t" } } },
      "invalid_input",
      "HTTP batch exports only support the events model.",
    ),
    invalid("paused", { paused: "yes" }, "invalid_input", "Expected boolean, received string."),
    invalid(
      "start_at",
      { start_at: "yesterday" },
      "invalid_input",
      "Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].",
    ),
    invalid(
      "start_at",
      { start_at: "2026-02-01T00:00:00Z", end_at: "2026-01-01T00:00:00Z" },
      "invalid_input",
      "start_at must be before end_at.",
    ),
    invalid(
      "start_at",
      { start_at: "2026-01-01T01:00:00+01:00", end_at: "2026-01-01T00:00:00Z" },
      "invalid_input",
      "start_at must be before end_at.",
    ),
    invalid("hogql_query", { hogql_query: 42 }, "invalid_input", "Expected string, received number."),
    invalid("hogql_query", { model: "hogql" }, "required", "hogql_query is required when model is hogql."),
    invalid(
      "hogql_query",
      { model: "hogql", hogql_query: " " },
      "required",
      "hogql_query is required when model is hogql.",
    ),
    invalid("timezone", { timezone: "Mars/Olympus" }, "invalid_choice", '"Mars/Olympus" is not a valid choice.'),
  ])("refuses a bad %s (400) and creates nothing", async (attr, body, code, detail) => {
    const { project, key } = await setupOrganization();
    const response = await api("POST", exportsPath(project.id), { key, body });
    expectError(response, 400, errorBody("validation_error", code, detail, attr));
    expect((await api("GET", exportsPath(project.id), { key })).body.count).toBe(0);
  });

  it("needs batch_export:write (403), a key (401), and a project the caller can see (404)", async () => {
    const { organization, owner, project, key } = await setupOrganization();
    const readOnly = await createApiKey(owner, { scopes: ["batch_export:read"] });
    const denied = await api("POST", exportsPath(project.id), { key: readOnly.value, body: S3_EXPORT });
    expectError(denied, 403, missingScope("batch_export:write"));
    const anonymous = await api("POST", exportsPath(project.id), { body: S3_EXPORT });
    expectError(anonymous, 401, NOT_AUTHENTICATED);
    const other = await setupOrganization();
    const foreign = await api("POST", exportsPath(other.project.id), { key, body: S3_EXPORT });
    expectError(foreign, 404, NOT_FOUND);

    const privateProject = await createProject(organization.id, { access_control: true });
    const member = await addMember(organization.id, MembershipLevel.member);
    expect((await api("POST", exportsPath(privateProject.id), { key: member.key, body: S3_EXPORT })).status).toBe(404);
    expect((await api("POST", exportsPath(privateProject.id), { key, body: S3_EXPORT })).status).toBe(201);

    const scoped = await createApiKey(owner, { scopes: ["*"], scopedTeams: [privateProject.id] });
    const outOfScope = await api("POST", exportsPath(project.id), { key: scoped.value, body: S3_EXPORT });
    expectError(
      outOfScope,
      403,
      errorBody("authentication_error", "permission_denied", "API key does not have access to the requested project"),
    );
    expect((await api("GET", exportsPath(other.project.id), { key: other.key })).body.count).toBe(0);
  });
});

describe("GET /api/environments/:project_id/batch_exports", () => {
  it("lists the project's live exports, newest first, paginated", async () => {
    const { organization, project, key } = await setupOrganization();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-05-01T10:00:00Z"));
    const oldest = await createExport(project.id, key, { name: "oldest" });
    vi.setSystemTime(new Date("2026-05-01T11:00:00Z"));
    const middle = await createExport(project.id, key, { name: "middle" });
    vi.setSystemTime(new Date("2026-05-01T12:00:00Z"));
    const newest = await createExport(project.id, key, { name: "newest" });
    const removed = await createExport(project.id, key, { name: "removed" });
    await api("DELETE", `${exportsPath(project.id)}/${removed.id}`, { key });
    // Created now, after the first project, so that `@current` stays the first project.
    vi.useRealTimers();
    const sibling = await createProject(organization.id);
    await createExport(sibling.id, key, { name: "elsewhere" });

    const first = await api("GET", `${exportsPath(project.id)}?limit=2`, { key });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      count: 3,
      next: nextLink(exportsPath(project.id), 2, 2, ["2026-05-01T11:00:00.000Z", middle.id]),
      previous: null,
      results: [
        s3ExportBody(project.id, {
          id: newest.id,
          name: "newest",
          created_at: "2026-05-01T12:00:00.000Z",
          last_updated_at: "2026-05-01T12:00:00.000Z",
        }),
        s3ExportBody(project.id, {
          id: middle.id,
          name: "middle",
          created_at: "2026-05-01T11:00:00.000Z",
          last_updated_at: "2026-05-01T11:00:00.000Z",
        }),
      ],
    });
    // The project and its membership, the count and the page: one batch.
    expect(first.cost.queries).toBe(1);
    const second = await api("GET", `${exportsPath("@current")}?limit=2&offset=2`, { key });
    expect(second.body).toEqual({
      count: 3,
      next: null,
      previous: previousLink(exportsPath("@current"), 2, 0, ["2026-05-01T10:00:00.000Z", oldest.id]),
      results: [
        s3ExportBody(project.id, {
          id: oldest.id,
          name: "oldest",
          created_at: "2026-05-01T10:00:00.000Z",
          last_updated_at: "2026-05-01T10:00:00.000Z",
        }),
      ],
    });
  });

  it("needs batch_export:read (403), a valid key (401) and the caller's project (404)", async () => {
    const { owner, project } = await setupOrganization();
    const wrongScope = await createApiKey(owner, { scopes: ["project:read"] });
    const denied = await api("GET", exportsPath(project.id), { key: wrongScope.value });
    expectError(denied, 403, missingScope("batch_export:read"));
    const badKey = await api("GET", exportsPath(project.id), { key: `phx_${"z".repeat(44)}` });
    expectError(badKey, 401, AUTHENTICATION_FAILED);
    const stranger = await setupOrganization();
    expect((await api("GET", exportsPath(project.id), { key: stranger.key })).status).toBe(404);
    expect((await api("GET", exportsPath("not-a-project"), { key: stranger.key })).status).toBe(404);
  });
});

describe("a batch export's secrets, in its lists", () => {
  it("are left in the database: neither list reads them, however long", async () => {
    const { organization, project, key } = await setupOrganization();
    const long = { aws_access_key_id: "AKIAEXAMPLE", aws_secret_access_key: "s".repeat(65_000) };
    for (let index = 0; index < 4; index += 1) {
      const body = {
        ...S3_EXPORT,
        name: `Export ${index}`,
        destination: { type: "S3", config: { ...S3_CONFIG, ...long } },
      };
      expect((await api("POST", exportsPath(project.id), { key, body })).status).toBe(201);
    }
    for (const path of [exportsPath(project.id), `/api/organizations/${organization.id}/batch_exports`]) {
      const counted = countBytesRead();
      const listed = await api("GET", path, { key });
      vi.restoreAllMocks();
      expect([
        path,
        listed.status,
        listed.body.results.map((row: { destination: unknown }) => row.destination),
      ]).toEqual([path, 200, Array.from({ length: 4 }, () => ({ type: "S3", config: S3_CONFIG }))]);
      // Four sealed secrets are 350 KB.
      expect([path, counted.bytes < 50_000]).toEqual([path, true]);
    }
  });
});

describe("GET /api/environments/:project_id/batch_exports/:id", () => {
  it("retrieves an export; another project's, an unknown or a deleted one is 404", async () => {
    const { project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    const response = await api("GET", `${exportsPath(project.id)}/${created.id}/`, { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      s3ExportBody(project.id, {
        id: created.id,
        created_at: created.created_at,
        last_updated_at: created.last_updated_at,
      }),
    );
    expect(response.cost.queries).toBe(1);

    const other = await setupOrganization();
    const theirs = await createExport(other.project.id, other.key);
    for (const path of [
      `${exportsPath(project.id)}/${theirs.id}`,
      `${exportsPath(other.project.id)}/${theirs.id}`,
      `${exportsPath(project.id)}/00000000-0000-7000-8000-000000000000`,
    ]) {
      const missing = await api("GET", path, { key });
      expectError(missing, 404, NOT_FOUND);
    }
  });

  it("is served under /api/projects/:project_id too", async () => {
    const { project, key } = await setupOrganization();
    const created = await api("POST", exportsPath(project.id, "projects"), { key, body: S3_EXPORT });
    expect(created.status).toBe(201);
    expect(created.body).toEqual(s3ExportBody(project.id));
    const viaEnvironment = await api("GET", `${exportsPath(project.id)}/${created.body.id}`, { key });
    expect(viaEnvironment.body).toEqual(created.body);
    const viaProject = await api("GET", `${exportsPath(project.id, "projects")}/${created.body.id}`, { key });
    expect(viaProject.body).toEqual(created.body);
    const listed = await api("GET", exportsPath("@current", "projects"), { key });
    expect(listed.body).toEqual({ count: 1, next: null, previous: null, results: [created.body] });
    const patched = await api("PATCH", `${exportsPath(project.id, "projects")}/${created.body.id}`, {
      key,
      body: { name: "Renamed" },
    });
    expect(patched.body.name).toBe("Renamed");
    expect((await api("DELETE", `${exportsPath(project.id, "projects")}/${created.body.id}`, { key })).status).toBe(
      204,
    );
  });

  it("answers POST on an export with 405 and the allowed methods", async () => {
    const { project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    const response = await api("POST", `${exportsPath(project.id)}/${created.id}`, { key, body: S3_EXPORT });
    expect(response.status).toBe(405);
    expect(response.headers.get("Allow")).toBe("DELETE, GET, PATCH, PUT");
    expect(response.body).toEqual(errorBody("invalid_request", "method_not_allowed", 'Method "POST" not allowed.'));
  });
});

describe("PATCH /api/environments/:project_id/batch_exports/:id", () => {
  it("updates the fields sent and keeps the secrets that were not", async () => {
    const { project, key } = await setupOrganization();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-06-01T00:00:00Z"));
    const created = await createExport(project.id, key);
    vi.setSystemTime(new Date("2026-06-02T00:00:00Z"));
    const response = await api("PATCH", `${exportsPath(project.id)}/${created.id}`, {
      key,
      body: {
        name: "Renamed",
        interval: "day",
        destination: { config: { region: "eu-west-1", file_format: "Parquet" } },
        end_at: "2026-12-31T00:00:00Z",
        timezone: "America/New_York",
        id: "ignored",
      },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      s3ExportBody(project.id, {
        id: created.id,
        name: "Renamed",
        interval: "day",
        destination: { type: "S3", config: { ...S3_CONFIG, region: "eu-west-1", file_format: "Parquet" } },
        end_at: "2026-12-31T00:00:00.000Z",
        timezone: "America/New_York",
        created_at: "2026-06-01T00:00:00.000Z",
        last_updated_at: "2026-06-02T00:00:00.000Z",
      }),
    );
    // The project with the export the path names, then the update with its entry.
    expect(response.cost.queries).toBe(2);
    expect(await storedConfig(created.id)).toEqual({
      ...S3_CONFIG,
      ...S3_SECRETS,
      region: "eu-west-1",
      file_format: "Parquet",
    });

    const rotated = await api("PATCH", `${exportsPath(project.id)}/${created.id}`, {
      key,
      body: { destination: { type: "S3", config: { aws_secret_access_key: "rotated" } } },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.destination.config).not.toHaveProperty("aws_secret_access_key");
    expect(await storedConfig(created.id)).toMatchObject({
      aws_access_key_id: "AKIAEXAMPLE",
      aws_secret_access_key: "rotated",
    });
  });

  it.each([
    ["S3", { ...S3_CONFIG, ...S3_SECRETS }, { endpoint_url: "https://s3.attacker.example" }, "aws_access_key_id"],
    ["HTTP", { url: "https://h.example.com", token: "t0ken" }, { url: "https://attacker.example" }, "token"],
    [
      "Postgres",
      { user: "u", password: "pw", host: "db.example.com", database: "d" },
      { host: "db.attacker.example" },
      "user",
    ],
    [
      "Snowflake",
      { account: "acme", user: "u", password: "pw", database: "d", warehouse: "w", schema: "s" },
      { account: "attacker" },
      "user",
    ],
  ])(
    "sends %s's stored secrets to a new endpoint only when they are sent again",
    async (type, config, moved, first) => {
      const { project, key } = await setupOrganization();
      const body = { name: "Export", interval: "hour", destination: { type, config } };
      const created = await api("POST", exportsPath(project.id), { key, body });
      expect(created.status).toBe(201);
      const path = `${exportsPath(project.id)}/${created.body.id}`;
      const refused = await api("PATCH", path, { key, body: { destination: { config: moved } } });
      const field = Object.keys(moved)[0];
      const detail = `Changing ${field} needs ${first} sent again: stored secrets only go where they were set for.`;
      expectError(refused, 400, errorBody("validation_error", "invalid_input", detail, `destination.config.${first}`));
      expect(await storedConfig(created.body.id)).toEqual(config);

      const whole = { ...config, ...moved };
      const accepted = await api("PATCH", path, { key, body: { destination: { type, config: whole } } });
      expect(accepted.status).toBe(200);
      expect(await storedConfig(created.body.id)).toEqual(whole);
    },
  );

  it("needs every stored secret for a new endpoint, and none for an endpoint sent unchanged", async () => {
    const { project, key } = await setupOrganization();
    const created = await createExport(project.id, key, {
      destination: { type: "S3", config: { ...S3_CONFIG, ...S3_SECRETS, endpoint_url: "https://s3.example.com" } },
    });
    const path = `${exportsPath(project.id)}/${created.id}`;
    const oneOfTwo = await api("PATCH", path, {
      key,
      body: { destination: { config: { endpoint_url: null, aws_access_key_id: "AKIANEW" } } },
    });
    expect(oneOfTwo.status).toBe(400);
    expect(oneOfTwo.body.attr).toBe("destination.config.aws_secret_access_key");
    const response = await api("PATCH", path, {
      key,
      body: { destination: { config: { endpoint_url: "https://s3.example.com", prefix: "moved/" } } },
    });
    expect(response.status).toBe(200);
    expect(await storedConfig(created.id)).toEqual({
      ...S3_CONFIG,
      ...S3_SECRETS,
      endpoint_url: "https://s3.example.com",
      prefix: "moved/",
    });
  });

  it("asks for every stored secret whenever BigQuery's token_uri is sent: compared, it confirms a guess", async () => {
    const { organization, project, key } = await setupOrganization();
    const bigQuery = {
      project_id: "p",
      dataset_id: "d",
      private_key: "-----BEGIN PRIVATE KEY-----x",
      private_key_id: "kid",
      token_uri: "https://oauth2.internal.example/token",
      client_email: "sa@p.iam.example",
    };
    const created = await createExport(project.id, key, { destination: { type: "BigQuery", config: bigQuery } });
    const member = await addMember(organization.id, MembershipLevel.member);
    const path = `${exportsPath(project.id)}/${created.id}`;
    const guess = (tokenUri: string) =>
      api("PATCH", path, { key: member.key, body: { destination: { config: { token_uri: tokenUri } } } });
    const needsSecrets = errorBody(
      "validation_error",
      "invalid_input",
      "Changing token_uri needs private_key sent again: stored secrets only go where they were set for.",
      "destination.config.private_key",
    );
    expectError(await guess("https://oauth2.googleapis.com/token"), 400, needsSecrets);
    expectError(await guess(bigQuery.token_uri), 400, needsSecrets);
    expect(await storedConfig(created.id)).toEqual(bigQuery);
  });

  it("holds the merged configuration to 64 KiB: PATCHes each within it do not add up past it", async () => {
    const { project, key } = await setupOrganization();
    const big = "a".repeat(40_000);
    const created = await createExport(project.id, key, {
      destination: { type: "S3", config: { ...S3_CONFIG, bucket_name: big } },
    });
    const path = `${exportsPath(project.id)}/${created.id}`;
    const grown = await api("PATCH", path, { key, body: { destination: { config: { region: big } } } });
    expectError(
      grown,
      400,
      errorBody(
        "validation_error",
        "max_length",
        "Ensure this field has no more than 65536 bytes when serialized.",
        "destination.config",
      ),
    );
    expect(await storedConfig(created.id)).toEqual({ ...S3_CONFIG, bucket_name: big });
  });

  it("stores offset_day and offset_hour where the interval has them, and clears them with one without", async () => {
    const { key, project } = await setupOrganization();
    const created = await createExport(project.id, key, { interval: "week", offset_day: 1, offset_hour: 6 });
    const path = `${exportsPath(project.id)}/${created.id}`;
    expect((await api("GET", path, { key })).body).toMatchObject({ interval: "week", offset_day: 1, offset_hour: 6 });
    const daily = await api("PATCH", path, { key, body: { interval: "day", offset_day: null, offset_hour: 23 } });
    expect(daily.status).toBe(200);
    expect(daily.body).toMatchObject({ interval: "day", offset_day: null, offset_hour: 23 });
    const hourly = await api("PATCH", path, { key, body: { interval: "hour" } });
    expect(hourly.body).toMatchObject({ interval: "hour", offset_day: null, offset_hour: null });
    expect((await api("GET", path, { key })).body).toMatchObject({ offset_day: null, offset_hour: null });
  });

  it("refuses an offset out of range or that its interval does not have, with 400 naming it", async () => {
    const { key, project } = await setupOrganization();
    const created = await createExport(project.id, key, { interval: "day", offset_hour: 2 });
    const path = `${exportsPath(project.id)}/${created.id}`;
    const cases: [Record<string, unknown>, string, string][] = [
      [{ offset_day: 7 }, "offset_day", "max_value"],
      [{ offset_hour: -1 }, "offset_hour", "min_value"],
      [{ offset_hour: "2" }, "offset_hour", "invalid_input"],
      [{ offset_day: 3 }, "offset_day", "invalid_input"],
      [{ interval: "hour", offset_hour: 4 }, "offset_hour", "invalid_input"],
    ];
    for (const [body, attr, code] of cases) {
      const response = await api("PATCH", path, { key, body: { name: "Changed", ...body } });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body, JSON.stringify(body)).toMatchObject({ type: "validation_error", code, attr });
    }
    const refused = await api("POST", exportsPath(project.id), {
      key,
      body: { ...S3_EXPORT, interval: "hour", offset_day: 1 },
    });
    expect(refused.body).toEqual(
      errorBody(
        "validation_error",
        "invalid_input",
        "offset_day is not applicable for non-weekly intervals",
        "offset_day",
      ),
    );
    expect((await api("GET", path, { key })).body).toMatchObject({ interval: "day", offset_hour: 2 });
  });

  it("pauses through paused, recording when", async () => {
    const { project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2030-01-01T00:00:00Z"));
    const paused = await api("PATCH", `${exportsPath(project.id)}/${created.id}`, { key, body: { paused: true } });
    expect(paused.body).toMatchObject({ paused: true, last_paused_at: "2030-01-01T00:00:00.000Z" });
    vi.setSystemTime(new Date("2030-01-02T00:00:00Z"));
    const again = await api("PATCH", `${exportsPath(project.id)}/${created.id}`, { key, body: { paused: true } });
    expect(again.body).toMatchObject({ paused: true, last_paused_at: "2030-01-01T00:00:00.000Z" });
    const resumed = await api("PATCH", `${exportsPath(project.id)}/${created.id}`, { key, body: { paused: false } });
    expect(resumed.body).toMatchObject({ paused: false, last_paused_at: "2030-01-01T00:00:00.000Z" });
  });

  it("switches destination type only with that type's whole configuration", async () => {
    const { project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    const path = `${exportsPath(project.id)}/${created.id}`;
    const partial = await api("PATCH", path, {
      key,
      body: { destination: { type: "HTTP", config: { url: "https://h.example.com" } } },
    });
    expectError(
      partial,
      400,
      errorBody("validation_error", "required", "This field is required.", "destination.config.token"),
    );
    const whole = await api("PATCH", path, {
      key,
      body: { destination: { type: "HTTP", config: { url: "https://h.example.com", token: "t" } } },
    });
    expect(whole.status).toBe(200);
    expect(whole.body.destination).toEqual({ type: "HTTP", config: { url: "https://h.example.com" } });
    expect(await storedConfig(created.id)).toEqual({ url: "https://h.example.com", token: "t" });
  });

  it.each([
    [
      "destination.config.colour",
      { destination: { config: { colour: "red" } } },
      "invalid_input",
      "Configuration has unknown field/s: 'colour'.",
    ],
    ["destination.config.region", { destination: { config: { region: null } } }, "null", "This field may not be null."],
    ["destination.type", { destination: { type: "Kafka" } }, "invalid_choice", '"Kafka" is not a valid choice.'],
    ["interval", { interval: "year" }, "invalid_choice", '"year" is not a valid choice.'],
    ["model", { model: "groups" }, "invalid_choice", '"groups" is not a valid choice.'],
    [
      "model",
      { model: "hogql", hogql_query: "SELECT 1" },
      "invalid_input",
      "A batch export's model cannot be changed to or from hogql. Create a new batch export instead.",
    ],
    ["start_at", { start_at: "2027-01-01T00:00:00Z" }, "invalid_input", "start_at must be before end_at."],
    ["name", { name: "" }, "blank", "This field may not be blank."],
  ])("refuses a bad %s (400) and changes nothing", async (attr, body, code, detail) => {
    const { project, key } = await setupOrganization();
    const created = await createExport(project.id, key, { end_at: "2026-12-31T00:00:00Z" });
    const path = `${exportsPath(project.id)}/${created.id}`;
    const before = await api("GET", path, { key });
    const response = await api("PATCH", path, { key, body });
    expectError(response, 400, errorBody("validation_error", code, detail, attr));
    expect((await api("GET", path, { key })).body).toEqual(before.body);
    expect(await storedConfig(created.id)).toEqual({ ...S3_CONFIG, ...S3_SECRETS });
  });

  it("needs batch_export:write (403), and is 404 for another organization's export", async () => {
    const { owner, project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    const readOnly = await createApiKey(owner, { scopes: ["batch_export:read"] });
    const denied = await api("PATCH", `${exportsPath(project.id)}/${created.id}`, {
      key: readOnly.value,
      body: { name: "x" },
    });
    expectError(denied, 403, missingScope("batch_export:write"));
    expect((await api("PATCH", `${exportsPath(project.id)}/${created.id}`, { body: { name: "x" } })).status).toBe(401);
    const other = await setupOrganization();
    const theirs = await createExport(other.project.id, other.key);
    expect((await api("PATCH", `${exportsPath(project.id)}/${theirs.id}`, { key, body: { name: "x" } })).status).toBe(
      404,
    );
    expect(
      (await api("PATCH", `${exportsPath(other.project.id)}/${theirs.id}`, { key, body: { name: "x" } })).status,
    ).toBe(404);
    expect((await api("GET", `${exportsPath(other.project.id)}/${theirs.id}`, { key: other.key })).body.name).toBe(
      "Events to S3",
    );
  });
});

describe("DELETE /api/environments/:project_id/batch_exports/:id", () => {
  it("soft-deletes: 204, then gone from reads, lists and writes", async () => {
    const { organization, project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    const path = `${exportsPath(project.id)}/${created.id}`;
    const response = await api("DELETE", path, { key });
    expect(response.status).toBe(204);
    expect(response.text).toBe("");
    expect(response.cost.queries).toBe(2);
    expect((await api("GET", path, { key })).status).toBe(404);
    expect((await api("PATCH", path, { key, body: { name: "back" } })).status).toBe(404);
    expect((await api("DELETE", path, { key })).status).toBe(404);
    expect((await api("GET", exportsPath(project.id), { key })).body.count).toBe(0);
    const organizationExports = `/api/organizations/${organization.id}/batch_exports`;
    expect((await api("GET", organizationExports, { key })).body.count).toBe(0);
    expect((await api("POST", `${organizationExports}/${created.id}/pause`, { key })).status).toBe(404);
    const [row] = await db.select().from(schema.batchExports).where(eq(schema.batchExports.id, created.id));
    expect(row?.deleted).toBe(true);
  });

  it("needs batch_export:write (403), and is 404 for another organization's export", async () => {
    const { owner, project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    const readOnly = await createApiKey(owner, { scopes: ["batch_export:read"] });
    expect((await api("DELETE", `${exportsPath(project.id)}/${created.id}`, { key: readOnly.value })).status).toBe(403);
    const other = await setupOrganization();
    const theirs = await createExport(other.project.id, other.key);
    expect((await api("DELETE", `${exportsPath(project.id)}/${theirs.id}`, { key })).status).toBe(404);
    expect((await api("DELETE", `${exportsPath(other.project.id)}/${theirs.id}`, { key })).status).toBe(404);
    expect((await api("GET", `${exportsPath(other.project.id)}/${theirs.id}`, { key: other.key })).status).toBe(200);
  });
});

describe("POST /api/environments/:project_id/batch_exports/:id/pause and /unpause", () => {
  it("pauses and unpauses in the project, as the organization routes do", async () => {
    const { organization, project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    const path = `${exportsPath(project.id)}/${created.id}`;
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2031-01-01T00:00:00Z"));
    const paused = await api("POST", `${path}/pause`, { key });
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ paused: true });
    expect(paused.cost.queries).toBe(2);
    vi.setSystemTime(new Date("2031-01-02T00:00:00Z"));
    expect((await api("POST", `${exportsPath(project.id, "projects")}/${created.id}/pause`, { key })).body).toEqual({
      paused: true,
    });
    const pausedState = s3ExportBody(project.id, {
      id: created.id,
      created_at: created.created_at,
      paused: true,
      last_paused_at: "2031-01-01T00:00:00.000Z",
      last_updated_at: "2031-01-01T00:00:00.000Z",
    });
    expect(
      (await api("GET", `/api/organizations/${organization.id}/batch_exports/${created.id}`, { key })).body,
    ).toEqual(pausedState);

    const unpaused = await api("POST", `${path}/unpause`, { key });
    expect(unpaused.body).toEqual({ paused: false });
    expect((await api("POST", `${path}/unpause`, { key })).body).toEqual({ paused: false });
    expect((await api("GET", path, { key })).body).toEqual({
      ...pausedState,
      paused: false,
      last_updated_at: "2031-01-02T00:00:00.000Z",
    });
  });

  it("needs batch_export:write (403), and is 404 for another organization's export", async () => {
    const { owner, project, key } = await setupOrganization();
    const created = await createExport(project.id, key);
    const readOnly = await createApiKey(owner, { scopes: ["batch_export:read"] });
    expectError(
      await api("POST", `${exportsPath(project.id)}/${created.id}/pause`, { key: readOnly.value }),
      403,
      missingScope("batch_export:write"),
    );
    expectError(await api("POST", `${exportsPath(project.id)}/${created.id}/unpause`), 401, NOT_AUTHENTICATED);
    const other = await setupOrganization();
    const theirs = await createExport(other.project.id, other.key);
    expectError(await api("POST", `${exportsPath(project.id)}/${theirs.id}/pause`, { key }), 404, NOT_FOUND);
    expectError(await api("POST", `${exportsPath(other.project.id)}/${theirs.id}/pause`, { key }), 404, NOT_FOUND);
    expect((await api("GET", `${exportsPath(other.project.id)}/${theirs.id}`, { key: other.key })).body.paused).toBe(
      false,
    );
  });
});

describe("the OpenAPI document", () => {
  it("publishes the batch export routes of both trees with their scopes", async () => {
    const document = await api("GET", "/api/schema");
    expect(document.status).toBe(200);
    for (const tree of ["environments", "projects"]) {
      const collection = document.body.paths[`/api/${tree}/{project_id}/batch_exports`];
      expect(collection.get.security).toEqual([{ PersonalAPIKey: ["batch_export:read"] }]);
      expect(collection.post.security).toEqual([{ PersonalAPIKey: ["batch_export:write"] }]);
      const item = document.body.paths[`/api/${tree}/{project_id}/batch_exports/{id}`];
      expect(Object.keys(item).sort()).toEqual(["delete", "get", "patch", "put"]);
      expect(item.put.security).toEqual([{ PersonalAPIKey: ["batch_export:write"] }]);
      expect(document.body.paths[`/api/${tree}/{project_id}/batch_exports/{id}/pause`].post.security).toEqual([
        { PersonalAPIKey: ["batch_export:write"] },
      ]);
    }
    expect(document.body.components.schemas.BatchExportInput.required).toEqual(["name", "interval", "destination"]);
    expect([...document.body.components.schemas.BatchExportFullUpdate.required].sort()).toEqual([
      "destination",
      "interval",
      "name",
    ]);
  });
});

describe("batch export writes: the caller still sees the project when the write lands", () => {
  afterEach(() => vi.restoreAllMocks());

  /** An organization, a member with a key, and the owner's removal of that member, to run meanwhile. */
  async function memberToRemove() {
    const team = await setupOrganization();
    const member = await addMember(team.organization.id, MembershipLevel.member);
    const memberPath = `/api/organizations/${team.organization.id}/members/${member.user.uuid}`;
    const remove = async () => (await api("DELETE", memberPath, { key: team.key })).status;
    return { ...team, member, remove };
  }

  const exportRow = async (id: string) =>
    (await db.select().from(schema.batchExports).where(eq(schema.batchExports.id, id)))[0];

  it("a member removed meanwhile creates no export to a destination of theirs (404)", async () => {
    const { project, member, remove } = await memberToRemove();
    const removal = beforeWrites([[/^insert into "batch_exports"/, remove]]);
    const created = await api("POST", exportsPath(project.id), { key: member.key, body: S3_EXPORT });
    vi.restoreAllMocks();
    expect(removal).toEqual([204]);
    expectError(created, 404, NOT_FOUND);
    expect(await db.$count(schema.batchExports, eq(schema.batchExports.environmentId, project.id))).toBe(0);
  });

  it("a member removed meanwhile points no export at another bucket (404)", async () => {
    const { project, key, member, remove } = await memberToRemove();
    const made = await api("POST", exportsPath(project.id), { key, body: S3_EXPORT });
    expect(made.status).toBe(201);
    const removal = beforeWrites([[/^update "batch_exports"/, remove]]);
    const redirected = await api("PATCH", `${exportsPath(project.id)}/${made.body.id}`, {
      key: member.key,
      body: { destination: { type: "S3", config: { bucket_name: "attacker-bucket" } } },
    });
    vi.restoreAllMocks();
    expect(removal).toEqual([204]);
    expectError(redirected, 404, NOT_FOUND);
    expect((await exportRow(made.body.id))!.destinationConfig).toMatchObject({ bucket_name: "my-bucket" });
  });

  for (const [route, pathOf] of [
    ["environment", (projectId: number, _organizationId: string, id: string) => `${exportsPath(projectId)}/${id}`],
    [
      "organization",
      (_projectId: number, organizationId: string, id: string) =>
        `/api/organizations/${organizationId}/batch_exports/${id}`,
    ],
  ] as const) {
    it(`a member removed meanwhile restarts no paused export (${route} route, 404)`, async () => {
      const { organization, project, key, member, remove } = await memberToRemove();
      const made = await api("POST", exportsPath(project.id), { key, body: S3_EXPORT });
      const path = pathOf(project.id, organization.id, made.body.id);
      expect((await api("POST", `${path}/pause`, { key })).status).toBe(200);
      const removal = beforeWrites([[/^update "batch_exports" set "paused"/, remove]]);
      const unpaused = await api("POST", `${path}/unpause`, { key: member.key });
      vi.restoreAllMocks();
      expect(removal).toEqual([204]);
      expectError(unpaused, 404, NOT_FOUND);
      expect((await exportRow(made.body.id))!.paused).toBe(true);
    });
  }
});

/** An S3 destination's whole configuration, for tests of one of its fields. */
const S3_FIELDS = {
  bucket_name: "b",
  region: "us-east-1",
  prefix: "",
  aws_access_key_id: "A",
  aws_secret_access_key: "S",
};

/** An export named "Events", hourly, to `type` with `config`. */
const createWithDestination = (projectId: number, key: string, type: string, config: Record<string, unknown>) =>
  api("POST", exportsPath(projectId), {
    key,
    body: { name: "Events", interval: "hour", destination: { type, config } },
  });

describe("a batch export's endpoint URL", () => {
  it("is at most 2,000 characters, as a webhook's: 400 past it, naming the field", async () => {
    const { project, key } = await setupOrganization();
    const long = `https://minio.example.com/${"p".repeat(2000)}`;
    for (const [type, config, attr] of [
      ["S3Compatible", { ...S3_FIELDS, endpoint_url: long }, "endpoint_url"],
      ["HTTP", { url: long, token: "t" }, "url"],
    ] as const) {
      const created = await createWithDestination(project.id, key, type, config);
      expectError(
        created,
        400,
        errorBody(
          "validation_error",
          "max_length",
          "Ensure this field has no more than 2000 characters.",
          `destination.config.${attr}`,
        ),
      );
    }
  });
});

describe("credentials in a batch export's destination URL", () => {
  it("are refused, as a webhook's are: they would be kept and shown in the clear", async () => {
    const { project, key } = await setupOrganization();
    const credentialed = "https://exporter:hunter2-basic-auth@ingest.example.com/batch";
    const destinations = [
      { type: "HTTP", config: { url: credentialed, token: "sealed-token" }, attr: "url" },
      { type: "S3Compatible", config: { ...S3_FIELDS, endpoint_url: credentialed }, attr: "endpoint_url" },
      { type: "S3", config: { ...S3_FIELDS, endpoint_url: credentialed }, attr: "endpoint_url" },
      // The legacy type takes any text: credentials without a scheme, too.
      {
        type: "S3",
        config: { ...S3_FIELDS, endpoint_url: "//minioadmin:s3cr3t@minio.example.com" },
        attr: "endpoint_url",
      },
      {
        type: "S3",
        config: { ...S3_FIELDS, endpoint_url: "minioadmin:s3cr3t@minio.example.com" },
        attr: "endpoint_url",
      },
      // As the URL standard reads them: slashes after `https:` and spaces around are forgiven.
      {
        type: "S3",
        config: { ...S3_FIELDS, endpoint_url: "https:/minioadmin:s3cr3t@minio.example.com" },
        attr: "endpoint_url",
      },
      {
        type: "S3",
        config: { ...S3_FIELDS, endpoint_url: " https://minioadmin:s3cr3t@minio.example.com" },
        attr: "endpoint_url",
      },
      {
        type: "S3Compatible",
        config: { ...S3_FIELDS, endpoint_url: "https:///minioadmin:s3cr3t@minio.example.com" },
        attr: "endpoint_url",
      },
      { type: "HTTP", config: { url: "https:///exporter:s3cr3t@ingest.example.com/batch", token: "t" }, attr: "url" },
      // Before a host the URL standard refuses, which the exporters' parser still reads past.
      {
        type: "S3",
        config: { ...S3_FIELDS, endpoint_url: "https://u:s3cr3t@minio.example.com:99999" },
        attr: "endpoint_url",
      },
      {
        type: "S3",
        config: { ...S3_FIELDS, endpoint_url: "https://u:s3cr3t@minio example.com" },
        attr: "endpoint_url",
      },
      {
        type: "S3",
        config: { ...S3_FIELDS, endpoint_url: "\u00a0https://u:s3cr3t@minio.example.com\u3000" },
        attr: "endpoint_url",
      },
      // Behind a backslash, which ends the URL standard's host but not the exporters'.
      {
        type: "HTTP",
        config: { url: "https://ingest.example.com\\@u:s3cr3t@ingest.example.com", token: "t" },
        attr: "url",
      },
      // And the control characters it drops before a URL.
      {
        type: "S3",
        config: { ...S3_FIELDS, endpoint_url: "\u0001//minioadmin:s3cr3t@minio.example.com" },
        attr: "endpoint_url",
      },
      {
        type: "S3",
        config: { ...S3_FIELDS, endpoint_url: "\u001fminio\tadmin:s3cr3t@minio.example.com" },
        attr: "endpoint_url",
      },
    ];
    for (const { type, config, attr } of destinations) {
      const created = await createWithDestination(project.id, key, type, config);
      expectError(
        created,
        400,
        errorBody(
          "validation_error",
          "invalid_input",
          "The URL may not carry credentials.",
          `destination.config.${attr}`,
        ),
      );
    }
    const listed = await api("GET", `/api/environments/${project.id}/batch_exports`, { key });
    expect(listed.body.count).toBe(0);
  });
});
