import { describe, expect, it } from "vitest";
import * as schema from "../../../src/db/schema";
import { MembershipLevel } from "../../../src/platform/levels";
import { activityEntry, keyIdOf, promotionEntry } from "../../support/activity-log";
import {
  expectError,
  INSUFFICIENT_LEVEL,
  missingScope,
  NOT_AUTHENTICATED,
  NOT_FOUND,
} from "../../support/error-bodies";
import { addMember, api, createApiKey, db, setupOrganization } from "../../support/harness";

type Organization = Awaited<ReturnType<typeof setupOrganization>>;

const organizationEntry = (organization: Organization, id: string) =>
  `/api/organizations/${organization.organization.id}/activity_log/${id}`;
const projectEntry = (tree: string, projectId: number, id: string) => `/api/${tree}/${projectId}/activity_log/${id}`;

/** A dashboard created through the API, and the id of the entry that records it. */
async function createDashboard(organization: Organization, name: string) {
  const response = await api("POST", `/api/environments/${organization.project.id}/dashboards`, {
    key: organization.key,
    body: { name },
  });
  expect(response.status).toBe(201);
  const log = await api(
    "GET",
    `/api/organizations/${organization.organization.id}/activity_log?scope=Dashboard&item_id=${response.body.id}`,
    {
      key: organization.key,
    },
  );
  return { response, entryId: log.body.results[0].id as string, dashboardId: response.body.id as number };
}

describe("an entry's own URL", () => {
  it("answers the entry as the organization's log shows it, to its admins", async () => {
    const organization = await setupOrganization();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const response = await api(
      "PATCH",
      `/api/organizations/${organization.organization.id}/members/${member.user.uuid}`,
      {
        key: organization.key,
        body: { level: MembershipLevel.admin },
      },
    );
    const [listed] = (
      await api("GET", `/api/organizations/${organization.organization.id}/activity_log`, { key: organization.key })
    ).body.results;

    const entry = await api("GET", organizationEntry(organization, listed.id), { key: organization.key });

    expect(entry.status).toBe(200);
    expect(entry.body).toEqual(await promotionEntry(response, organization, member));
    expect(entry.body).toEqual({ ...listed, hash: entry.body.hash });
    expect(entry.cost.queries).toBe(1);
  });

  it("answers a project's entry under both trees to whoever sees it in the project's log", async () => {
    const organization = await setupOrganization();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const { response, entryId, dashboardId } = await createDashboard(organization, "Roadmap");
    const expected = activityEntry(response, {
      organizationId: organization.organization.id,
      projectId: organization.project.id,
      user: organization.owner,
      apiKeyId: await keyIdOf(organization.owner),
      dashboardId,
      scope: "Dashboard",
      activity: "created",
      itemId: String(dashboardId),
      name: "Roadmap",
    });
    for (const tree of ["environments", "projects"]) {
      for (const key of [organization.key, member.key]) {
        const entry = await api("GET", projectEntry(tree, organization.project.id, entryId), { key });
        expect({ tree, status: entry.status }).toEqual({ tree, status: 200 });
        expect(entry.body).toEqual(expected);
      }
    }
  });

  it("is not found where lists would not show it: a hidden dashboard, another project or organization", async () => {
    const organization = await setupOrganization();
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const hidden = await createDashboard(organization, "Secret plans");
    const now = new Date().toISOString();
    await db.insert(schema.accessControls).values({
      id: crypto.randomUUID(),
      environmentId: organization.project.id,
      resource: "dashboard",
      resourceId: String(hidden.dashboardId),
      organizationMembershipId: member.membership.id,
      accessLevel: "none",
      createdAt: now,
      updatedAt: now,
    });
    expectError(
      await api("GET", projectEntry("environments", organization.project.id, hidden.entryId), { key: member.key }),
      404,
      NOT_FOUND,
    );
    expect(
      (
        await api("GET", projectEntry("environments", organization.project.id, hidden.entryId), {
          key: organization.key,
        })
      ).status,
    ).toBe(200);

    // An organization-level entry is in no project's log.
    await api("PATCH", `/api/organizations/${organization.organization.id}`, {
      key: organization.key,
      body: { name: "Renamed" },
    });
    const [renamed] = (
      await api("GET", `/api/organizations/${organization.organization.id}/activity_log?scope=Organization`, {
        key: organization.key,
      })
    ).body.results;
    expectError(
      await api("GET", projectEntry("projects", organization.project.id, renamed.id), { key: organization.key }),
      404,
      NOT_FOUND,
    );

    const outsider = await setupOrganization();
    const theirs = await createDashboard(outsider, "Theirs");
    expectError(
      await api("GET", organizationEntry(organization, theirs.entryId), { key: organization.key }),
      404,
      NOT_FOUND,
    );
    expectError(
      await api("GET", projectEntry("environments", organization.project.id, theirs.entryId), {
        key: organization.key,
      }),
      404,
      NOT_FOUND,
    );
    expectError(
      await api("GET", organizationEntry(outsider, theirs.entryId), { key: organization.key }),
      404,
      NOT_FOUND,
    );
    expectError(
      await api("GET", projectEntry("environments", outsider.project.id, theirs.entryId), { key: organization.key }),
      404,
      NOT_FOUND,
    );
    expectError(
      await api("GET", organizationEntry(organization, "not-an-id"), { key: organization.key }),
      404,
      NOT_FOUND,
    );
  });

  it("keeps the organization's entries to admins, with the activity_log:read scope", async () => {
    const organization = await setupOrganization();
    const { entryId } = await createDashboard(organization, "Roadmap");
    const member = await addMember(organization.organization.id, MembershipLevel.member);
    const noScope = await createApiKey(organization.owner, { scopes: ["dashboard:read"] });
    expectError(
      await api("GET", organizationEntry(organization, entryId), { key: member.key }),
      403,
      INSUFFICIENT_LEVEL,
    );
    expectError(
      await api("GET", organizationEntry(organization, entryId), { key: noScope.value }),
      403,
      missingScope("activity_log:read"),
    );
    expectError(
      await api("GET", projectEntry("environments", organization.project.id, entryId), { key: noScope.value }),
      403,
      missingScope("activity_log:read"),
    );
    expectError(await api("GET", organizationEntry(organization, entryId)), 401, NOT_AUTHENTICATED);
    // `verify` is not taken for an id.
    expect(
      (
        await api("GET", `/api/organizations/${organization.organization.id}/activity_log/verify`, {
          key: organization.key,
        })
      ).body.valid,
    ).toBe(true);
  });
});
