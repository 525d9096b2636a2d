import { afterEach, describe, expect, it, vi } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import {
  changedMeanwhile,
  expectError,
  INSUFFICIENT_LEVEL,
  missingScope,
  NOT_FOUND,
  maxLength,
} from "../support/error-bodies";
import { beforeWrites } from "../support/races";
import {
  addMember,
  api,
  createApiKey,
  createProject,
  errorBody,
  grantProjectAccess,
  setupOrganization,
} from "../support/harness";
import { expectKeyAndMembershipRequired } from "../support/people";
import {
  expectedProject,
  OPAQUE_LIST_SETTINGS,
  OPAQUE_OBJECT_SETTINGS,
  OPAQUE_SETTINGS,
  PROJECT_PATHS,
} from "../support/projects";
import { emulateD1TooBig } from "../support/d1-limits";

const SETTINGS_TOO_LARGE = "A project's settings may hold at most 1048576 bytes in all, serialized.";

/**
 * A body whose first `count` (at most 25) opaque settings each hold 2,900 × `1e20`: 4 bytes each
 * as sent, 21 once written back (100000000000000000000), so about 64 KB each; and `padding`
 * strings of 62,000 characters in `app_urls`, as long sent as stored.
 */
function growingSettings(count: number, padding = 0) {
  const list = `[${Array.from({ length: 2_900 }, () => "1e20").join(",")}]`;
  const fields = [
    ...OPAQUE_SETTINGS.map((field) => `"${field}": ${list}`),
    // Within a list: a list of opaque JSON takes 1,000 entries at most.
    ...OPAQUE_LIST_SETTINGS.map((field) => `"${field}": [${list}]`),
    ...OPAQUE_OBJECT_SETTINGS.map((field) => `"${field}": {"values": ${list}}`),
  ].slice(0, count);
  const urls = JSON.stringify(Array.from({ length: padding }, (_, index) => String(index % 10).repeat(62_000)));
  return `{"name": "Grown", ${fields.join(", ")}, "app_urls": ${urls}}`;
}

type ProjectRow = Awaited<ReturnType<typeof createProject>>;

describe.each(PROJECT_PATHS)("PATCH a project through the $tree path", ({ tree, path }) => {
  const shape = (project: ProjectRow, name: string, overrides: Record<string, unknown> = {}) => ({
    ...expectedProject({ id: project.id, organization: project.organizationId, name, level: 15, overrides }),
    uuid: project.uuid,
    api_token: project.apiToken,
  });

  it("renames it and changes the settings sent, keeping the others", async () => {
    const { key, project } = await setupOrganization();
    const first = { app_urls: [null, "https://example.com", ""], week_start_day: 1 };
    await api("PATCH", path(project), { key, body: first });
    const response = await api("PATCH", path(project), {
      key,
      body: {
        name: "  Web app ",
        timezone: "Europe/Paris",
        anonymize_ips: true,
        session_recording_sample_rate: "0.5",
        correlation_config: null,
      },
    });
    expect(response.status).toBe(200);
    const overrides = {
      timezone: "Europe/Paris",
      anonymize_ips: true,
      session_recording_sample_rate: "0.5",
      app_urls: ["https://example.com"],
      week_start_day: 1,
    };
    expect(response.body).toEqual(shape(project, "Web app", overrides));
    expect(response.body.updated_at > project.updatedAt).toBe(true);
    // The project with the caller's level in it (and the membership, by the organization's path), then the update.
    expect(response.cost.queries).toBe(2);
    const environment = await api("GET", `/api/environments/${project.id}`, { key });
    expect(environment.body).toMatchObject({ name: "Web app", project_id: project.id, ...overrides });
  });

  it("answers 409 for a name another project of the organization has, in any case; its own name is fine", async () => {
    const { key, organization, project } = await setupOrganization();
    await createProject(organization.id, { name: "Mobile" });
    const response = await api("PATCH", path(project), { key, body: { name: "mobile", is_demo: true } });
    expectError(
      response,
      409,
      errorBody(
        "conflict",
        "conflict",
        'There is already a project called "mobile" in this organization. Choose a different name.',
      ),
    );
    expect((await api("GET", `/api/projects/${project.id}`, { key })).body).toMatchObject({
      name: "Default project",
      is_demo: false,
    });
    expect((await api("PATCH", path(project), { key, body: { name: "DEFAULT PROJECT" } })).body.name).toBe(
      "DEFAULT PROJECT",
    );
    const elsewhere = await setupOrganization();
    expect((await api("PATCH", path(elsewhere.project), { key: elsewhere.key, body: { name: "Mobile" } })).status).toBe(
      200,
    );
  });

  it("validates as create does: 400 naming each invalid field, and changes nothing", async () => {
    const { key, project } = await setupOrganization();
    const cases: [Record<string, unknown>, string, string, string][] = [
      [{ name: "  " }, "name", "blank", "This field may not be blank."],
      [{ name: "x".repeat(201) }, "name", "max_length", "Ensure this field has no more than 200 characters."],
      [{ timezone: "Mars/Olympus" }, "timezone", "invalid_choice", '"Mars/Olympus" is not a valid choice.'],
      // A UTC offset, and a zone's name in another case, are no zone names (Intl reads both).
      [{ timezone: "+01:00" }, "timezone", "invalid_choice", '"+01:00" is not a valid choice.'],
      [{ timezone: "europe/paris" }, "timezone", "invalid_choice", '"europe/paris" is not a valid choice.'],
      [{ timezone: "us/pacific" }, "timezone", "invalid_choice", '"us/pacific" is not a valid choice.'],
      [{ timezone: "gmt" }, "timezone", "invalid_choice", '"gmt" is not a valid choice.'],
      [{ week_start_day: 3 }, "week_start_day", "invalid_choice", '"3" is not a valid choice.'],
      [{ app_urls: "https://example.com" }, "app_urls", "invalid_input", "Expected array, received string."],
      [{ access_control: "yes" }, "access_control", "invalid_input", "Expected boolean, received string."],
      [
        { session_recording_sample_rate: "2" },
        "session_recording_sample_rate",
        "invalid_input",
        "Ensure the sample rate is a decimal between 0 and 1 with at most 2 decimal places.",
      ],
    ];
    for (const [body, attr, code, detail] of cases) {
      const response = await api("PATCH", path(project), { key, body: { is_demo: true, ...body } });
      expectError(response, 400, errorBody("validation_error", code, detail, attr));
    }
    expect((await api("GET", `/api/projects/${project.id}`, { key })).body).toMatchObject({
      name: "Default project",
      is_demo: false,
    });
    // The zone names PostHog lists, aliases too, are taken as written.
    for (const timezone of ["US/Pacific", "Etc/GMT+1", "GMT", "UTC", "America/Port-au-Prince"]) {
      const response = await api("PATCH", path(project), { key, body: { timezone } });
      expect({ timezone, status: response.status, stored: response.body.timezone }).toEqual({
        timezone,
        status: 200,
        stored: timezone,
      });
    }
  });

  it("is for admins and owners, and members whose rule on the project is admin", async () => {
    const { organization, project } = await setupOrganization();
    const admin = await addMember(organization.id, 8);
    const member = await addMember(organization.id, 1);
    const projectAdmin = await addMember(organization.id, 1);
    await grantProjectAccess(project.id, projectAdmin.membership.id, "admin");
    expect((await api("PATCH", path(project), { key: admin.key, body: { name: "By admin" } })).status).toBe(200);
    const byRule = await api("PATCH", path(project), { key: projectAdmin.key, body: { name: `By rule ${tree}` } });
    expect(byRule.status).toBe(200);
    expect(byRule.body.name).toBe(`By rule ${tree}`);
    expectError(
      await api("PATCH", path(project), { key: member.key, body: { name: "By member" } }),
      403,
      INSUFFICIENT_LEVEL,
    );
  });

  it("needs project:write, and keeps a key scoped to other projects out", async () => {
    const { organization, owner, project, key } = await setupOrganization({ scopes: ["project:read"] });
    expectError(await api("PATCH", path(project), { key, body: { name: "x" } }), 403, missingScope("project:write"));
    const other = await createProject(organization.id);
    const scoped = await createApiKey(owner, { scopedTeams: [other.id] });
    const response = await api("PATCH", path(project), { key: scoped.value, body: { name: "x" } });
    // A key scoped to projects reaches no organization route; on project routes, only its projects.
    const detail =
      tree === "organization"
        ? "API key with scoped projects are only supported on project-based views."
        : "API key does not have access to the requested project";
    expectError(response, 403, errorBody("authentication_error", "permission_denied", detail));
    expect((await api("GET", `/api/projects/${project.id}`, { key })).body.name).toBe("Default project");
  });

  it("answers 404 for another organization's project and unknown ids, 401 without a good key", async () => {
    const { key } = await setupOrganization();
    const other = await setupOrganization();
    expectError(await api("PATCH", path(other.project), { key, body: { name: "x" } }), 404, NOT_FOUND);
    expectError(
      await api("PATCH", path({ ...other.project, id: 999_999_999 }), { key: other.key, body: {} }),
      404,
      NOT_FOUND,
    );
    await expectKeyAndMembershipRequired("PATCH", path(other.project), { name: "x" });
  });

  it("answers 404 and 403 before a 400 about the body, with PATCH and PUT alike", async () => {
    const { organization, owner, project, key } = await setupOrganization();
    const plain = await addMember(organization.id, MembershipLevel.member);
    const other = await setupOrganization();
    const hidden = await createProject(organization.id, { name: "Hidden", access_control: true });
    const member = await addMember(organization.id, MembershipLevel.member);
    const scoped = await createApiKey(owner, { scopedTeams: [project.id] });
    const outOfScope =
      tree === "organization"
        ? "API key with scoped projects are only supported on project-based views."
        : "API key does not have access to the requested project";
    const badBody = { name: 5 };
    for (const method of ["PATCH", "PUT"]) {
      expectError(await api(method, path(other.project), { key, body: badBody }), 404, NOT_FOUND);
      expectError(await api(method, path(hidden), { key: member.key, body: badBody }), 404, NOT_FOUND);
      expectError(await api(method, path(project), { key: plain.key, body: badBody }), 403, INSUFFICIENT_LEVEL);
      expectError(
        await api(method, path(hidden), { key: scoped.value, body: badBody }),
        403,
        errorBody("authentication_error", "permission_denied", outOfScope),
      );
    }
  });
});

describe("the settings of PostHog's current Team and Project", () => {
  /** Each writable field with a value of the type PostHog's clients send. */
  const sent = {
    tags: [" Production ", "eu", "production"],
    cookieless_server_hash_mode: 2,
    session_recording_masking_config: { maskAllInputs: true, blockSelector: ".secret" },
    session_recording_url_trigger_config: [{ url: "/checkout", matching: "regex" }],
    session_recording_url_blocklist_config: [{ url: "/admin", matching: "regex" }],
    session_recording_event_trigger_config: ["$pageview", null],
    session_recording_trigger_match_type_config: "any",
    session_recording_trigger_groups: { version: 2, groups: [] },
    session_recording_retention_period: "90d",
    receive_org_level_activity_logs: true,
    business_model: "b2b",
    conversations_enabled: true,
    conversations_settings: { widget_enabled: true },
    logs_settings: { capture_console_logs: true },
    proactive_tasks_enabled: true,
    revenue_analytics_config: { base_currency: "EUR", events: [], filter_test_accounts: true },
    marketing_analytics_config: { attribution_window_days: 30 },
    customer_analytics_config: { account_group_type_index: null },
    workflows_config: { capture_workflows_engagement_events: true },
    feature_flag_policy_config: { require_tags: true },
    base_currency: "EUR",
    capture_dead_clicks: true,
    human_friendly_comparison_periods: true,
    feature_flag_confirmation_enabled: true,
    feature_flag_confirmation_message: "Are you sure?",
    default_evaluation_contexts_enabled: true,
    require_evaluation_contexts: true,
    default_data_theme: 3,
    onboarding_tasks: { ingest_first_event: "completed" },
    web_analytics_pre_aggregated_tables_enabled: true,
  };
  const stored = { ...sent, tags: ["production", "eu"] };

  it("stores every one sent by PATCH and returns it on every path, keeping the others", async () => {
    const { key, organization, project } = await setupOrganization();
    const response = await api("PATCH", `/api/environments/${project.id}`, { key, body: sent });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject(stored);
    const again = await api("PATCH", `/api/projects/${project.id}`, { key, body: { cookieless_server_hash_mode: 1 } });
    expect(again.body).toMatchObject({ ...stored, cookieless_server_hash_mode: 1 });
    for (const read of [`/api/environments/${project.id}`, `/api/projects/${project.id}`]) {
      expect((await api("GET", read, { key })).body).toMatchObject({
        ...stored,
        cookieless_server_hash_mode: 1,
        project_id: project.id,
      });
    }
    const list = await api("GET", `/api/organizations/${organization.id}/projects`, { key });
    expect(list.body.results[0]).toMatchObject({ id: project.id, project_id: project.id, tags: ["production", "eu"] });
  });

  it("keep to 1 MiB in all: the PATCH that would pass it, each field within its own limit, is 400", async () => {
    const { key, project } = await setupOrganization();
    const path = `/api/projects/${project.id}`;
    const large = (character: string) => Array.from({ length: 7 }, () => character.repeat(65_000));
    const fields = ["person_display_name_properties", "live_events_columns", "app_urls"];
    const answers = [];
    for (const [index, field] of fields.entries()) {
      answers.push(
        await api("PATCH", path, { key, body: { [field]: large(String(index)), week_start_day: index % 2 } }),
      );
    }

    expect(answers.slice(0, 2).map((answer) => answer.status)).toEqual([200, 200]);
    expectError(answers[2]!, 400, maxLength("A project's settings may hold at most 1048576 bytes in all, serialized."));
    const read = await api("GET", path, { key });
    expect(read.body).toMatchObject({ week_start_day: 1, app_urls: [] });
  });

  it("keep to 1 MiB on create too, counted as written back: numbers sent short may be stored long", async () => {
    const { key, organization } = await setupOrganization();
    // Within 1 MiB as sent, about 1.28 MB stored (each list within its 64 KiB once written back).
    const body = growingSettings(20);
    expect(new TextEncoder().encode(body).byteLength).toBeLessThan(1024 * 1024);
    for (const path of [`/api/organizations/${organization.id}/projects`, "/api/projects"]) {
      const response = await api("POST", path, { key, body: body.replace("Grown", `Grown ${path.length}`) });
      expectError(response, 400, maxLength(SETTINGS_TOO_LARGE));
    }
    const listed = await api("GET", `/api/organizations/${organization.id}/projects`, { key });
    expect(listed.body.count).toBe(1);
  });

  it("answer 400, not 500, and write nothing, where what is sent grows past D1's largest value (2 MB)", async () => {
    const { key, organization, project } = await setupOrganization();
    emulateD1TooBig();
    // About 2.2 MB once written back (1 MB as sent): D1 refuses to bind it (create) or to merge it (PATCH).
    const created = await api("POST", `/api/organizations/${organization.id}/projects`, {
      key,
      body: growingSettings(25, 10),
    });
    const updated = await api("PATCH", `/api/projects/${project.id}`, {
      key,
      body: growingSettings(25, 10).replace(`"name": "Grown", `, ""),
    });
    vi.restoreAllMocks();
    expectError(created, 400, maxLength(SETTINGS_TOO_LARGE));
    expectError(updated, 400, maxLength(SETTINGS_TOO_LARGE));
    const listed = await api("GET", `/api/organizations/${organization.id}/projects`, { key });
    expect(listed.body.count).toBe(1);
    expect(
      (await api("GET", `/api/projects/${project.id}`, { key })).body.session_recording_url_trigger_config,
    ).toEqual([]);
  });

  it("takes null where PostHog does, and an empty business model", async () => {
    const { key, project } = await setupOrganization();
    const body = {
      cookieless_server_hash_mode: null,
      business_model: "",
      session_recording_url_trigger_config: null,
      receive_org_level_activity_logs: null,
    };
    const response = await api("PATCH", `/api/environments/${project.id}`, { key, body });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject(body);
  });

  it("refuses a value of the wrong type with 400 naming the field, and changes nothing", async () => {
    const { key, project } = await setupOrganization();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ cookieless_server_hash_mode: 3 }, "cookieless_server_hash_mode", "invalid_choice"],
      [{ business_model: "b2g" }, "business_model", "invalid_choice"],
      [{ session_recording_retention_period: "2y" }, "session_recording_retention_period", "invalid_choice"],
      [{ tags: "production" }, "tags", "invalid_input"],
      [{ tags: ["x".repeat(256)] }, "tags.0", "max_length"],
      [{ session_recording_url_trigger_config: {} }, "session_recording_url_trigger_config", "invalid_input"],
      [
        { session_recording_trigger_match_type_config: "x".repeat(25) },
        "session_recording_trigger_match_type_config",
        "max_length",
      ],
      [{ receive_org_level_activity_logs: "yes" }, "receive_org_level_activity_logs", "invalid_input"],
      [{ conversations_enabled: 1 }, "conversations_enabled", "invalid_input"],
      [{ proactive_tasks_enabled: "true" }, "proactive_tasks_enabled", "invalid_input"],
      [{ revenue_analytics_config: [] }, "revenue_analytics_config", "invalid_input"],
      [{ base_currency: "euro" }, "base_currency", "invalid_input"],
      [{ default_data_theme: 1.5 }, "default_data_theme", "invalid_input"],
    ];
    for (const [body, attr, code] of cases) {
      const response = await api("PATCH", `/api/environments/${project.id}`, { key, body: { is_demo: true, ...body } });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body, JSON.stringify(body)).toMatchObject({ type: "validation_error", code, attr });
    }
    expect((await api("GET", `/api/projects/${project.id}`, { key })).body).toMatchObject({
      is_demo: false,
      cookieless_server_hash_mode: 0,
      tags: [],
    });
  });

  it("answers the read-only fields PostHog's clients require, with this API's values", async () => {
    const { key, organization, project } = await setupOrganization();
    const member = await addMember(organization.id, 1);
    const expected = {
      project_id: project.id,
      is_pending_deletion: false,
      deletion_scheduled_at: null,
      managed_viewsets: {},
      available_setup_task_ids: [],
      heatmaps_screenshot_secret: null,
    };
    expect((await api("GET", `/api/projects/${project.id}`, { key })).body).toMatchObject({
      ...expected,
      user_access_level: "admin",
    });
    expect((await api("GET", `/api/environments/${project.id}`, { key: member.key })).body).toMatchObject({
      ...expected,
      user_access_level: "member",
    });
  });
});

describe.each(PROJECT_PATHS)("a PATCH over a field changed meanwhile, through the $tree path", ({ path }) => {
  afterEach(() => vi.restoreAllMocks());

  it("is refused (409) rather than make public unlogged a project made private meanwhile", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const project = await createProject(organization.id, { name: "Turned private" });
    const projectPath = path({ id: project.id, organizationId: organization.id });
    const ran = beforeWrites([
      [
        /^update "projects"/,
        async () => (await api("PATCH", projectPath, { key, body: { access_control: true } })).status,
      ],
    ]);
    const raced = await api("PATCH", projectPath, { key: admin.key, body: { access_control: false } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expectError(raced, 409, changedMeanwhile("project"));
    expect((await api("GET", projectPath, { key })).body.access_control).toBe(true);
    // Sent again, it is judged on the project as it is, and logged.
    const again = await api("PATCH", projectPath, { key: admin.key, body: { access_control: false } });
    expect([again.status, again.body.access_control]).toEqual([200, false]);
  });
});
