import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createDashboard, dashboardsPath } from "../environments/dashboard-fixtures";
import { api, setupOrganization } from "../support/harness";

const BOOKMARK = /^[0-9a-f]+(-[0-9a-f]+)+$/;

describe("read-your-writes with D1 bookmarks", () => {
  it("answers every D1 request with a bookmark, and a read sent with a write's bookmark sees that write", async () => {
    const { key } = await setupOrganization();

    const created = await api("POST", "/api/organizations", { key, body: { name: "Bookmarked" } });
    const bookmark = created.headers.get("X-D1-Bookmark");
    const read = await api("GET", `/api/organizations/${created.body.id}`, {
      key,
      headers: { "X-D1-Bookmark": bookmark ?? "" },
    });

    expect(created.status).toBe(201);
    expect(bookmark).toMatch(BOOKMARK);
    expect(read.status).toBe(200);
    expect(read.body.name).toBe("Bookmarked");
    expect(read.headers.get("X-D1-Bookmark")).toMatch(BOOKMARK);
    // Bookmarks only move forward: the read is at least as fresh as the write.
    expect(read.headers.get("X-D1-Bookmark")! >= bookmark!).toBe(true);
  });

  it("ignores a bookmark that is not one, instead of failing the read", async () => {
    const { key } = await setupOrganization();

    for (const value of ["not-a-bookmark", "../../etc", "x".repeat(5000)]) {
      const response = await api("GET", "/api/organizations", { key, headers: { "X-D1-Bookmark": value } });
      expect(response.status, value).toBe(200);
    }
  });
});

describe("a key looked up in D1", () => {
  it("is read from the primary even by a GET, whose own reads may go to a replica", async () => {
    const { key } = await setupOrganization();
    const sessions = vi.spyOn(env.DB, "withSession");
    try {
      // Cold: the key is not in KV yet (made directly in D1 by the harness).
      expect((await api("GET", "/api/users/@me", { key })).status).toBe(200);
      expect(sessions.mock.calls.map(([constraint]) => constraint)).toEqual(["first-unconstrained", "first-primary"]);
      sessions.mockClear();
      // Warm: KV answers, and the read stays where a GET may go.
      expect((await api("GET", "/api/users/@me", { key })).status).toBe(200);
      expect(sessions.mock.calls.map(([constraint]) => constraint)).toEqual(["first-unconstrained"]);
    } finally {
      sessions.mockRestore();
    }
  });
});

describe("a public share link", () => {
  it("is read from the primary on every view: a refresh, a pause or a new password ends it at once", async () => {
    const team = await setupOrganization();
    const dashboard = await createDashboard(team.key, team.project.id, { name: "Leaked" });
    const sharingPath = `${dashboardsPath(team.project.id)}/${dashboard.id}/sharing`;
    const token = (await api("PATCH", sharingPath, { key: team.key, body: { enabled: true } })).body.access_token;
    // Each statement sent, with the constraint of the session it went through.
    const sent: { constraint: string; sql: string }[] = [];
    const withSession = env.DB.withSession.bind(env.DB);
    const sessions = vi.spyOn(env.DB, "withSession").mockImplementation((constraint?: string) => {
      const session = withSession(constraint as D1SessionConstraint);
      const batch = session.batch.bind(session);
      return Object.assign(Object.create(session), {
        batch: (statements: D1PreparedStatement[]) => {
          for (const statement of statements) {
            sent.push({
              constraint: String(constraint),
              sql: (statement as unknown as { statement: string }).statement,
            });
          }
          return batch(statements);
        },
      }) as D1DatabaseSession;
    });
    try {
      expect((await api("GET", `/shared/${token}.json`)).status).toBe(200);
    } finally {
      sessions.mockRestore();
    }
    const linkReads = sent.filter(({ sql }) => sql.includes('from "sharing_configurations"'));
    expect(linkReads.length).toBeGreaterThan(0);
    for (const read of linkReads) expect(read.constraint).toBe("first-primary");
  });
});
