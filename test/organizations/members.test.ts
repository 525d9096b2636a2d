import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import * as schema from "../../src/db/schema";
import { MembershipLevel } from "../../src/platform/levels";
import {
  addMember,
  addMembership,
  api,
  createApiKey,
  createProject,
  createUser,
  db,
  errorBody,
  grantProjectAccess,
  memberBody,
  ISO_TIMESTAMP,
  setupOrganization,
  nextLink,
} from "../support/harness";
import { daysAgo, expectKeyAndMembershipRequired, restoreTestDoubles } from "../support/people";

afterEach(restoreTestDoubles);

const membersPath = (organizationId: string) => `/api/organizations/${organizationId}/members`;
const memberPath = (organizationId: string, userUuid: string) => `${membersPath(organizationId)}/${userUuid}`;
const forbidden = (detail: string) => errorBody("authentication_error", "permission_denied", detail);
const notFound = errorBody("invalid_request", "not_found", "Not found.");

const expectedMember = memberBody;

async function memberLevels(organizationId: string, key: string) {
  const response = await api("GET", `${membersPath(organizationId)}?limit=1000`, { key });
  expect(response.status).toBe(200);
  return Object.fromEntries(
    response.body.results.map((member: { user: { uuid: string }; level: number }) => [member.user.uuid, member.level]),
  );
}

/** An organization with an owner, an admin and a member, each with a `*` key. */
async function setupTeam() {
  const team = await setupOrganization();
  const admin = await addMember(team.organization.id, MembershipLevel.admin);
  const member = await addMember(team.organization.id, MembershipLevel.member);
  return { ...team, admin, member };
}

describe("GET /api/organizations/:organization_id/members", () => {
  it("lists members latest joined first, with their users embedded, paginated", async () => {
    const { organization, owner, key } = await setupOrganization();
    const [ownerMembership] = await db
      .update(schema.organizationMemberships)
      .set({ joinedAt: daysAgo(3) })
      .where(eq(schema.organizationMemberships.userId, owner.id))
      .returning();
    const lastLogin = daysAgo(0);
    const admin = await createUser({
      lastLogin,
      hedgehogConfig: { color: "green" },
      roleAtOrganization: "engineering",
    });
    const adminMembership = await addMembership(organization.id, admin, MembershipLevel.admin);
    await addMember((await setupOrganization()).organization.id, MembershipLevel.member);

    const firstPage = await api("GET", `${membersPath(organization.id)}?limit=1`, { key });

    expect(firstPage.status).toBe(200);
    expect(firstPage.body).toEqual({
      count: 2,
      next: nextLink(membersPath(organization.id), 1, 1, [adminMembership.joinedAt, adminMembership.id]),
      previous: null,
      results: [
        {
          id: adminMembership.id,
          user: {
            id: admin.id,
            uuid: admin.uuid,
            distinct_id: admin.distinctId,
            first_name: admin.firstName,
            last_name: "Tester",
            email: admin.email,
            is_email_verified: false,
            hedgehog_config: { color: "green" },
            role_at_organization: "engineering",
          },
          level: 8,
          joined_at: expect.stringMatching(ISO_TIMESTAMP),
          updated_at: adminMembership.updatedAt,
          is_2fa_enabled: false,
          has_social_auth: false,
          last_login: lastLogin,
        },
      ],
    });
    const secondPage = await api("GET", `${membersPath(organization.id)}?limit=1&offset=1`, { key });
    expect(secondPage.body.results).toEqual([expectedMember(ownerMembership!, owner)]);
  });

  it("filters by ?email=, ignoring case", async () => {
    const { organization, key, admin } = await setupTeam();

    const found = await api("GET", `${membersPath(organization.id)}?email=${admin.user.email.toUpperCase()}`, { key });
    const none = await api("GET", `${membersPath(organization.id)}?email=nobody@example.com`, { key });

    expect(found.body).toEqual({
      count: 1,
      next: null,
      previous: null,
      results: [expectedMember(admin.membership, admin.user)],
    });
    expect(none.body).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it("searches first name, last name and e-mail by ?search=, case ignored, as PostHog's MCP server asks", async () => {
    const { organization, key, owner: seeded } = await setupOrganization();
    // The seeded owner's name and e-mail hold the clock in base 36, which may hold "za": renamed
    // after the organization's id (hex), the searches below match only the members made for them.
    const [owner] = await db
      .update(schema.users)
      .set({ firstName: `Owner${organization.id.slice(0, 8)}`, email: `owner-${organization.id}@example.com` })
      .where(eq(schema.users.id, seeded.id))
      .returning();
    const path = membersPath(organization.id);
    const names = [
      { firstName: "Zoë", lastName: "Zanzibar", email: `zoe-${organization.id}@example.com` },
      { firstName: "Zack", lastName: "Smith", email: `zack-${organization.id}@example.com` },
      { firstName: "Amy", lastName: "Pond", email: `amy-${organization.id}@zanzi.example.com` },
    ];
    const added = [];
    for (const fields of names) {
      const user = await createUser(fields);
      added.push({ user, membership: await addMembership(organization.id, user, MembershipLevel.member) });
    }
    const [zoe, zack, amy] = added;
    // The same name in another organization is not this one's member.
    const other = await setupOrganization();
    await addMembership(other.organization.id, await createUser({ lastName: "Zanzibar" }), MembershipLevel.member);

    const byLastName = await api("GET", `${path}/?search=zanzibar`, { key });
    expect(byLastName.status).toBe(200);
    expect(byLastName.body).toEqual({
      count: 1,
      next: null,
      previous: null,
      results: [expectedMember(zoe!.membership, zoe!.user)],
    });
    const byPart = await api("GET", `${path}?search=ZA&limit=1`, { key });
    expect(byPart.body.count).toBe(3);
    expect(byPart.body.results).toEqual([expectedMember(amy!.membership, amy!.user)]);
    // The next page keeps the search.
    const next = new URL(byPart.body.next);
    expect(next.searchParams.get("search")).toBe("ZA");
    const second = await api("GET", `${next.pathname}${next.search}`, { key });
    expect(second.body.results).toEqual([expectedMember(zack!.membership, zack!.user)]);
    const byFirstName = await api("GET", `${path}?search=${encodeURIComponent(owner!.firstName)}`, { key });
    expect(byFirstName.body.results.map((item: { user: { uuid: string } }) => item.user.uuid)).toEqual([owner!.uuid]);
    // Case ignored beyond ASCII too: "ZOË" finds Zoë, "élo" finds Élodie.
    const byAccented = await api("GET", `${path}?search=${encodeURIComponent("ZOË")}`, { key });
    expect(byAccented.body.results).toEqual([expectedMember(zoe!.membership, zoe!.user)]);
    const elodie = await createUser({ firstName: "Élodie", lastName: "Ärzte" });
    const elodieMembership = await addMembership(organization.id, elodie, MembershipLevel.member);
    for (const search of ["élo", "ÉLO", "ärz", "ÄRZTE"]) {
      const found = await api("GET", `${path}?search=${encodeURIComponent(search)}`, { key });
      expect(found.body.results, search).toEqual([expectedMember(elodieMembership, elodie)]);
    }
    // Accented letters mixing cases are matched as the name writes them, the ASCII ones in any case.
    const mixed = await createUser({ firstName: "Élisée", lastName: "Ødegård" });
    const mixedMembership = await addMembership(organization.id, mixed, MembershipLevel.member);
    for (const search of ["Élisée", "ÉLISéE", "Ødegård", "ØDEGåRD"]) {
      const found = await api("GET", `${path}?search=${encodeURIComponent(search)}`, { key });
      expect(found.body.results, search).toEqual([expectedMember(mixedMembership, mixed)]);
    }
    const none = await api("GET", `${path}?search=nobody-at-all`, { key });
    expect(none.body).toEqual({ count: 0, next: null, previous: null, results: [] });
    // Over 200 characters: the first 200 are searched.
    const long = await api("GET", `${path}?search=${"zanzibar".padEnd(300, "x")}`, { key });
    expect(long.body.count).toBe(0);
  });

  it("keeps ?search= current as users rename themselves, leave and come back, and through @current", async () => {
    const { organization, key } = await setupOrganization();
    const other = await setupOrganization();
    const tag = organization.id.replace(/-/g, "");
    const user = await createUser({ firstName: "Quentin", lastName: `Old${tag}` });
    const userKey = (await createApiKey(user)).value;
    const membership = await addMembership(organization.id, user, MembershipLevel.member);
    await addMembership(other.organization.id, user, MembershipLevel.member);
    const search = async (text: string, path = membersPath(organization.id)) =>
      (await api("GET", `${path}?search=${encodeURIComponent(text)}`, { key })).body;
    expect((await search(`old${tag}`)).results).toEqual([expectedMember(membership, user)]);

    const renamed = await api("PATCH", "/api/users/@me/", { key: userKey, body: { last_name: `New${tag}` } });
    expect(renamed.status).toBe(200);
    const [current] = await db.select().from(schema.users).where(eq(schema.users.id, user.id));
    expect(await search(`Old${tag}`)).toEqual({ count: 0, next: null, previous: null, results: [] });
    expect(await search(`NEW${tag}`)).toEqual({
      count: 1,
      next: null,
      previous: null,
      results: [expectedMember(membership, current!)],
    });
    // The other organization's row was renamed too; its owner finds them there, not here.
    const there = await api("GET", `${membersPath(other.organization.id)}?search=new${tag}`, { key: other.key });
    expect(there.body.count).toBe(1);
    // `@current` (the owner's one organization) searches that organization's members.
    expect((await search(`new${tag}`, "/api/organizations/@current/members")).count).toBe(1);

    const removed = await api("DELETE", memberPath(organization.id, user.uuid), { key });
    expect(removed.status).toBe(204);
    expect((await search(`new${tag}`)).count).toBe(0);
    const back = await addMembership(organization.id, current!, MembershipLevel.member);
    expect(await search(`new${tag}`)).toEqual({
      count: 1,
      next: null,
      previous: null,
      results: [expectedMember(back, current!)],
    });
  });

  it("refuses a NUL character in ?search= with a 400, as the dashboards' search does", async () => {
    const { organization, key } = await setupOrganization();
    // FTS5 reads a NUL as the end of its query.
    for (const search of ["ab%00c", "abc%00", "%00%00%00"]) {
      const response = await api("GET", `${membersPath(organization.id)}?search=${search}`, { key });
      expect([response.status, response.body], search).toEqual([
        400,
        errorBody("validation_error", "invalid_input", "Null characters are not allowed.", "search"),
      ]);
    }
  });

  it("answers 404 for an organization id holding a quote or a NUL, searched or not", async () => {
    const { key } = await setupOrganization();
    // The search index's query names the organization in quotes; it runs in the batch that refuses.
    for (const id of ['x"', "@current%22", "abc%00", 'x" OR email : "com']) {
      const path = `${membersPath(id.includes("%") ? id : encodeURIComponent(id))}?search=abc`;
      const response = await api("GET", path, { key });
      expect([response.status, response.body], id).toEqual([404, notFound]);
      const short = await api("GET", path.replace("search=abc", "search=ab"), { key });
      expect([short.status, short.body], `${id} (short search)`).toEqual([404, notFound]);
    }
  });

  it("answers 404 for @current, searched or not, when the caller has no organization in reach", async () => {
    const lone = await createUser();
    const loneKey = (await createApiKey(lone)).value;
    for (const query of ["", "?search=ab", "?search=abc"]) {
      const response = await api("GET", `/api/organizations/@current/members${query}`, { key: loneKey });
      expect([response.status, response.body], `no organization ${query}`).toEqual([404, notFound]);
    }
    // A key scoped to an organization its user has left (they are a member elsewhere).
    const left = await setupOrganization();
    const elsewhere = await setupOrganization();
    const user = await createUser();
    await addMembership(left.organization.id, user, MembershipLevel.member);
    await addMembership(elsewhere.organization.id, user, MembershipLevel.member);
    const scoped = (await createApiKey(user, { scopedOrganizations: [left.organization.id] })).value;
    const whole = (await createApiKey(user)).value;
    expect((await api("DELETE", `${memberPath(left.organization.id, "@me")}`, { key: whole })).status).toBe(204);
    for (const query of ["", "?search=ab", "?search=abc"]) {
      const response = await api("GET", `/api/organizations/@current/members${query}`, { key: scoped });
      expect([response.status, response.body], `scoped key ${query}`).toEqual([404, notFound]);
    }
  });

  it("lists earliest joined first with ?order=joined_at, and latest first otherwise", async () => {
    const { organization, key, owner } = await setupOrganization();
    const member = await addMember(organization.id, MembershipLevel.member);
    await db
      .update(schema.organizationMemberships)
      .set({ joinedAt: daysAgo(3) })
      .where(eq(schema.organizationMemberships.userId, owner.id));
    const uuidsOf = async (query: string) =>
      (await api("GET", `${membersPath(organization.id)}${query}`, { key })).body.results.map(
        (item: { user: { uuid: string } }) => item.user.uuid,
      );
    expect(await uuidsOf("?order=joined_at")).toEqual([owner.uuid, member.user.uuid]);
    expect(await uuidsOf("?order=-joined_at")).toEqual([member.user.uuid, owner.uuid]);
    expect(await uuidsOf("?order=level")).toEqual([member.user.uuid, owner.uuid]);
    const first = await api("GET", `${membersPath(organization.id)}?order=joined_at&limit=1`, { key });
    const next = new URL(first.body.next);
    const second = await api("GET", `${next.pathname}${next.search}`, { key });
    expect(second.body.results.map((item: { user: { uuid: string } }) => item.user.uuid)).toEqual([member.user.uuid]);
  });

  it("costs the same D1 queries for 1 member and for 50: users are joined, not fetched one by one", async () => {
    const { organization, key } = await setupOrganization();
    // The first request reads the key from D1 and caches it in KV.
    await api("GET", membersPath(organization.id), { key });
    const one = await api("GET", membersPath(organization.id), { key });
    for (let index = 0; index < 49; index += 1) {
      await addMembership(organization.id, await createUser(), MembershipLevel.member);
    }

    const fifty = await api("GET", membersPath(organization.id), { key });

    expect(one.body.count).toBe(1);
    expect(fifty.body.count).toBe(50);
    expect(fifty.body.results).toHaveLength(50);
    expect(fifty.body.results.at(-1)).toEqual(one.body.results[0]);
    // The caller's membership, the count and the page: one batch.
    expect(one.cost.queries).toBe(1);
    expect(fifty.cost.queries).toBe(one.cost.queries);
  });

  it("is readable with organization_member:read and not with another resource's scope", async () => {
    const { organization, owner } = await setupOrganization();
    const readKey = await createApiKey(owner, { scopes: ["organization_member:read"] });
    const projectKey = await createApiKey(owner, { scopes: ["project:read"] });

    const allowed = await api("GET", membersPath(organization.id), { key: readKey.value });
    const denied = await api("GET", membersPath(organization.id), { key: projectKey.value });

    expect(allowed.status).toBe(200);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual(forbidden("API key missing required scope 'organization_member:read'"));
  });

  it("answers 401 without a key or with a bad one, and 404 to non-members", async () => {
    const { organization } = await setupOrganization();

    await expectKeyAndMembershipRequired("GET", membersPath(organization.id));
  });
});

describe("PATCH /api/organizations/:organization_id/members/:user__uuid", () => {
  it("lets an admin change a member's level and answers the whole member", async () => {
    const { organization, admin, member } = await setupTeam();
    const lastUpdate = daysAgo(1);
    await db
      .update(schema.organizationMemberships)
      .set({ updatedAt: lastUpdate })
      .where(eq(schema.organizationMemberships.id, member.membership.id));

    const response = await api("PATCH", memberPath(organization.id, member.user.uuid), {
      key: admin.key,
      body: { level: 8 },
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ...expectedMember(member.membership, member.user),
      level: 8,
      updated_at: expect.stringMatching(ISO_TIMESTAMP),
    });
    expect(response.body.updated_at > lastUpdate).toBe(true);
    expect((await memberLevels(organization.id, admin.key))[member.user.uuid]).toBe(8);
  });

  it("lets an owner make another member owner, and then demote an owner", async () => {
    const { organization, key, admin } = await setupTeam();

    const promoted = await api("PATCH", memberPath(organization.id, admin.user.uuid), { key, body: { level: 15 } });
    const demoted = await api("PATCH", memberPath(organization.id, admin.user.uuid), { key, body: { level: 1 } });

    expect(promoted.status).toBe(200);
    expect(promoted.body.level).toBe(15);
    expect(demoted.status).toBe(200);
    expect(demoted.body.level).toBe(1);
  });

  it("refuses changing one's own level, with @me too", async () => {
    const { organization, key, admin } = await setupTeam();
    await api("PATCH", memberPath(organization.id, admin.user.uuid), { key, body: { level: 15 } });

    for (const [callerKey, target] of [
      [admin.key, "@me"],
      [key, "@me"],
      [admin.key, admin.user.uuid],
    ] as const) {
      const response = await api("PATCH", memberPath(organization.id, target), { key: callerKey, body: { level: 8 } });
      expect(response.status).toBe(403);
      expect(response.body).toEqual(forbidden("You can't change your own access level."));
    }
    const levels = await memberLevels(organization.id, key);
    expect(levels[admin.user.uuid]).toBe(15);
  });

  it("refuses the last owner demoting themself with the own-level 403, before the last-owner rule", async () => {
    const { organization, owner, key } = await setupTeam();

    const response = await api("PATCH", memberPath(organization.id, "@me"), { key, body: { level: 8 } });

    expect(response.status).toBe(403);
    expect(response.body).toEqual(forbidden("You can't change your own access level."));
    expect((await memberLevels(organization.id, key))[owner.uuid]).toBe(15);
  });

  it("refuses a member editing others", async () => {
    const { organization, key, admin, member } = await setupTeam();
    const other = await addMember(organization.id, MembershipLevel.member);

    const response = await api("PATCH", memberPath(organization.id, other.user.uuid), {
      key: member.key,
      body: { level: 1 },
    });

    expect(response.status).toBe(403);
    expect(response.body).toEqual(forbidden("You can only edit others if you are an admin."));
    expect((await memberLevels(organization.id, key))[admin.user.uuid]).toBe(8);
  });

  it("refuses an admin editing an owner, or making anyone owner", async () => {
    const { organization, owner, key, admin, member } = await setupTeam();

    const editOwner = await api("PATCH", memberPath(organization.id, owner.uuid), {
      key: admin.key,
      body: { level: 8 },
    });
    const grantOwner = await api("PATCH", memberPath(organization.id, member.user.uuid), {
      key: admin.key,
      body: { level: 15 },
    });

    expect(editOwner.status).toBe(403);
    expect(editOwner.body).toEqual(forbidden("You can only edit others with level lower or equal to you."));
    expect(grantOwner.status).toBe(403);
    expect(grantOwner.body).toEqual(
      forbidden("You can only make another member owner if you're this organization's owner."),
    );
    const levels = await memberLevels(organization.id, key);
    expect([levels[owner.uuid], levels[member.user.uuid]]).toEqual([15, 1]);
  });

  it("without a level, answers the member unchanged to whoever may edit them", async () => {
    const { organization, admin, member } = await setupTeam();

    const own = await api("PATCH", memberPath(organization.id, "@me"), { key: member.key, body: {} });
    const other = await api("PATCH", memberPath(organization.id, member.user.uuid), { key: admin.key, body: {} });
    const notAllowed = await api("PATCH", memberPath(organization.id, admin.user.uuid), { key: member.key, body: {} });

    expect(own.status).toBe(200);
    expect(own.body).toEqual(expectedMember(member.membership, member.user));
    expect(other.body).toEqual(expectedMember(member.membership, member.user));
    expect(notAllowed.status).toBe(403);
  });

  it.each([
    [{ level: 5 }, "invalid_choice", '"5" is not a valid choice.'],
    [{ level: "admin" }, "invalid_choice", '"admin" is not a valid choice.'],
  ])("refuses %j with 400", async (body, code, detail) => {
    const { organization, key, member } = await setupTeam();

    const response = await api("PATCH", memberPath(organization.id, member.user.uuid), { key, body });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(errorBody("validation_error", code, detail, "level"));
  });

  it("answers 404 for an unknown user, another organization's, and to non-members; 401 without good key", async () => {
    const { organization, key } = await setupTeam();
    const other = await setupOrganization();

    const unknown = await api("PATCH", memberPath(organization.id, crypto.randomUUID()), { key, body: { level: 1 } });
    const foreign = await api("PATCH", memberPath(organization.id, other.owner.uuid), { key, body: { level: 1 } });
    const outsider = await api("PATCH", memberPath(organization.id, "@me"), { key: other.key, body: { level: 1 } });

    for (const response of [unknown, foreign, outsider]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual(notFound);
    }
    expect((await memberLevels(other.organization.id, other.key))[other.owner.uuid]).toBe(15);
    await expectKeyAndMembershipRequired("PATCH", memberPath(organization.id, other.owner.uuid), { level: 1 });
  });

  it("needs organization_member:write", async () => {
    const { organization, owner, member } = await setupTeam();
    const readOnly = await createApiKey(owner, { scopes: ["organization_member:read"] });

    const response = await api("PATCH", memberPath(organization.id, member.user.uuid), {
      key: readOnly.value,
      body: { level: 8 },
    });

    expect(response.status).toBe(403);
    expect(response.body).toEqual(forbidden("API key missing required scope 'organization_member:write'"));
  });
});

describe("DELETE /api/organizations/:organization_id/members/:user__uuid", () => {
  it("lets an admin remove a member, who then sees the organization as unknown", async () => {
    const { organization, key, admin, member } = await setupTeam();

    const response = await api("DELETE", memberPath(organization.id, member.user.uuid), { key: admin.key });

    expect(response.status).toBe(204);
    expect(response.text).toBe("");
    expect(Object.keys(await memberLevels(organization.id, key))).not.toContain(member.user.uuid);
    // Membership is read per request: the removed member's still-valid key no longer reaches it.
    const afterwards = await api("GET", membersPath(organization.id), { key: member.key });
    expect(afterwards.status).toBe(404);
  });

  it("takes the removed member's private project access with them", async () => {
    const { organization, admin, member } = await setupTeam();
    const secret = await createProject(organization.id, { access_control: true });
    await grantProjectAccess(secret.id, member.membership.id);
    const projectPath = `/api/organizations/${organization.id}/projects/${secret.id}`;
    expect((await api("GET", projectPath, { key: member.key })).status).toBe(200);

    await api("DELETE", memberPath(organization.id, member.user.uuid), { key: admin.key });
    // Back as a plain member: the old grant must not come back with them.
    await addMembership(organization.id, member.user, MembershipLevel.member);

    expect((await api("GET", projectPath, { key: member.key })).status).toBe(404);
  });

  it("lets anyone leave with @me", async () => {
    const { organization, key, member, admin } = await setupTeam();

    const memberLeaves = await api("DELETE", memberPath(organization.id, "@me"), { key: member.key });
    const adminLeaves = await api("DELETE", memberPath(organization.id, admin.user.uuid), { key: admin.key });

    expect(memberLeaves.status).toBe(204);
    expect(adminLeaves.status).toBe(204);
    expect(Object.keys(await memberLevels(organization.id, key))).toHaveLength(1);
  });

  it("refuses the last owner leaving with 400, and lets an owner leave when another remains", async () => {
    const { organization, owner, key, admin, member } = await setupTeam();

    const lastOwner = await api("DELETE", memberPath(organization.id, "@me"), { key });
    expect(lastOwner.status).toBe(400);
    expect(lastOwner.body).toEqual(
      errorBody(
        "validation_error",
        "invalid_input",
        "Cannot leave the organization as its only owner. Make another member owner first.",
      ),
    );
    expect((await memberLevels(organization.id, key))[owner.uuid]).toBe(15);

    await api("PATCH", memberPath(organization.id, admin.user.uuid), { key, body: { level: 15 } });
    const oneOfTwo = await api("DELETE", memberPath(organization.id, "@me"), { key });

    expect(oneOfTwo.status).toBe(204);
    expect(await memberLevels(organization.id, admin.key)).toEqual({ [admin.user.uuid]: 15, [member.user.uuid]: 1 });
  });

  it("refuses a member removing others, and an admin removing an owner", async () => {
    const { organization, owner, key, admin, member } = await setupTeam();

    const byMember = await api("DELETE", memberPath(organization.id, admin.user.uuid), { key: member.key });
    const ofOwner = await api("DELETE", memberPath(organization.id, owner.uuid), { key: admin.key });

    expect(byMember.status).toBe(403);
    expect(byMember.body).toEqual(forbidden("You can only edit others if you are an admin."));
    expect(ofOwner.status).toBe(403);
    expect(ofOwner.body).toEqual(forbidden("You can only edit others with level lower or equal to you."));
    expect(Object.keys(await memberLevels(organization.id, key))).toHaveLength(3);
  });

  it("answers 404 for an unknown user, another organization's, and to non-members; 401 without good key", async () => {
    const { organization, key } = await setupTeam();
    const other = await setupOrganization();

    const unknown = await api("DELETE", memberPath(organization.id, crypto.randomUUID()), { key });
    const foreign = await api("DELETE", memberPath(organization.id, other.owner.uuid), { key });
    const outsider = await api("DELETE", memberPath(organization.id, "@me"), { key: other.key });

    for (const response of [unknown, foreign, outsider]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual(notFound);
    }
    expect(Object.keys(await memberLevels(other.organization.id, other.key))).toEqual([other.owner.uuid]);
    await expectKeyAndMembershipRequired("DELETE", memberPath(organization.id, other.owner.uuid));
  });

  it("answers 405 with Allow to a method members do not take", async () => {
    const { organization, key, member } = await setupTeam();

    const response = await api("POST", memberPath(organization.id, member.user.uuid), { key, body: { level: 8 } });

    expect(response.status).toBe(405);
    expect(response.headers.get("Allow")).toBe("DELETE, PATCH, PUT");
  });
});
