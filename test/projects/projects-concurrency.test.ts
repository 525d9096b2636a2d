import { count, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { projects } from "../../src/db/schema";
import { chunkForInsert } from "../../src/platform/db";
import { nowIso } from "../../src/platform/ids";
import { api, db, errorBody, setupOrganization } from "../support/harness";

const projectsPath = (organizationId: string) => `/api/organizations/${organizationId}/projects`;

/** `total` projects in the organization, counting the one `setupOrganization` made. */
async function fillOrganization(organizationId: string, total: number) {
  const now = nowIso();
  const rows = Array.from({ length: total - 1 }, (_, index) => ({
    uuid: crypto.randomUUID(),
    organizationId,
    name: `p${index}`,
    nameKey: `p${index}`,
    apiToken: `phc_bulk_${organizationId}_${index}`,
    liveEventsToken: "t",
    settings: {},
    createdAt: now,
    updatedAt: now,
  }));
  const [first, ...rest] = chunkForInsert(projects, rows).map((chunk) => db.insert(projects).values(chunk));
  await db.batch([first!, ...rest]);
}

async function projectCount(organizationId: string) {
  const [row] = await db.select({ value: count() }).from(projects).where(eq(projects.organizationId, organizationId));
  return row!.value;
}

describe("parallel project creation", () => {
  it("never passes 2000 projects, however many creates race", async () => {
    const { organization, key } = await setupOrganization();
    await fillOrganization(organization.id, 1990);

    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        api("POST", projectsPath(organization.id), { key, body: { name: `Race ${index}` } }),
      ),
    );

    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 403)).toHaveLength(20);
    for (const refused of responses.filter((response) => response.status === 403)) {
      expect(refused.body).toEqual(
        errorBody(
          "authentication_error",
          "permission_denied",
          "You have reached the maximum limit of allowed projects for your current plan (2000).",
        ),
      );
    }
    expect(await projectCount(organization.id)).toBe(2000);
  });

  it("gives parallel unnamed creates distinct default names, all created", async () => {
    const { organization, key } = await setupOrganization();

    const responses = await Promise.all(
      Array.from({ length: 20 }, () => api("POST", projectsPath(organization.id), { key, body: {} })),
    );

    expect(responses.map((response) => response.status)).toEqual(Array(20).fill(201));
    const names = responses
      .map((response) => response.body.name)
      .sort((a: string, b: string) => a.localeCompare(b, "en", { numeric: true }));
    expect(names).toEqual(Array.from({ length: 20 }, (_, index) => `Default project ${index + 2}`));
  });

  it("fills the lowest free default number, and ignores names that only look like one", async () => {
    const { organization, key } = await setupOrganization();
    for (const name of ["Default project 3", "default project 2x", "Default project 02", "Default projects 2"]) {
      expect((await api("POST", projectsPath(organization.id), { key, body: { name } })).status).toBe(201);
    }
    const names = [];
    for (let index = 0; index < 3; index += 1) {
      names.push((await api("POST", projectsPath(organization.id), { key, body: {} })).body.name);
    }
    expect(names).toEqual(["Default project 2", "Default project 4", "Default project 5"]);
  });
});
