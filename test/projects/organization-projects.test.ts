import { describe, expect, it } from "vitest";
import { projects } from "../../src/db/schema";
import { nowIso } from "../../src/platform/ids";
import {
  addMember,
  api,
  createProject,
  db,
  errorBody,
  grantProjectAccess,
  setupOrganization,
} from "../support/harness";
import { expectedProject, expectedProjectListItem } from "../support/projects";

const projectsPath = (organizationId: string) => `/api/organizations/${organizationId}/projects`;

describe("POST /api/organizations/:organization_id/projects", () => {
  it("creates a project with every field at its default", async () => {
    const { organization, key } = await setupOrganization();
    const response = await api("POST", projectsPath(organization.id), { key, body: {} });
    expect(response.status).toBe(201);
    expect(response.body).toEqual(
      expectedProject({ organization: organization.id, name: "Default project 2", level: 15 }),
    );
    const environment = await api("GET", `/api/projects/${response.body.id}`, { key });
    expect(environment.body.id).toBe(response.body.id);
  });

  it("stores and echoes every request field", async () => {
    const { organization, key } = await setupOrganization();
    const body = {
      name: "  Web app ",
      product_description: "Our shop",
      app_urls: ["https://shop.example.com", null, ""],
      slack_incoming_webhook: "https://hooks.slack.com/x",
      anonymize_ips: true,
      completed_snippet_onboarding: true,
      test_account_filters: [{ key: "email", value: "@example.com", operator: "not_icontains" }],
      test_account_filters_default_checked: true,
      path_cleaning_filters: [{ alias: "id", regex: "\\d+" }],
      is_demo: true,
      timezone: "Europe/Paris",
      data_attributes: ["data-attr", "data-id"],
      person_display_name_properties: ["email"],
      correlation_config: { excluded_person_property_names: ["x"] },
      autocapture_opt_out: true,
      autocapture_exceptions_opt_in: true,
      autocapture_web_vitals_opt_in: true,
      autocapture_web_vitals_allowed_metrics: ["LCP"],
      autocapture_exceptions_errors_to_ignore: ["ResizeObserver"],
      capture_console_log_opt_in: true,
      capture_performance_opt_in: true,
      session_recording_opt_in: true,
      session_recording_sample_rate: "0.50",
      session_recording_minimum_duration_milliseconds: 2000,
      session_recording_linked_flag: { id: 1, key: "flag" },
      session_recording_network_payload_capture_config: { recordHeaders: true },
      session_replay_config: { record_canvas: true },
      survey_config: { appearance: {} },
      access_control: true,
      week_start_day: 1,
      primary_dashboard: 7,
      live_events_columns: ["event"],
      recording_domains: ["", "https://shop.example.com", null],
      inject_web_apps: true,
      extra_settings: { a: 1 },
      modifiers: { personsOnEventsMode: "disabled" },
      has_completed_onboarding_for: { product_analytics: true },
      surveys_opt_in: true,
      heatmaps_opt_in: true,
      flags_persistence_default: true,
      tags: ["shop"],
      cookieless_server_hash_mode: 1,
      session_recording_masking_config: { maskAllInputs: false },
      session_recording_url_trigger_config: [{ url: "/cart", matching: "regex" }],
      receive_org_level_activity_logs: true,
      business_model: "b2c",
      conversations_enabled: true,
      logs_settings: { capture_console_logs: false },
      proactive_tasks_enabled: true,
      base_currency: "EUR",
    };
    const response = await api("POST", projectsPath(organization.id), { key, body });
    expect(response.status).toBe(201);
    // As PostHog: the lists' blank entries are dropped.
    const { name: _name, ...sent } = body;
    const overrides = {
      ...sent,
      app_urls: ["https://shop.example.com"],
      recording_domains: ["https://shop.example.com"],
    };
    const expected = expectedProject({ organization: organization.id, name: "Web app", level: 15, overrides });
    expect(response.body).toEqual(expected);
    const read = await api("GET", `${projectsPath(organization.id)}/${response.body.id}`, { key });
    expect(read.body).toEqual(response.body);
  });

  it("names projects Default project, then Default project 2, 3...", async () => {
    const { organization, key } = await setupOrganization();
    const names = [];
    for (let index = 0; index < 2; index += 1) {
      names.push((await api("POST", projectsPath(organization.id), { key, body: {} })).body.name);
    }
    expect(names).toEqual(["Default project 2", "Default project 3"]);
  });

  it("answers 409 for a name taken in the organization, ignoring case, and creates nothing", async () => {
    const { organization, key } = await setupOrganization();
    await api("POST", projectsPath(organization.id), { key, body: { name: "Shop" } });
    const response = await api("POST", projectsPath(organization.id), { key, body: { name: "sHOP" } });
    expect(response.status).toBe(409);
    expect(response.body).toEqual(
      errorBody(
        "conflict",
        "conflict",
        'There is already a project called "sHOP" in this organization. Choose a different name.',
      ),
    );
    expect((await api("GET", projectsPath(organization.id), { key })).body.count).toBe(2);
    const other = await setupOrganization();
    expect(
      (await api("POST", projectsPath(other.organization.id), { key: other.key, body: { name: "Shop" } })).status,
    ).toBe(201);
  });

  it("validates each field, naming it in attr", async () => {
    const { organization, key } = await setupOrganization();
    const cases: [Record<string, unknown>, string, string, string][] = [
      [{ name: "" }, "name", "blank", "This field may not be blank."],
      [{ name: "x".repeat(201) }, "name", "max_length", "Ensure this field has no more than 200 characters."],
      [{ timezone: "Mars/Olympus" }, "timezone", "invalid_choice", '"Mars/Olympus" is not a valid choice.'],
      [{ week_start_day: 3 }, "week_start_day", "invalid_choice", '"3" is not a valid choice.'],
      [{ anonymize_ips: "yes" }, "anonymize_ips", "invalid_input", "Expected boolean, received string."],
      [{ app_urls: "https://x" }, "app_urls", "invalid_input", "Expected array, received string."],
      [{ app_urls: [1] }, "app_urls.0", "invalid_input", "Expected string, received number."],
      [
        { session_recording_minimum_duration_milliseconds: 40000 },
        "session_recording_minimum_duration_milliseconds",
        "max_value",
        "Ensure this value is less than or equal to 30000.",
      ],
      [
        { session_recording_sample_rate: "2" },
        "session_recording_sample_rate",
        "invalid_input",
        "Ensure the sample rate is a decimal between 0 and 1 with at most 2 decimal places.",
      ],
      [{ access_control: null }, "access_control", "null", "This field may not be null."],
    ];
    for (const [body, attr, code, detail] of cases) {
      const response = await api("POST", projectsPath(organization.id), { key, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body).toEqual(errorBody("validation_error", code, detail, attr));
    }
    expect((await api("GET", projectsPath(organization.id), { key })).body.count).toBe(1);
  });

  it("needs an admin or owner", async () => {
    const { organization } = await setupOrganization();
    const member = await addMember(organization.id, 1);
    const response = await api("POST", projectsPath(organization.id), { key: member.key, body: {} });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(
      errorBody("authentication_error", "permission_denied", "Your organization access level is insufficient."),
    );
    const admin = await addMember(organization.id, 8);
    const created = await api("POST", projectsPath(organization.id), { key: admin.key, body: {} });
    expect(created.status).toBe(201);
    expect(created.body.effective_membership_level).toBe(8);
  });

  it("stops at 2000 projects per organization", async () => {
    const { organization, key } = await setupOrganization();
    const now = nowIso();
    const rows = Array.from({ length: 1999 }, (_, index) => ({
      uuid: crypto.randomUUID(),
      organizationId: organization.id,
      name: `p${index}`,
      nameKey: `p${index}`,
      apiToken: `phc_bulk_${organization.id}_${index}`,
      liveEventsToken: "t",
      settings: {},
      createdAt: now,
      updatedAt: now,
    }));
    // D1 caps bound parameters per statement; insert in chunks.
    for (let start = 0; start < rows.length; start += 5) {
      await db.insert(projects).values(rows.slice(start, start + 5));
    }
    const response = await api("POST", projectsPath(organization.id), { key, body: { name: "One too many" } });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(
      errorBody(
        "authentication_error",
        "permission_denied",
        "You have reached the maximum limit of allowed projects for your current plan (2000).",
      ),
    );
  });

  it("answers 404 in another organization", async () => {
    const { key } = await setupOrganization();
    const other = await setupOrganization();
    const response = await api("POST", projectsPath(other.organization.id), { key, body: {} });
    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorBody("invalid_request", "not_found", "Not found."));
  });
});

describe("GET /api/organizations/:organization_id/projects", () => {
  it("lists the seed's abbreviated fields, in creation order", async () => {
    const { organization, project, key } = await setupOrganization();
    const second = await createProject(organization.id, { name: "Second" });
    const response = await api("GET", projectsPath(organization.id), { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      count: 2,
      next: null,
      previous: null,
      results: [expectedProjectListItem(project), expectedProjectListItem(second)],
    });
  });

  it("shows a private project only to admins and to members granted access", async () => {
    const { organization, project, key } = await setupOrganization();
    const secret = await createProject(organization.id, { name: "Secret", access_control: true });
    const member = await addMember(organization.id, 1);
    const granted = await addMember(organization.id, 1);
    await grantProjectAccess(secret.id, granted.membership.id);

    const names = async (callerKey: string) =>
      (await api("GET", projectsPath(organization.id), { key: callerKey })).body.results.map(
        (item: { name: string }) => item.name,
      );
    expect(await names(key)).toEqual([project.name, "Secret"]);
    expect(await names(member.key)).toEqual([project.name]);
    expect(await names(granted.key)).toEqual([project.name, "Secret"]);

    const hidden = await api("GET", `${projectsPath(organization.id)}/${secret.id}`, { key: member.key });
    expect(hidden.status).toBe(404);
    expect((await api("GET", `/api/projects/${secret.id}`, { key: member.key })).status).toBe(404);
    expect((await api("GET", `/api/projects/${secret.id}`, { key: granted.key })).status).toBe(200);
  });

  it("costs the same number of D1 queries for 1 and for 50 projects", async () => {
    const small = await setupOrganization();
    const large = await setupOrganization();
    for (let index = 0; index < 49; index += 1) await createProject(large.organization.id);
    await api("GET", "/api/users/@me", { key: small.key });
    await api("GET", "/api/users/@me", { key: large.key });

    const one = await api("GET", projectsPath(small.organization.id), { key: small.key });
    const fifty = await api("GET", projectsPath(large.organization.id), { key: large.key });
    expect(one.body.count).toBe(1);
    expect(fifty.body.count).toBe(50);
    expect(fifty.body.results).toHaveLength(50);
    expect(fifty.cost.queries).toBe(one.cost.queries);
    expect(one.cost.queries).toBe(1);
  });
});

describe("GET /api/organizations/:organization_id/projects/:id", () => {
  it("retrieves the full project by id and by @current", async () => {
    const { organization, project, key } = await setupOrganization();
    for (const id of [String(project.id), "@current"]) {
      const response = await api("GET", `${projectsPath(organization.id)}/${id}`, { key });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(
        expectedProject({ id: project.id, organization: organization.id, name: project.name, level: 15 }),
      );
      expect(response.body.api_token).toBe(project.apiToken);
    }
  });

  it("costs at most 2 D1 queries with a warm key cache", async () => {
    const { organization, project, key } = await setupOrganization();
    await api("GET", "/api/users/@me", { key });
    const response = await api("GET", `${projectsPath(organization.id)}/${project.id}`, { key });
    expect(response.status).toBe(200);
    expect(response.cost.queries).toBeLessThanOrEqual(2);
  });

  it("answers 404 for unknown ids and for another organization's project", async () => {
    const { organization, key } = await setupOrganization();
    const other = await setupOrganization();
    for (const id of ["999999", "abc", String(other.project.id)]) {
      const response = await api("GET", `${projectsPath(organization.id)}/${id}`, { key });
      expect(response.status, id).toBe(404);
      expect(response.body).toEqual(errorBody("invalid_request", "not_found", "Not found."));
    }
    const viaOther = await api("GET", `${projectsPath(other.organization.id)}/${other.project.id}`, { key });
    expect(viaOther.status).toBe(404);
  });

  it("needs project:read", async () => {
    const { organization, project, key } = await setupOrganization({ scopes: ["organization:read"] });
    const response = await api("GET", `${projectsPath(organization.id)}/${project.id}`, { key });
    expect(response.status).toBe(403);
    expect(response.body.detail).toBe("API key missing required scope 'project:read'");
  });
});
