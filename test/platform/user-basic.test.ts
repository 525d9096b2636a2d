import { describe, expect, it, vi } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { countBytesRead } from "../support/d1-limits";
import { addMember, api, setupOrganization } from "../support/harness";
import { createDashboard, dashboardsPath } from "../environments/dashboard-fixtures";
import { RECEIVER } from "../support/webhooks";

/**
 * A user's own row, filled within every limit with what no embedding answers (notification
 * settings and three preferences of 64 KiB each: about 260 KB).
 */
async function inflateOwnRow(key: string) {
  const big = (letter: string) => ({ [letter]: letter.repeat(65_000) });
  const response = await api("PATCH", "/api/users/@me", {
    key,
    body: {
      notification_settings: big("n"),
      events_column_config: big("e"),
      has_seen_product_intro_for: big("h"),
      ui_configuration: big("u"),
    },
  });
  expect(response.status).toBe(200);
}

describe("a person embedded in what others read (UserBasic)", () => {
  it("is read as its UserBasic columns, never as the whole row its owner may fill", async () => {
    const { organization, project, key } = await setupOrganization();
    const admin = await addMember(organization.id, MembershipLevel.admin);
    await inflateOwnRow(admin.key);
    // The admin's marks on every list that embeds a person.
    const dashboard = await createDashboard(admin.key, project.id, { name: "Theirs", restriction_level: 37 });
    const path = `${dashboardsPath(project.id)}/${dashboard.id}`;
    const notes = Array.from({ length: 10 }, (_, index) => ({ text: { body: `Note ${index}` } }));
    expect((await api("PATCH", path, { key: admin.key, body: { tiles: notes } })).status).toBe(200);
    const sharing = await api("PATCH", `${path}/sharing`, { key: admin.key, body: { enabled: true } });
    expect(sharing.status).toBe(200);
    const invited = await api("POST", `/api/organizations/${organization.id}/invites`, {
      key: admin.key,
      body: { target_email: "new@example.com", send_email: false },
    });
    expect(invited.status).toBe(201);
    const webhook = await api("POST", `/api/organizations/${organization.id}/webhooks`, {
      key: admin.key,
      body: { url: RECEIVER, events: ["*"] },
    });
    expect(webhook.status).toBe(201);
    const role = await api("POST", `/api/organizations/${organization.id}/roles`, { key, body: { name: "Readers" } });
    const roleMembers = `/api/organizations/${organization.id}/roles/${role.body.id}/role_memberships`;
    expect((await api("POST", roleMembers, { key, body: { user_uuid: admin.user.uuid } })).status).toBe(201);
    // A collaborator is a member below admin (an admin edits every dashboard anyway).
    const member = await addMember(organization.id, MembershipLevel.member);
    await inflateOwnRow(member.key);
    const owners = await createDashboard(key, project.id, { name: "Owner's", restriction_level: 37 });
    const collaborators = `${dashboardsPath(project.id)}/${owners.id}/collaborators`;
    const added = await api("POST", collaborators, { key, body: { user_uuid: member.user.uuid, level: 37 } });
    expect(added.status).toBe(201);

    const reads: [string, string | undefined][] = [
      [`/api/organizations/${organization.id}/activity_log?limit=100`, key],
      [`/api/environments/${project.id}/activity_log?limit=100`, key],
      [`/api/organizations/${organization.id}/events?limit=100`, key],
      [dashboardsPath(project.id), key],
      [path, key],
      [`${path}/versions`, key],
      [`/api/organizations/${organization.id}/invites`, key],
      [`/api/organizations/${organization.id}/members`, key],
      [roleMembers, key],
      [`/api/organizations/${organization.id}/webhooks`, key],
      [collaborators, key],
      [`/shared/${sharing.body.access_token}`, undefined],
    ];
    const measured = [];
    for (const [read, caller] of reads) {
      const counted = countBytesRead();
      const response = await api("GET", read, { key: caller });
      vi.restoreAllMocks();
      expect([read, response.status]).toEqual([read, 200]);
      measured.push({ read, small: counted.bytes < 100_000 });
    }
    // One whole row of the admin's is 260 KB.
    expect(measured).toEqual(reads.map(([read]) => ({ read, small: true })));
  }, 60_000);
});
