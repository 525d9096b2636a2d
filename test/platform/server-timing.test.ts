import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import * as schema from "../../src/db/schema";
import { nowIso, uuid7 } from "../../src/platform/ids";
import { MembershipLevel } from "../../src/platform/levels";
import { addMember, api, createProject, db, setupOrganization } from "../support/harness";

// Tests run as local development does, with the cost told (vitest.config.ts); a deployment does not.
const exposedAtStart = env.EXPOSE_D1_COST;
afterEach(() => {
  env.EXPOSE_D1_COST = exposedAtStart;
});

/** An owner's dashboards, some of which a member's own `none` rule hides, named like the search. */
async function hiddenMatches() {
  const { key, organization, project } = await setupOrganization();
  const member = await addMember(organization.id, MembershipLevel.member);
  const path = `/api/environments/${project.id}/dashboards`;
  await api("POST", path, { key, body: { name: "Weekly numbers" } });
  for (let index = 0; index < 5; index += 1) {
    const created = await api("POST", path, { key, body: { name: `Secret acquisition ${index}` } });
    const now = nowIso();
    await db.insert(schema.accessControls).values({
      id: uuid7(),
      environmentId: project.id,
      resource: "dashboard",
      resourceId: String(created.body.id),
      organizationMembershipId: member.membership.id,
      accessLevel: "none",
      createdAt: now,
      updatedAt: now,
    });
  }
  return { organization, member, path };
}

describe("Server-Timing in a deployment (EXPOSE_D1_COST unset)", () => {
  it("tells round trips alone: a member's search cannot spell out the names their rules hide", async () => {
    const { member, path } = await hiddenMatches();
    env.EXPOSE_D1_COST = "";
    for (const text of ["acquisition", "ac", "nothing-like-it"]) {
      const response = await api("GET", `${path}?search=${text}`, { key: member.key });
      expect(response.status).toBe(200);
      expect(response.body.count).toBe(0);
      expect(response.headers.get("Server-Timing")).toMatch(/^d1;desc="queries=\d+"$/);
    }
  });

  it("tells round trips alone on every answer, a write's and a list's of hidden projects too", async () => {
    const { organization, member } = await hiddenMatches();
    await createProject(organization.id, { name: "Private", access_control: true });
    env.EXPOSE_D1_COST = "false";
    const listed = await api("GET", `/api/organizations/${organization.id}/projects`, { key: member.key });
    expect(listed.status).toBe(200);
    expect(listed.headers.get("Server-Timing")).toMatch(/^d1;desc="queries=\d+"$/);
    const written = await api("PATCH", "/api/users/@me", { key: member.key, body: { first_name: "Ada" } });
    expect(written.status).toBe(200);
    expect(written.headers.get("Server-Timing")).toMatch(/^d1;desc="queries=\d+"$/);
  });

  it("tells rows and time where local development and tests turn it on", async () => {
    const { member, path } = await hiddenMatches();
    env.EXPOSE_D1_COST = "1";
    const response = await api("GET", path, { key: member.key });
    expect(response.headers.get("Server-Timing")).toMatch(
      /^d1;dur=\d+(\.\d+)?;desc="queries=\d+ rows_read=\d+ rows_written=0"$/,
    );
  });
});
