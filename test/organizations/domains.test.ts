import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { MembershipLevel } from "../../src/platform/levels";
import {
  addMember,
  api,
  createApiKey,
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
  INSUFFICIENT_LEVEL,
  NOT_AUTHENTICATED,
  NOT_FOUND,
  expectError,
  missingScope,
} from "../support/error-bodies";
import { beforeWrites } from "../support/races";

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
let sequence = 0;
const uniqueDomain = (label = "acme") => `${label}-${Date.now().toString(36)}${(sequence += 1)}.example.com`;

const domainsPath = (organizationId: string) => `/api/organizations/${organizationId}/domains`;

async function createDomain(organizationId: string, key: string, body: Record<string, unknown> = {}) {
  const response = await api("POST", domainsPath(organizationId), { key, body: { domain: uniqueDomain(), ...body } });
  expect(response.status).toBe(201);
  return response.body as { id: string; domain: string; verification_challenge: string };
}

/** Arranged in D1: verification itself is tested through the verify endpoint. */
async function markVerified(id: string) {
  await db.update(schema.domains).set({ verifiedAt: "2026-01-02T03:04:05.000Z" }).where(eq(schema.domains.id, id));
}

/** The whole body of a domain as created, with what a test changed. */
type CreatedDomain = { id: string; domain: string; verification_challenge: string };
const domainBody = (created: CreatedDomain, changes: Record<string, unknown> = {}) => ({
  id: created.id,
  domain: created.domain,
  is_verified: false,
  verified_at: null,
  verification_challenge: created.verification_challenge,
  last_verification_retry: null,
  jit_provisioning_enabled: false,
  sso_enforcement: "",
  has_saml: false,
  saml_entity_id: null,
  saml_acs_url: null,
  saml_x509_cert: null,
  scim_base_url: null,
  ...changes,
});

const SAML = {
  saml_entity_id: "https://idp.example.com/entity",
  saml_acs_url: "https://app.example.com/complete/saml/",
  saml_x509_cert: "MIIC...certificate",
};

afterEach(() => {
  vi.restoreAllMocks();
});

describe("POST /api/organizations/:organization_id/domains", () => {
  it("adds an unverified domain, lower-cased, with a fresh challenge", async () => {
    const { organization, key } = await setupOrganization();
    const earlier = await createDomain(organization.id, key);
    const name = uniqueDomain();
    const response = await api("POST", `${domainsPath(organization.id)}/`, {
      key,
      body: { domain: `  ${name.toUpperCase()} `, saml_entity_id: "entity", verified_at: "2020-01-01T00:00:00Z" },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(UUID),
      domain: name,
      is_verified: false,
      verified_at: null,
      verification_challenge: expect.stringMatching(CHALLENGE),
      last_verification_retry: null,
      jit_provisioning_enabled: false,
      sso_enforcement: "",
      has_saml: false,
      saml_entity_id: "entity",
      saml_acs_url: null,
      saml_x509_cert: null,
      scim_base_url: null,
    });
    // The key was read once already (then cached): membership, then the insert.
    expect(response.cost.queries).toBe(2);
    expect(earlier.verification_challenge).not.toBe(response.body.verification_challenge);
  });

  it.each([
    ["no domain", {}, "required", "This field is required."],
    ["not a host name", { domain: "not a domain" }, "invalid_input", "Please enter a valid domain or subdomain name."],
    ["a leading hyphen", { domain: "-acme.com" }, "invalid_input", "Please enter a valid domain or subdomain name."],
    ["an underscore", { domain: "ac_me.com" }, "invalid_input", "Please enter a valid domain or subdomain name."],
    ["a one-letter TLD", { domain: "acme.c" }, "invalid_input", "Please enter a valid domain or subdomain name."],
    ["no TLD", { domain: "localhost" }, "invalid_input", "Please enter a valid domain or subdomain name."],
    ["an e-mail address", { domain: "me@acme.com" }, "invalid_input", "Please enter a valid domain or subdomain name."],
    [
      "an accented letter",
      { domain: "café.example.com" },
      "invalid_input",
      "Please enter a valid domain or subdomain name.",
    ],
    [
      "full-width letters",
      { domain: "ｅｘａｍｐｌｅ.com" },
      "invalid_input",
      "Please enter a valid domain or subdomain name.",
    ],
    [
      "a zero-width space",
      { domain: "exam\u200bple.com" },
      "invalid_input",
      "Please enter a valid domain or subdomain name.",
    ],
    [
      "a bidi override",
      { domain: "exam\u202eple.com" },
      "invalid_input",
      "Please enter a valid domain or subdomain name.",
    ],
    ["a trailing dot", { domain: "example.com." }, "invalid_input", "Please enter a valid domain or subdomain name."],
    [
      "a punycode label",
      { domain: "xn--caf-dma.com" },
      "invalid_input",
      "Please enter a valid domain or subdomain name.",
    ],
    ["a number", { domain: 42 }, "invalid_input", "Expected string, received number."],
    [
      "over 128 characters",
      { domain: `${"a".repeat(125)}.com` },
      "max_length",
      "Ensure this field has no more than 128 characters.",
    ],
  ])("refuses %s (400, attr domain) and creates nothing", async (_case, body, code, detail) => {
    const { organization, key } = await setupOrganization();
    const response = await api("POST", domainsPath(organization.id), { key, body });
    expectError(response, 400, errorBody("validation_error", code, detail, "domain"));
    const list = await api("GET", domainsPath(organization.id), { key });
    expect(list.body.count).toBe(0);
  });

  it.each([
    [
      "jit_provisioning_enabled",
      { jit_provisioning_enabled: true },
      "verification_required",
      "This attribute cannot be updated until the domain is verified.",
    ],
    [
      "sso_enforcement",
      { sso_enforcement: "google-oauth2" },
      "verification_required",
      "This attribute cannot be updated until the domain is verified.",
    ],
    ["sso_enforcement", { sso_enforcement: "okta" }, "invalid_choice", '"okta" is not a valid choice.'],
    [
      "jit_provisioning_enabled",
      { jit_provisioning_enabled: "yes" },
      "invalid_input",
      "Expected boolean, received string.",
    ],
    [
      "saml_entity_id",
      { saml_entity_id: "e".repeat(513) },
      "max_length",
      "Ensure this field has no more than 512 characters.",
    ],
    [
      "saml_acs_url",
      { saml_acs_url: "u".repeat(513) },
      "max_length",
      "Ensure this field has no more than 512 characters.",
    ],
    [
      "saml_x509_cert",
      { saml_x509_cert: "c".repeat(16385) },
      "max_length",
      "Ensure this field has no more than 16384 characters.",
    ],
    ["saml_x509_cert", { saml_x509_cert: 7 }, "invalid_input", "Expected string, received number."],
  ])("refuses %s %j (400) and creates nothing", async (attr, body, code, detail) => {
    const { organization, key } = await setupOrganization();
    const response = await api("POST", domainsPath(organization.id), {
      key,
      body: { domain: uniqueDomain(), ...body },
    });
    expectError(response, 400, errorBody("validation_error", code, detail, attr));
    const list = await api("GET", domainsPath(organization.id), { key });
    expect(list.body.count).toBe(0);
  });

  it("accepts the unverified defaults sent explicitly", async () => {
    const { organization, key } = await setupOrganization();
    const response = await api("POST", domainsPath(organization.id), {
      key,
      body: { domain: uniqueDomain(), jit_provisioning_enabled: false, sso_enforcement: "" },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ jit_provisioning_enabled: false, sso_enforcement: "" });
  });

  it("keeps a domain unique across every organization (400 unique), ignoring case", async () => {
    const first = await setupOrganization();
    const second = await setupOrganization();
    const { domain } = await createDomain(first.organization.id, first.key);
    for (const [organizationId, key] of [
      [first.organization.id, first.key],
      [second.organization.id, second.key],
    ] as const) {
      const response = await api("POST", domainsPath(organizationId), { key, body: { domain: domain.toUpperCase() } });
      expectError(
        response,
        400,
        errorBody("validation_error", "unique", "organization domain with this domain already exists.", "domain"),
      );
    }
    expect((await api("GET", domainsPath(second.organization.id), { key: second.key })).body.count).toBe(0);
  });

  it("refuses a non-ASCII letter that lower-cases to an ASCII one (the Kelvin sign), storing nothing", async () => {
    const { organization, key } = await setupOrganization();
    const response = await api("POST", domainsPath(organization.id), { key, body: { domain: "\u212Aelvin.example" } });
    expectError(
      response,
      400,
      errorBody("validation_error", "invalid_input", "Please enter a valid domain or subdomain name.", "domain"),
    );
    expect((await api("GET", domainsPath(organization.id), { key })).body.count).toBe(0);
  });

  it("is for admins and owners: a member gets 403", async () => {
    const { organization } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    const response = await api("POST", domainsPath(organization.id), {
      key: member.key,
      body: { domain: uniqueDomain() },
    });
    expectError(response, 403, INSUFFICIENT_LEVEL);
    const admin = await addMember(organization.id, MembershipLevel.admin);
    expect(
      (await api("POST", domainsPath(organization.id), { key: admin.key, body: { domain: uniqueDomain() } })).status,
    ).toBe(201);
  });

  it("needs organization:write (403) and a key (401)", async () => {
    const { organization, owner } = await setupOrganization();
    const readOnly = await createApiKey(owner, { scopes: ["organization:read"] });
    const body = { domain: uniqueDomain() };
    const denied = await api("POST", domainsPath(organization.id), { key: readOnly.value, body });
    expectError(denied, 403, missingScope("organization:write"));
    const anonymous = await api("POST", domainsPath(organization.id), { body });
    expectError(anonymous, 401, NOT_AUTHENTICATED);
  });

  it("answers 404 in an organization the caller does not belong to", async () => {
    const { key } = await setupOrganization();
    const other = await setupOrganization();
    const response = await api("POST", domainsPath(other.organization.id), { key, body: { domain: uniqueDomain() } });
    expectError(response, 404, NOT_FOUND);
  });
});

describe("GET /api/organizations/:organization_id/domains", () => {
  it("lists the organization's domains by domain, paginated, to any member", async () => {
    const { organization, key } = await setupOrganization();
    const stamp = Date.now().toString(36);
    for (const label of ["zeta", "alpha", "mid"]) {
      await api("POST", domainsPath(organization.id), { key, body: { domain: `${label}-${stamp}.example.com` } });
    }
    const elsewhere = await setupOrganization();
    await createDomain(elsewhere.organization.id, elsewhere.key);
    const member = await addMember(organization.id, MembershipLevel.member, ["organization:read"]);

    const first = await api("GET", `${domainsPath("@current")}?limit=2`, { key: member.key });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      count: 3,
      next: nextLink(domainsPath("@current"), 2, 2, [first.body.results[1].domain, first.body.results[1].id]),
      previous: null,
      results: [
        expect.objectContaining({ domain: `alpha-${stamp}.example.com`, is_verified: false }),
        expect.objectContaining({ domain: `mid-${stamp}.example.com` }),
      ],
    });
    const second = await api("GET", `${domainsPath(organization.id)}?limit=2&offset=2`, { key: member.key });
    // Membership, count and page in one batch (the key is cached by the first call).
    expect(second.cost.queries).toBe(1);
    expect(second.body).toEqual({
      count: 3,
      next: null,
      previous: previousLink(domainsPath(organization.id), 2, 0, [
        second.body.results[0]?.domain,
        second.body.results[0]?.id,
      ]),
      results: [
        domainBody({
          id: expect.stringMatching(UUID),
          domain: `zeta-${stamp}.example.com`,
          verification_challenge: expect.stringMatching(CHALLENGE),
        }),
      ],
    });
  });

  it("needs organization:read (403), a valid key (401) and membership (404)", async () => {
    const { organization, owner } = await setupOrganization();
    const wrongScope = await createApiKey(owner, { scopes: ["project:read"] });
    const denied = await api("GET", domainsPath(organization.id), { key: wrongScope.value });
    expectError(denied, 403, missingScope("organization:read"));
    const badKey = await api("GET", domainsPath(organization.id), { key: `phx_${"x".repeat(44)}` });
    expectError(badKey, 401, AUTHENTICATION_FAILED);
    const scopedElsewhere = await createApiKey(owner, {
      scopes: ["*"],
      scopedOrganizations: ["0192a000-0000-7000-8000-000000000000"],
    });
    expectError(
      await api("GET", domainsPath(organization.id), { key: scopedElsewhere.value }),
      403,
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key does not have access to the requested organization",
      ),
    );
    const stranger = await setupOrganization();
    expectError(await api("GET", domainsPath(organization.id), { key: stranger.key }), 404, NOT_FOUND);
  });
});

describe("GET /api/organizations/:organization_id/domains/:id", () => {
  it("retrieves a domain; another organization's domain or an unknown id is 404", async () => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key, SAML);
    const response = await api("GET", `${domainsPath(organization.id)}/${created.id}/`, { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(domainBody(created, { has_saml: true, ...SAML }));
    expect(response.cost.queries).toBe(1);

    const other = await setupOrganization();
    const theirs = await createDomain(other.organization.id, other.key);
    for (const id of [theirs.id, "00000000-0000-7000-8000-000000000000", "nope"]) {
      const missing = await api("GET", `${domainsPath(organization.id)}/${id}`, { key });
      expectError(missing, 404, NOT_FOUND);
    }
  });

  it("answers POST on a domain with 405 and the allowed methods", async () => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    const response = await api("POST", `${domainsPath(organization.id)}/${created.id}`, { key, body: {} });
    expect(response.status).toBe(405);
    expect(response.headers.get("Allow")).toBe("DELETE, GET, PATCH, PUT");
    expect(response.body).toEqual(errorBody("invalid_request", "method_not_allowed", 'Method "POST" not allowed.'));
  });
});

describe("PATCH /api/organizations/:organization_id/domains/:id", () => {
  it("sets SAML fields, derives has_saml and ignores a new domain name", async () => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    const response = await api("PATCH", `${domainsPath(organization.id)}/${created.id}`, {
      key,
      body: { ...SAML, domain: "changed.example.com", jit_provisioning_enabled: false },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(domainBody(created, { has_saml: true, ...SAML }));
    // The membership with the domain, then the guarded update.
    expect(response.cost.queries).toBe(2);
    const cleared = await api("PATCH", `${domainsPath(organization.id)}/${created.id}`, {
      key,
      body: { saml_acs_url: null },
    });
    expect(cleared.body).toMatchObject({ has_saml: false, saml_acs_url: null, saml_entity_id: SAML.saml_entity_id });
  });

  it.each([
    [{ jit_provisioning_enabled: true }, "jit_provisioning_enabled"],
    [{ sso_enforcement: "github" }, "sso_enforcement"],
  ])("refuses %j on an unverified domain (400 verification_required)", async (body, attr) => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    const response = await api("PATCH", `${domainsPath(organization.id)}/${created.id}`, {
      key,
      body: { ...SAML, ...body },
    });
    expectError(
      response,
      400,
      errorBody(
        "validation_error",
        "verification_required",
        "This attribute cannot be updated until the domain is verified.",
        attr,
      ),
    );
    const unchanged = await api("GET", `${domainsPath(organization.id)}/${created.id}`, { key });
    expect(unchanged.body).toMatchObject({ has_saml: false, jit_provisioning_enabled: false, sso_enforcement: "" });
  });

  it("turns on JIT provisioning and SSO enforcement once verified", async () => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    await markVerified(created.id);
    const response = await api("PATCH", `${domainsPath(organization.id)}/${created.id}`, {
      key,
      body: { jit_provisioning_enabled: true, sso_enforcement: "google-oauth2" },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      domainBody(created, {
        is_verified: true,
        verified_at: "2026-01-02T03:04:05.000Z",
        jit_provisioning_enabled: true,
        sso_enforcement: "google-oauth2",
      }),
    );
  });

  it("enforces SAML only when SAML is configured, and keeps it configured while enforced", async () => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    await markVerified(created.id);
    const path = `${domainsPath(organization.id)}/${created.id}`;
    const samlError = errorBody(
      "validation_error",
      "invalid_input",
      "SAML can be enforced only once saml_entity_id, saml_acs_url and saml_x509_cert are all set.",
      "sso_enforcement",
    );

    const withoutSaml = await api("PATCH", path, {
      key,
      body: { sso_enforcement: "saml", saml_entity_id: "only-one" },
    });
    expect(withoutSaml.status).toBe(400);
    expect(withoutSaml.body).toEqual(samlError);

    const withSaml = await api("PATCH", path, { key, body: { sso_enforcement: "saml", ...SAML } });
    expect(withSaml.status).toBe(200);
    expect(withSaml.body).toMatchObject({ sso_enforcement: "saml", has_saml: true });

    const clearing = await api("PATCH", path, { key, body: { saml_x509_cert: "" } });
    expect(clearing.status).toBe(400);
    expect(clearing.body).toEqual(samlError);
    expect((await api("GET", path, { key })).body).toMatchObject({
      has_saml: true,
      saml_x509_cert: SAML.saml_x509_cert,
    });
  });

  it("refuses an invalid value with the field named", async () => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    const response = await api("PATCH", `${domainsPath(organization.id)}/${created.id}`, {
      key,
      body: { saml_entity_id: "e".repeat(513) },
    });
    expectError(
      response,
      400,
      errorBody(
        "validation_error",
        "max_length",
        "Ensure this field has no more than 512 characters.",
        "saml_entity_id",
      ),
    );
  });

  it("is for admins (403 for a member) in the caller's organization (404 elsewhere)", async () => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    const member = await addMember(organization.id, MembershipLevel.member);
    const path = `${domainsPath(organization.id)}/${created.id}`;
    const forbidden = await api("PATCH", path, { key: member.key, body: SAML });
    expectError(forbidden, 403, INSUFFICIENT_LEVEL);
    const other = await setupOrganization();
    const theirs = await createDomain(other.organization.id, other.key);
    expect((await api("PATCH", `${domainsPath(organization.id)}/${theirs.id}`, { key, body: SAML })).status).toBe(404);
    expect((await api("PATCH", `${domainsPath(other.organization.id)}/${theirs.id}`, { key, body: SAML })).status).toBe(
      404,
    );
    expect(
      (await api("GET", `${domainsPath(other.organization.id)}/${theirs.id}`, { key: other.key })).body.has_saml,
    ).toBe(false);
  });
});

describe("DELETE /api/organizations/:organization_id/domains/:id", () => {
  it("removes a domain (204), which frees its name", async () => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    const path = `${domainsPath(organization.id)}/${created.id}`;
    const response = await api("DELETE", path, { key });
    expect(response.status).toBe(204);
    expect(response.text).toBe("");
    expect(response.cost.queries).toBe(2);
    expect((await api("GET", path, { key })).status).toBe(404);
    expect((await api("DELETE", path, { key })).status).toBe(404);
    expect((await api("POST", domainsPath(organization.id), { key, body: { domain: created.domain } })).status).toBe(
      201,
    );
  });

  it("is for admins (403) and never reaches another organization's domain (404)", async () => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    const member = await addMember(organization.id, MembershipLevel.member);
    const forbidden = await api("DELETE", `${domainsPath(organization.id)}/${created.id}`, { key: member.key });
    expect(forbidden.status).toBe(403);
    const other = await setupOrganization();
    const theirs = await createDomain(other.organization.id, other.key);
    expect((await api("DELETE", `${domainsPath(organization.id)}/${theirs.id}`, { key })).status).toBe(404);
    expect((await api("GET", `${domainsPath(other.organization.id)}/${theirs.id}`, { key: other.key })).status).toBe(
      200,
    );
    expect((await api("GET", `${domainsPath(organization.id)}/${created.id}`, { key })).status).toBe(200);
  });
});

describe("POST /api/organizations/:organization_id/domains/:id/verify", () => {
  /** Answers the worker's DNS-over-HTTPS query from inside the test isolate. */
  const fakeResolver = (answer: () => Promise<Response>) => vi.spyOn(globalThis, "fetch").mockImplementation(answer);
  const dnsJson =
    (body: unknown, status = 200) =>
    async () =>
      new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/dns-json" } });
  const txtAnswer = (name: string, ...data: string[]) => ({
    Status: 0,
    Answer: data.map((value) => ({ name, type: 16, TTL: 300, data: value })),
  });

  it("verifies a domain whose TXT record holds the challenge", async () => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    const record = `_posthog-challenge.${created.domain}`;
    const resolver = fakeResolver(dnsJson(txtAnswer(record, '"v=spf1 -all"', `"${created.verification_challenge}"`)));

    const response = await api("POST", `${domainsPath(organization.id)}/${created.id}/verify/`, { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      domainBody(created, { is_verified: true, verified_at: expect.stringMatching(ISO_TIMESTAMP) }),
    );
    expect(response.cost.queries).toBe(2);
    expect(resolver).toHaveBeenCalledTimes(1);
    const [url, init] = resolver.mock.calls[0]!;
    const query = new URL(String(url));
    expect(`${query.origin}${query.pathname}`).toBe(env.DNS_RESOLVER_URL);
    expect(Object.fromEntries(query.searchParams)).toEqual({ name: record, type: "TXT" });
    expect(init?.headers).toEqual({ Accept: "application/dns-json" });
    expect(init?.signal).toBeInstanceOf(AbortSignal);

    const again = await api("POST", `${domainsPath(organization.id)}/${created.id}/verify`, { key });
    expectError(
      again,
      400,
      errorBody("validation_error", "already_verified", "This domain has already been verified."),
    );
    expect(resolver).toHaveBeenCalledTimes(1);
  });

  it("asks the resolver configured in DNS_RESOLVER_URL, and Cloudflare's when it is empty", async () => {
    const { organization, key } = await setupOrganization();
    const configured = env.DNS_RESOLVER_URL;
    try {
      for (const [setting, asked] of [
        ["https://dns.example.net/resolve", "https://dns.example.net/resolve"],
        ["", "https://cloudflare-dns.com/dns-query"],
      ] as const) {
        env.DNS_RESOLVER_URL = setting;
        const created = await createDomain(organization.id, key);
        const resolver = fakeResolver(dnsJson(txtAnswer("x", `"${created.verification_challenge}"`)));
        const response = await api("POST", `${domainsPath(organization.id)}/${created.id}/verify`, { key });
        expect(response.body.is_verified).toBe(true);
        const query = new URL(String(resolver.mock.calls[0]![0]));
        expect(`${query.origin}${query.pathname}`).toBe(asked);
        vi.restoreAllMocks();
      }
    } finally {
      env.DNS_RESOLVER_URL = configured;
    }
  });

  it("joins a record split into several strings, and reads unquoted answers", async () => {
    const { organization, key } = await setupOrganization();
    const first = await createDomain(organization.id, key);
    const challenge = first.verification_challenge;
    fakeResolver(dnsJson(txtAnswer("x", `"${challenge.slice(0, 20)}" "${challenge.slice(20)}"`)));
    const split = await api("POST", `${domainsPath(organization.id)}/${first.id}/verify`, { key });
    expect(split.body.is_verified).toBe(true);

    vi.restoreAllMocks();
    const second = await createDomain(organization.id, key);
    fakeResolver(dnsJson(txtAnswer("x", second.verification_challenge)));
    const unquoted = await api("POST", `${domainsPath(organization.id)}/${second.id}/verify`, { key });
    expect(unquoted.body.is_verified).toBe(true);
  });

  it("does not verify with a record that merely contains the challenge, quoted among other text", async () => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    // Unquoted as a whole, as some resolvers serve TXT data: the record is this text, not the challenge.
    fakeResolver(dnsJson(txtAnswer("x", `site-note: "${created.verification_challenge}" (copied)`)));
    const response = await api("POST", `${domainsPath(organization.id)}/${created.id}/verify`, { key });
    expect([response.status, response.body.is_verified]).toEqual([200, false]);
    vi.restoreAllMocks();
    expect((await api("GET", `${domainsPath(organization.id)}/${created.id}`, { key })).body).toEqual(
      domainBody(created, { last_verification_retry: expect.stringMatching(ISO_TIMESTAMP) }),
    );
  });

  it.each([
    ["a wrong value", dnsJson(txtAnswer("x", '"some-other-challenge"'))],
    ["no TXT record", dnsJson({ Status: 0, Answer: [{ name: "x", type: 5, TTL: 60, data: "alias.example.com." }] })],
    ["no answer", dnsJson({ Status: 0 })],
    ["NXDOMAIN", dnsJson({ Status: 3, Authority: [] })],
    ["a resolver error status", dnsJson({ error: "boom" }, 502)],
    ["a resolver answering something else than JSON", async () => new Response("<html>", { status: 200 })],
    ["a network failure", async () => Promise.reject(new TypeError("Network connection lost."))],
    [
      "a timeout",
      async () => Promise.reject(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ],
  ])("records a failed attempt on %s: 200, not verified", async (_case, answer) => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const resolver = fakeResolver(answer);
    const response = await api("POST", `${domainsPath(organization.id)}/${created.id}/verify`, { key });
    expect(resolver).toHaveBeenCalledTimes(1);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      domainBody(created, { last_verification_retry: expect.stringMatching(ISO_TIMESTAMP) }),
    );
  });

  it("verifies once when two verifications race: one 200, one 400 already_verified, one log entry", async () => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    // The resolver answers slowly, so that both requests are past their read before either writes.
    fakeResolver(async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return dnsJson(txtAnswer("_posthog-challenge", created.verification_challenge))();
    });
    const path = `${domainsPath(organization.id)}/${created.id}/verify`;
    const answers = await Promise.all([api("POST", path, { key }), api("POST", path, { key })]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400]);
    expect(answers.find((answer) => answer.status === 400)!.body).toEqual(
      errorBody("validation_error", "already_verified", "This domain has already been verified."),
    );
    const log = await api("GET", `/api/organizations/${organization.id}/activity_log?scope=OrganizationDomain`, {
      key,
    });
    const verified = (log.body.results as { activity: string }[]).filter((entry) => entry.activity === "verified");
    expect(verified).toHaveLength(1);
  });

  it("clears the failed attempt once verified, and then lets SSO be enforced", async () => {
    const { organization, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    const path = `${domainsPath(organization.id)}/${created.id}`;
    fakeResolver(dnsJson({ Status: 3 }));
    expect((await api("POST", `${path}/verify`, { key })).body.last_verification_retry).toMatch(ISO_TIMESTAMP);
    vi.restoreAllMocks();
    fakeResolver(dnsJson(txtAnswer("x", `"${created.verification_challenge}"`)));
    const verified = await api("POST", `${path}/verify`, { key });
    expect(verified.body).toMatchObject({ is_verified: true, last_verification_retry: null });
    const enforced = await api("PATCH", path, {
      key,
      body: { sso_enforcement: "github", jit_provisioning_enabled: true },
    });
    expect(enforced.status).toBe(200);
    expect(enforced.body).toMatchObject({ sso_enforcement: "github", jit_provisioning_enabled: true });
  });

  it("is for admins (403), needs organization:write (403), and is 404 for another organization's domain", async () => {
    const { organization, owner, key } = await setupOrganization();
    const created = await createDomain(organization.id, key);
    const resolver = fakeResolver(dnsJson({ Status: 3 }));
    const member = await addMember(organization.id, MembershipLevel.member);
    const path = `${domainsPath(organization.id)}/${created.id}/verify`;
    const forbidden = await api("POST", path, { key: member.key });
    expectError(forbidden, 403, INSUFFICIENT_LEVEL);
    const readOnly = await createApiKey(owner, { scopes: ["organization:read"] });
    expect((await api("POST", path, { key: readOnly.value })).body).toEqual(missingScope("organization:write"));
    expect((await api("POST", path)).status).toBe(401);
    const other = await setupOrganization();
    const theirs = await createDomain(other.organization.id, other.key);
    expect((await api("POST", `${domainsPath(organization.id)}/${theirs.id}/verify`, { key })).status).toBe(404);
    expect((await api("POST", `${domainsPath(other.organization.id)}/${theirs.id}/verify`, { key })).status).toBe(404);
    expect(resolver).not.toHaveBeenCalled();
  });
});

describe("domain writes by an admin who loses their rights meanwhile", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const memberPath = (organizationId: string, uuid: string) => `/api/organizations/${organizationId}/members/${uuid}`;

  it("change, delete or create nothing when the admin is demoted before the write (403)", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const created = await createDomain(organization.id, key);
    await markVerified(created.id);
    await db.update(schema.domains).set({ ssoEnforcement: "google-oauth2" }).where(eq(schema.domains.id, created.id));
    const domainPath = `${domainsPath(organization.id)}/${created.id}`;
    const writes: [RegExp, string, string, unknown][] = [
      [/^update "domains"/, "PATCH", domainPath, { sso_enforcement: "" }],
      [/^update "domains"/, "DELETE", domainPath, undefined],
      [/^insert into "domains"/, "POST", domainsPath(organization.id), { domain: uniqueDomain() }],
    ];
    for (const [write, method, path, body] of writes) {
      const demote = () => api("PATCH", memberPath(organization.id, admin.user.uuid), { key, body: { level: 1 } });
      const ran = beforeWrites([[write, async () => (await demote()).status]]);
      const refused = await api(method, path, { key: admin.key, body });
      vi.restoreAllMocks();
      expect(ran, `${method} ${path}`).toEqual([200]);
      expect([refused.status, refused.body], `${method} ${path}`).toEqual([403, INSUFFICIENT_LEVEL]);
      await api("PATCH", memberPath(organization.id, admin.user.uuid), { key, body: { level: 8 } });
    }
    const domains = await api("GET", domainsPath(organization.id), { key });
    expect(domains.body.results).toEqual([
      expect.objectContaining({ id: created.id, sso_enforcement: "google-oauth2" }),
    ]);
  });

  it("verify no domain for someone removed from the organization during the DNS lookup (404)", async () => {
    const { organization, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const created = await createDomain(organization.id, key);
    const domainPath = `${domainsPath(organization.id)}/${created.id}`;
    let removal = 0;
    // The lookup takes up to 3 seconds: the owner removes the admin while it runs.
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => {
      removal = (await api("DELETE", memberPath(organization.id, admin.user.uuid), { key })).status;
      const data = `"${created.verification_challenge}"`;
      return new Response(JSON.stringify({ Status: 0, Answer: [{ type: 16, data }] }), {
        headers: { "Content-Type": "application/dns-json" },
      });
    });
    const verified = await api("POST", `${domainPath}/verify`, { key: admin.key });
    vi.restoreAllMocks();
    expect(removal).toBe(204);
    // No longer a member: what a moment later would answer them.
    expectError(verified, 404, NOT_FOUND);
    expect((await api("GET", domainPath, { key })).body.is_verified).toBe(false);
  });
});
