import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MembershipLevel } from "../../src/platform/levels";
import { addMember, addMembership, api, setupOrganization } from "../support/harness";

/*
 * Each list's `count` is a counter its triggers keep (migration list_counters). After writes of
 * every kind through HTTP (successes, refusals, writes racing each other, soft deletes and their
 * undoing, a cascade), every counter must equal count(*) of the rows it counts, in D1 itself.
 */

/** Each counter, and the count(*) it stands for, over every row it is kept on. */
const COUNTERS = [
  ["organizations", "invite_count", "select count(*) from invites where organization_id = organizations.id"],
  ["organizations", "domain_count", "select count(*) from domains where organization_id = organizations.id"],
  [
    "organizations",
    "project_count",
    // Projects being deleted are out of the list, and of its count, from their DELETE on.
    "select count(*) from projects where organization_id = organizations.id and deletion_scheduled_at is null",
  ],
  [
    "organizations",
    "member_count",
    "select count(*) from organization_memberships where organization_id = organizations.id",
  ],
  [
    "organizations",
    "batch_export_count",
    "select count(*) from batch_exports where organization_id = organizations.id and deleted = 0",
  ],
  [
    "environments",
    "batch_export_count",
    "select count(*) from batch_exports where environment_id = environments.id and deleted = 0",
  ],
  [
    "environments",
    "dashboard_count",
    "select count(*) from dashboards where environment_id = environments.id and deleted = 0",
  ],
  ["users", "organization_count", "select count(*) from organization_memberships where user_id = users.id"],
  [
    "organizations",
    "webhook_count",
    "select count(*) from webhooks where organization_id = organizations.id and deletion_scheduled_at is null",
  ],
  ["webhooks", "delivery_count", "select count(*) from webhook_deliveries where webhook_id = webhooks.id"],
  ["organizations", "role_count", "select count(*) from roles where organization_id = organizations.id"],
  ["roles", "member_count", "select count(*) from role_memberships where role_id = roles.id"],
] as const;

/** A delivery of the webhook, written directly: deliveries are made by the outbox, not by a route. */
async function insertDelivery(webhookId: string) {
  const now = new Date().toISOString();
  await env.DB.prepare(
    `insert into webhook_deliveries (id, webhook_id, entry_id, event, status, retry_until, created_at, updated_at)
     values (?, ?, ?, 'Organization.updated', 'succeeded', ?, ?, ?)`,
  )
    .bind(crypto.randomUUID(), webhookId, crypto.randomUUID(), now, now, now)
    .run();
}

/** Rows whose counter differs from its count, named; none when every counter holds. */
async function countersThatDrifted() {
  const drifted: string[] = [];
  for (const [table, column, counted] of COUNTERS) {
    const { results } = await env.DB.prepare(
      `select id, ${column} as counter, (${counted}) as counted from ${table} where ${column} <> (${counted})`,
    ).all<{ id: string | number; counter: number; counted: number }>();
    for (const row of results) drifted.push(`${table}.${column} of ${row.id}: ${row.counter}, counted ${row.counted}`);
  }
  return drifted;
}

/** How many rows a counter is kept on holds a non-zero count: the test must have exercised each. */
async function exercisedCounters() {
  const exercised: string[] = [];
  for (const [table, column] of COUNTERS) {
    const row = await env.DB.prepare(`select count(*) as rows from ${table} where ${column} > 0`).first<{
      rows: number;
    }>();
    if ((row?.rows ?? 0) > 0) exercised.push(`${table}.${column}`);
  }
  return exercised;
}

const S3_EXPORT = {
  interval: "hour",
  destination: { type: "S3", config: { bucket_name: "bucket", region: "us-east-1", prefix: "events/" } },
};

describe("list counters", () => {
  it("equal count(*) after successful, refused and concurrent writes of every kind", async () => {
    const team = await setupOrganization();
    const organization = `/api/organizations/${team.organization.id}`;
    const environment = `/api/environments/${team.project.id}`;
    const statuses: number[] = [];
    const send = async (method: string, path: string, body?: unknown, key = team.key) => {
      const response = await api(method, path, { key, body });
      statuses.push(response.status);
      return response;
    };

    // Invites: one, a bulk, a refused bulk (one bad e-mail: none created), deletes, one of them a 404.
    const invite = await send("POST", `${organization}/invites`, {
      target_email: "one@example.com",
      send_email: false,
    });
    await send("POST", `${organization}/invites/bulk`, [
      { target_email: "two@example.com", send_email: false },
      { target_email: "three@example.com", send_email: false },
    ]);
    await send("POST", `${organization}/invites/bulk`, [
      { target_email: "four@example.com", send_email: false },
      { target_email: "not an e-mail", send_email: false },
    ]);
    // Combining replaces the earlier invite of the same e-mail: delete and insert in one batch.
    await send("POST", `${organization}/invites`, {
      target_email: "two@example.com",
      send_email: false,
      combine_pending_invites: true,
    });
    await send("DELETE", `${organization}/invites/${invite.body.id}`);
    await send("DELETE", `${organization}/invites/${invite.body.id}`);

    // Domains: created, a duplicate refused, one deleted.
    const domain = await send("POST", `${organization}/domains`, { domain: `a-${team.organization.id}.example.com` });
    await send("POST", `${organization}/domains`, { domain: `a-${team.organization.id}.example.com` });
    await send("POST", `${organization}/domains`, { domain: `b-${team.organization.id}.example.com` });
    await send("DELETE", `${organization}/domains/${domain.body.id}`);

    // Projects: created, a taken name refused.
    await send("POST", `${organization}/projects`, { name: "Second" });
    await send("POST", `${organization}/projects`, { name: "second" });

    // Batch exports: created, paused (an update that leaves the count), soft-deleted, deleted again (404).
    const batchExport = await send("POST", `${environment}/batch_exports`, { ...S3_EXPORT, name: "First" });
    await send("POST", `${environment}/batch_exports`, { ...S3_EXPORT, name: "Second" });
    await send("POST", `${environment}/batch_exports`, { name: "No destination" });
    await send("POST", `${environment}/batch_exports/${batchExport.body.id}/pause`);
    await send("DELETE", `${environment}/batch_exports/${batchExport.body.id}`);
    await send("DELETE", `${environment}/batch_exports/${batchExport.body.id}`);

    // Dashboards: created, soft-deleted, restored, deleted again; a refused create.
    const dashboard = await send("POST", `${environment}/dashboards`, { name: "First" });
    await send("POST", `${environment}/dashboards`, { name: "Second" });
    await send("POST", `${environment}/dashboards`, { name: 42 });
    await send("PATCH", `${environment}/dashboards/${dashboard.body.id}`, { deleted: true });
    await send("PATCH", `${environment}/dashboards/${dashboard.body.id}`, { deleted: false });
    await send("PATCH", `${environment}/dashboards/${dashboard.body.id}`, { deleted: true });
    await send("PATCH", `${environment}/dashboards/${dashboard.body.id}`, { deleted: true });

    // Personal API keys: created, one refused, one revoked, revoked again (404).
    const key = await send("POST", "/api/personal_api_keys", { label: "Counted", scopes: ["*"] });
    await send("POST", "/api/personal_api_keys", { label: "No scopes", scopes: ["nonsense:read"] });
    await send("DELETE", `/api/personal_api_keys/${key.body.id}`);
    await send("DELETE", `/api/personal_api_keys/${key.body.id}`);

    // Webhooks (disabled: nothing is sent): created, one without a valid URL refused, one with
    // deliveries deleted (they go with it), one deleted twice (404).
    const webhook = (name: string) => ({ url: `http://127.0.0.1:9/${name}`, events: ["*"], enabled: false });
    const kept = await send("POST", `${organization}/webhooks`, webhook("kept"));
    const removed = await send("POST", `${organization}/webhooks`, webhook("removed"));
    await send("POST", `${organization}/webhooks`, { ...webhook("refused"), url: "not a url" });
    for (const created of [kept, kept, removed]) await insertDelivery(created.body.id);
    await send("DELETE", `${organization}/webhooks/${removed.body.id}`);
    await send("DELETE", `${organization}/webhooks/${removed.body.id}`);

    // Roles: created, a taken name refused, one deleted with its memberships; members added, one
    // twice (refused), and one who leaves the organization (their role memberships go with them).
    const role = await send("POST", `${organization}/roles`, { name: "Kept" });
    await send("POST", `${organization}/roles`, { name: "kept" });
    const gone = await send("POST", `${organization}/roles`, { name: "Gone" });
    const leaver = await addMember(team.organization.id, MembershipLevel.member);
    const stays = await addMember(team.organization.id, MembershipLevel.member);
    for (const held of [role, gone]) {
      for (const holder of [leaver, stays, stays]) {
        await send("POST", `${organization}/roles/${held.body.id}/role_memberships`, { user_uuid: holder.user.uuid });
      }
    }
    await send("DELETE", `${organization}/roles/${gone.body.id}`);
    await send("DELETE", `${organization}/members/${leaver.user.uuid}`);

    // Members: one removed, a missing one 404.
    const member = await addMember(team.organization.id, MembershipLevel.member);
    await send("DELETE", `${organization}/members/${member.user.uuid}`);
    await send("DELETE", `${organization}/members/${member.user.uuid}`);

    // Racing writes: creates and deletes of every kind at once.
    const exports = await Promise.all(
      [1, 2, 3].map((index) => send("POST", `${environment}/batch_exports`, { ...S3_EXPORT, name: `Race ${index}` })),
    );
    const dashboards = await Promise.all(
      [1, 2, 3].map((index) => send("POST", `${environment}/dashboards`, { name: `Race ${index}` })),
    );
    await Promise.all([
      ...[1, 2, 3, 4].map((index) =>
        send("POST", `${organization}/invites`, { target_email: `race-${index}@example.com`, send_email: false }),
      ),
      ...[1, 2, 3].map((index) =>
        send("POST", `${organization}/domains`, { domain: `race-${index}-${team.organization.id}.example.com` }),
      ),
      ...[1, 2, 3].map((index) => send("POST", `${organization}/projects`, { name: `Race ${index}` })),
      ...[1, 2].map((index) => send("POST", "/api/personal_api_keys", { label: `Race ${index}`, scopes: ["*"] })),
      ...[1, 2].map((index) => send("POST", `${organization}/webhooks`, webhook(`race-${index}`))),
      ...exports.slice(1).map((created) => send("DELETE", `${environment}/batch_exports/${created.body.id}`)),
      // The same export deleted twice at once: one 204, one 404, counted once.
      send("DELETE", `${environment}/batch_exports/${exports[0]!.body.id}`),
      send("DELETE", `${environment}/batch_exports/${exports[0]!.body.id}`),
      ...dashboards.map((created) => send("PATCH", `${environment}/dashboards/${created.body.id}`, { deleted: true })),
      send("PATCH", `${environment}/dashboards/${dashboards[0]!.body.id}`, { deleted: true }),
    ]);

    // A project moved to another organization of the owner's with its export (their counts move
    // with them), and moved again where it already is (refused).
    const destination = await setupOrganization();
    await addMembership(destination.organization.id, team.owner, MembershipLevel.admin);
    const moving = await send("POST", `${organization}/projects`, { name: "Moving" });
    await send("POST", `/api/environments/${moving.body.id}/batch_exports`, { ...S3_EXPORT, name: "Moves along" });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      await send("POST", `/api/projects/${moving.body.id}/change_organization`, {
        organization_id: destination.organization.id,
      });
    }

    // A cascade: deleting another organization takes its invites, projects and exports along.
    const other = await setupOrganization();
    const otherOrganization = `/api/organizations/${other.organization.id}`;
    await send(
      "POST",
      `${otherOrganization}/invites`,
      { target_email: "gone@example.com", send_email: false },
      other.key,
    );
    await send(
      "POST",
      `/api/environments/${other.project.id}/batch_exports`,
      { ...S3_EXPORT, name: "Gone" },
      other.key,
    );
    await send("DELETE", otherOrganization, undefined, other.key);

    // Refused: the bad bulk, the second delete of an invite, the duplicate domain, the taken project
    // name, the export without destination and its second delete, the dashboard named 42, the bad
    // scope and the revoked key, the URL that is none and the deleted webhook, the removed member,
    // one of the racing deletes of one export, the taken role name and the two second places in a role,
    // the second move.
    expect(statuses.filter((status) => status >= 400 && status < 500).length).toBe(17);
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
    expect(await countersThatDrifted()).toEqual([]);
    expect(await exercisedCounters()).toEqual(COUNTERS.map(([table, column]) => `${table}.${column}`));

    // Every offset of each list, deletions and racing writes included, answers what D1 holds in the list's order.
    const ordered = (query: string, ...binds: unknown[]) =>
      env.DB.prepare(query)
        .bind(...binds)
        .all<{ id: string }>();
    const lists: [string, Promise<D1Result<{ id: string }>>][] = [
      [
        `${organization}/members`,
        ordered(
          "select id from organization_memberships where organization_id = ? order by joined_at desc, id desc",
          team.organization.id,
        ),
      ],
      [
        `${organization}/invites`,
        ordered(
          "select id from invites where organization_id = ? order by created_at desc, id desc",
          team.organization.id,
        ),
      ],
      [
        `${organization}/projects`,
        ordered("select id from projects where organization_id = ? order by created_at, id", team.organization.id),
      ],
      [
        `${organization}/batch_exports`,
        ordered(
          "select id from batch_exports where organization_id = ? and deleted = 0 order by created_at desc, id desc",
          team.organization.id,
        ),
      ],
      [
        `${environment}/batch_exports`,
        ordered(
          "select id from batch_exports where environment_id = ? and deleted = 0 order by created_at desc, id desc",
          team.project.id,
        ),
      ],
      [
        `${organization}/webhooks`,
        ordered(
          "select id from webhooks where organization_id = ? and deletion_scheduled_at is null " +
            "order by created_at desc, id desc",
          team.organization.id,
        ),
      ],
      [
        `${organization}/webhooks/${kept.body.id}/deliveries`,
        ordered(
          "select id from webhook_deliveries where webhook_id = ? order by created_at desc, id desc",
          kept.body.id,
        ),
      ],
    ];
    for (const [path, rows] of lists) {
      const expected = (await rows).results.map((row) => row.id);
      const answered: unknown[] = [];
      for (let offset = 0; offset <= expected.length; offset += 1) {
        answered.push(
          ...(await api("GET", `${path}?limit=1&offset=${offset}`, { key: team.key })).body.results.map(
            (row: { id: unknown }) => row.id,
          ),
        );
      }
      expect(answered, path).toEqual(expected);
      expect(expected.length, path).toBeGreaterThan(0);
    }
  });

  it("are what the lists answer as their count", async () => {
    const team = await setupOrganization();
    const organization = `/api/organizations/${team.organization.id}`;
    const environment = `/api/environments/${team.project.id}`;
    await api("POST", `${organization}/invites`, {
      key: team.key,
      body: { target_email: "listed@example.com", send_email: false },
    });
    await api("POST", `${environment}/batch_exports`, { key: team.key, body: { ...S3_EXPORT, name: "Listed" } });
    await api("POST", `${environment}/dashboards`, { key: team.key, body: { name: "Listed" } });

    const counts = async (path: string) => (await api("GET", `${path}?limit=1`, { key: team.key })).body.count;
    expect(await counts(`${organization}/invites`)).toBe(1);
    expect(await counts(`${organization}/domains`)).toBe(0);
    expect(await counts(`${organization}/projects`)).toBe(1);
    expect(await counts(`${organization}/members`)).toBe(1);
    expect(await counts(`${organization}/batch_exports`)).toBe(1);
    expect(await counts(`${environment}/batch_exports`)).toBe(1);
    expect(await counts(`${environment}/dashboards`)).toBe(1);
    // Not paged (a bare array, as PostHog answers): its counter caps how many keys a user holds.
    expect((await api("GET", "/api/personal_api_keys", { key: team.key })).body).toHaveLength(1);
  });
});
