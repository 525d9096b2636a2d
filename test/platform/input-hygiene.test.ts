import { describe, expect, it } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { databaseDigest, markKeysUsed } from "../support/database-digest";
import { expectError } from "../support/error-bodies";
import { addMember, api, errorBody, setupOrganization, UUID } from "../support/harness";
import { insertInvite } from "../support/people";
import { createDashboard, dashboardsPath } from "../environments/dashboard-fixtures";

const parseError = (detail: string) => errorBody("validation_error", "parse_error", `JSON parse error - ${detail}`);
const LONE_SURROGATE = parseError("A string holds a lone UTF-16 surrogate.");
const TOO_DEEP = parseError("Nested deeper than 32 levels.");

/** JSON text of `value` nested `depth` lists deep, without building it (JSON.stringify would recurse). */
const nestedList = (depth: number, value = "1") => `${"[".repeat(depth)}${value}${"]".repeat(depth)}`;

/** Sends `request`, expects `status` and `body`, and that the database did not change. */
async function expectRefusedUnchanged(
  request: () => Promise<{ status: number; body: unknown }>,
  status: number,
  body: unknown,
) {
  await markKeysUsed();
  const before = await databaseDigest();
  expectError(await request(), status, body);
  expect(await databaseDigest()).toEqual(before);
}

describe("strings that are not valid Unicode", () => {
  it("refuses a lone surrogate anywhere in the body, in values and keys, storing nothing", async () => {
    const { organization, key } = await setupOrganization();
    const domains = `/api/organizations/${organization.id}/domains`;
    for (const body of [
      '{"domain": "example.com", "saml_entity_id": "\\ud800"}',
      '{"domain": "example.com", "saml_entity_id": "ok \\udfff"}',
      '{"domain": "example.com", "nested": {"\\ud83d": 1}}',
      '{"domain": "example.com", "list": ["a", ["\\udc00\\ud800"]]}',
    ]) {
      await expectRefusedUnchanged(() => api("POST", domains, { key, body }), 400, LONE_SURROGATE);
    }
  });

  it("accepts a well-formed surrogate pair, escaped or not", async () => {
    const { organization, key } = await setupOrganization();
    const response = await api("POST", `/api/organizations`, { key, body: '{"name": "Rocket \\ud83d\\ude80 🚀"}' });
    expect(response.status).toBe(201);
    expect(response.body.name).toBe("Rocket 🚀 🚀");
    expect(organization.id).not.toBe(response.body.id);
  });

  it("refuses a body that is not valid UTF-8", async () => {
    const { key } = await setupOrganization();
    const prefix = new TextEncoder().encode('{"name": "caf');
    for (const invalid of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xe9, 0x22]]) {
      const body = new Uint8Array([...prefix, ...invalid, ...new TextEncoder().encode('"}')]);
      await expectRefusedUnchanged(
        () => api("POST", "/api/organizations", { key, body }),
        400,
        parseError("The body is not valid UTF-8."),
      );
    }
  });
});

describe("NUL characters", () => {
  it("refuses one in any string of the body, as DRF does, naming where it stands, and stores nothing", async () => {
    const { organization, project, key } = await setupOrganization();
    const dashboard = await createDashboard(key, project.id, { name: "Plain" });
    const nulRefused = (attr: string | null) =>
      errorBody("validation_error", "null_characters_not_allowed", "Null characters are not allowed.", attr);
    for (const [method, path, body, attr] of [
      ["POST", dashboardsPath(project.id), { name: "Plain", description: "intro\u0000revenue" }, "description"],
      [
        "PATCH",
        `${dashboardsPath(project.id)}/${dashboard.id}`,
        { tiles: [{ text: { body: "a\u0000b" } }] },
        "tiles.0.text.body",
      ],
      ["POST", dashboardsPath(project.id), { name: "T", tags: ["ok", "b\u0000d"] }, "tags.1"],
      ["POST", `/api/organizations/${organization.id}/domains`, { domain: "example.com", x: { "k\u0000": 1 } }, "x"],
      ["POST", "/api/organizations", { name: "\u0000" }, "name"],
    ] as const) {
      await expectRefusedUnchanged(() => api(method, path, { key, body }), 400, nulRefused(attr));
    }
  });
});

describe("nesting", () => {
  it("refuses JSON deeper than 32 levels before validating it, even 5,000 deep in a choice field", async () => {
    const { organization, project, key } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const deepChoices: [string, string, string][] = [
      ["PATCH", `/api/organizations/${organization.id}/members/${member.user.uuid}`, "level"],
      ["POST", `/api/organizations/${organization.id}/invites`, "level"],
      ["POST", `/api/environments/${project.id}/dashboards`, "restriction_level"],
      ["POST", `/api/environments/${project.id}/batch_exports`, "interval"],
      ["POST", "/api/personal_api_keys", "scopes"],
    ];
    for (const [method, path, field] of deepChoices) {
      const body = `{"${field}": ${nestedList(5000)}}`;
      await expectRefusedUnchanged(() => api(method, path, { key, body }), 400, TOO_DEEP);
    }
  });

  it("accepts 32 levels and refuses 33", async () => {
    const { project, key } = await setupOrganization();
    const dashboards = `/api/environments/${project.id}/dashboards`;
    // The body object is the first level; `filters` of batch exports stores any JSON.
    const atLimit = await api("POST", dashboards, { key, body: `{"name": "deep", "ignored": ${nestedList(31)}}` });
    expect(atLimit.status).toBe(201);
    await expectRefusedUnchanged(
      () => api("POST", dashboards, { key, body: `{"name": "deeper", "ignored": ${nestedList(32)}}` }),
      400,
      TOO_DEEP,
    );
  });

  it("names a list or an object refused as a choice by its type, not by its text", async () => {
    const { organization, key } = await setupOrganization();
    const response = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key,
      body: { target_email: "deep@example.com", level: [[["x"]]] },
    });
    expectError(
      response,
      400,
      errorBody("validation_error", "invalid_choice", "A list is not a valid choice.", "level"),
    );
  });
});

describe("body size", () => {
  /** A chunked body (no Content-Length) of `total` bytes, counting how many the server pulled. */
  function chunkedBody(total: number) {
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    const pulled = { bytes: 0 };
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled.bytes >= total) return controller.close();
        pulled.bytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    return { stream, pulled };
  }

  it("answers a 2 MiB chunked body with 413 while reading it, not after", async () => {
    const { key } = await setupOrganization();
    const { stream, pulled } = chunkedBody(2 * 1024 * 1024);
    await markKeysUsed();
    const before = await databaseDigest();
    const response = await api("POST", "/api/organizations", { key, body: stream });
    expectError(
      response,
      413,
      errorBody("invalid_request", "payload_too_large", "Request body is too large (over 1 MiB)."),
    );
    expect(pulled.bytes).toBeLessThan(2 * 1024 * 1024);
    expect(await databaseDigest()).toEqual(before);
  });

  it("counts the bytes of a body whose Content-Length understates them: 413, nothing changed", async () => {
    const { key } = await setupOrganization();
    const oversized = JSON.stringify({ first_name: "Oversized", padding: "x".repeat(2 * 1024 * 1024) });
    await markKeysUsed();
    const before = await databaseDigest();
    // A route whose body is read ahead of its checks (`@me`'s choices), and one whose body is read after them.
    for (const [method, path] of [
      ["PATCH", "/api/users/@me"],
      ["POST", "/api/organizations"],
    ] as const) {
      const sent = await api(method, path, { key, body: oversized, headers: { "Content-Length": "20" } });
      expectError(
        sent,
        413,
        errorBody("invalid_request", "payload_too_large", "Request body is too large (over 1 MiB)."),
      );
    }
    expect(await databaseDigest()).toEqual(before);
  });

  it("reads a chunked body within the limit as any other", async () => {
    const { key } = await setupOrganization();
    const text = new TextEncoder().encode(JSON.stringify({ name: "Chunked" }));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(text.subarray(0, 5));
        controller.enqueue(text.subarray(5));
        controller.close();
      },
    });
    const response = await api("POST", "/api/organizations", { key, body: stream });
    expect(response.status).toBe(201);
    expect(response.body.name).toBe("Chunked");
  });
});

describe("pagination parameters", () => {
  it("walks a list through its `next` links in one whole page's order, ties and mixed directions too", async () => {
    const { key, project } = await setupOrganization();
    const path = `/api/environments/${project.id}/dashboards`;
    // Pinned first, then by name, then by id: equal names and both pinned states.
    for (const [name, pinned] of [
      ["b", false],
      ["a", true],
      ["b", true],
      ["a", false],
      ["b", false],
      ["c", true],
      ["a", false],
    ] as const) {
      expect((await api("POST", path, { key, body: { name, pinned } })).status).toBe(201);
    }
    const whole = await api("GET", `${path}?limit=100`, { key });
    const relative = (link: string | null) => link && `${new URL(link).pathname}${new URL(link).search}`;
    const walked: unknown[] = [];
    let next: string | null = `${path}?limit=2`;
    let last: Awaited<ReturnType<typeof api>> | undefined;
    while (next) {
      last = await api("GET", next, { key });
      walked.push(...last.body.results);
      next = relative(last.body.next);
      if (next) expect(next).toContain("&after=");
    }
    expect(walked).toEqual(whole.body.results);

    // Back from the last page through `previous`: each page is what its offset answers.
    let previous = relative(last!.body.previous);
    while (previous) {
      const page: Awaited<ReturnType<typeof api>> = await api("GET", previous, { key });
      const offset = Number(new URL(previous, "http://localhost").searchParams.get("offset"));
      expect(previous).toContain("&before=");
      expect(page.body.results).toEqual(whole.body.results.slice(offset, offset + 2));
      previous = relative(page.body.previous);
    }
  });

  it("answers every offset without a cursor as one whole page would, counted from either end", async () => {
    const { key, project } = await setupOrganization();
    const path = `/api/environments/${project.id}/dashboards`;
    for (const [name, pinned] of [
      ["b", false],
      ["a", true],
      ["b", true],
      ["a", false],
      ["b", false],
      ["c", true],
      ["a", false],
    ] as const) {
      expect((await api("POST", path, { key, body: { name, pinned } })).status).toBe(201);
    }
    const whole = (await api("GET", `${path}?limit=100`, { key })).body.results;
    for (let offset = 0; offset <= whole.length; offset += 1) {
      const page = await api("GET", `${path}?limit=3&offset=${offset}`, { key });
      expect(page.body.results, `offset ${offset}`).toEqual(whole.slice(offset, offset + 3));
    }
  });

  it("ignores a cursor that is not one, or was made for another offset: the offset decides", async () => {
    const { key, organization } = await setupOrganization();
    for (let index = 0; index < 3; index += 1) {
      await api("POST", `/api/organizations/${organization.id}/invites`, {
        key,
        body: { target_email: `page-${index}@example.com`, send_email: false },
      });
    }
    const path = `/api/organizations/${organization.id}/invites?limit=1`;
    const second = await api("GET", `${path}&offset=1`, { key });
    const next = new URL((await api("GET", path, { key })).body.next);
    const cursor = next.searchParams.get("after")!;
    const json = (value: unknown) =>
      btoa(JSON.stringify(value)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

    for (const after of ["%%%", "bm90IGpzb24", json([1, 2]), json({ o: 1, k: [{ nested: true }] }), "x".repeat(2000)]) {
      const response = await api("GET", `${path}&offset=1&after=${after}`, { key });
      expect(response.status, after).toBe(200);
      expect(response.body, after).toEqual(second.body);
    }
    // Made for offset 1: sent with offset 2, the offset wins.
    const third = await api("GET", `${path}&offset=2`, { key });
    expect((await api("GET", `${path}&offset=2&after=${cursor}`, { key })).body).toEqual(third.body);
    expect((await api("GET", next.pathname + next.search, { key })).body.results).toEqual(second.body.results);
  });

  it("falls back to the defaults when limit or offset is sent twice", async () => {
    const { key } = await setupOrganization();
    const response = await api("GET", "/api/organizations?limit=5&limit=7&offset=1&offset=2", { key });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ count: 1, next: null, previous: null });
    expect(response.body.results).toHaveLength(1);
  });
});

describe("response headers", () => {
  it("sends nosniff and a request id on every response, errors included", async () => {
    const { key } = await setupOrganization();
    for (const response of [
      await api("GET", "/api/users/@me", { key }),
      await api("GET", "/api/users/@me"),
      await api("GET", "/api/no-such-thing", { key }),
      await api("POST", "/api/organizations", { key, body: "{" }),
    ]) {
      expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
      expect(response.headers.get("X-Request-Id")).toMatch(UUID);
    }
  });

  it("keeps the caller's request id when it is sane, and replaces it otherwise", async () => {
    const sane = await api("GET", "/api/users/@me", { headers: { "X-Request-Id": "trace-42_abc=" } });
    expect(sane.headers.get("X-Request-Id")).toBe("trace-42_abc=");
    // Nor one a spreadsheet opening an activity-log export would read as a formula.
    for (const insane of ["has space", "semi;colon", "x".repeat(256), "=C2-D2", "-1", "_x"]) {
      const response = await api("GET", "/api/users/@me", { headers: { "X-Request-Id": insane } });
      expect(response.headers.get("X-Request-Id")).toMatch(UUID);
    }
  });

  it("forbids storing a response that carries a key value; keeps others private", async () => {
    const { key } = await setupOrganization();
    const created = await api("POST", "/api/personal_api_keys", { key, body: { label: "CI", scopes: ["*"] } });
    expect(created.status).toBe(201);
    expect(created.headers.get("Cache-Control")).toBe("no-store");
    const listed = await api("GET", "/api/personal_api_keys", { key });
    expect(listed.headers.get("Cache-Control")).toBe("private, no-cache");

    const { organization, owner } = await setupOrganization();
    const invite = await insertInvite(organization.id, owner);
    const joined = await api("POST", `/api/signup/${invite.token}`, { body: {} });
    expect(joined.status).toBe(201);
    expect(joined.body.personal_api_key.value).toMatch(/^phx_/);
    expect(joined.headers.get("Cache-Control")).toBe("no-store");
  });
});

describe("times", () => {
  /** The last second of 9999 in New York: the first hours of the year 10000 in UTC. */
  const PAST_9999_IN_UTC = "9999-12-31T23:59:59-05:00";
  const BEFORE_YEAR_1_IN_UTC = "0001-01-01T00:00:00+01:00";
  const OUT_OF_RANGE = "Datetime is out of range: in UTC it must fall within the years 1 to 9999.";

  it("refuses, on every time a client sends, one whose UTC form leaves the years 1 to 9999", async () => {
    const team = await setupOrganization();
    const dashboard = await api("POST", `/api/environments/${team.project.id}/dashboards`, {
      key: team.key,
      body: { name: "Far" },
    });
    expect(dashboard.status).toBe(201);
    const export_ = {
      name: "Until the end",
      interval: "hour",
      destination: { type: "HTTP", config: { url: "https://h.example.com", token: "t" } },
    };
    const refused = (attr: string) => errorBody("validation_error", "invalid_input", OUT_OF_RANGE, attr);
    for (const time of [PAST_9999_IN_UTC, BEFORE_YEAR_1_IN_UTC]) {
      const requests: [string, string, Record<string, unknown>, string][] = [
        ["POST", "/api/personal_api_keys", { label: "forever", scopes: ["*"], expires_at: time }, "expires_at"],
        ["POST", `/api/environments/${team.project.id}/batch_exports`, { ...export_, end_at: time }, "end_at"],
        [
          "PATCH",
          `/api/environments/${team.project.id}/dashboards/${dashboard.body.id}/sharing`,
          { enabled: true, expires_at: time },
          "expires_at",
        ],
      ];
      for (const [method, path, body, attr] of requests) {
        await expectRefusedUnchanged(() => api(method, path, { key: team.key, body }), 400, refused(attr));
      }
      const after = encodeURIComponent(time);
      const log = await api("GET", `/api/organizations/${team.organization.id}/activity_log?after=${after}`, {
        key: team.key,
      });
      expectError(log, 400, refused("after"));
    }
    // A webhook settles in the background after its creation: its recovery is checked apart.
    const webhook = await api("POST", `/api/organizations/${team.organization.id}/webhooks`, {
      key: team.key,
      body: { url: "https://receiver.example.com/hook", events: ["Dashboard.deleted"] },
    });
    expect(webhook.status).toBe(201);
    const recover = await api(
      "POST",
      `/api/organizations/${team.organization.id}/webhooks/${webhook.body.id}/recover`,
      {
        key: team.key,
        body: { since: "2026-01-01T00:00:00Z", until: PAST_9999_IN_UTC },
      },
    );
    expectError(recover, 400, refused("until"));
    // The last moment of 9999 in UTC is a time like any other.
    const lastMoment = await api("POST", "/api/personal_api_keys", {
      key: team.key,
      body: { label: "late", scopes: ["*"], expires_at: "9999-12-31T23:59:59Z" },
    });
    expect(lastMoment.status).toBe(201);
    expect(lastMoment.body.expires_at).toBe("9999-12-31T23:59:59.000Z");
  });

  it("reads a time as DRF does: seconds optional, without a zone in UTC (PostHog's), as its 400 says", async () => {
    const team = await setupOrganization();
    const created = [];
    for (const expires_at of [
      "2027-06-01T12:00Z",
      "2027-06-01T12:00+02:00",
      "2027-06-01T12:00",
      "2027-06-01T12:00:30.5",
      // ISO 8601's other spellings, which DRF reads too: an hours-only offset, one without its colon, a decimal comma.
      "2027-06-01T12:00:00+02",
      "2027-06-01T12:00-0130",
      "2027-06-01T12:00:00,5Z",
    ]) {
      const response = await api("POST", "/api/personal_api_keys", {
        key: team.key,
        body: { label: `until ${expires_at}`, scopes: ["project:read"], expires_at },
      });
      created.push([response.status, response.body.expires_at]);
    }
    expect(created).toEqual([
      [201, "2027-06-01T12:00:00.000Z"],
      [201, "2027-06-01T10:00:00.000Z"],
      [201, "2027-06-01T12:00:00.000Z"],
      [201, "2027-06-01T12:00:30.500Z"],
      [201, "2027-06-01T10:00:00.000Z"],
      [201, "2027-06-01T13:30:00.000Z"],
      [201, "2027-06-01T12:00:00.500Z"],
    ]);
    const after = encodeURIComponent("2026-01-01T00:00+01:00");
    const log = await api("GET", `/api/organizations/${team.organization.id}/activity_log?after=${after}`, {
      key: team.key,
    });
    expect(log.status).toBe(200);
    // Still refused: a date alone, hours alone, a lower-case `t`, seconds past 59, February 30th, a bare comma.
    for (const expires_at of [
      "2027-06-01T12:00:00,Z",
      "2027-06-01T12:00+2",
      "2027-06-01T12:00:00+02:",
      "2027-06-01",
      "2027-06-01T12Z",
      "2027-06-01t12:00Z",
      "2027-06-01T12:00:60",
      "2027-02-30T12:00",
    ]) {
      const response = await api("POST", "/api/personal_api_keys", {
        key: team.key,
        body: { label: "odd", scopes: ["project:read"], expires_at },
      });
      expect(response.body, expires_at).toMatchObject({ code: "invalid_input", attr: "expires_at" });
    }
  });
});

describe("JSON values storage would change", () => {
  it("refuses a number JSON cannot hold (stored as null) and a __proto__ key (lost in validation)", async () => {
    const { key, project } = await setupOrganization();
    const projectPath = `/api/projects/${project.id}`;
    for (const body of [
      '{"extra_settings": {"x": 1e309}}',
      '{"revenue_analytics_config": {"a": [-1e400]}}',
      '{"extra_settings": {"__proto__": {"a": 1}, "b": 2}}',
      '{"revenue_analytics_config": {"nested": {"__proto__": 1}}}',
    ]) {
      const refusal = body.includes("__proto__")
        ? parseError("An object holds the key __proto__.")
        : parseError("A number is too large to store.");
      await expectRefusedUnchanged(() => api("PATCH", projectPath, { key, body }), 400, refusal);
    }
    // The largest a double holds is kept as sent.
    const largest = await api("PATCH", projectPath, { key, body: '{"extra_settings": {"x": 1.7976931348623157e308}}' });
    expect(largest.status).toBe(200);
    expect(largest.body.extra_settings).toEqual({ x: Number.MAX_VALUE });
  });
});

/** A dashboard whose public link is password-protected: where share passwords are made. */
async function protectedLink() {
  const team = await setupOrganization();
  const dashboard = await createDashboard(team.key, team.project.id, { name: "Shared" });
  const path = `${dashboardsPath(team.project.id)}/${dashboard.id}/sharing`;
  expect((await api("PATCH", path, { key: team.key, body: { password_required: true } })).status).toBe(200);
  return { ...team, path };
}

describe("secrets in error answers", () => {
  it("a body that is not JSON is refused without quoting the secret it carries", async () => {
    const { key, path } = await protectedLink();
    const password = "correct-horse-battery-staple";
    // A hand-written body with the value unquoted (or in single quotes): V8's message quotes the text around it.
    for (const body of [`{"raw_password": ${password}}`, `{"raw_password": '${password}'}`]) {
      const response = await api("POST", `${path}/passwords`, { key, body });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe("parse_error");
      expect(response.text).not.toContain(password.slice(0, 6));
    }
    // The same for the unauthenticated routes that take a secret in their body: an invite token.
    const token = "phi_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH";
    const signup = await api("POST", "/api/signup", { body: `{"token": ${token}}` });
    expect(signup.status).toBe(400);
    expect(signup.text).not.toContain(token.slice(0, 8));
  });

  it("a share password of the wrong type is refused without quoting it", async () => {
    const { key, path } = await protectedLink();
    const response = await api("POST", `${path}/passwords`, { key, body: { raw_password: 73194628501 } });
    expect(response.status).toBe(400);
    expect(response.body.attr).toBe("raw_password");
    expect(response.text).not.toContain("73194628501");
  });
});
