import { describe, expect, it } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { createDashboard, dashboardsPath } from "../environments/dashboard-fixtures";
import { addMember, api, setupOrganization, streamedBody } from "../support/harness";

/**
 * Writes whose checks read what their body names (a user, a member, another dashboard, a tile)
 * send those reads with the caller's organization or project: two round trips. A body that
 * cannot be read ahead is read after validation instead: one round trip more, the same answer.
 */
describe("writes that read what their body names", () => {
  async function setup() {
    const team = await setupOrganization();
    const member = await addMember(team.organization.id, MembershipLevel.member);
    const restricted = await createDashboard(team.key, team.project.id, { name: "Restricted", restriction_level: 37 });
    const source = await createDashboard(team.key, team.project.id, { name: "Source", use_template: "DEFAULT_APP" });
    const destination = await createDashboard(team.key, team.project.id, { name: "Destination" });
    return { ...team, member, restricted, source, destination };
  }

  type Setup = Awaited<ReturnType<typeof setup>>;
  const writes: [string, (s: Setup) => [string, string, unknown], number][] = [
    [
      "invite",
      (s) => ["POST", `/api/organizations/${s.organization.id}/invites`, { target_email: "new@example.com" }],
      201,
    ],
    [
      "bulk invite",
      (s) => ["POST", `/api/organizations/${s.organization.id}/invites/bulk`, [{ target_email: "bulk@example.com" }]],
      201,
    ],
    [
      "collaborator",
      (s) => [
        "POST",
        `${dashboardsPath(s.project.id)}/${s.restricted.id}/collaborators`,
        { user_uuid: s.member.user.uuid, level: 37 },
      ],
      201,
    ],
    [
      "access rule",
      (s) => [
        "PUT",
        `${dashboardsPath(s.project.id)}/${s.restricted.id}/access_controls`,
        { access_level: "viewer", organization_member: s.member.membership.id },
      ],
      200,
    ],
    ["copy", (s) => ["POST", dashboardsPath(s.project.id), { name: "Copy", use_dashboard: s.source.id }], 201],
    [
      "tile move",
      (s) => [
        "PATCH",
        `${dashboardsPath(s.project.id)}/${s.source.id}/move_tile`,
        { tile: { id: s.source.tiles[0]!.id }, toDashboard: s.destination.id },
      ],
      200,
    ],
  ];

  it.each(writes)(
    "%s: two round trips, or three with a streamed body, and the same answer",
    async (_name, request, status) => {
      const ahead = await setup();
      const [method, path, body] = request(ahead);
      const read = await api(method, path, { key: ahead.key, body });

      const after = await setup();
      const [streamedMethod, streamedPath, sentBody] = request(after);
      const readAfter = await api(streamedMethod, streamedPath, { key: after.key, body: streamedBody(sentBody) });

      expect([read.status, readAfter.status]).toEqual([status, status]);
      expect([read.cost.queries, readAfter.cost.queries]).toEqual([2, 3]);
      expect(Object.keys(readAfter.body)).toEqual(Object.keys(read.body));
    },
  );

  it("refuses a caller outside the organization with 404 whatever the body names", async () => {
    const { organization, project, restricted, member } = await setup();
    const outsider = await setupOrganization();
    const invite = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key: outsider.key,
      body: { target_email: "x@example.com" },
    });
    const collaborator = await api("POST", `${dashboardsPath(project.id)}/${restricted.id}/collaborators`, {
      key: outsider.key,
      body: { user_uuid: member.user.uuid, level: 37 },
    });
    expect([invite.status, collaborator.status]).toEqual([404, 404]);
  });
});
