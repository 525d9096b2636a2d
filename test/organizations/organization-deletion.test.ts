import { createScheduledController } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { count, eq, inArray, type SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import worker from "../../src/index";
import { MembershipLevel } from "../../src/platform/levels";
import { AUTHENTICATION_FAILED, expectError, NOT_FOUND } from "../support/error-bodies";
import { addMember, api, db, errorBody, setupOrganization } from "../support/harness";
import { REPLACED_VALUE_REFUSED } from "../../src/platform/auth/key-policy";
import { seedEntries } from "../support/activity-log";
import { insertInvite } from "../support/people";
import { consumeAttempt } from "../support/queues";
import { consume, receiver, seedPendingDelivery, subscribe } from "../support/webhooks";
import { beforeWrites } from "../support/races";
import { archiveActivityLog } from "../../src/platform/activity-log/archive";
import { currentEnvironmentGuessKey } from "../../src/platform/route-context/current-environment-guess";
import { createDashboard, dashboardsPath, seedDashboards } from "../environments/dashboard-fixtures";

afterEach(() => {
  vi.restoreAllMocks();
});

/** What a producer answers, for a send the test keeps from the queue. */
const NOT_SENT = { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } };
const DAY_MS = 86_400_000;

const countOf = async (table: SQLiteTable, where: SQL) =>
  (await db.select({ value: count() }).from(table).where(where))[0]!.value;

/** How many rows of each kind the organization still has. */
async function rowsOf(organizationId: string) {
  const inEnvironment = inArray(
    schema.dashboards.environmentId,
    db
      .select({ id: schema.environments.id })
      .from(schema.environments)
      .where(eq(schema.environments.organizationId, organizationId)),
  );
  return {
    organizations: await countOf(schema.organizations, eq(schema.organizations.id, organizationId)),
    memberships: await countOf(
      schema.organizationMemberships,
      eq(schema.organizationMemberships.organizationId, organizationId),
    ),
    invites: await countOf(schema.invites, eq(schema.invites.organizationId, organizationId)),
    serviceKeys: await countOf(schema.serviceApiKeys, eq(schema.serviceApiKeys.organizationId, organizationId)),
    projects: await countOf(schema.projects, eq(schema.projects.organizationId, organizationId)),
    dashboards: await countOf(schema.dashboards, inEnvironment),
    entries: await countOf(schema.activityLog, eq(schema.activityLog.organizationId, organizationId)),
  };
}

const gone = { organizations: 0, memberships: 0, invites: 0, serviceKeys: 0, projects: 0, dashboards: 0, entries: 0 };

const sharedPage = async (token: string) =>
  (await exports.default.fetch(new Request(`http://localhost/shared/${token}.json`))).status;

describe("deleting an organization", () => {
  it("closes every way in at once (members, service keys, share links), then its rows go", async () => {
    const { organization, project, key } = await setupOrganization();
    const path = `/api/organizations/${organization.id}`;
    const member = await addMember(organization.id, MembershipLevel.member);
    const serviceKey = await api("POST", `${path}/service_keys`, { key, body: { label: "sync", scopes: ["*"] } });
    expect(serviceKey.status).toBe(201);
    expect((await api("GET", `${path}/projects`, { key: serviceKey.body.value })).status).toBe(200);
    const invited = await api("POST", `${path}/invites`, { key, body: { target_email: "late@example.com" } });
    expect(invited.status).toBe(201);
    const dashboard = await createDashboard(key, project.id, { name: "Public" });
    const sharing = await api("PATCH", `${dashboardsPath(project.id)}/${dashboard.id}/sharing`, {
      key,
      body: { enabled: true },
    });
    expect(await sharedPage(sharing.body.access_token)).toBe(200);
    const other = await setupOrganization();
    const untouched = await rowsOf(other.organization.id);

    // The job's first message is held, so that what the DELETE alone did shows.
    const sent = vi.spyOn(env.BACKGROUND_JOBS, "send").mockResolvedValue(NOT_SENT);
    const response = await api("DELETE", path, { key });
    expect(response.status).toBe(204);
    expect(response.text).toBe("");
    expect(sent).toHaveBeenCalledWith({ kind: "delete_organization", organizationId: organization.id });
    // Its invites stay until the job, but open nothing (signup.test.ts).
    expect(await rowsOf(organization.id)).toMatchObject({ memberships: 0, invites: 1, serviceKeys: 0, projects: 1 });

    for (const caller of [key, member.key]) {
      expectError(await api("GET", path, { key: caller }), 404, NOT_FOUND);
      expectError(await api("GET", `/api/projects/${project.id}`, { key: caller }), 404, NOT_FOUND);
      const listed = await api("GET", "/api/organizations", { key: caller });
      expect(listed.body.results.map((item: { id: string }) => item.id)).not.toContain(organization.id);
      const me = await api("GET", "/api/users/@me", { key: caller });
      expect(me.body.organizations.map((item: { id: string }) => item.id)).not.toContain(organization.id);
    }
    expectError(await api("GET", `${path}/projects`, { key: serviceKey.body.value }), 401, AUTHENTICATION_FAILED);
    expect(await sharedPage(sharing.body.access_token)).toBe(404);
    // A second DELETE, as a retried `terraform destroy` sends, finds nothing.
    expectError(await api("DELETE", path, { key }), 404, NOT_FOUND);

    sent.mockRestore();
    await consumeAttempt("background-jobs", { kind: "delete_organization", organizationId: organization.id }, 1);
    await expect.poll(() => rowsOf(organization.id), { timeout: 20_000, interval: 200 }).toEqual(gone);
    expect(await rowsOf(other.organization.id)).toEqual(untouched);
  });

  it("sends no more of its events to its webhooks: a delivery queued before the DELETE is dropped", async () => {
    const organization = await setupOrganization();
    const { id } = await subscribe(organization, { events: ["*"] });
    const deliveryId = await seedPendingDelivery(organization, id);
    // The deletion's background steps have not run yet.
    vi.spyOn(env.BACKGROUND_JOBS, "send").mockResolvedValue(NOT_SENT);
    const deleted = await api("DELETE", `/api/organizations/${organization.organization.id}`, {
      key: organization.key,
    });
    expect(deleted.status).toBe(204);
    const received = receiver(200);
    const result = await consume(deliveryId, 2);

    expect(received).toEqual([]);
    expect(result.explicitAcks).toEqual(["message"]);
    const [webhook] = await db.select().from(schema.webhooks).where(eq(schema.webhooks.id, id));
    expect(webhook).toMatchObject({ enabled: false });
  });

  it("keeps a service key cached at another location out of an organization being deleted", async () => {
    const { organization, key } = await setupOrganization();
    const path = `/api/organizations/${organization.id}`;
    const serviceKey = await api("POST", `${path}/service_keys`, { key, body: { label: "sync", scopes: ["*"] } });
    const reached = [`${path}/projects`, "/api/organizations/@current/projects", `${path}/batch_exports`];
    for (const route of reached) expect((await api("GET", route, { key: serviceKey.body.value })).status).toBe(200);
    // As another location sees it: the key still cached (here, still stored), the organization marked.
    await db
      .update(schema.organizations)
      .set({ deletionScheduledAt: "2026-01-01T00:00:00.000Z" })
      .where(eq(schema.organizations.id, organization.id));
    for (const route of reached) {
      expectError(await api("GET", route, { key: serviceKey.body.value }), 404, NOT_FOUND);
    }
  });

  it("admits no one through an invite accepted as the DELETE runs", async () => {
    const { organization, owner, key } = await setupOrganization();
    const path = `/api/organizations/${organization.id}`;
    const invite = await insertInvite(organization.id, owner, { targetEmail: "racer@example.com" });
    // The sign-up reads the invite before the organization is marked; the DELETE lands before its join.
    const ran = beforeWrites([
      [/^insert into "organization_memberships"/, async () => (await api("DELETE", path, { key })).status],
    ]);
    const signedUp = await api("POST", "/api/signup", { body: { token: invite.token, first_name: "Racer" } });
    vi.restoreAllMocks();
    expect(ran).toEqual([204]);
    expectError(signedUp, 404, NOT_FOUND);
    expect(await rowsOf(organization.id)).toMatchObject({ memberships: 0 });
  });

  it("adds no project, and lets no service key in, through a request racing the DELETE", async () => {
    const { organization, key } = await setupOrganization();
    const path = `/api/organizations/${organization.id}`;
    // Both creations read the caller's membership before the organization is marked; the DELETE
    // lands before either writes.
    const ran = beforeWrites([
      [
        /^insert into "service_api_keys"/,
        async () => (await api("POST", `${path}/projects`, { key, body: { name: "Late" } })).status,
      ],
      [/^insert into "projects"/, async () => (await api("DELETE", path, { key })).status],
    ]);
    const serviceKey = await api("POST", `${path}/service_keys`, { key, body: { label: "late", scopes: ["*"] } });
    vi.restoreAllMocks();
    expect(ran).toEqual([204, 404]);
    // The DELETE took the caller's membership: the key is written only while they are an admin,
    // and one no longer a member is told what a moment later would tell them.
    expectError(serviceKey, 404, NOT_FOUND);
    expect(await rowsOf(organization.id)).toMatchObject({ projects: 1, serviceKeys: 0 });
  });

  it("lets a service key written as the DELETE lands reach nothing of the organization", async () => {
    const { organization, project, key } = await setupOrganization();
    const path = `/api/organizations/${organization.id}`;
    const created = await api("POST", `${path}/service_keys`, { key, body: { label: "late", scopes: ["*"] } });
    expect(created.status).toBe(201);
    const late = created.body.value as string;
    const [row] = await db.select().from(schema.serviceApiKeys).where(eq(schema.serviceApiKeys.id, created.body.id));
    expect((await api("DELETE", path, { key })).status).toBe(204);
    // Written back as if its INSERT had landed just after the DELETE's.
    await db.insert(schema.serviceApiKeys).values(row!);
    for (const route of [`${path}/projects`, `/api/projects/${project.id}`, `/api/projects/${project.id}/dashboards`]) {
      expectError(await api("GET", route, { key: late }), 404, NOT_FOUND);
    }
    expectError(await api("POST", `${path}/projects`, { key: late, body: { name: "Later" } }), 404, NOT_FOUND);
  });

  it("deletes the organization's archived activity-log segments from R2 with their index rows", async () => {
    const { organization, key } = await setupOrganization();
    // Ten days of entries, 40 days old: archived into segments (one object a day) as the cron does.
    await seedEntries(organization.id, 10, DAY_MS, 40 * DAY_MS);
    await archiveActivityLog(db, env.ACTIVITY_LOG_ARCHIVE, 30);
    const objects = async () =>
      (await env.ACTIVITY_LOG_ARCHIVE.list({ prefix: `${organization.id}/` })).objects.map((object) => object.key);
    expect((await objects()).length).toBeGreaterThan(0);
    const sent = vi.spyOn(env.BACKGROUND_JOBS, "send").mockResolvedValue(NOT_SENT);
    expect((await api("DELETE", `/api/organizations/${organization.id}`, { key })).status).toBe(204);
    await consumeAttempt("background-jobs", { kind: "delete_organization", organizationId: organization.id }, 1);
    expect(await rowsOf(organization.id)).toEqual(gone);
    expect(await objects()).toEqual([]);
    // The DELETE's message alone: one step finished it.
    expect(sent).toHaveBeenCalledTimes(1);
  });

  it("removes the rows in bounded steps, each at-least-once, and the cron resumes a lost one", async () => {
    const { organization, project, key } = await setupOrganization();
    await seedDashboards(project.id, 250);
    const sent = vi.spyOn(env.BACKGROUND_JOBS, "send").mockResolvedValue(NOT_SENT);
    expect((await api("DELETE", `/api/organizations/${organization.id}`, { key })).status).toBe(204);
    expect(await rowsOf(organization.id)).toMatchObject({ organizations: 1, projects: 1, dashboards: 250 });
    const job = { kind: "delete_organization", organizationId: organization.id };
    const first = await consumeAttempt("background-jobs", job, 1);
    expect(first.explicitAcks).toEqual(["message"]);
    expect((await rowsOf(organization.id)).dashboards).toBe(150);
    // The same step again (at-least-once) deletes the next share, never more than its bound.
    await consumeAttempt("background-jobs", job, 1);
    expect((await rowsOf(organization.id)).dashboards).toBe(50);
    expect(sent).toHaveBeenCalledTimes(3);
    // The last share: fewer than a step's bound left, so the projects and the organization go with it.
    await consumeAttempt("background-jobs", job, 1);
    expect(await rowsOf(organization.id)).toEqual(gone);
    expect(sent).toHaveBeenCalledTimes(3);
    // Once gone, a duplicate step does nothing.
    const duplicate = await consumeAttempt("background-jobs", job, 1);
    expect(duplicate.explicitAcks).toEqual(["message"]);

    // The cron resumes a deletion scheduled long ago whose message was lost.
    const stalled = await setupOrganization();
    await db
      .update(schema.organizations)
      .set({ deletionScheduledAt: "2026-01-01T00:00:00.000Z" })
      .where(eq(schema.organizations.id, stalled.organization.id));
    const sentBatch = vi.spyOn(env.BACKGROUND_JOBS, "sendBatch").mockResolvedValue(NOT_SENT);
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
    expect(sentBatch.mock.calls.flatMap(([messages]) => [...messages].map((message) => message.body))).toContainEqual({
      kind: "delete_organization",
      organizationId: stalled.organization.id,
    });
  });

  it("deletes nothing for an organization that no DELETE scheduled", async () => {
    const { organization, key, project } = await setupOrganization();
    await createDashboard(key, project.id, { name: "Kept" });
    const before = await rowsOf(organization.id);
    const step = await consumeAttempt(
      "background-jobs",
      { kind: "delete_organization", organizationId: organization.id },
      1,
    );
    expect(step.explicitAcks).toEqual(["message"]);
    expect(await rowsOf(organization.id)).toEqual(before);
    expect((await api("GET", `/api/organizations/${organization.id}`, { key })).status).toBe(200);
  });
});

describe("a value a roll replaced", () => {
  it("deletes no organization (403): that would revoke its service keys and close it to every key", async () => {
    const { organization, key } = await setupOrganization();
    const created = await api("POST", "/api/personal_api_keys", { key, body: { label: "ops", scopes: ["*"] } });
    const rolled = await api("POST", `/api/personal_api_keys/${created.body.id}/roll`, {
      key,
      body: { overlap_seconds: 3600 },
    });
    const serviceKey = await api("POST", `/api/organizations/${organization.id}/service_keys`, {
      key,
      body: { label: "ci", scopes: ["organization:read"] },
    });
    expect([created.status, rolled.status, serviceKey.status]).toEqual([201, 200, 201]);
    const deleted = await api("DELETE", `/api/organizations/${organization.id}`, { key: created.body.value });
    expectError(deleted, 403, errorBody("authentication_error", "permission_denied", REPLACED_VALUE_REFUSED));
    expect((await api("GET", `/api/organizations/${organization.id}`, { key })).status).toBe(200);
    const serviceKeys = await api("GET", `/api/organizations/${organization.id}/service_keys`, { key });
    expect(serviceKeys.body.map((listed: { id: string }) => listed.id)).toEqual([serviceKey.body.id]);
  });
});

describe("the archive during an organization's deletion", () => {
  it("leaves no object in R2 when the cron archives while the last step runs", async () => {
    const { organization, key } = await setupOrganization();
    // Entries 40 days old: due for the archive, which the cron may run while the deletion's steps do.
    await seedEntries(organization.id, 5, DAY_MS, 40 * DAY_MS);
    const objects = async () =>
      (await env.ACTIVITY_LOG_ARCHIVE.list({ prefix: `${organization.id}/` })).objects.map((object) => object.key);
    vi.spyOn(env.BACKGROUND_JOBS, "send").mockResolvedValue(NOT_SENT);
    expect((await api("DELETE", `/api/organizations/${organization.id}`, { key })).status).toBe(204);
    // The step has looked for segments (none yet); the cron archives before the step's deletes.
    const ran = beforeWrites(
      [[/^delete from "dashboards"/, () => archiveActivityLog(db, env.ACTIVITY_LOG_ARCHIVE, 30)]],
      { steppedDeletions: true },
    );
    await consumeAttempt("background-jobs", { kind: "delete_organization", organizationId: organization.id }, 1);
    // The pass ran, and left the organization being deleted alone.
    expect(ran).toEqual([0]);
    expect((await api("GET", `/api/organizations/${organization.id}`, { key })).status).toBe(404);
    expect(await objects()).toEqual([]);
  });
});

describe("an organization's service keys, deleted with it", () => {
  it("take their @current guess with them, as a revoked key does", async () => {
    const { organization, project, key } = await setupOrganization();
    const created = await api("POST", `/api/organizations/${organization.id}/service_keys`, {
      key,
      body: { label: "sync", scopes: ["*"] },
    });
    const serviceKey = created.body as { id: string; value: string };
    /** The guess in KV once the response's background write (if any) has landed. */
    const storedGuess = async (expected: string | null) => {
      for (let attempt = 0; attempt < 50; attempt += 1) {
        if ((await env.API_KEY_CACHE.get(currentEnvironmentGuessKey(serviceKey.id))) === expected) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return env.API_KEY_CACHE.get(currentEnvironmentGuessKey(serviceKey.id));
    };
    expect((await api("GET", "/api/environments/@current/dashboards", { key: serviceKey.value })).status).toBe(200);
    expect(await storedGuess(String(project.id))).toBe(String(project.id));

    vi.spyOn(env.BACKGROUND_JOBS, "send").mockResolvedValue(NOT_SENT);
    expect((await api("DELETE", `/api/organizations/${organization.id}`, { key })).status).toBe(204);
    expect((await api("GET", "/api/service_keys/@current", { key: serviceKey.value })).status).toBe(401);
    expect(await storedGuess(null)).toBeNull();
  });
});
