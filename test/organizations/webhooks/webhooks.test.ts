import { createMessageBatch, createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../../src/db/schema";
import worker from "../../../src/index";
import { chunkForInsert, inJsonList } from "../../../src/platform/db";
import { MembershipLevel } from "../../../src/platform/levels";
import { loadKeyring, seal } from "../../../src/platform/secrets";
import { DELIVERY_ATTEMPTS } from "../../../src/organizations/webhooks/retry-schedule";
import { secretContext } from "../../../src/organizations/webhooks/webhook-secrets";
import { changedMeanwhile, expectError, INSUFFICIENT_LEVEL, missingScope, NOT_FOUND } from "../../support/error-bodies";
import {
  consume,
  eventually,
  receiver,
  RECEIVER,
  seedPendingDelivery,
  storedDelivery,
  subscribe,
  webhooksPath,
  type Organization,
} from "../../support/webhooks";
import {
  addMember,
  api,
  createApiKey,
  db,
  ISO_TIMESTAMP,
  setupOrganization,
  userBasic,
  UUID,
} from "../../support/harness";
import { attemptsFrom, consumeDeadLetter, expectAttemptsBeforeDeadLetters, retryDelays } from "../../support/queues";
import { beforeWrites, onBoundStatements, waitingFor } from "../../support/races";
import { seedEntries } from "../../support/activity-log";

const insecureAtStart = env.WEBHOOKS_ALLOW_INSECURE;

afterEach(() => {
  env.WEBHOOKS_ALLOW_INSECURE = insecureAtStart;
  vi.restoreAllMocks();
});

describe("webhook subscriptions", () => {
  it("shows the signing secret once, at creation and rotation, and records the changes without it", async () => {
    const organization = await setupOrganization();
    const created = await api("POST", webhooksPath(organization), {
      key: organization.key,
      body: { url: RECEIVER, events: ["OrganizationMembership.joined", "Dashboard.updated"], description: "CRM sync" },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("Cache-Control")).toBe("no-store");
    const webhook = {
      id: expect.stringMatching(UUID),
      url: RECEIVER,
      events: ["OrganizationMembership.joined", "Dashboard.updated"],
      enabled: true,
      description: "CRM sync",
      created_by: userBasic(organization.owner),
      previous_secret_expires_at: null,
      created_at: expect.stringMatching(ISO_TIMESTAMP),
      updated_at: expect.stringMatching(ISO_TIMESTAMP),
    };
    expect(created.body).toEqual({ ...webhook, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) });
    const path = `${webhooksPath(organization)}/${created.body.id}`;
    expect((await api("GET", path, { key: organization.key })).body).toEqual(webhook);
    expect((await api("GET", webhooksPath(organization), { key: organization.key })).body).toEqual({
      count: 1,
      next: null,
      previous: null,
      results: [webhook],
    });
    const patched = await api("PATCH", path, { key: organization.key, body: { enabled: false } });
    expect(patched.body).toEqual({ ...webhook, enabled: false });
    const rotated = await api("POST", `${path}/rotate_secret`, { key: organization.key });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect((await api("DELETE", path, { key: organization.key })).status).toBe(204);
    expectError(await api("GET", path, { key: organization.key }), 404, NOT_FOUND);

    const log = await api("GET", `/api/organizations/${organization.organization.id}/activity_log?scope=Webhook`, {
      key: organization.key,
    });
    expect(log.body.results.map((entry: { activity: string }) => entry.activity)).toEqual([
      "deleted",
      "secret_rotated",
      "updated",
      "created",
    ]);
    expect(log.body.results[2].detail.changes).toEqual([
      { type: "Webhook", action: "changed", field: "enabled", before: true, after: false },
    ]);
    const stored = JSON.stringify(await db.select().from(schema.webhooks));
    for (const secret of [created.body.secret, rotated.body.secret]) {
      expect(log.text).not.toContain(secret);
      expect(stored).not.toContain(secret.slice(6));
    }
  });

  it("refuses unknown events and receivers it must not reach, naming the field", async () => {
    const organization = await setupOrganization();
    const refused = async (body: Record<string, unknown>) =>
      api("POST", webhooksPath(organization), {
        key: organization.key,
        body: { url: RECEIVER, events: ["*"], ...body },
      });
    expect((await refused({ events: ["Dashboard.exploded"] })).body).toMatchObject({
      type: "validation_error",
      attr: "events.0",
    });
    expect((await refused({ events: [] })).body).toMatchObject({ type: "validation_error", attr: "events" });
    expect((await refused({ url: "ftp://files.example.com" })).body).toMatchObject({ attr: "url" });
    expect((await refused({ url: "https://user:pass@hooks.example.com" })).body).toMatchObject({ attr: "url" });
    // A description is free text, as everywhere: 65,536 characters.
    expect((await refused({ description: "d".repeat(65_537) })).body).toMatchObject({
      code: "max_length",
      attr: "description",
    });

    // Any value but an explicit yes keeps receivers held to public https: "false" does not allow them.
    env.WEBHOOKS_ALLOW_INSECURE = "false";
    for (const url of [
      "http://hooks.example.com",
      "https://127.0.0.1/hook",
      "https://10.1.2.3/hook",
      "https://172.16.0.1/hook",
      "https://192.168.1.1/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://[::1]/hook",
      "https://[fd00::1]/hook",
      "https://[::ffff:127.0.0.1]/hook",
      "https://localhost/hook",
    ]) {
      const response = await refused({ url });
      expect({ url, status: response.status, attr: response.body.attr }).toEqual({ url, status: 400, attr: "url" });
    }
    const described = await refused({ url: "https://hooks.example.com/posthog", description: "d".repeat(1000) });
    expect([described.status, described.body.description]).toEqual([201, "d".repeat(1000)]);
    expect((await api("GET", webhooksPath(organization), { key: organization.key })).body.count).toBe(1);
    // Held to its 2,000 characters as stored: 1,992 sent, each `é` written `%C3%A9`.
    const long = await refused({ url: `https://receiver.example.com/${"é".repeat(1962)}` });
    expect({ status: long.status, attr: long.body.attr, code: long.body.code }).toEqual({
      status: 400,
      attr: "url",
      code: "max_length",
    });
  });

  it("refuses, on create and PATCH, every address that is not globally reachable, however it is written", async () => {
    // Other tests' deliveries may run meanwhile: none of them reaches the network.
    receiver(503);
    env.WEBHOOKS_ALLOW_INSECURE = "";
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { url: "https://hooks.example.com/posthog", enabled: false });
    const path = `${webhooksPath(organization)}/${id}`;
    for (const host of [
      "[::7f00:1]",
      "[::127.0.0.1]",
      "[0:0:0:0:0:0:0:1]",
      "[64:ff9b::7f00:1]",
      "[64:ff9b::a00:1]",
      "[64:ff9b:1::808:808]",
      "[2002:7f00:1::]",
      "[2002:c0a8:101::1]",
      // Teredo: the client's address is the last 32 bits inverted (127.0.0.1 here).
      "[2001:0:4136:e378:8000:63bf:80ff:fffe]",
      "[fec0::1]",
      "[fe80::1]",
      "[ff02::1]",
      "[100::1]",
      "[2001:db8::1]",
      "[2001:2::1]",
      "[3fff::1]",
      "[5f00::1]",
      "[::]",
      "[::ffff:a9fe:a9fe]",
      "192.0.0.1",
      "192.0.2.1",
      "192.88.99.1",
      "198.18.0.1",
      "198.51.100.7",
      "203.0.113.9",
      "100.64.0.1",
      "0.0.0.0",
      "240.0.0.1",
      "255.255.255.255",
      "224.0.0.1",
      "2130706433",
      "localhost.",
      "api.localhost.",
      "printer.local",
    ]) {
      const url = `https://${host}/hook`;
      const created = await api("POST", webhooksPath(organization), {
        key: organization.key,
        body: { url, events: ["*"], enabled: false },
      });
      const patched = await api("PATCH", path, { key: organization.key, body: { url } });
      expect({
        host,
        created: [created.status, created.body.attr],
        patched: [patched.status, patched.body.attr],
      }).toEqual({
        host,
        created: [400, "url"],
        patched: [400, "url"],
      });
    }
    for (const url of [
      "https://1.1.1.1/hook",
      "https://[2606:4700:4700::1111]/hook",
      "https://[::ffff:101:101]/hook",
      "https://hooks.example.com./x",
    ]) {
      expect({ url, status: (await api("PATCH", path, { key: organization.key, body: { url } })).status }).toEqual({
        url,
        status: 200,
      });
    }
  });

  it("allows receivers on ports 443 and 80 only, unless insecure receivers are allowed", async () => {
    const organization = await setupOrganization();
    const create = (url: string) =>
      api("POST", webhooksPath(organization), { key: organization.key, body: { url, events: ["*"], enabled: false } });
    receiver(503);
    env.WEBHOOKS_ALLOW_INSECURE = "";
    for (const url of [
      "https://hooks.example.com:8443/hook",
      "https://hooks.example.com:22/",
      "https://hooks.example.com:6379/",
    ]) {
      const response = await create(url);
      expect({ url, status: response.status, attr: response.body.attr }).toEqual({ url, status: 400, attr: "url" });
    }
    for (const url of ["https://hooks.example.com:443/hook", "https://hooks.example.com:80/hook"]) {
      expect({ url, status: (await create(url)).status }).toEqual({ url, status: 201 });
    }
    env.WEBHOOKS_ALLOW_INSECURE = "1";
    expect((await create("http://127.0.0.1:8787/hook")).status).toBe(201);
  });

  it("is for admins and owners with the webhook scopes; another organization's are not found", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization);
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const outsider = await setupOrganization();
    const readOnly = (await createApiKey(organization.owner, { scopes: ["webhook:read"] })).value;
    const path = `${webhooksPath(organization)}/${id}`;
    expectError(await api("GET", path, { key: member.key }), 403, INSUFFICIENT_LEVEL);
    expectError(await api("GET", path, { key: outsider.key }), 404, NOT_FOUND);
    expectError(await api("GET", `${webhooksPath(outsider)}/${id}`, { key: outsider.key }), 404, NOT_FOUND);
    expect((await api("GET", path, { key: readOnly })).status).toBe(200);
    expectError(
      await api("PATCH", path, { key: readOnly, body: { enabled: false } }),
      403,
      missingScope("webhook:write"),
    );
  });
});

describe("a webhook's creator", () => {
  // Its own receiver: other tests count the posts to theirs.
  const CREATOR_RECEIVER = "http://receiver.test/creator";

  async function webhookOfAdmin(organization: Organization) {
    const admin = await addMember(organization.organization.id, MembershipLevel.admin);
    const created = await api("POST", webhooksPath(organization), {
      key: admin.key,
      body: { url: CREATOR_RECEIVER, events: ["*"] },
    });
    expect(created.body.created_by).toEqual(userBasic(admin.user));
    const memberPath = `/api/organizations/${organization.organization.id}/members/${admin.user.uuid}`;
    return { admin, webhookPath: `${webhooksPath(organization)}/${created.body.id}`, memberPath };
  }

  async function expectDisabledBySystem(organization: Organization, webhookPath: string) {
    const webhook = await api("GET", webhookPath, { key: organization.key });
    expect(webhook.body.enabled).toBe(false);
    const log = await api("GET", `/api/organizations/${organization.organization.id}/activity_log?scope=Webhook`, {
      key: organization.key,
    });
    expect(log.body.results[0]).toMatchObject({
      activity: "disabled",
      item_id: webhook.body.id,
      is_system: true,
      user: null,
      detail: { name: CREATOR_RECEIVER, context: { reason: "Its creator is no longer an admin of the organization." } },
    });
  }

  it("disables the webhooks of an admin demoted to member, in the same write, and says so in the log", async () => {
    const organization = await setupOrganization();
    const { webhookPath, memberPath } = await webhookOfAdmin(organization);

    const demoted = await api("PATCH", memberPath, { key: organization.key, body: { level: MembershipLevel.member } });

    expect(demoted.status).toBe(200);
    await expectDisabledBySystem(organization, webhookPath);
  });

  it("makes whoever turns a disabled webhook on its creator: a demoted creator never has it again", async () => {
    const organization = await setupOrganization();
    const { admin, webhookPath, memberPath } = await webhookOfAdmin(organization);
    expect(
      (await api("PATCH", memberPath, { key: organization.key, body: { level: MembershipLevel.member } })).status,
    ).toBe(200);
    const enabled = await api("PATCH", webhookPath, { key: organization.key, body: { enabled: true } });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ enabled: true, created_by: userBasic(organization.owner) });
    expect((await api("GET", webhookPath, { key: organization.key })).body.created_by).toEqual(
      userBasic(organization.owner),
    );
    // A change that does not turn it on leaves its creator as it is.
    const renamed = await api("PATCH", webhookPath, { key: organization.key, body: { description: "ops" } });
    expect(renamed.body.created_by).toEqual(userBasic(organization.owner));
    expect(admin.user.uuid).not.toBe(organization.owner.uuid);
  });

  it("makes whoever points a webhook at another receiver its creator: removed, they lose it", async () => {
    const organization = await setupOrganization();
    const webhook = await subscribe(organization, { url: `${RECEIVER}/owner`, events: ["*"] });
    const webhookPath = `${webhooksPath(organization)}/${webhook.id}`;
    const admin = await addMember(organization.organization.id, MembershipLevel.admin);
    // Their own receiver.
    const redirected = await api("PATCH", webhookPath, { key: admin.key, body: { url: CREATOR_RECEIVER } });
    expect(redirected.status).toBe(200);
    expect(redirected.body).toMatchObject({ enabled: true, created_by: userBasic(admin.user) });
    // The same url sent again is no redirect: its creator stays.
    const resent = await api("PATCH", webhookPath, { key: organization.key, body: { url: CREATOR_RECEIVER } });
    expect(resent.body.created_by).toEqual(userBasic(admin.user));

    const memberPath = `/api/organizations/${organization.organization.id}/members/${admin.user.uuid}`;
    expect((await api("DELETE", memberPath, { key: organization.key })).status).toBe(204);

    await expectDisabledBySystem(organization, webhookPath);
  });

  it("disables the webhooks of an admin who is removed", async () => {
    const organization = await setupOrganization();
    const { webhookPath, memberPath } = await webhookOfAdmin(organization);

    expect((await api("DELETE", memberPath, { key: organization.key })).status).toBe(204);

    await expectDisabledBySystem(organization, webhookPath);
  });

  it("leaves them on when an owner becomes an admin, and when a demotion is refused", async () => {
    const organization = await setupOrganization();
    const { webhookPath, memberPath } = await webhookOfAdmin(organization);
    const member = await addMember(organization.organization.id, MembershipLevel.member);

    const refused = await api("PATCH", memberPath, { key: member.key, body: { level: MembershipLevel.member } });

    expect(refused.status).toBe(403);
    expect((await api("GET", webhookPath, { key: organization.key })).body.enabled).toBe(true);
    const owner = await addMember(organization.organization.id, MembershipLevel.owner);
    const created = await api("POST", webhooksPath(organization), {
      key: owner.key,
      body: { url: CREATOR_RECEIVER, events: ["*"] },
    });
    const ownerPath = `/api/organizations/${organization.organization.id}/members/${owner.user.uuid}`;
    expect(
      (await api("PATCH", ownerPath, { key: organization.key, body: { level: MembershipLevel.admin } })).status,
    ).toBe(200);
    expect(
      (await api("GET", `${webhooksPath(organization)}/${created.body.id}`, { key: organization.key })).body.enabled,
    ).toBe(true);
  });
});

describe("a webhook's creator demoted at the same moment", () => {
  const RACING_RECEIVER = "http://receiver.test/racing";
  const CHANGED_MEANWHILE = changedMeanwhile("member");

  type RacingWrite = () => ReturnType<typeof api>;

  /**
   * Races the write `prepare` makes ready (as an admin about to be demoted) with the demotion, 8
   * times: in every order the two can run in, the demotion ends done (once retried after a 409)
   * and leaves no webhook of theirs enabled; the write is refused (403) when it runs after it.
   */
  async function raceWithDemotion(prepare: (organization: Organization, adminKey: string) => Promise<RacingWrite>) {
    for (let attempt = 0; attempt < 8; attempt += 1) {
      const organization = await setupOrganization();
      const admin = await addMember(organization.organization.id, MembershipLevel.admin);
      const memberPath = `/api/organizations/${organization.organization.id}/members/${admin.user.uuid}`;
      const demote = () => api("PATCH", memberPath, { key: organization.key, body: { level: MembershipLevel.member } });
      const write = await prepare(organization, admin.key);
      const [written, demoted] = await Promise.all([write(), demote()]);
      if (demoted.status === 409) {
        expect(demoted.body).toEqual(CHANGED_MEANWHILE);
        expect((await demote()).status).toBe(200);
      } else expect(demoted.status).toBe(200);
      if (written.status === 403) expect(written.body).toEqual(INSUFFICIENT_LEVEL);
      else expect(written.status).toBeLessThan(300);
      const listed = await api("GET", webhooksPath(organization), { key: organization.key });
      expect(listed.body.results.filter((webhook: { enabled: boolean }) => webhook.enabled)).toEqual([]);
    }
  }

  it("never leaves a webhook made meanwhile enabled: refused, disabled, or the demotion retried", async () => {
    receiver(200);
    await raceWithDemotion(
      async (organization, key) => () =>
        api("POST", webhooksPath(organization), { key, body: { url: RACING_RECEIVER, events: ["*"] } }),
    );
  });

  it("never leaves a webhook turned on meanwhile enabled", async () => {
    receiver(200);
    await raceWithDemotion(async (organization, key) => {
      // Made off by its owner-to-be-demoted, then turned on as the demotion happens.
      const created = await api("POST", webhooksPath(organization), {
        key,
        body: { url: RACING_RECEIVER, events: ["*"], enabled: false },
      });
      expect(created.status).toBe(201);
      return () => api("PATCH", `${webhooksPath(organization)}/${created.body.id}`, { key, body: { enabled: true } });
    });
  });
});

describe("a webhook taken over by another admin while its creator is demoted", () => {
  it("stays enabled: it answers to the admin who turned it on, not to its former creator", async () => {
    const organization = await setupOrganization();
    const former = await addMember(organization.organization.id, MembershipLevel.admin);
    const taker = await addMember(organization.organization.id, MembershipLevel.admin);
    const created = await api("POST", webhooksPath(organization), {
      key: former.key,
      body: { url: RECEIVER, events: ["*"] },
    });
    expect(created.status).toBe(201);
    const path = `${webhooksPath(organization)}/${created.body.id}`;
    // The demotion reads the former creator's webhooks; before its write, another admin turns the
    // webhook on, and so becomes its creator.
    const ran = beforeWrites([
      [
        /^update "organization_memberships" set "level"/,
        async () => (await api("PATCH", path, { key: taker.key, body: { enabled: true } })).status,
      ],
    ]);
    const memberPath = `/api/organizations/${organization.organization.id}/members/${former.user.uuid}`;
    const demoted = await api("PATCH", memberPath, { key: organization.key, body: { level: MembershipLevel.member } });
    vi.restoreAllMocks();
    expect([ran, demoted.status]).toEqual([[200], 200]);
    const webhook = (await api("GET", path, { key: organization.key })).body;
    expect([webhook.created_by, webhook.enabled]).toEqual([userBasic(taker.user), true]);
    const log = await api("GET", `/api/organizations/${organization.organization.id}/activity_log?scope=Webhook`, {
      key: organization.key,
    });
    expect(log.body.results.map((entry: { activity: string }) => entry.activity)).not.toContain("disabled");
  });
});

describe("a webhook PATCH racing another change of what it sends", () => {
  type Entry = { activity: string; detail: { changes: { field: string; before: unknown; after: unknown }[] | null } };

  const entriesOf = async (organization: Organization, id: string) => {
    const path = `/api/organizations/${organization.organization.id}/activity_log?scope=Webhook&item_id=${id}`;
    const log = await api("GET", path, { key: organization.key });
    expect(log.status).toBe(200);
    return log.body.results as Entry[];
  };
  const enabledChange = (before: boolean, after: boolean) =>
    expect.objectContaining({ field: "enabled", before, after });

  it("is refused (409) when its receiver turned it off meanwhile; sent again, it is logged as turned on", async () => {
    receiver(410);
    const organization = await setupOrganization();
    const webhook = await subscribe(organization, { url: `${RECEIVER}/gone-then-back`, events: ["*"] });
    const deliveryId = await seedPendingDelivery(organization, webhook.id, { seq: 6100 });
    const path = `${webhooksPath(organization)}/${webhook.id}`;
    // Read as on; a delivery answered 410 turns it off before the PATCH's write lands.
    const consumed = beforeWrites([[/^update "webhooks" set "url"/, () => consume(deliveryId, 1).then(() => "done")]]);
    const raced = await api("PATCH", path, { key: organization.key, body: { enabled: true } });
    vi.restoreAllMocks();
    expect(consumed).toEqual(["done"]);
    expect([raced.status, raced.body]).toEqual([409, changedMeanwhile("webhook")]);
    expect((await api("GET", path, { key: organization.key })).body.enabled).toBe(false);
    expect((await entriesOf(organization, webhook.id))[0]!.activity).toBe("disabled");

    const again = await api("PATCH", path, { key: organization.key, body: { enabled: true } });
    expect([again.status, again.body.enabled]).toEqual([200, true]);
    const [newest] = await entriesOf(organization, webhook.id);
    expect([newest!.activity, newest!.detail.changes]).toEqual([
      "updated",
      expect.arrayContaining([enabledChange(false, true)]),
    ]);
  });

  it("is refused (409) when another admin turned it on meanwhile: the log and the webhook agree", async () => {
    const organization = await setupOrganization();
    const admin = await addMember(organization.organization.id, MembershipLevel.admin);
    const { id } = await subscribe(organization, { enabled: false });
    const path = `${webhooksPath(organization)}/${id}`;
    const ran = beforeWrites([
      [
        /^update "webhooks" set "url"/,
        async () => (await api("PATCH", path, { key: admin.key, body: { enabled: true } })).status,
      ],
    ]);
    const raced = await api("PATCH", path, { key: organization.key, body: { enabled: false } });
    vi.restoreAllMocks();
    expect([ran, raced.status, raced.body]).toEqual([[200], 409, changedMeanwhile("webhook")]);
    expect((await api("GET", path, { key: organization.key })).body.enabled).toBe(true);
    const [newest] = await entriesOf(organization, id);
    expect(newest!.detail.changes).toEqual(expect.arrayContaining([enabledChange(false, true)]));
  });
});

describe("a webhook deleted by an admin demoted meanwhile", () => {
  it("is not deleted: 403, as a moment later", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { url: "https://hooks.example.com/kept", enabled: false });
    const admin = await addMember(organization.organization.id, MembershipLevel.admin);
    const memberPath = `/api/organizations/${organization.organization.id}/members/${admin.user.uuid}`;
    const ran = beforeWrites([
      [
        // The DELETE's write: its deletion scheduled (its deliveries and row then go in steps).
        /^update "webhooks" set .*"deletion_scheduled_at"/,
        async () =>
          (await api("PATCH", memberPath, { key: organization.key, body: { level: MembershipLevel.member } })).status,
      ],
    ]);
    const deleted = await api("DELETE", `${webhooksPath(organization)}/${id}`, { key: admin.key });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expect(deleted.status).toBe(403);
    expect(deleted.body).toEqual(INSUFFICIENT_LEVEL);
    expect((await api("GET", `${webhooksPath(organization)}/${id}`, { key: organization.key })).status).toBe(200);
  });
});

describe("the webhook limit", () => {
  /** `count` webhooks of the organization, written directly (their secrets are never opened). */
  async function insertWebhooks(organization: Organization, count: number) {
    const now = new Date().toISOString();
    const [first, ...rest] = Array.from({ length: count }, (_, index) =>
      db.insert(schema.webhooks).values({
        id: crypto.randomUUID(),
        organizationId: organization.organization.id,
        url: `${RECEIVER}/${index}`,
        events: ["*"],
        enabled: false,
        sealedSecret: "sealed",
        lastEnqueuedSeq: 0,
        createdAt: now,
        updatedAt: now,
      }),
    );
    await db.batch([first!, ...rest]);
  }

  it("refuses a 51st webhook with 400, records nothing, and lets racing creates stop at 50", async () => {
    const organization = await setupOrganization();
    await insertWebhooks(organization, 48);
    const create = () =>
      api("POST", webhooksPath(organization), {
        key: organization.key,
        body: { url: RECEIVER, events: ["*"], enabled: false },
      });

    const racing = await Promise.all([create(), create(), create()]);
    expect(racing.map((response) => response.status).sort()).toEqual([201, 201, 400]);
    const refused = await create();

    expectError(refused, 400, {
      type: "validation_error",
      code: "max_webhooks",
      detail: "An organization can have at most 50 webhooks.",
      attr: null,
    });
    const listed = await api("GET", `${webhooksPath(organization)}?limit=1`, { key: organization.key });
    expect(listed.body.count).toBe(50);
    const log = await api("GET", `/api/organizations/${organization.organization.id}/activity_log?scope=Webhook`, {
      key: organization.key,
    });
    expect(log.body.results).toHaveLength(2);
  });
});

describe("deliveries", () => {
  it("delivers a matching event once, signed as Standard Webhooks verify it", async () => {
    const organization = await setupOrganization();
    const { id, secret } = await subscribe(organization);
    const received = receiver(200);
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const memberPath = `/api/organizations/${organization.organization.id}/members/${member.user.uuid}`;
    const change = await api("PATCH", memberPath, { key: organization.key, body: { level: MembershipLevel.admin } });
    expect(change.status).toBe(200);
    const deliveriesPath = `${webhooksPath(organization)}/${id}/deliveries`;
    const [delivery] = await eventually(async () => {
      const { results } = (await api("GET", deliveriesPath, { key: organization.key })).body;
      return results.length === 1 && results[0].status === "succeeded" ? results : undefined;
    });
    expect(delivery).toEqual({
      id: expect.stringMatching(UUID),
      entry_id: expect.stringMatching(UUID),
      event: "OrganizationMembership.updated",
      status: "succeeded",
      attempts: 1,
      last_status_code: 200,
      last_error: null,
      next_attempt_at: null,
      created_at: expect.stringMatching(ISO_TIMESTAMP),
      updated_at: expect.stringMatching(ISO_TIMESTAMP),
    });
    // Other tests' deliveries (retried 5 s after a failure) may reach this receiver meanwhile: this one's posts only.
    const posts = received.filter((post) => post.headers["webhook-id"] === delivery.id);
    expect(posts).toHaveLength(1);
    const [post] = posts;
    expect(post!.headers["webhook-id"]).toBe(delivery.id);
    const payload = new StandardWebhook(secret).verify(post!.body, post!.headers) as Record<string, unknown>;
    expect(payload).toMatchObject({
      type: "OrganizationMembership.updated",
      scope: "OrganizationMembership",
      activity: "updated",
      item_id: member.membership.id,
      request_id: change.headers.get("X-Request-Id"),
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(() =>
      new StandardWebhook(`whsec_${btoa("another secret, 32 bytes long!!!")}`).verify(post!.body, post!.headers),
    ).toThrow();

    // An event the subscription does not name is not delivered.
    await api("DELETE", memberPath, { key: organization.key });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await api("GET", deliveriesPath, { key: organization.key })).body.count).toBe(1);
  });

  it("retries a failing receiver on the schedule, then dead-letters it: failed, listed, redelivered", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"], enabled: true });
    const deliveryId = await seedPendingDelivery(organization, id);
    receiver(500);
    const queue = "webhook-deliveries";
    const delays = await retryDelays(queue, { deliveryId }, [1]);
    const afterFirst = await storedDelivery(deliveryId);
    expect(afterFirst).toMatchObject({
      status: "pending",
      attempts: 1,
      lastStatusCode: 500,
      lastError: "receiver down",
    });
    expect(Date.parse(afterFirst.nextAttemptAt!) - Date.now()).toBeGreaterThan(3_000);
    delays.push(...(await retryDelays(queue, { deliveryId }, attemptsFrom(2, DELIVERY_ATTEMPTS))));
    // Immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; the last retry has no delay: Queues moves it
    // to the dead letters.
    expect(delays).toEqual([5, 300, 1_800, 7_200, 18_000, 36_000, 36_000, undefined]);
    const exhausted = await storedDelivery(deliveryId);
    expect(exhausted).toMatchObject({ status: "pending", attempts: DELIVERY_ATTEMPTS, nextAttemptAt: null });
    // As many attempts as the consumer lets Queues make before the dead-letter queue.
    expectAttemptsBeforeDeadLetters("webhook-deliveries", DELIVERY_ATTEMPTS, "webhook-deliveries-dead-letters");

    const deadLetters = await consumeDeadLetter("webhook-deliveries-dead-letters", { deliveryId });
    expect(deadLetters.ackAll).toBe(true);
    expect(deadLetters.warnings).toEqual([
      {
        level: "warn",
        run_id: expect.any(String),
        queue: "webhook-deliveries-dead-letters",
        task: "webhook dead letter",
        delivery_id: deliveryId,
        webhook_id: id,
        attempts: DELIVERY_ATTEMPTS,
      },
    ]);
    const deliveriesPath = `${webhooksPath(organization)}/${id}/deliveries`;
    const failed = await api("GET", `${deliveriesPath}?status=failed`, { key: organization.key });
    expect(failed.body).toEqual({
      count: 1,
      next: null,
      previous: null,
      results: [
        {
          id: deliveryId,
          entry_id: expect.stringMatching(UUID),
          event: "Organization.updated",
          status: "failed",
          attempts: DELIVERY_ATTEMPTS,
          last_status_code: 500,
          last_error: "receiver down",
          next_attempt_at: null,
          created_at: expect.stringMatching(ISO_TIMESTAMP),
          updated_at: expect.stringMatching(ISO_TIMESTAMP),
        },
      ],
    });
    // The webhook's own Webhook.created delivery, on the real queue, is pending meanwhile: only it.
    const pending = (await api("GET", `${deliveriesPath}?status=pending`, { key: organization.key })).body;
    expect(
      pending.results.map((delivery: { event: string; status: string }) => [delivery.event, delivery.status]),
    ).toEqual([["Webhook.created", "pending"]]);
    expect(pending.count).toBe(1);
    expect((await api("GET", `${deliveriesPath}?status=lost`, { key: organization.key })).body).toMatchObject({
      type: "validation_error",
      attr: "status",
    });

    // Redelivered once the receiver is back: the same webhook-id, the schedule from its start
    // (`retry` is `redeliver` by another name; the other tests send `redeliver`).
    const received = receiver(200);
    const again = await api("POST", `${deliveriesPath}/${deliveryId}/retry`, { key: organization.key });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ id: deliveryId, status: "pending", attempts: DELIVERY_ATTEMPTS });
    const done = await eventually(async () => {
      const { results } = (await api("GET", deliveriesPath, { key: organization.key })).body;
      const row = results.find((candidate: { id: string }) => candidate.id === deliveryId);
      return row.status === "succeeded" ? row : undefined;
    });
    expect(done).toMatchObject({
      id: deliveryId,
      attempts: DELIVERY_ATTEMPTS + 1,
      last_status_code: 200,
      last_error: null,
    });
    expect(received.filter((post) => post.headers["webhook-id"] === deliveryId)).toHaveLength(1);
    // A delivery still pending has its message on the queue: asked again, it is answered as it is.
    const sent = vi.spyOn(env.WEBHOOK_DELIVERIES, "send");
    const pendingId = await seedPendingDelivery(organization, id, { seq: 2000 });
    for (let call = 0; call < 3; call += 1) {
      const asked = await api("POST", `${deliveriesPath}/${pendingId}/redeliver`, { key: organization.key });
      expect(asked.status).toBe(202);
      expect(asked.body).toMatchObject({ id: pendingId, status: "pending" });
    }
    expect(sent).not.toHaveBeenCalled();
    expectError(
      await api("POST", `${deliveriesPath}/${crypto.randomUUID()}/redeliver`, { key: organization.key }),
      404,
      NOT_FOUND,
    );
  });

  it("marks failed in the cron an exhausted delivery whose dead letter never came; leaves a recent one", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"] });
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000).toISOString();
    const lost = await seedPendingDelivery(organization, id, {
      seq: 1_000,
      attempts: DELIVERY_ATTEMPTS,
      nextAttemptAt: null,
      updatedAt: twoHoursAgo,
    });
    const recent = await seedPendingDelivery(organization, id, {
      seq: 1_001,
      attempts: DELIVERY_ATTEMPTS,
      nextAttemptAt: null,
    });
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
    const statuses = await db
      .select({ id: schema.webhookDeliveries.id, status: schema.webhookDeliveries.status })
      .from(schema.webhookDeliveries)
      .where(inJsonList(schema.webhookDeliveries.id, [lost, recent]));
    expect(Object.fromEntries(statuses.map((row) => [row.id, row.status]))).toEqual({
      [lost]: "failed",
      [recent]: "pending",
    });
  });

  it("re-sends in the cron the lost messages of an enabled webhook's deliveries, not a disabled one's", async () => {
    const organization = await setupOrganization();
    const enabled = await subscribe(organization, { events: ["*"] });
    const disabled = await subscribe(organization, { url: `${RECEIVER}/off`, events: ["*"], enabled: false });
    const anHourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const lost = await seedPendingDelivery(organization, enabled.id, { seq: 1_000, nextAttemptAt: anHourAgo });
    const waiting = await seedPendingDelivery(organization, disabled.id, { seq: 1_001, nextAttemptAt: anHourAgo });
    receiver(200);
    const sent = vi.spyOn(env.WEBHOOK_DELIVERIES, "sendBatch");
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
    const resent = sent.mock.calls.flatMap(([messages]) =>
      [...messages].map((message) => (message.body as { deliveryId: string }).deliveryId),
    );
    expect(resent).toContain(lost);
    expect(resent).not.toContain(waiting);
    const [row] = await db.select().from(schema.webhookDeliveries).where(eq(schema.webhookDeliveries.id, waiting));
    expect(row).toMatchObject({ status: "pending", attempts: 0 });
  });

  it("re-sends a lost delivery's message once, for two cron runs at once and for the next while it waits", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"] });
    const anHourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const lost = await seedPendingDelivery(organization, id, { seq: 1_000, nextAttemptAt: anHourAgo });
    const sent = vi.spyOn(env.WEBHOOK_DELIVERIES, "sendBatch").mockResolvedValue({
      metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } },
    });
    const cron = () => worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);

    await Promise.all([cron(), cron()]);
    await cron();

    // Each message is a schedule of attempts of its own: two would post the event twice.
    const resent = sent.mock.calls.flatMap(([messages]) =>
      [...messages].map((message) => (message.body as { deliveryId: string }).deliveryId),
    );
    expect(resent.filter((deliveryId) => deliveryId === lost)).toHaveLength(1);
    expect(await storedDelivery(lost)).toMatchObject({ status: "pending", attempts: 0 });
  });

  it("honours a 429's or 503's Retry-After within the schedule: a longer wait, never past 12 hours", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"] });
    const deliveryId = await seedPendingDelivery(organization, id);
    const answer = (status: number, retryAfter: string) =>
      vi
        .spyOn(globalThis, "fetch")
        .mockImplementation(async () => new Response("slow down", { status, headers: { "Retry-After": retryAfter } }));
    const delayOf = async (attempt: number) => (await consume(deliveryId, attempt)).retryDelay;
    answer(429, "120");
    expect(await delayOf(1)).toBe(120);
    answer(503, new Date(Date.now() + 3_600_000).toUTCString());
    expect(await delayOf(2)).toBeGreaterThanOrEqual(3_598);
    answer(503, "999999");
    expect(await delayOf(3)).toBe(43_200);
    // A shorter Retry-After does not shorten the step; a 500's is not read.
    answer(429, "1");
    expect(await delayOf(4)).toBe(7_200);
    answer(500, "99999");
    expect(await delayOf(5)).toBe(18_000);
    const delivery = await storedDelivery(deliveryId);
    expect(delivery).toMatchObject({ status: "pending", attempts: 5, lastStatusCode: 500 });
  });

  it("disables the webhook at once when the receiver answers 410 Gone, and the log says why", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"] });
    const deliveryId = await seedPendingDelivery(organization, id);
    receiver(410);
    const result = await consume(deliveryId, 1);
    expect(result.explicitAcks).toEqual(["message"]);
    const webhook = await api("GET", `${webhooksPath(organization)}/${id}`, { key: organization.key });
    expect(webhook.body.enabled).toBe(false);
    const { results } = (await api("GET", `${webhooksPath(organization)}/${id}/deliveries`, { key: organization.key }))
      .body;
    expect(results.find((delivery: { id: string }) => delivery.id === deliveryId)).toMatchObject({
      status: "failed",
      attempts: 1,
      last_status_code: 410,
      next_attempt_at: null,
    });
    const log = await api("GET", `/api/organizations/${organization.organization.id}/activity_log?activity=disabled`, {
      key: organization.key,
    });
    expect(log.body.results).toEqual([
      expect.objectContaining({
        scope: "Webhook",
        activity: "disabled",
        item_id: id,
        is_system: true,
        user: null,
        api_key_id: null,
        detail: expect.objectContaining({ name: RECEIVER, context: { reason: "The receiver answered 410 Gone." } }),
        // Sealed by the consumer itself: no request's seal follows an entry the service appends.
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      }),
    ]);
  });

  it("keeps a webhook on when the receiver it was pointed away from answers 410 while the PATCH lands", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { url: `${RECEIVER}/old`, events: ["*"] });
    const hookPath = `${webhooksPath(organization)}/${id}`;
    const deliveryId = await seedPendingDelivery(organization, id);
    // The attempt read the webhook at its old URL; while its POST is out, the admin redirects it.
    const sentTo: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = new Request(input, init).url;
      // The PATCH's own look-up of the new receiver's host comes here too: only the delivery's POST redirects.
      // Deliveries of other tests' webhooks, still in flight in this runtime, are answered and left out.
      if (!url.startsWith(`${RECEIVER}/old`) && !url.startsWith(`${RECEIVER}/new`)) {
        return new Response(JSON.stringify({ Status: 3 }), { status: 200 });
      }
      sentTo.push(url);
      const patched = await api("PATCH", hookPath, { key: organization.key, body: { url: `${RECEIVER}/new` } });
      expect(patched.status).toBe(200);
      return new Response("gone", { status: 410 });
    });
    await consume(deliveryId, 1);
    vi.restoreAllMocks();

    expect(sentTo).toEqual([`${RECEIVER}/old`]);
    const after = await api("GET", hookPath, { key: organization.key });
    expect([after.body.url, after.body.enabled]).toEqual([`${RECEIVER}/new`, true]);
    const log = await api("GET", `/api/organizations/${organization.organization.id}/activity_log?activity=disabled`, {
      key: organization.key,
    });
    expect(log.body.results).toEqual([]);
    expect(await storedDelivery(deliveryId)).toMatchObject({ status: "failed", lastStatusCode: 410 });
  });

  it("counts the 3 days again from a PATCH that turns the webhook on or points it elsewhere", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { url: `${RECEIVER}/old`, events: ["*"] });
    const hookPath = `${webhooksPath(organization)}/${id}`;
    const failingForThreeDays = async () =>
      db
        .update(schema.webhooks)
        .set({ failingSince: new Date(Date.now() - 3 * 86_400_000 - 60_000).toISOString() })
        .where(eq(schema.webhooks.id, id));
    await failingForThreeDays();
    receiver(503);
    await consume(await seedPendingDelivery(organization, id, { seq: 1000 }), 1);
    expect((await api("GET", hookPath, { key: organization.key })).body.enabled).toBe(false);

    // Turned back on, its next failure is its first, not the fourth day's.
    expect((await api("PATCH", hookPath, { key: organization.key, body: { enabled: true } })).status).toBe(200);
    await consume(await seedPendingDelivery(organization, id, { seq: 2000 }), 1);
    expect((await api("GET", hookPath, { key: organization.key })).body.enabled).toBe(true);

    // Pointed at another receiver, the old one's days do not count against it.
    await failingForThreeDays();
    expect((await api("PATCH", hookPath, { key: organization.key, body: { url: `${RECEIVER}/new` } })).status).toBe(
      200,
    );
    await consume(await seedPendingDelivery(organization, id, { seq: 3000 }), 1);
    expect((await api("GET", hookPath, { key: organization.key })).body.enabled).toBe(true);
  });

  it("judges the 3 days on the row its write finds: a PATCH turning the webhook on meanwhile holds", async () => {
    const organization = await setupOrganization();
    for (const [age, seq] of [
      [3 * 86_400_000 + 60_000, 5000],
      [3 * 86_400_000 - 60_000, 6000],
    ] as const) {
      const { id } = await subscribe(organization, { events: ["*"] });
      const hookPath = `${webhooksPath(organization)}/${id}`;
      const failingSince = new Date(Date.now() - age).toISOString();
      await db.update(schema.webhooks).set({ failingSince }).where(eq(schema.webhooks.id, id));
      const deliveryId = await seedPendingDelivery(organization, id, { seq });
      // The attempt read the webhook failing for about 3 days; while its POST is out, an admin turns it on.
      vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
        if (!new Request(input, init).url.startsWith(RECEIVER)) return new Response("{}", { status: 200 });
        const patched = await api("PATCH", hookPath, { key: organization.key, body: { enabled: true } });
        expect(patched.status).toBe(200);
        return new Response("receiver down", { status: 503 });
      });
      await consume(deliveryId, 1);
      vi.restoreAllMocks();

      const [row] = await db.select().from(schema.webhooks).where(eq(schema.webhooks.id, id));
      // Its failures count from this one, not from the start the PATCH cleared.
      expect({ age, enabled: row!.enabled, fresh: row!.failingSince! > failingSince }).toEqual({
        age,
        enabled: true,
        fresh: true,
      });
    }
  });

  it("disables a webhook whose deliveries have all failed for 3 days, and the log says so", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"] });
    await db
      .update(schema.webhooks)
      .set({ failingSince: new Date(Date.now() - 3 * 24 * 3_600_000 - 1000).toISOString() })
      .where(eq(schema.webhooks.id, id));
    const deliveryId = await seedPendingDelivery(organization, id);
    receiver(503);
    const batch = createMessageBatch("webhook-deliveries", [
      { id: "message", timestamp: new Date(), attempts: 1, body: { deliveryId } },
    ]);
    await worker.queue(batch, env);
    const webhook = await api("GET", `${webhooksPath(organization)}/${id}`, { key: organization.key });
    expect(webhook.body.enabled).toBe(false);
    const log = await api("GET", `/api/organizations/${organization.organization.id}/activity_log?activity=disabled`, {
      key: organization.key,
    });
    expect(log.body.results).toEqual([
      expect.objectContaining({
        scope: "Webhook",
        activity: "disabled",
        item_id: id,
        is_system: true,
        user: null,
        api_key_id: null,
      }),
    ]);
  });

  it("refuses at delivery a host whose name resolves to a private address", async () => {
    env.WEBHOOKS_ALLOW_INSECURE = "";
    const organization = await setupOrganization();
    // An event nothing here records: the only delivery is the one seeded (no other runs on after the test).
    const { id } = await subscribe(organization, {
      url: "https://internal.example.com/hook",
      events: ["Dashboard.updated"],
    });
    const deliveryId = await seedPendingDelivery(organization, id, { event: "Dashboard.updated" });
    const posted: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = new Request(input, init).url;
      if (url.startsWith(env.DNS_RESOLVER_URL)) {
        const type = new URL(url).searchParams.get("type");
        const answer = type === "A" ? [{ type: 1, data: "10.0.0.5" }] : [];
        return Response.json({ Status: 0, Answer: answer });
      }
      // Only this webhook's receiver: earlier tests' deliveries, still running in the background,
      // post to theirs through the same spy.
      if (url.startsWith("https://internal.example.com/")) posted.push(url);
      return new Response("ok");
    });
    const batch = createMessageBatch("webhook-deliveries", [
      { id: "message", timestamp: new Date(), attempts: 1, body: { deliveryId } },
    ]);
    await worker.queue(batch, env);
    const delivery = await storedDelivery(deliveryId);
    expect(delivery).toMatchObject({
      status: "pending",
      attempts: 1,
      lastStatusCode: null,
      lastError: "The receiver's host does not resolve to a public address.",
    });
    expect(posted).toEqual([]);
  });

  it("refuses at delivery a name whose answers are private however written, and a port but 443 or 80", async () => {
    const organization = await setupOrganization();
    // Made while any port is allowed, as a receiver stored before ports were limited.
    const scanner = await subscribe(organization, { url: "https://1.1.1.1:22/", enabled: false });
    env.WEBHOOKS_ALLOW_INSECURE = "";
    const { id } = await subscribe(organization, { url: "https://internal.example.com/hook", enabled: false });
    const posted: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = new Request(input, init).url;
      if (url.startsWith(env.DNS_RESOLVER_URL)) {
        const type = new URL(url).searchParams.get("type");
        const answer = type === "AAAA" ? [{ type: 28, data: "0:0:0:0:0:0:0:1" }] : [{ type: 1, data: "93.184.215.14" }];
        return Response.json({ Status: 0, Answer: answer });
      }
      // Only these webhooks' receivers: earlier tests' deliveries post to theirs through the same spy.
      if (url.startsWith("https://internal.example.com/") || url.startsWith("https://1.1.1.1:22/")) posted.push(url);
      return new Response("ok");
    });
    const test = (webhookId: string) =>
      api("POST", `${webhooksPath(organization)}/${webhookId}/test`, { key: organization.key });
    expect((await test(id)).body).toMatchObject({
      ok: false,
      status_code: null,
      error: "The receiver's host does not resolve to a public address.",
    });
    expect((await test(scanner.id)).body).toMatchObject({
      ok: false,
      status_code: null,
      error: "The receiver's port must be 443 or 80.",
    });
    expect(posted).toEqual([]);
  });

  it("refuses a name whose A or AAAA lookup failed (SERVFAIL, resolver down)", async () => {
    env.WEBHOOKS_ALLOW_INSECURE = "";
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { url: "https://rebind.example.com/hook", enabled: false });
    const posted: string[] = [];
    let failing: "A" | "AAAA" | undefined;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = new Request(input, init).url;
      if (url.startsWith(env.DNS_RESOLVER_URL)) {
        const type = new URL(url).searchParams.get("type");
        if (type === failing)
          return failing === "AAAA" ? Response.json({ Status: 2 }) : new Response("", { status: 503 });
        const answer = type === "A" ? [{ type: 1, data: "93.184.215.14" }] : [];
        return Response.json({ Status: 0, Answer: answer });
      }
      // Only this webhook's receiver: earlier tests' deliveries, still running in the background,
      // post to theirs through the same spy.
      if (url.startsWith("https://rebind.example.com/")) posted.push(url);
      return new Response("ok");
    });
    const test = () => api("POST", `${webhooksPath(organization)}/${id}/test`, { key: organization.key });
    for (const failed of ["AAAA", "A"] as const) {
      failing = failed;
      expect((await test()).body, failed).toMatchObject({
        ok: false,
        status_code: null,
        error: "The receiver's host does not resolve to a public address.",
      });
    }
    expect(posted).toEqual([]);
    // Both answered, the public address alone (no AAAA record): the receiver is posted to.
    failing = undefined;
    expect((await test()).body).toMatchObject({ ok: true, status_code: 200 });
    expect(posted).toEqual(["https://rebind.example.com/hook"]);
  });

  it("posts a signed webhook.test event on demand and says how the receiver answered", async () => {
    const organization = await setupOrganization();
    const { id, secret } = await subscribe(organization);
    const received = receiver(200);
    const response = await api("POST", `${webhooksPath(organization)}/${id}/test`, { key: organization.key });
    expect(response.body).toEqual({ id: expect.stringMatching(UUID), ok: true, status_code: 200, error: null });
    const post = received.find((candidate) => candidate.headers["webhook-id"] === response.body.id)!;
    expect(new StandardWebhook(secret).verify(post.body, post.headers)).toMatchObject({
      type: "webhook.test",
      webhook_id: id,
    });
  });

  it("catches up in the cron on entries a lost pass left behind", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization);
    const received = receiver(200);
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const change = await api(
      "PATCH",
      `/api/organizations/${organization.organization.id}/members/${member.user.uuid}`,
      {
        key: organization.key,
        body: { level: MembershipLevel.admin },
      },
    );
    const deliveriesPath = `${webhooksPath(organization)}/${id}/deliveries`;
    await eventually(async () =>
      (await api("GET", deliveriesPath, { key: organization.key })).body.count === 1 ? true : undefined,
    );
    // As if the pass after that response had never run.
    await db.delete(schema.webhookDeliveries).where(eq(schema.webhookDeliveries.webhookId, id));
    await db.update(schema.webhooks).set({ lastEnqueuedSeq: 0 }).where(eq(schema.webhooks.id, id));
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
    const [delivery] = await eventually(async () => {
      const { results } = (await api("GET", deliveriesPath, { key: organization.key })).body;
      return results.length === 1 && results[0].status === "succeeded" ? results : undefined;
    });
    const posted = received.filter((post) => post.headers["webhook-id"] === delivery.id);
    expect(posted).toHaveLength(1);
    expect(JSON.parse(posted[0]!.body)).toMatchObject({ request_id: change.headers.get("X-Request-Id") });
  });
});

describe("the outbox under load", () => {
  // Last in the file: the queue drains this test's 650 messages after it.
  it("turns one request's entries into deliveries for 50 webhooks; one stuck organization stops no other", async () => {
    const organization = await setupOrganization();
    const other = await setupOrganization();
    receiver(200);
    const now = new Date().toISOString();
    const keyring = await loadKeyring(env);
    const webhookRows = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const id = crypto.randomUUID();
        const sealedSecret = await seal(
          keyring,
          `whsec_${btoa("a secret of thirty-two bytes!!!!")}`,
          secretContext(id),
        );
        return {
          id,
          organizationId: organization.organization.id,
          url: RECEIVER,
          events: ["*"],
          enabled: true,
          sealedSecret,
          lastEnqueuedSeq: 0,
          createdAt: now,
          updatedAt: now,
        };
      }),
    );
    const [firstWebhook, ...otherWebhooks] = webhookRows.map((row) => db.insert(schema.webhooks).values(row));
    await db.batch([firstWebhook!, ...otherWebhooks]);
    const { id: otherWebhook } = await subscribe(other, { events: ["*"] });
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const dashboardsPath = `/api/environments/${organization.project.id}/dashboards`;
    const created = await api("POST", dashboardsPath, { key: member.key, body: { name: "Notes" } });
    const notes = Array.from({ length: 12 }, (_, index) => ({ text: { body: `note ${index}` } }));

    const patched = await api("PATCH", `${dashboardsPath}/${created.body.id}`, {
      key: member.key,
      body: { tiles: notes },
    });

    expect(patched.status).toBe(200);
    const log = await api("GET", `/api/organizations/${organization.organization.id}/activity_log?limit=100`, {
      key: organization.key,
    });
    const entries = (log.body.results as unknown[]).length;
    expect(entries).toBeGreaterThanOrEqual(13);
    const made = () =>
      db.$count(
        schema.webhookDeliveries,
        inJsonList(
          schema.webhookDeliveries.webhookId,
          webhookRows.map((row) => row.id),
        ),
      );
    expect(await eventually(async () => ((await made()) === 50 * entries ? true : undefined))).toBe(true);
    // Posting them all is the queue's work, tested above: their messages now find the webhooks off.
    await db
      .update(schema.webhooks)
      .set({ enabled: false })
      .where(eq(schema.webhooks.organizationId, organization.organization.id));
    const positions = await db
      .select({ seq: schema.webhooks.lastEnqueuedSeq })
      .from(schema.webhooks)
      .where(eq(schema.webhooks.organizationId, organization.organization.id));
    expect(new Set(positions.map((row) => row.seq)).size).toBe(1);
    expect(positions[0]!.seq).toBeGreaterThanOrEqual(entries);

    // An organization whose outbox pass throws (a webhook row it cannot read) holds up no other:
    // it has an entry to deliver, so the cron tries it.
    const stuck = await setupOrganization();
    await seedEntries(stuck.organization.id, 1, 1000);
    await db.run(sql`insert into webhooks
      (id, organization_id, url, events, enabled, sealed_secret, last_enqueued_seq, created_at, updated_at)
      values (${crypto.randomUUID()}, ${stuck.organization.id}, ${RECEIVER}, '{', 1, 'sealed', 0, ${now}, ${now})`);
    await api("PATCH", `/api/organizations/${other.organization.id}`, { key: other.key, body: { name: "Renamed" } });
    await db.delete(schema.webhookDeliveries).where(eq(schema.webhookDeliveries.webhookId, otherWebhook));
    await db.update(schema.webhooks).set({ lastEnqueuedSeq: 0 }).where(eq(schema.webhooks.id, otherWebhook));
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
    const otherDeliveries = `${webhooksPath(other)}/${otherWebhook}/deliveries`;
    expect(
      await eventually(async () =>
        (await api("GET", otherDeliveries, { key: other.key })).body.count >= 1 ? true : undefined,
      ),
    ).toBe(true);
    expect(errors.mock.calls.map(([line]) => JSON.parse(String(line)))).toContainEqual(
      expect.objectContaining({
        level: "error",
        task: "enqueue webhook deliveries",
        organization_id: stuck.organization.id,
      }),
    );
  });
});

describe("a webhook turned off while a PATCH of it runs", () => {
  it("stays off when another admin changes only its description: its demoted creator gets nothing", async () => {
    receiver(200);
    const organization = await setupOrganization();
    const admin = await addMember(organization.organization.id, MembershipLevel.admin);
    const created = await api("POST", webhooksPath(organization), {
      key: admin.key,
      body: { url: `${RECEIVER}/demoted-admin`, events: ["*"] },
    });
    expect(created.status).toBe(201);
    const webhookPath = `${webhooksPath(organization)}/${created.body.id}`;
    const memberPath = `/api/organizations/${organization.organization.id}/members/${admin.user.uuid}`;
    const demote = { key: organization.key, body: { level: MembershipLevel.member } };
    // The owner's PATCH has read the webhook (on) when the demotion turns it off, before its write.
    const ran = beforeWrites([
      [/update "webhooks" set "url"/, async () => (await api("PATCH", memberPath, demote)).status],
    ]);
    const renamed = await api("PATCH", webhookPath, { key: organization.key, body: { description: "ops" } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ description: "ops", enabled: false, created_by: userBasic(admin.user) });
    expect((await api("GET", webhookPath, { key: organization.key })).body.enabled).toBe(false);
    // Turned on again, it is the owner's: who turns a webhook on answers for it.
    const enabled = await api("PATCH", webhookPath, { key: organization.key, body: { enabled: true } });
    expect(enabled.body).toMatchObject({ enabled: true, created_by: userBasic(organization.owner) });
  });

  it("stays off after a 410 Gone that lands during an admin's PATCH of its events", async () => {
    receiver(410);
    const organization = await setupOrganization();
    const webhook = await subscribe(organization, { url: `${RECEIVER}/gone`, events: ["*"] });
    const deliveryId = await seedPendingDelivery(organization, webhook.id, { seq: 5000 });
    const webhookPath = `${webhooksPath(organization)}/${webhook.id}`;
    const ran = beforeWrites([[/update "webhooks" set "url"/, () => consume(deliveryId, 1).then(() => "consumed")]]);
    const changed = await api("PATCH", webhookPath, { key: organization.key, body: { events: ["Dashboard.updated"] } });
    vi.restoreAllMocks();
    expect(ran).toEqual(["consumed"]);
    expect(changed.body).toMatchObject({ events: ["Dashboard.updated"], enabled: false });
    expect((await api("GET", webhookPath, { key: organization.key })).body.enabled).toBe(false);
  });
});

describe("a PATCH landing while another admin changes the webhook", () => {
  it("does not undo the events and url changed meanwhile", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { description: "CRM sync" });
    const hookPath = `${webhooksPath(organization)}/${id}`;
    const newUrl = "http://receiver.test/other-hook";

    const retarget = async () =>
      (
        await api("PATCH", hookPath, {
          key: organization.key,
          body: { events: ["Dashboard.updated"], url: newUrl },
        })
      ).status;
    const ran = beforeWrites([[/update "webhooks" set "url"/, retarget]]);
    const redescribe = await api("PATCH", hookPath, { key: organization.key, body: { description: "renamed" } });
    vi.restoreAllMocks();
    expect(ran).toEqual([200]);

    const after = (await api("GET", hookPath, { key: organization.key })).body as {
      description: string;
      events: string[];
      url: string;
    };
    if (redescribe.status === 200) {
      expect({ description: after.description, events: after.events, url: after.url }).toEqual({
        description: "renamed",
        events: ["Dashboard.updated"],
        url: newUrl,
      });
    } else {
      expect([409, 412]).toContain(redescribe.status);
      expect({ events: after.events, url: after.url }).toEqual({ events: ["Dashboard.updated"], url: newUrl });
    }
  });
});

describe("a webhook PATCH sending the URL it read, while the owner redirects the webhook", () => {
  it("is refused (409): the admin does not point it back without answering for it", async () => {
    const { organization, owner, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    const hooksPath = `/api/organizations/${organization.id}/webhooks`;
    const created = await api("POST", hooksPath, {
      key,
      body: { url: "http://owner-receiver.test/hook", events: ["*"] },
    });
    const hookPath = `${hooksPath}/${created.body.id}`;
    // The admin points the owner's webhook at their own receiver: they answer for it.
    const taken = await api("PATCH", hookPath, { key: admin.key, body: { url: "http://admin-receiver.test/hook" } });
    expect(taken.body.created_by).toEqual(userBasic(admin.user));
    const takenBack = beforeWrites([
      [
        /^update "webhooks" set "url"/,
        async () => (await api("PATCH", hookPath, { key, body: { url: "http://owner-receiver.test/hook" } })).status,
      ],
    ]);
    const again = await api("PATCH", hookPath, {
      key: admin.key,
      body: { url: "http://admin-receiver.test/hook", description: "mine" },
    });
    vi.restoreAllMocks();
    expect(takenBack).toEqual([200]);
    expectError(again, 409, changedMeanwhile("webhook"));
    const after = (await api("GET", hookPath, { key })).body;
    expect([after.url, after.created_by, after.description]).toEqual([
      "http://owner-receiver.test/hook",
      userBasic(owner),
      "",
    ]);
  });
});

describe("a redelivery by an admin demoted meanwhile", () => {
  it("makes no failed delivery pending again (403)", async () => {
    const organization = await setupOrganization();
    const { organization: org, key } = organization;
    const admin = await addMember(org.id, MembershipLevel.admin);
    const webhook = await subscribe(organization);
    const deliveryId = await seedPendingDelivery(organization, webhook.id, { status: "failed", attempts: 8 });
    // One statement, not a batch: the demotion runs to its end before it does.
    let demotion: Promise<number> | undefined;
    onBoundStatements((query, _values, bound) => {
      if (demotion || !/^update "webhook_deliveries" set "status"/.test(query)) return bound;
      demotion = api("PATCH", `/api/organizations/${org.id}/members/${admin.user.uuid}`, {
        key,
        body: { level: MembershipLevel.member },
      }).then((response) => response.status);
      return waitingFor(demotion, bound);
    });
    const redelivered = await api(
      "POST",
      `/api/organizations/${org.id}/webhooks/${webhook.id}/deliveries/${deliveryId}/redeliver`,
      { key: admin.key },
    );
    vi.restoreAllMocks();
    expect(await demotion).toBe(200);
    expectError(redelivered, 403, INSUFFICIENT_LEVEL);
    expect((await storedDelivery(deliveryId)).status).toBe("failed");
  });
});

describe("a redelivery of a delivery pending when it ran and finished just after", () => {
  it("answers the delivery as it is (202) to an admin of a live webhook", async () => {
    const organization = await setupOrganization();
    const { organization: org, key } = organization;
    const webhook = await subscribe(organization);
    const deliveryId = await seedPendingDelivery(organization, webhook.id, { event: "OrganizationMembership.updated" });
    receiver(200);
    // The consumer finishes the delivery between the redelivery's update (which skips it: pending)
    // and its read of it.
    let updated = false;
    let hooked = false;
    let finished: Promise<unknown> | undefined;
    onBoundStatements((query, _values, bound) => {
      if (/^update "webhook_deliveries" set "status"/.test(query)) {
        updated = true;
        return bound;
      }
      if (!updated || hooked || !/^select [^]*from "webhook_deliveries"/.test(query)) return bound;
      // Set first: the consumer's own statements come through here too.
      hooked = true;
      finished = consume(deliveryId, 1);
      return waitingFor(finished, bound);
    });
    const redelivered = await api(
      "POST",
      `/api/organizations/${org.id}/webhooks/${webhook.id}/deliveries/${deliveryId}/redeliver`,
      { key },
    );
    vi.restoreAllMocks();
    expect(finished).toBeDefined();
    expect([redelivered.status, redelivered.body.id, redelivered.body.status]).toEqual([202, deliveryId, "succeeded"]);
  });
});

describe("a webhook's deletion", () => {
  /** `count` deliveries of the webhook, written directly: the outbox makes them, one per entry. */
  async function seedDeliveries(webhookId: string, count: number) {
    const now = new Date().toISOString();
    const rows = Array.from({ length: count }, () => ({
      id: crypto.randomUUID(),
      webhookId,
      entryId: crypto.randomUUID(),
      event: "Webhook.created",
      status: "succeeded",
      retryUntil: now,
      createdAt: now,
      updatedAt: now,
    }));
    for (const chunk of chunkForInsert(schema.webhookDeliveries, rows)) {
      await db.insert(schema.webhookDeliveries).values(chunk);
    }
  }
  const storedRows = async (webhookId: string) => ({
    webhooks: (await db.select().from(schema.webhooks).where(eq(schema.webhooks.id, webhookId))).length,
    deliveries: (
      await db.select().from(schema.webhookDeliveries).where(eq(schema.webhookDeliveries.webhookId, webhookId))
    ).length,
  });

  it("writes a few rows however many deliveries it had; they, then the webhook, go in background steps", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"] });
    const kept = await subscribe(organization, { events: ["*"] });
    await seedDeliveries(id, 250);
    const path = `${webhooksPath(organization)}/${id}`;

    const deleted = await api("DELETE", path, { key: organization.key });

    expect(deleted.status).toBe(204);
    // Deleting the deliveries with it would write a row each (and their counter), in one statement.
    expect(deleted.cost.rowsWritten).toBeLessThanOrEqual(30);
    // Gone at once to every route, and from the list and its count.
    for (const suffix of ["", "/deliveries"]) {
      expectError(await api("GET", `${path}${suffix}`, { key: organization.key }), 404, NOT_FOUND);
    }
    expectError(await api("PATCH", path, { key: organization.key, body: { enabled: true } }), 404, NOT_FOUND);
    expectError(await api("DELETE", path, { key: organization.key }), 404, NOT_FOUND);
    const listed = await api("GET", webhooksPath(organization), { key: organization.key });
    expect(listed.body.count).toBe(1);
    expect(listed.body.results.map((webhook: { id: string }) => webhook.id)).toEqual([kept.id]);
    await eventually(async () => ((await storedRows(id)).webhooks === 0 ? true : undefined));
    expect(await storedRows(id)).toEqual({ webhooks: 0, deliveries: 0 });
    expect((await storedRows(kept.id)).webhooks).toBe(1);
  });

  it("is resumed by the cron when its next step's message was lost", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"] });
    await seedDeliveries(id, 120);
    // Scheduled twenty minutes ago, as its DELETE would, and its message lost.
    await db
      .update(schema.webhooks)
      .set({ enabled: false, deletionScheduledAt: new Date(Date.now() - 20 * 60_000).toISOString() })
      .where(eq(schema.webhooks.id, id));

    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);

    await eventually(async () => ((await storedRows(id)).webhooks === 0 ? true : undefined));
    expect(await storedRows(id)).toEqual({ webhooks: 0, deliveries: 0 });
  });
});
