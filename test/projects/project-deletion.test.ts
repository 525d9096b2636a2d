import { S3_EXPORT } from "../support/projects";
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import worker from "../../src/index";
import { STORED_RESOURCE_TYPES } from "../../src/environments/resource-access-controls/resource-access-controls.schema";
import { nowIso, uuid7 } from "../../src/platform/ids";
import { MembershipLevel } from "../../src/platform/levels";
import { expectError, INSUFFICIENT_LEVEL, NOT_FOUND } from "../support/error-bodies";
import { addMember, api, createProject, db, setupOrganization } from "../support/harness";
import { consumeAttempt } from "../support/queues";
import { beforeWrites } from "../support/races";
import { seedDashboards } from "../environments/dashboard-fixtures";

type Organization = Awaited<ReturnType<typeof setupOrganization>>;

afterEach(() => {
  vi.restoreAllMocks();
});

/** A second project with a dashboard and a batch export, through the API. */
async function projectWithRows(organization: Organization) {
  const project = await createProject(organization.organization.id, { name: "Doomed" });
  const dashboard = await api("POST", `/api/environments/${project.id}/dashboards`, {
    key: organization.key,
    body: { name: "Board" },
  });
  expect(dashboard.status).toBe(201);
  const exported = await api("POST", `/api/environments/${project.id}/batch_exports`, {
    key: organization.key,
    body: S3_EXPORT,
  });
  expect(exported.status).toBe(201);
  return project;
}

const rowsOf = async (projectId: number) => ({
  projects: (await db.select().from(schema.projects).where(eq(schema.projects.id, projectId))).length,
  environments: (await db.select().from(schema.environments).where(eq(schema.environments.projectId, projectId)))
    .length,
  dashboards: (await db.select().from(schema.dashboards).where(eq(schema.dashboards.environmentId, projectId))).length,
  batchExports: (await db.select().from(schema.batchExports).where(eq(schema.batchExports.environmentId, projectId)))
    .length,
});

/** What a producer answers, for a send the test keeps from the queue. */
const NOT_SENT = { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } };

const gone = { projects: 0, environments: 0, dashboards: 0, batchExports: 0 };

describe("deleting a project", () => {
  it("answers 204 to an admin; the project is at once 404 and out of every list, then its rows go", async () => {
    const organization = await setupOrganization();
    const project = await projectWithRows(organization);
    const orgPath = `/api/organizations/${organization.organization.id}/projects`;
    const response = await api("DELETE", `${orgPath}/${project.id}/`, { key: organization.key });
    expect(response.status).toBe(204);
    for (const path of [
      `${orgPath}/${project.id}`,
      `/api/projects/${project.id}`,
      `/api/environments/${project.id}`,
      `/api/environments/${project.id}/dashboards`,
      `/api/projects/${project.id}/batch_exports`,
    ]) {
      expectError(await api("GET", path, { key: organization.key }), 404, NOT_FOUND);
    }
    const listed = await api("GET", orgPath, { key: organization.key });
    expect(listed.body.count).toBe(1);
    expect(listed.body.results.map((item: { id: number }) => item.id)).toEqual([organization.project.id]);
    const everywhere = await api("GET", "/api/projects", { key: organization.key });
    expect(everywhere.body.count).toBe(1);
    const exports = await api("GET", `/api/organizations/${organization.organization.id}/batch_exports`, {
      key: organization.key,
    });
    expect(exports.body.results).toEqual([]);
    // A second DELETE, as a retried `terraform destroy` sends, finds nothing.
    expectError(await api("DELETE", `${orgPath}/${project.id}`, { key: organization.key }), 404, NOT_FOUND);
    // The name is free at once.
    const again = await api("POST", orgPath, { key: organization.key, body: { name: "Doomed" } });
    expect(again.status).toBe(201);
    await expect.poll(() => rowsOf(project.id), { timeout: 20_000, interval: 200 }).toEqual(gone);
  });

  it("is recorded in the activity log and in the events feed that webhooks deliver", async () => {
    const organization = await setupOrganization();
    const project = await createProject(organization.organization.id, { name: "Logged" });
    const response = await api("DELETE", `/api/projects/${project.id}`, { key: organization.key });
    expect(response.status).toBe(204);
    const log = await api("GET", `/api/organizations/${organization.organization.id}/activity_log?scope=Project`, {
      key: organization.key,
    });
    expect(log.body.results[0]).toMatchObject({
      scope: "Project",
      activity: "deleted",
      item_id: String(project.id),
      project_id: project.id,
      detail: { name: "Logged" },
    });
    const events = await api(
      "GET",
      `/api/organizations/${organization.organization.id}/events?events=Project.deleted`,
      {
        key: organization.key,
      },
    );
    expect(events.body.results.map((event: { type: string }) => event.type)).toEqual(["Project.deleted"]);
  });

  it("is for admins: a member gets 403, an outsider 404, and nothing is deleted", async () => {
    const organization = await setupOrganization();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const outsider = await setupOrganization();
    const path = `/api/environments/${organization.project.id}`;
    expectError(await api("DELETE", path, { key: member.key }), 403, INSUFFICIENT_LEVEL);
    expectError(await api("DELETE", path, { key: outsider.key }), 404, NOT_FOUND);
    expect((await api("GET", path, { key: organization.key })).status).toBe(200);
  });

  it("may delete the organization's last project, as PostHog does without a paid plan", async () => {
    const organization = await setupOrganization();
    const response = await api("DELETE", `/api/environments/${organization.project.id}`, { key: organization.key });
    expect(response.status).toBe(204);
    const listed = await api("GET", `/api/organizations/${organization.organization.id}/projects`, {
      key: organization.key,
    });
    expect(listed.body).toMatchObject({ count: 0, results: [] });
  });

  it("steps through the project's rules on kinds of resources too, never cascading past a step's bound", async () => {
    const { organization, project, key } = await setupOrganization();
    // Five members with a rule on each kind of resource: 175 rules (10,000 members would make 350,000).
    const now = nowIso();
    for (let member = 0; member < 5; member += 1) {
      const { membership } = await addMember(organization.id, MembershipLevel.member);
      // A statement a row: D1 binds at most 100 values to one.
      const [first, ...rest] = STORED_RESOURCE_TYPES.map((resource) =>
        db.insert(schema.resourceAccessControls).values({
          id: uuid7(),
          environmentId: project.id,
          resource,
          organizationMembershipId: membership.id,
          accessLevel: "viewer",
          createdAt: now,
          updatedAt: now,
        }),
      );
      await db.batch([first!, ...rest]);
    }
    const rules = async () =>
      (
        await db
          .select()
          .from(schema.resourceAccessControls)
          .where(eq(schema.resourceAccessControls.environmentId, project.id))
      ).length;
    expect(await rules()).toBe(175);
    const sent = vi.spyOn(env.BACKGROUND_JOBS, "send").mockResolvedValue(NOT_SENT);
    expect((await api("DELETE", `/api/projects/${project.id}`, { key })).status).toBe(204);
    const job = { kind: "delete_project", projectId: project.id };
    await consumeAttempt("background-jobs", job, 1);
    expect(await rules()).toBe(75);
    expect(sent).toHaveBeenCalledWith(job);
    await consumeAttempt("background-jobs", job, 1);
    expect(await rowsOf(project.id)).toEqual(gone);
    expect(await rules()).toBe(0);
  });

  it("removes the rows in bounded steps, each at-least-once, and the cron resumes a lost one", async () => {
    const organization = await setupOrganization();
    const project = await projectWithRows(organization);
    await seedDashboards(project.id, 250);
    const sent = vi.spyOn(env.BACKGROUND_JOBS, "send").mockResolvedValue(NOT_SENT);
    // The DELETE's message is lost (spied): the project stays hidden, its rows wait.
    expect((await api("DELETE", `/api/projects/${project.id}`, { key: organization.key })).status).toBe(204);
    expect(sent).toHaveBeenCalledWith({ kind: "delete_project", projectId: project.id });
    expect(await rowsOf(project.id)).toEqual({ projects: 1, environments: 1, dashboards: 251, batchExports: 1 });
    const job = { kind: "delete_project", projectId: project.id };
    const first = await consumeAttempt("background-jobs", job, 1);
    expect(first.explicitAcks).toEqual(["message"]);
    expect((await rowsOf(project.id)).dashboards).toBe(151);
    // The same step again (at-least-once) deletes the next share, never more than its bound.
    await consumeAttempt("background-jobs", job, 1);
    expect((await rowsOf(project.id)).dashboards).toBe(51);
    expect(sent).toHaveBeenCalledTimes(3);
    // The last share: fewer than a step's bound left, so the project goes with it.
    await consumeAttempt("background-jobs", job, 1);
    expect(await rowsOf(project.id)).toEqual(gone);
    expect(sent).toHaveBeenCalledTimes(3);
    // Once gone, a duplicate step does nothing.
    const duplicate = await consumeAttempt("background-jobs", job, 1);
    expect(duplicate.explicitAcks).toEqual(["message"]);
    // The cron resumes a deletion scheduled long ago whose message was lost.
    const stalled = await createProject(organization.organization.id, { name: "Stalled" });
    await db
      .update(schema.projects)
      .set({ deletionScheduledAt: "2026-01-01T00:00:00.000Z" })
      .where(eq(schema.projects.id, stalled.id));
    const sentBatch = vi.spyOn(env.BACKGROUND_JOBS, "sendBatch").mockResolvedValue(NOT_SENT);
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
    expect(sentBatch.mock.calls.flatMap(([messages]) => [...messages].map((message) => message.body))).toContainEqual({
      kind: "delete_project",
      projectId: stalled.id,
    });
  });
});

/** Every page of a list, to its end: the rows it really returns. */
async function pagedToEnd(path: string, key: string) {
  const rows: unknown[] = [];
  let count: number | undefined;
  for (let offset = 0; ; offset += 1) {
    const page = await api("GET", `${path}?limit=1&offset=${offset}`, { key });
    expect(page.status).toBe(200);
    count ??= page.body.count as number;
    const results = page.body.results as unknown[];
    rows.push(...results);
    if (results.length === 0 || !page.body.next) break;
  }
  return { count, rows };
}

describe("a rule written while its project is being deleted", () => {
  // A member's rule, and the project's default rule (its privacy): each refused (404), as the project
  // is gone, so no rule lands on the marked project and members' counts stay what their lists hold.
  for (const [what, rule] of [
    ["a member's rule", (member: { membership: { id: string } }) => ({ organization_member: member.membership.id })],
    ["the project's privacy", () => ({})],
  ] as const) {
    it(`is refused for ${what}: the members' project counts stay exact`, async () => {
      const { organization, key } = await setupOrganization();
      const doomed = await createProject(organization.id, { name: "Doomed" });
      const member = await addMember(organization.id, MembershipLevel.member);
      // The owner's PUT has read; the project is deleted before it writes.
      const ran = beforeWrites([
        [/insert into "access_controls"/i, () => api("DELETE", `/api/projects/${doomed.id}`, { key })],
      ]);
      const put = await api("PUT", `/api/projects/${doomed.id}/access_controls`, {
        key,
        body: { ...rule(member), access_level: "none" },
      });
      vi.restoreAllMocks();
      expect((ran[0] as { status: number }).status).toBe(204);
      expect(put.status).toBe(404);
      for (const path of [`/api/organizations/${organization.id}/projects`, "/api/projects"]) {
        const listed = await pagedToEnd(path, member.key);
        expect(listed.count, path).toBe(listed.rows.length);
      }
    });
  }
});
